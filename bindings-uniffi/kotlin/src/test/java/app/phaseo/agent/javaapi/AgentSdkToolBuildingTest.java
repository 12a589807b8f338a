package app.phaseo.agent.javaapi;

import static app.phaseo.agent.javaapi.Scripts.call;
import static app.phaseo.agent.javaapi.Scripts.calls;
import static app.phaseo.agent.javaapi.Scripts.client;
import static app.phaseo.agent.javaapi.Scripts.text;
import static app.phaseo.agent.javaapi.Scripts.toolMessages;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.ContinueOptions;
import app.phaseo.agent.AgentSdk.RunOptions;
import app.phaseo.agent.AgentSdk.RunResult;
import app.phaseo.agent.AgentSdk.Tool;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A tool built from {@code new Tool(id, execute)} and its {@code with…} methods only, as a
 * Java user writes one without the long constructors. */
class AgentSdkToolBuildingTest {
    @Test
    void aToolBuiltWithWithMethodsHasEveryOptionItWasGiven() {
        Tool base = new Tool("deploy", (input, ctx) -> Map.of("env", ((Map<?, ?>) input).get("env")));
        Tool deploy = base
            .withDescription("Deploy a release")
            .withParameters(Map.of("type", "object",
                "properties", Map.of("env", Map.of("enum", List.of("staging", "production"))),
                "required", List.of("env")))
            .withTimeout(Duration.ofSeconds(5))
            .withRequireApproval(true)
            .withOnError("return-to-model");
        // Each with… returns a new tool; the first is unchanged.
        assertNull(base.description());
        assertEquals("Deploy a release", deploy.description());

        AgentSdk.ModelClient model = client(
            calls(call("c1", "deploy", "{\"env\":\"moon\"}"), call("c2", "deploy", "{\"env\":\"staging\"}")),
            text("Deployed."));
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("builder", List.of(deploy)))) {
            RunResult paused = agent.run(new RunOptions("deploy", model));
            // The invalid call went back to the model (onError); the valid one waits for approval.
            assertEquals("waiting_for_human", paused.status());
            assertTrue(String.valueOf(toolMessages(paused).get("c1").get("content")).contains("Invalid tool input"));
            RunResult done = agent.continueRun(new ContinueOptions(paused, model).approve("c2"));
            assertEquals("Deployed.", done.output());
            assertEquals("{\"env\":\"staging\"}", String.valueOf(toolMessages(done).get("c2").get("content")));
        }
    }
}
