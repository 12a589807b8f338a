import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.*;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

public class ParallelProgress {
    public static void main(String[] args) {
        Tool checkService = AgentSdk.defineTool(new Tool("check-service", (input, context) -> {
            Object service = ((Map<?, ?>) input).get("service");
            context.emitProgress().receive(Map.of("checking", service), context); // a tool.preliminary_result event
            return Map.of("service", service, "up", !"db".equals(service));
        })
            .withDescription("Check one service")
            .withParameters(Map.of("type", "object",
                "properties", Map.of("service", Map.of("type", "string")), "required", List.of("service")))
            .withTimeout(Duration.ofSeconds(3)));
        // The three calls of one turn run side by side; results keep the model's call order.
        AgentDefinition definition = new AgentDefinition("status", List.of(checkService))
            .withToolExecution(new ToolExecutionConfig(3));
        try (AgentSdk.Agent agent = AgentSdk.createAgent(definition)) {
            List<Object> calls = new ArrayList<>();
            List<String> services = List.of("api", "db", "queue");
            for (int i = 0; i < services.size(); i++) {
                calls.add(Map.of("id", "c" + (i + 1), "name", "check-service",
                    "arguments", "{\"service\": \"" + services.get(i) + "\"}"));
            }
            AgentSdk.ModelClient client = AgentSdk.scriptedClient(List.of(
                Map.of("toolCalls", calls),
                Map.of("text", "api and queue are up; db is down.")));

            List<String> progress = Collections.synchronizedList(new ArrayList<>());
            RunResult result = agent.run(new RunOptions("status?", client).withOnEvent(event -> {
                if (event.type().equals("tool.preliminary_result")) {
                    Object checking = ((Map<?, ?>) event.details().get("result")).get("checking");
                    progress.add(event.details().get("tool_call_id") + " progress: checking " + checking);
                }
            }));
            progress.sort(null); // the calls overlap: their progress arrives in any order
            System.out.println(String.join("\n", progress));
            System.out.println(result.output());
        }
    }
}
