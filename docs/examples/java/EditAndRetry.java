import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.*;
import java.time.Duration;
import java.util.List;
import java.util.Map;

public class EditAndRetry {
    public static void main(String[] args) {
        Tool deploy = AgentSdk.defineTool(new Tool("deploy", (input, context) -> {
            Object env = ((Map<?, ?>) input).get("env");
            if (context.attempt() == 1) { // the first attempt fails; the SDK retries it
                System.out.println("attempt 1 to deploy to " + env + ": registry busy");
                throw new IllegalStateException("registry busy");
            }
            // The same key on every attempt and after any continue: hand it to the service.
            if (!context.idempotencyKey().endsWith(":c1")) throw new IllegalStateException("unexpected key");
            System.out.println("attempt " + context.attempt() + " deployed to " + env);
            return Map.of("deployed", env);
        })
            .withDescription("Deploy a release")
            .withParameters(Map.of("type", "object",
                "properties", Map.of("env", Map.of("enum", List.of("staging", "production"))),
                "required", List.of("env")))
            .withRequireApproval(true)
            .withRetry(new ToolRetryConfig(3, Duration.ofMillis(10)))
            .withMaxCalls(1)); // at most one deploy per run
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("ops", List.of(deploy)))) {
            AgentSdk.ModelClient client = AgentSdk.scriptedClient(List.of(
                Map.of("toolCalls", List.of(Map.of("id", "c1", "name", "deploy", "arguments", "{\"env\":\"production\"}"))),
                Map.of("text", "Deployed to staging.")));

            RunResult paused = agent.run(new RunOptions("deploy", client));
            // The person approves, but to staging: the edited input is validated before anything runs.
            RunResult done = agent.continueRun(new ContinueOptions(RunResult.fromJson(paused.toJson()), client)
                .approveEdited("c1", Map.of("env", "staging")));
            System.out.println(done.output());
        }
    }
}
