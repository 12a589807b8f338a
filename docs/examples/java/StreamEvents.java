import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.*;
import java.util.List;
import java.util.Map;

public class StreamEvents {
    public static void main(String[] args) {
        Tool lookup = AgentSdk.defineTool(new Tool("lookup-order",
                (input, context) -> Map.of("order", ((Map<?, ?>) input).get("order"), "status", "shipped"))
            .withDescription("Look up an order")
            .withParameters(Map.of("type", "object",
                "properties", Map.of("order", Map.of("type", "string")), "required", List.of("order"))));
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("support", List.of(lookup)))) {
            // A scripted model: the first answer calls the tool, the second is the final text.
            AgentSdk.ModelClient client = AgentSdk.scriptedClient(List.of(
                Map.of("toolCalls", List.of(Map.of("id", "c1", "name", "lookup-order", "arguments", "{\"order\": \"A-7\"}"))),
                Map.of("text", "Order A-7 has shipped.")));

            StreamResult stream = agent.stream(new RunOptions("where is order A-7?", client));
            for (AgentEvent event : stream.events()) { // as they happen
                // Text, and the tool's arguments as the model writes them, arrive as deltas.
                Object delta = event.details().get("delta");
                System.out.println(delta != null ? event.type() + " [" + delta + "]" : event.type());
            }
            System.out.println(stream.getResult().output()); // replayed: every consumer sees the whole run
        }
    }
}
