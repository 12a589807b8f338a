package app.phaseo.agent.typed;

import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.ContinueOptions;
import app.phaseo.agent.AgentSdk.RunResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.json.JsonMapper;

/**
 * One half of a typed tool's cross-language handoff (docs/behaviour.md §4, §20), run by
 * tests/typed-handoff/run.sh through tests/typed-handoff/java_worker.sh: {@code pause FILE}
 * — the model asks for a refund, the run pauses for approval and its state is written to
 * FILE; {@code continue FILE} — the stored run is approved and continued here. Prints one
 * JSON line: the status and, after continuing, the output and the refund tool's message.
 */
public final class TypedWorker {
    private static final String ARGS = "{\"order_id\":\"A-17\",\"amount\":25,\"reason\":\"damaged\","
        + "\"lines\":[{\"sku\":\"MUG-1\",\"quantity\":2},{\"sku\":\"CUP-9\",\"quantity\":1}],\"customer\":{\"email\":\"ana@example.com\"}}";

    private TypedWorker() {
    }

    public static void main(String[] args) throws Exception {
        JsonMapper json = JsonMapper.builder().build();
        AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("desk", List.of(RefundTypes.refundTool(new ArrayList<>()))));
        Path path = Path.of(args[1]);
        Map<String, Object> line = new LinkedHashMap<>();
        if (args[0].equals("pause")) {
            Object call = Map.of("toolCalls", List.of(Map.of("id", "c1", "name", "refund", "arguments", ARGS)));
            RunResult paused = agent.run("refund A-17", AgentSdk.scriptedClient(List.of(call)));
            Files.writeString(path, paused.toJson());
            line.put("status", paused.status());
            line.put("pending", paused.pendingToolCalls().stream().map(p -> ((Map<?, ?>) p.get("call")).get("id")).toList());
        } else {
            RunResult done = agent.continueRun(new ContinueOptions(RunResult.fromJson(Files.readString(path)),
                AgentSdk.scriptedClient(List.of(Map.of("text", "Refunded.")))).approve("c1"));
            Map<String, Object> tool = done.messages().stream().filter(m -> "tool".equals(m.get("role"))).findFirst().orElseThrow();
            line.put("status", done.status());
            line.put("output", done.output());
            line.put("tool", json.readValue((String) tool.get("content"), Object.class));
        }
        System.out.println(json.writeValueAsString(line));
        System.exit(0);
    }
}
