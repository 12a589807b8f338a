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
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A tool built from {@code new Tool(id, execute)} and its {@code with…} methods, or from
 * {@code Tool.builder(name)}, as a Java user writes one without the long constructors. */
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

    @Test
    void aToolFromTheBuilderRunsWithEveryOptionItWasGiven() {
        List<String> seen = Collections.synchronizedList(new ArrayList<>());
        Tool deploy = Tool.builder("deploy")
            .description("Deploy a release")
            .parameters(Map.of("type", "object",
                "properties", Map.of("env", Map.of("enum", List.of("staging", "production"))),
                "required", List.of("env")))
            .execute((input, ctx) -> {
                seen.add(ctx.toolCall().id() + "@" + ctx.attempt());
                return Map.of("env", ((Map<?, ?>) input).get("env"));
            })
            .timeout(Duration.ofSeconds(5))
            // Only production needs a person; the predicate decides per call.
            .requireApproval((input, ctx) -> "production".equals(((Map<?, ?>) input).get("env")))
            .onError("return-to-model")
            .maxCalls(3)
            .annotations(Map.of("destructiveHint", true, "title", "Deploy"))
            .build();
        assertEquals("deploy", deploy.id());
        assertEquals("Deploy a release", deploy.description());
        assertEquals(Duration.ofSeconds(5), deploy.timeout());
        assertEquals("return-to-model", deploy.onError());
        assertEquals(3, deploy.maxCalls());
        assertEquals(Map.of("destructiveHint", true, "title", "Deploy"), deploy.annotations());
        assertNull(deploy.retry());

        AgentSdk.ModelClient model = client(
            calls(call("c1", "deploy", "{\"env\":\"moon\"}"), call("c2", "deploy", "{\"env\":\"staging\"}"),
                call("c3", "deploy", "{\"env\":\"production\"}")),
            text("Deployed."));
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("builder", List.of(AgentSdk.defineTool(deploy))))) {
            RunResult paused = agent.run(new RunOptions("deploy", model));
            // c1 went back to the model (onError), c2 ran, c3 waits for approval.
            assertEquals("waiting_for_human", paused.status());
            assertTrue(String.valueOf(toolMessages(paused).get("c1").get("content")).contains("Invalid tool input"));
            assertEquals(List.of("c2@1"), seen);
            RunResult done = agent.continueRun(new ContinueOptions(paused, model).approve("c3"));
            assertEquals("Deployed.", done.output());
            assertEquals(List.of("c2@1", "c3@1"), seen);
            assertEquals("{\"env\":\"staging\"}", String.valueOf(toolMessages(done).get("c2").get("content")));
            assertEquals("{\"env\":\"production\"}", String.valueOf(toolMessages(done).get("c3").get("content")));
        }
    }

    @Test
    void theBuilderDefaultsAreThoseOfTheShortConstructor() {
        // No executor: a manual tool, whose call pauses for its output.
        Tool plain = Tool.builder("ask").description("Ask a person").build();
        assertEquals(new Tool("ask", null).withDescription("Ask a person"), plain);
        // onResponseReceived transforms the output supplied on continue.
        Tool manual = Tool.builder("ask").description("Ask a person")
            .onResponseReceived((output, ctx) -> "answer: " + output)
            .build();
        Tool retried = Tool.builder("flaky")
            .execute((input, ctx) -> {
                if (ctx.attempt() < 2) throw new IllegalStateException("not yet");
                return "ok on " + ctx.attempt();
            })
            .retry(new AgentSdk.ToolRetryConfig(2))
            .requireApproval(false)
            .build();
        AgentSdk.ModelClient model = client(calls(call("m1", "ask", "{}"), call("f1", "flaky", "{}")), text("Done."));
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("builder-defaults", List.of(manual, retried)))) {
            RunResult paused = agent.run(new RunOptions("go", model));
            assertEquals("waiting_for_human", paused.status());
            assertEquals("ok on 2", String.valueOf(toolMessages(paused).get("f1").get("content")));
            RunResult done = agent.continueRun(new ContinueOptions(paused, model).output("m1", "yes"));
            assertEquals("Done.", done.output());
            assertEquals("answer: yes", String.valueOf(toolMessages(done).get("m1").get("content")));
        }
    }
}
