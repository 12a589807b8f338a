package bench.langchain4j;

import bench.Bench;
import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.FinishReason;
import dev.langchain4j.model.output.TokenUsage;
import dev.langchain4j.service.AiServices;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * LangChain4j: an {@code AiServices} assistant with {@code @Tool} methods (their arguments
 * parsed from the JSON text and bound by LangChain4j) and a scripted {@link ChatModel} that
 * answers each request with the next turn. {@code executeToolsConcurrently()} (its default
 * executor) starts every call of a turn at once, as ours does with toolConcurrency 1000;
 * {@code maxSequentialToolsInvocations} is raised above the sequential workload's turns.
 */
public final class LangChain4jBench implements Bench.Sdk {
    /** The assistant interface AiServices implements. */
    interface Assistant {
        String chat(String message);
    }

    /** The tools, as LangChain4j users write them. */
    public static final class Tools {
        @Tool("Add two integers.")
        public int add(@P("a") int a, @P("b") int b) {
            return Bench.add(a, b);
        }

        @Tool("Sleep 50 ms, return i.")
        public int nap(@P("i") int i) {
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
        public ChatResponse doChat(ChatRequest request) {
            return turns.get(next.getAndIncrement());
        }
    }

    private static final TokenUsage USAGE = new TokenUsage(1, 1);

    @Override
    public String name() {
        return "langchain4j";
    }

    @Override
    public Map<String, String> versions() {
        Map<String, String> v = new LinkedHashMap<>();
        v.put("langchain4j", String.valueOf(AiServices.class.getPackage().getImplementationVersion()));
        v.put("langchain4j (pinned)", "1.19.0");
        return v;
    }

    @Override
    public Bench.Run prepare(Bench.Workload w) {
        List<ChatResponse> turns = new ArrayList<>();
        for (List<Bench.Call> turn : w.turns()) {
            List<ToolExecutionRequest> calls = new ArrayList<>();
            for (Bench.Call c : turn) {
                calls.add(ToolExecutionRequest.builder().id(c.id()).name(c.name()).arguments(c.arguments()).build());
            }
            turns.add(ChatResponse.builder().aiMessage(AiMessage.from(calls))
                .finishReason(FinishReason.TOOL_EXECUTION).tokenUsage(USAGE).build());
        }
        turns.add(ChatResponse.builder().aiMessage(AiMessage.from("done")).finishReason(FinishReason.STOP).tokenUsage(USAGE).build());
        Assistant assistant = AiServices.builder(Assistant.class)
            .chatModel(new ScriptedModel(turns))
            .tools(new Tools())
            .executeToolsConcurrently()
            .maxSequentialToolsInvocations(w.maxSteps())
            .build();
        return () -> assistant.chat("go");
    }

    /** Runs the workloads (see {@link Bench}). */
    public static void main(String[] args) throws Exception {
        Bench.main(new LangChain4jBench());
    }
}
