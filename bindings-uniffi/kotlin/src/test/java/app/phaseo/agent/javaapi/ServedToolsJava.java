// Tools served over MCP by the Java API for McpServeTest: `ServedToolsJava stdio|http`. In
// HTTP mode the endpoint URL is the first line of stdout and the server stops when stdin
// closes. `CANCEL_MARK` names the file a cancelled `slow` call writes.
package app.phaseo.agent.javaapi;

import app.phaseo.agent.AgentSdk;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

public final class ServedToolsJava {
    private ServedToolsJava() {}

    static AgentSdk.Tool tool(String id, String description, Map<String, Object> parameters, Duration timeout,
                              boolean approval, AgentSdk.ToolExecutor execute) {
        return tool(id, description, parameters, null, timeout, approval, execute);
    }

    static AgentSdk.Tool tool(String id, String description, Map<String, Object> parameters, AgentSdk.Validator output,
                              Duration timeout, boolean approval, AgentSdk.ToolExecutor execute) {
        return AgentSdk.defineTool(new AgentSdk.Tool(id, execute, description, parameters, timeout, null, output, null,
                approval, null, null, null, null, null));
    }

    /** The served tools; a cancelled `slow` call writes [cancelMark]. */
    public static List<AgentSdk.Tool> tools(Path cancelMark) {
        Map<String, Object> numbers = Map.of("type", "object",
                "properties", Map.of("a", Map.of("type", "number"), "b", Map.of("type", "number")),
                "required", List.of("a", "b"));
        return List.of(
                AgentSdk.defineTool(new AgentSdk.Tool("add", (input, ctx) -> {
                    Map<?, ?> in = (Map<?, ?>) input;
                    return Map.of("sum", ((Number) in.get("a")).longValue() + ((Number) in.get("b")).longValue());
                }).withDescription("Adds two numbers").withParameters(numbers)
                        .withOutputSchema(AgentSdk.jsonSchema(Map.of("type", "object", "properties", Map.of("sum", Map.of("type", "number")))))
                        .withAnnotations(Map.of("readOnlyHint", true, "title", "Add numbers"))),
                tool("slow", "Waits until cancelled", null, null, false, (input, ctx) -> {
                    ctx.emitProgress().receive("started", ctx);
                    try {
                        Thread.sleep(120_000);
                        return "finished";
                    } catch (InterruptedException e) {
                        Files.writeString(cancelMark, "cancelled");
                        throw e;
                    }
                }),
                tool("steps", "Reports progress", null, null, false, (input, ctx) -> {
                    ctx.emitProgress().receive(Map.of("progress", 1, "total", 2, "message", "half"), ctx);
                    ctx.emitProgress().receive("almost", ctx);
                    return 2;
                }),
                tool("delete", "Deletes a file", null, null, true,
                        (input, ctx) -> "deleted " + ((Map<?, ?>) input).get("path")),
                tool("sleepy", "Too slow", null, Duration.ofMillis(200), false, (input, ctx) -> {
                    Thread.sleep(5_000);
                    return "late";
                }));
    }

    public static void main(String[] args) throws Exception {
        List<AgentSdk.Tool> tools = tools(Path.of(System.getenv("CANCEL_MARK")));
        AgentSdk.McpServeOptions.Builder options = AgentSdk.McpServeOptions.builder("test-tools")
                .version("1.0.0")
                .toolExecution(new AgentSdk.ToolExecutionConfig(4));
        if (args[0].equals("stdio")) {
            try (AgentSdk.McpToolServer server = AgentSdk.serveMcp(tools, options.build())) {
                server.closed().get();
            }
        } else {
            try (AgentSdk.McpToolServer server = AgentSdk.serveMcp(tools, options.http(0).build())) {
                System.out.println(server.url());
                System.out.flush();
                System.in.readAllBytes();
            }
        }
    }
}
