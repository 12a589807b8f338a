import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.*;
import java.time.Duration;
import java.util.List;
import java.util.Map;

public class FirstAgent {
    public static void main(String[] args) {
        Tool deploy = AgentSdk.defineTool(new Tool("deploy", (input, context) -> {
            context.emitProgress().receive(Map.of("phase", "rolling out"), context);
            return Map.of("deployed", ((Map<?, ?>) input).get("env"), "key", context.toolCall().id());
        })
            .withDescription("Deploy a release")
            .withParameters(Map.of("type", "object",
                "properties", Map.of("env", Map.of("type", "string")), "required", List.of("env")))
            .withTimeout(Duration.ofSeconds(5))
            .withRequireApproval(true));
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("ops", List.of(deploy)))) {
            // A scripted model: the first answer calls the tool, the second is the final text.
            AgentSdk.ModelClient client = AgentSdk.scriptedClient(List.of(
                Map.of("toolCalls", List.of(Map.of("id", "c1", "name", "deploy", "arguments", "{\"env\":\"prod\"}"))),
                Map.of("text", "Deployed.")));

            RunResult paused = agent.run(new RunOptions("deploy to prod", client)); // or runAsync(...)
            String stored = paused.toJson(); // persist anywhere; any language continues it
            RunResult done = agent.continueRun(new ContinueOptions(RunResult.fromJson(stored), client).approve("c1"));
            System.out.println(done.output()); // Deployed.
        }
    }
}
