import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.*;
import java.util.List;
import java.util.Map;

public class Tracing {
    public static void main(String[] args) {
        // Every run from now on records spans. The collector's address comes from
        // OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318) unless withEndpoint(...) is set.
        AgentSdk.enableTracing(new TracingOptions().withServiceName("orders-bot"));

        Tool lookup = AgentSdk.defineTool(new Tool("lookup-order",
                (input, context) -> Map.of("order", ((Map<?, ?>) input).get("order"), "status", "shipped"))
            .withDescription("Look up an order")
            .withParameters(Map.of("type", "object",
                "properties", Map.of("order", Map.of("type", "string")), "required", List.of("order"))));
        AgentSdk.ModelClient client = AgentSdk.scriptedClient(List.of(
            Map.of("toolCalls", List.of(Map.of("id", "c1", "name", "lookup-order", "arguments", "{\"order\": \"A-7\"}"))),
            Map.of("text", "Order A-7 has shipped.")));
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("support", List.of(lookup)))) {
            System.out.println(agent.run(new RunOptions("where is order A-7?", client)).output());
        }
        AgentSdk.flushTracing(); // export now (what is left is also exported by a JVM shutdown hook)
    }
}
