// Two tools served over MCP from Java (the `AgentSdk` API): any MCP client (Claude Desktop,
// an IDE, the MCP Inspector) lists and calls them. `refund_order` needs approval, which the
// server asks the client for through elicitation. Serves stdio until the client closes it:
//
//     make kotlin && examples/java/run.sh ServeTools
//
// Standard output carries the protocol: write nothing else to it.
import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.Tool;
import java.util.List;
import java.util.Map;

public final class ServeTools {
    private ServeTools() {}

    private static Map<String, Object> object(Map<String, Object> properties, List<String> required) {
        return Map.of("type", "object", "properties", properties, "required", required);
    }

    public static void main(String[] args) throws Exception {
        Tool lookup = AgentSdk.defineTool(new Tool("lookup_order",
            (input, context) -> Map.of("order_id", ((Map<?, ?>) input).get("orderId"), "status", "shipped", "total", 42),
            "Look up an order by id.",
            object(Map.of("orderId", Map.of("type", "string")), List.of("orderId")),
            null));
        Tool refund = AgentSdk.defineTool(Tool.builder("refund_order")
            .execute((input, context) ->
                "Refunded " + ((Map<?, ?>) input).get("amount") + " on " + ((Map<?, ?>) input).get("orderId"))
            .description("Refund an order. A person approves every refund.")
            .parameters(object(Map.of("orderId", Map.of("type", "string"), "amount", Map.of("type", "number", "minimum", 0)),
                List.of("orderId", "amount")))
            .requireApproval(true)
            .build());
        AgentSdk.McpServeOptions options = AgentSdk.McpServeOptions.builder("orders").version("1.0.0").build();
        try (AgentSdk.McpToolServer server = AgentSdk.serveMcp(List.of(lookup, refund), options)) {
            server.closed().get();
        }
    }
}
