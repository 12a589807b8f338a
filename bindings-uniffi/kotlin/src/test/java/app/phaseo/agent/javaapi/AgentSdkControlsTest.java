package app.phaseo.agent.javaapi;

import static app.phaseo.agent.javaapi.Scripts.call;
import static app.phaseo.agent.javaapi.Scripts.calls;
import static app.phaseo.agent.javaapi.Scripts.client;
import static app.phaseo.agent.javaapi.Scripts.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.AgentException;
import app.phaseo.agent.AgentSdk.ContinueOptions;
import app.phaseo.agent.AgentSdk.Overrides;
import app.phaseo.agent.AgentSdk.RunOptions;
import app.phaseo.agent.AgentSdk.RunResult;
import app.phaseo.agent.AgentSdk.Tool;
import app.phaseo.agent.CancelToken;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Our supersets through the Java API: request controls, sampling, signed state, cancel, messages. */
class AgentSdkControlsTest {
    /** A model recording each request, answering with [answers] in order. */
    private static final class Recorder implements AgentSdk.ModelClient {
        final List<Map<String, Object>> requests = Collections.synchronizedList(new ArrayList<>());
        private final List<Object> answers;

        Recorder(Object... answers) {
            this.answers = List.of(answers);
        }

        @Override
        public Object generate(Map<String, Object> request) {
            requests.add(request);
            return answers.get(requests.size() - 1);
        }
    }

    private static Tool tool(String id) {
        return new Tool(id, (input, ctx) -> id + " ok", "Tool " + id, Map.of("type", "object"), null);
    }

    @SuppressWarnings("unchecked")
    private static List<Object> offered(Map<String, Object> request) {
        List<Object> ids = new ArrayList<>();
        for (Object t : (List<Object>) request.get("tools")) {
            ids.add(((Map<String, Object>) t).get("id"));
        }
        return ids;
    }

    @Test
    void requestControlsAndSamplingOnTheAgentAndPerRun() {
        AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("controls",
            List.of(tool("a"), new Tool("b", (input, ctx) -> "b ok", "Tool b", Map.of("type", "object", "properties",
                Map.of("q", Map.of("type", "integer")), "required", List.of("q"), "additionalProperties", false), null)
                .withStrict(true).withInputExamples(List.of(Map.of("q", 1)))))
            .withRequestControls("required", false, List.of("b"))
            .withSampling(0.2, 100, 0.9));
        Recorder model = new Recorder(text("one"), text("two"));
        agent.run("hi", model);
        Map<String, Object> first = model.requests.get(0);
        assertEquals(List.of("b"), offered(first));
        assertEquals("required", first.get("toolChoice"));
        assertEquals(false, first.get("parallelToolCalls"));
        assertEquals(0.2, first.get("temperature"));
        assertEquals(100, first.get("maxOutputTokens"));
        @SuppressWarnings("unchecked")
        Map<String, Object> spec = (Map<String, Object>) ((List<Object>) first.get("tools")).get(0);
        assertEquals(true, spec.get("strict"));
        assertEquals(List.of(Map.of("q", 1)), spec.get("inputExamples"));

        agent.run(new RunOptions("hi", model).withOverrides(new Overrides()
            .withToolChoice(Map.of("toolId", "a")).withActiveTools(List.of("a", "b")).withSampling(0.7, null, null)));
        Map<String, Object> second = model.requests.get(1);
        assertEquals(List.of("a", "b"), offered(second));
        assertEquals(Map.of("toolId", "a"), second.get("toolChoice"));
        assertEquals(0.7, second.get("temperature"));

