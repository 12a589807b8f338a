package bench.springai;

import bench.Bench;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.ToolCallAdvisor;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.DefaultToolCallingManager;
import org.springframework.ai.model.tool.ToolCallingChatOptions;
import org.springframework.ai.tool.annotation.Tool;
import org.springframework.ai.tool.annotation.ToolParam;

/**
 * Spring AI (no Spring Boot): a {@code ChatClient} over a scripted {@link ChatModel}, tools
 * as {@code @Tool} methods, and the {@code ToolCallAdvisor} running the tool loop (the
 * framework's own loop for a model that does not execute tools itself). Spring AI's
 * {@code DefaultToolCallingManager} runs a turn's calls one after the other.
 */
public final class SpringAiBench implements Bench.Sdk {
    /** The tools, as Spring AI users write them. */
    public static final class Tools {
        @Tool(description = "Add two integers.")
        public int add(@ToolParam(description = "a") int a, @ToolParam(description = "b") int b) {
            return Bench.add(a, b);
        }

        @Tool(description = "Sleep 50 ms, return i.")
        public int nap(@ToolParam(description = "i") int i) {
            return Bench.nap(i);
        }
    }

    /** Answers every request with the next scripted response. */
    static final class ScriptedModel implements ChatModel {
        private final List<ChatResponse> turns;
        private final AtomicInteger next = new AtomicInteger();

        ScriptedModel(List<ChatResponse> turns) {
            this.turns = turns;
        }

        @Override
        public ChatResponse call(Prompt prompt) {
            return turns.get(next.getAndIncrement());
        }

        @Override
        public ChatOptions getDefaultOptions() {
            // Tool-calling options, so ChatClient passes the tools on to the advisor.
            return ToolCallingChatOptions.builder().build();
        }

        @Override
        public ChatOptions getOptions() {
            return getDefaultOptions();
        }
    }

    @Override
    public String name() {
        return "spring-ai";
    }

    @Override
    public Map<String, String> versions() {
        Map<String, String> v = new LinkedHashMap<>();
        v.put("spring-ai", String.valueOf(ChatClient.class.getPackage().getImplementationVersion()));
        v.put("spring-ai (pinned)", "2.0.1");
        return v;
    }

    @Override
    public Bench.Run prepare(Bench.Workload w) {
        List<ChatResponse> turns = new ArrayList<>();
        for (List<Bench.Call> turn : w.turns()) {
            List<AssistantMessage.ToolCall> calls = new ArrayList<>();
            for (Bench.Call c : turn) calls.add(new AssistantMessage.ToolCall(c.id(), "function", c.name(), c.arguments()));
            turns.add(new ChatResponse(List.of(new Generation(AssistantMessage.builder().content("").toolCalls(calls).build()))));
        }
        turns.add(new ChatResponse(List.of(new Generation(new AssistantMessage("done")))));
        ChatClient client = ChatClient.builder(new ScriptedModel(turns))
            // Its default manager allows 40 calls per tool in a turn: the workloads make more.
            .defaultAdvisors(ToolCallAdvisor.builder().toolCallingManager(DefaultToolCallingManager.builder()
                .unlimitedCallsPerTool().unlimitedTotalToolCalls().build()).build())
            .build();
        Tools tools = new Tools();
        return () -> client.prompt("go").options(ToolCallingChatOptions.builder()).tools(tools).call().content();
    }

    /** Runs the workloads (see {@link Bench}). */
    public static void main(String[] args) throws Exception {
        Bench.main(new SpringAiBench());
    }
}
