package app.phaseo.agent.javaapi;

import static app.phaseo.agent.javaapi.Scripts.call;
import static app.phaseo.agent.javaapi.Scripts.calls;
import static app.phaseo.agent.javaapi.Scripts.client;
import static app.phaseo.agent.javaapi.Scripts.text;
import static app.phaseo.agent.javaapi.Scripts.types;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.AgentEvent;
import app.phaseo.agent.AgentSdk.AgentException;
import app.phaseo.agent.AgentSdk.ContinueOptions;
import app.phaseo.agent.AgentSdk.RunOptions;
import app.phaseo.agent.AgentSdk.RunResult;
import app.phaseo.agent.AgentSdk.Tool;
import app.phaseo.agent.AgentSdk.ToolExecutionConfig;
import app.phaseo.agent.AgentSdk.ToolRetryConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Edited approvals and responses (docs/behaviour.md §14); budgets, retries, attempt and
 * idempotency key (docs/behaviour.md §15), through the Java API. */
class AgentSdkDecisionsLimitsTest {
    private static final Map<String, Object> AMOUNT = Map.of("type", "object",
        "properties", Map.of("amount", Map.of("type", "integer", "maximum", 100)), "required", List.of("amount"));

    /** A {@code pay} tool needing approval that records the inputs it ran with. */
    private static Tool payTool(List<Object> ran) {
        return new Tool("pay", (input, ctx) -> {
            ran.add(input);
            return Map.of("paid", ((Map<?, ?>) input).get("amount"));
        }, "Pays", AMOUNT, null, null, null, null, true, null, null, null, "fail-run");
    }

    private static AgentSdk.Agent agent(Tool... tools) {
        return AgentSdk.createAgent(new AgentDefinition("java-agent", List.of(tools)));
    }

    private static Object payCall() {
        return calls(call("c1", "pay", "{\"amount\":90}"));
    }

    private static List<AgentEvent> toolEvents(List<AgentEvent> events) {
        List<AgentEvent> out = new ArrayList<>();
        for (AgentEvent e : events) {
            if (e.type().startsWith("tool.")) {
                out.add(e);
            }
        }
        return out;
    }

    @Test
    void anEditedApprovalRunsTheToolWithTheEditedInputAndTheHistoryShowsIt() {
        List<Object> ran = Collections.synchronizedList(new ArrayList<>());
        RunResult paused = agent(payTool(ran)).run("pay 90", client(payCall(), text("Paid.")));
        assertEquals("waiting_for_human", paused.status());
        List<AgentEvent> events = Collections.synchronizedList(new ArrayList<>());
        RunResult done = agent(payTool(ran)).continueRun(new ContinueOptions(RunResult.fromJson(paused.toJson()), client(text("Paid.")))
            .approveEdited("c1", Map.of("amount", 40)).withOnEvent(events::add));
        assertEquals("completed", done.status());
        assertEquals(List.of(Map.of("amount", 40)), ran);
        AgentEvent started = toolEvents(events).get(0);
        assertEquals("tool.started", started.type());
        assertEquals(true, started.details().get("input_edited"));
        // The conversation shows what ran: the assistant's call carries the edited arguments.
        Map<String, Object> assistant = done.messages().stream().filter(m -> m.get("toolCalls") != null).findFirst().orElseThrow();
        Map<?, ?> recorded = (Map<?, ?>) ((List<?>) assistant.get("toolCalls")).get(0);
        assertEquals(Map.of("amount", 40), recorded.get("input"));
        assertTrue(((String) Scripts.toolMessages(done).get("c1").get("content")).contains("\"paid\":40"));
    }

    @Test
    void anInvalidEditedInputIsRefusedAndTheStateStaysUsable() {
        List<Object> ran = Collections.synchronizedList(new ArrayList<>());
        RunResult paused = agent(payTool(ran)).run("pay 90", client(payCall(), text("Paid.")));
        AgentException refused = assertThrows(AgentException.class, () -> agent(payTool(ran)).continueRun(
            new ContinueOptions(paused, client(text("Paid."))).approveEdited("c1", Map.of("amount", 500))));
        assertEquals("continue_invalid", refused.code());
        assertTrue(refused.getMessage().startsWith("Edited input for tool call c1 is invalid: "), refused.getMessage());
        assertEquals(List.of(), ran);

        RunResult done = agent(payTool(ran)).continueRun(new ContinueOptions(paused, client(text("Paid."))).approve("c1"));
        assertEquals("completed", done.status());
        assertEquals(List.of(Map.of("amount", 90)), ran);
    }