        assertEquals("definition_invalid", assertThrows(AgentException.class, () -> AgentSdk.createAgent(
            new AgentDefinition("bad", List.of(tool("a"))).withRequestControls("sometimes", null, null))).code());
    }

    @Test
    void maxOutputCharsAndPerRunStopConditions() {
        Tool big = new Tool("big", (input, ctx) -> "x".repeat(500));
        Recorder model = new Recorder(calls(call("c1", "big", "{}")), text("done"));
        AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("limits", List.of(big)));
        agent.run(new RunOptions("go", model).withToolExecution(new AgentSdk.ToolExecutionConfig(1, null, 40)));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> messages = (List<Map<String, Object>>) model.requests.get(1).get("messages");
        String content = (String) messages.get(messages.size() - 1).get("content");
        assertTrue(content.length() < 200, content);

        RunResult stopped = agent.run(new RunOptions("go", client(calls(call("c1", "big", "{}")), text("never")))
            .withOverrides(new Overrides().withStopWhen(List.of(AgentSdk.hasToolCall("big")))));
        assertEquals("stopped", stopped.status());
        assertEquals("tool_call:big", stopped.stopReason());
    }

    @Test
    void signedStatesAreVerifiedOnContinue() {
        Tool pay = new Tool("pay", (input, ctx) -> "paid", "Pays", Map.of("type", "object"), null, null, null, null, true,
            null, null, null, "fail-run");
        AgentSdk.Agent signed = AgentSdk.createAgent(new AgentDefinition("signed", List.of(pay)).withStateSecret("s3cret"));
        RunResult paused = signed.run("pay", client(calls(call("c1", "pay", "{}")), text("done")));
        assertTrue(paused.toJson().contains("\"signature\""));
        String tampered = paused.toJson().replace("\"content\":\"pay\"", "\"content\":\"steal\"");
        assertTrue(!tampered.equals(paused.toJson()), "the state was not tampered with");
        AgentException refused = assertThrows(AgentException.class,
            () -> signed.continueRun(new ContinueOptions(RunResult.fromJson(tampered), client(text("done"))).approve("c1")));
        assertEquals("state_invalid", refused.code());
        AgentSdk.Agent rotated = AgentSdk.createAgent(new AgentDefinition("signed", List.of(pay))
            .withStateSecrets(List.of("new", "s3cret")));
        assertEquals("completed", rotated.continueRun(new ContinueOptions(paused, client(text("done"))).approve("c1")).status());
    }

    @Test
    void aCancelTokenEndsTheRunCancelledWithItsResult() throws Exception {
        Tool hang = new Tool("hang", (input, ctx) -> {
            Thread.sleep(30_000);
            return "late";
        });
        CancelToken token = new CancelToken();
        AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("cancel", List.of(hang)));
        CompletableFuture<RunResult> future = agent.runAsync(new RunOptions("go", client(calls(call("c1", "hang", "{}")), text("x")))
            .withCancel(token));
        Thread.sleep(200);
        long start = System.nanoTime();
        token.cancel();
        RunResult result = future.get(10, TimeUnit.SECONDS);
        assertEquals("cancelled", result.status());
        assertTrue((System.nanoTime() - start) / 1_000_000 < 5_000);
    }

    @Test
    void earlierMessagesGoBeforeTheInput() {
        Recorder model = new Recorder(text("Ada"));
        AgentSdk.createAgent(new AgentDefinition("memory", List.of())).run(new RunOptions("what is my name?", model)
            .withMessages(List.of(Map.of("role", "user", "content", "I am Ada"), Map.of("role", "assistant", "content", "Hi Ada"))));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> messages = (List<Map<String, Object>>) model.requests.get(0).get("messages");
        List<Object> contents = new ArrayList<>();
        for (Map<String, Object> m : messages) {
            contents.add(m.get("content"));
        }
        assertTrue(contents.containsAll(List.of("I am Ada", "Hi Ada", "what is my name?")), contents.toString());
        assertEquals("what is my name?", contents.get(contents.size() - 1));
    }

    @Test
    @SuppressWarnings("unchecked")
    void numbersArePlainJavaAndKeepTheirValue() {
        Map<String, Object> seen = Collections.synchronizedMap(new java.util.LinkedHashMap<>());
        Tool echo = new Tool("echo", (input, ctx) -> {
            seen.putAll((Map<String, Object>) input);
            return input;
        });
        Recorder model = new Recorder(calls(call("c1", "echo",
            "{\"i\":7,\"l\":9007199254740993,\"b\":18446744073709551615,\"d\":0.5,\"tiny\":5e-324,\"t\":true,\"n\":null}")),
            text("ok"));
        AgentSdk.createAgent(new AgentDefinition("numbers", List.of(echo))).run("go", model);
        assertEquals(7, seen.get("i"));
        assertEquals(9007199254740993L, seen.get("l"));
        assertEquals(new java.math.BigInteger("18446744073709551615"), seen.get("b"));
        assertEquals(0.5, seen.get("d"));
        assertEquals(0, new java.math.BigDecimal("5e-324").compareTo((java.math.BigDecimal) seen.get("tiny")));
        assertEquals(true, seen.get("t"));
        assertTrue(seen.containsKey("n"));
        assertEquals(null, seen.get("n"));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> messages = (List<Map<String, Object>>) model.requests.get(1).get("messages");
        String content = (String) messages.get(messages.size() - 1).get("content");
        assertTrue(content.contains("18446744073709551615") && content.contains("9007199254740993") && content.contains("5e-324"), content);
    }

    @Test
    void theReadmeQuickstart() {
        Tool deploy = AgentSdk.defineTool(new Tool("deploy", (input, context) -> {
            context.emitProgress().receive(Map.of("phase", "rolling out"), context);
            return Map.of("deployed", ((Map<?, ?>) input).get("env"), "key", context.toolCall().id());
        }, "Deploy a release", Map.of("type", "object", "properties", Map.of("env", Map.of("type", "string"))),
            Duration.ofSeconds(5), null, null, null, true, null, null, null, "fail-run"));
        AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("ops", List.of(deploy)));
        AgentSdk.ModelClient client = AgentSdk.scriptedClient(List.of(
            Map.of("toolCalls", List.of(Map.of("id", "c1", "name", "deploy", "arguments", "{\"env\":\"prod\"}"))),
            Map.of("text", "Deployed.")));
        RunResult paused = agent.run(new RunOptions("deploy to prod", client));
        String stored = paused.toJson();
        RunResult done = agent.continueRun(new ContinueOptions(RunResult.fromJson(stored), client).approve("c1"));
        assertEquals("Deployed.", done.output());
    }
}
