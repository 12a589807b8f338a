import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.*;
import java.util.List;
import java.util.Map;

public class McpTools {
    public static void main(String[] args) {
        // An MCP server started as a child process and spoken to over stdio: here the protocol's
        // reference server, installed under tests/mcp; any server's command works the same way.
        McpServer everything = McpServer.stdio("everything", "node",
                List.of("tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"))
            .withAllowTools(List.of("echo")); // offer only these of the server's tools
        AgentDefinition definition = new AgentDefinition("assistant", List.of()).withMcpServers(List.of(everything));
        // The server starts when a run first needs its tools and stops with the agent.
        try (AgentSdk.Agent agent = AgentSdk.createAgent(definition)) {
            // A scripted model: the first answer calls the server's tool, the second is the final text.
            AgentSdk.ModelClient client = AgentSdk.scriptedClient(List.of(
                Map.of("toolCalls", List.of(Map.of("id", "c1", "name", "echo", "arguments", "{\"message\": \"hello\"}"))),
                Map.of("text", "The server said hello.")));
            RunResult result = agent.run(new RunOptions("say hello through the server", client).withOnEvent(event -> {
                if (event.type().equals("tool.completed")) {
                    System.out.println(event.details().get("tool_name") + " -> " + event.details().get("output"));
                }
            }));
            System.out.println(result.output());
        }
    }
}
