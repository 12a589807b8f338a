import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.*;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public class ErrorKinds {
    /** One scripted model answer: a call of tool {@code name}. */
    static Object call(String name, String arguments) {
        return Map.of("toolCalls", List.of(Map.of("id", "c1", "name", name, "arguments", arguments)));
    }

    public static void main(String[] args) {
        Tool lookup = AgentSdk.defineTool(new Tool("lookup-order", (input, context) -> {
            Object order = ((Map<?, ?>) input).get("order");
            if ("B-0".equals(order)) throw new IllegalStateException("order service down");
            return Map.of("order", order, "status", "shipped");
        })
            .withDescription("Look up an order")
            .withParameters(Map.of("type", "object",
                "properties", Map.of("order", Map.of("type", "string")), "required", List.of("order"))));
        Map<String, List<Object>> attempts = new LinkedHashMap<>();
        attempts.put("arguments that fail the schema", List.of(call("lookup-order", "{\"order\": 7}")));
        attempts.put("a tool the agent does not have", List.of(call("delete-everything", "{}")));
        attempts.put("a tool that raises", List.of(call("lookup-order", "{\"order\": \"B-0\"}")));
        attempts.put("a model that never answers",
            List.of(call("lookup-order", "{\"order\": \"A-7\"}"), call("lookup-order", "{\"order\": \"A-7\"}")));
        AgentDefinition definition = new AgentDefinition("support", List.of(lookup)).withMaxSteps(2);
        try (AgentSdk.Agent agent = AgentSdk.createAgent(definition)) {
            attempts.forEach((what, answers) -> {
                try {
                    agent.run(new RunOptions("where is my order?", AgentSdk.scriptedClient(answers)));
                } catch (AgentException error) { // one family; code() is the same in every language
                    System.out.println(what + "\n  " + error.code() + ": " + error.getMessage());
                    if (!"failed".equals(error.state().status())) {
                        throw new IllegalStateException("the error carries the run's final state");
                    }
                }
            });
        }
    }
}
