// Two tools served over MCP on this process's stdin and stdout: an MCP client (an IDE, a
// desktop assistant, another agent) starts this program and calls them.
import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.*;
import java.util.List;
import java.util.Map;

public class ServeTools {
    public static void main(String[] args) throws Exception {
        Map<String, Object> order = Map.of("type", "object",
            "properties", Map.of("order", Map.of("type", "string")), "required", List.of("order"));
        Tool lookup = AgentSdk.defineTool(new Tool("lookup-order",
                (input, context) -> Map.of("order", ((Map<?, ?>) input).get("order"), "status", "shipped"))
            .withDescription("Look up an order")
            .withParameters(order));
        Tool cancel = AgentSdk.defineTool(new Tool("cancel-order",
                (input, context) -> Map.of("order", ((Map<?, ?>) input).get("order"), "cancelled", true))
            .withDescription("Cancel an order")
            .withParameters(order));

        // System.out now speaks MCP: log to System.err, never println.
        try (McpToolServer server = AgentSdk.serveMcp(List.of(lookup, cancel), McpServeOptions.builder("orders").build())) {
            server.closed().get(); // until the client closes stdin
        }
    }
}