    @Test
    void aResponseAnswersInTheToolsPlaceAndTheToolNeverRuns() {
        List<Object> ran = Collections.synchronizedList(new ArrayList<>());
        RunResult paused = agent(payTool(ran)).run("pay 90", client(payCall(), text("Declined.")));
        List<AgentEvent> events = Collections.synchronizedList(new ArrayList<>());
        RunResult done = agent(payTool(ran)).continueRun(new ContinueOptions(paused, client(text("Declined.")))
            .respond("c1", Map.of("paid", 0)).withOnEvent(events::add));
        assertEquals("completed", done.status());
        assertEquals(List.of(), ran);
        List<AgentEvent> tool = toolEvents(events);
        assertEquals(List.of("tool.completed"), types(tool));
        assertEquals(true, tool.get(0).details().get("responded_by_human"));
        Map<String, Object> message = Scripts.toolMessages(done).get("c1");
        assertEquals("{\"paid\":0}", message.get("content"));
        assertTrue(!Boolean.TRUE.equals(message.get("isError")));
    }

    @Test
    void aToolsMaxCallsRefusesTheCallsBeyondIt() {
        Tool lookup = new Tool("lookup", (input, ctx) -> "found").withMaxCalls(1);
        List<AgentEvent> events = Collections.synchronizedList(new ArrayList<>());
        RunResult done = agent(lookup).run(new RunOptions("look twice",
            client(calls(call("c1", "lookup", "{}"), call("c2", "lookup", "{}")), text("Done."))).withOnEvent(events::add));
        assertEquals("completed", done.status());
        Map<String, Object> refused = Scripts.toolMessages(done).get("c2");
        assertEquals("{\"error\":\"Tool lookup may be called at most 1 times in a run\"}", refused.get("content"));
        assertEquals(true, refused.get("isError"));
        List<String> c2 = new ArrayList<>();
        for (AgentEvent e : toolEvents(events)) {
            if ("c2".equals(e.details().get("tool_call_id"))) {
                c2.add(e.type());
            }
        }
        assertEquals(List.of("tool.failed"), c2);
    }

    @Test
    void zeroBudgetsAreDefinitionErrors() {
        AgentException tool = assertThrows(AgentException.class, () -> agent(new Tool("t", (input, ctx) -> 1).withMaxCalls(0)));
        assertEquals("definition_invalid", tool.code());
        assertTrue(tool.getMessage().contains("maxCalls must be a whole number of at least 1, got 0"), tool.getMessage());
        AgentException run = assertThrows(AgentException.class, () -> AgentSdk.createAgent(
            new AgentDefinition("a", List.of()).withToolExecution(ToolExecutionConfig.of(null, null, null, 0))));
        assertTrue(run.getMessage().contains("toolExecution.maxToolCalls must be a whole number of at least 1, got 0"), run.getMessage());
    }

    @Test
    void aRetriedToolSeesItsAttemptsWithOneIdempotencyKey() {
        List<Integer> attempts = Collections.synchronizedList(new ArrayList<>());
        List<String> keys = Collections.synchronizedList(new ArrayList<>());
        List<String> runIds = Collections.synchronizedList(new ArrayList<>());
        Tool flaky = new Tool("flaky", (input, ctx) -> {
            attempts.add(ctx.attempt());
            keys.add(ctx.idempotencyKey());
            runIds.add(ctx.runId());
            if (ctx.attempt() < 3) {
                throw new IllegalStateException("busy " + ctx.attempt());
            }
            return ctx.attempt();
        }).withRetry(new ToolRetryConfig(3, Duration.ofMillis(1)));
        List<AgentEvent> events = Collections.synchronizedList(new ArrayList<>());
        RunResult done = agent(flaky).run(new RunOptions("go", client(calls(call("c1", "flaky", "{}")), text("ok")))
            .withOnEvent(events::add));
        assertEquals("completed", done.status());
        assertEquals(List.of(1, 2, 3), attempts);
        String key = runIds.get(0) + ":c1";
        assertEquals(List.of(key, key, key), keys);
        List<AgentEvent> tool = toolEvents(events);
        assertEquals(List.of("tool.started", "tool.retrying", "tool.retrying", "tool.completed"), types(tool));
        assertEquals(2L, ((Number) tool.get(1).details().get("attempt")).longValue());
        assertEquals("busy 1", tool.get(1).details().get("error"));
        assertEquals("flaky", tool.get(1).details().get("tool_name"));
        assertEquals("c1", tool.get(1).details().get("tool_call_id"));
    }

    @Test
    void aRunsMaxToolCallsOverrideBoundsEveryTool() {
        Tool ping = new Tool("ping", (input, ctx) -> "pong");
        AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("java-agent", List.of(ping))
            .withToolExecution(ToolExecutionConfig.of(null, null, null, 5)));
        RunResult done = agent.run(new RunOptions("ping thrice",
            client(calls(call("c1", "ping", "{}"), call("c2", "ping", "{}"), call("c3", "ping", "{}")), text("Done.")))
            .withToolExecution(new ToolExecutionConfig(1).withMaxToolCalls(2)));
        assertEquals("completed", done.status());
        Map<String, Map<String, Object>> messages = Scripts.toolMessages(done);
        assertEquals("pong", messages.get("c2").get("content"));
        assertEquals("{\"error\":\"A run may make at most 2 tool calls\"}", messages.get("c3").get("content"));
    }
}
