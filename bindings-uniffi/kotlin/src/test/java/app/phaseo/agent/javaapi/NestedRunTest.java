package app.phaseo.agent.javaapi;

import static app.phaseo.agent.javaapi.Scripts.call;
import static app.phaseo.agent.javaapi.Scripts.calls;
import static app.phaseo.agent.javaapi.Scripts.client;
import static app.phaseo.agent.javaapi.Scripts.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.ContinueOptions;
import app.phaseo.agent.AgentSdk.RunOptions;
import app.phaseo.agent.AgentSdk.RunResult;
import app.phaseo.agent.AgentSdk.Tool;
import app.phaseo.agent.AgentSdk.ToolCalledResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Any callback may run another agent and wait for it (an agent as a validator, a judge in
 * an approval predicate, a router choosing the instructions): every kind of callback, on its
 * own and several at once, ends well within its deadline.
 */
class NestedRunTest {
    /** Far above a nested run's few milliseconds; a callback that cannot run one never ends. */
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private static final Map<String, Object> OBJECT = Map.of("type", "object");

    private static final AgentSdk.Agent INNER = AgentSdk.createAgent(new AgentDefinition("inner", List.of()));

    /** Runs the inner agent to completion from inside a callback: its answer. */
    private static String nested(String answer) {
        return INNER.run(new RunOptions("inner question", client(text(answer)))).outputText();
    }

    private static AgentSdk.Agent agent(AgentDefinition definition) {
        return AgentSdk.createAgent(definition);
    }

    private static <T> T within(Supplier<T> body) {
        return assertTimeoutPreemptively(DEADLINE, body::get);
    }

    @Test
    void anAgentOutputValidatorRunsAnotherAgent() {
        AgentSdk.Agent outer = agent(new AgentDefinition("outer", List.of())
            .withOutputSchema(value -> value + " / " + nested("checked")));
        RunResult result = within(() -> outer.run("go", client(text("draft"))));
        assertEquals("draft / checked", result.output());
    }

    @Test
    void toolInputAndOutputValidatorsRunAnotherAgent() {
        Tool tool = new Tool("t", (input, ctx) -> Map.of("n", 1), "d", OBJECT, null,
            value -> Map.of("in", nested("input ok")),
            value -> Map.of("out", nested("output ok")),
            null, false, null, null, null, "fail-run");
        RunResult result = within(() -> agent(new AgentDefinition("outer", List.of(tool)))
            .run("go", client(calls(call("c1", "t", "{}")), text("done"))));
        String content = (String) Scripts.toolMessages(result).get("c1").get("content");
        assertTrue(content.contains("output ok"), content);
    }

    @Test
    void aProgressValidatorRunsAnotherAgent() {
        List<Object> progress = Collections.synchronizedList(new ArrayList<>());
        Tool tool = new Tool("t", (input, ctx) -> {
            ctx.emitProgress().receive(Map.of("phase", 1), ctx);
            return "ok";
        }, "d", OBJECT, null, null, null, value -> Map.of("phase", nested("progress ok")), false, null, null, null, "fail-run");
        within(() -> agent(new AgentDefinition("outer", List.of(tool))).run(new RunOptions("go",
            client(calls(call("c1", "t", "{}")), text("done"))).withOnEvent(e -> {
                if (e.type().equals("tool.preliminary_result")) {
                    progress.add(e.details().get("result"));
                }
            })));
        assertEquals(List.of(Map.of("phase", "progress ok")), progress);
    }

    @Test
    void parseOutputRunsAnotherAgent() {
        AgentDefinition definition = new AgentDefinition("outer", null, null, null, List.of(), 0,
            text -> text + " / " + nested("parsed"), null, null, null);
        assertEquals("raw / parsed", within(() -> agent(definition).run("go", client(text("raw")))).output());
    }

    @Test
    void approvalPredicatesRunAnotherAgent() {
        Tool tool = new Tool("t", (input, ctx) -> "ran", "d", OBJECT, null, null, null, null, false,
            (input, ctx) -> nested("yes").equals("yes"), null, null, "fail-run");
        RunResult paused = within(() -> agent(new AgentDefinition("outer", List.of(tool)))
            .run("go", client(calls(call("c1", "t", "{}")), text("done"))));
        assertEquals("waiting_for_human", paused.status());

        AgentSdk.Agent byAgent = agent(new AgentDefinition("outer", List.of(new Tool("u", (input, ctx) -> "ran")))
            .withRequireApproval((call, ctx) -> nested("no").equals("yes")));
        assertEquals("completed", within(() -> byAgent.run("go", client(calls(call("c1", "u", "{}")), text("done")))).status());
    }

    @Test
    void toolHooksRunAnotherAgent() {
        Tool ask = new Tool("ask", (input, ctx) -> "never", "d", OBJECT, null, null, null, null, false, null,
            (input, ctx) -> new ToolCalledResult(false, null),
            (value, ctx) -> value + " / " + nested("received"), "fail-run");
        Tool auto = new Tool("auto", (input, ctx) -> "never", "d", OBJECT, null, null, null, null, false, null,
            (input, ctx) -> new ToolCalledResult(true, nested("answered")), null, "fail-run");
        AgentSdk.Agent outer = agent(new AgentDefinition("outer", List.of(ask, auto)));
        RunResult paused = within(() -> outer.run("go",
            client(calls(call("h1", "ask", "{}"), call("h2", "auto", "{}")), text("done"))));
        assertEquals("waiting_for_human", paused.status());
        RunResult done = within(() -> outer.continueRun(new ContinueOptions(paused, client(text("done"))).output("h1", "yes")));
        assertEquals("completed", done.status());
        assertTrue(((String) Scripts.toolMessages(done).get("h1").get("content")).contains("yes / received"));
        assertTrue(((String) Scripts.toolMessages(done).get("h2").get("content")).contains("answered"));
    }

    @Test
    void anExecutorRunsAnotherAgent() {
        Tool tool = new Tool("t", (input, ctx) -> nested("from the inner agent"));
        RunResult result = within(() -> agent(new AgentDefinition("outer", List.of(tool)))
            .run("go", client(calls(call("c1", "t", "{}")), text("done"))));
        assertTrue(((String) Scripts.toolMessages(result).get("c1").get("content")).contains("from the inner agent"));
    }

    @Test
    void perTurnFunctionsRunAnotherAgent() {
        List<Object> seen = Collections.synchronizedList(new ArrayList<>());
        AgentSdk.ModelClient model = request -> {
            seen.add(request.get("instructions"));
            seen.add(request.get("model"));
            return Map.of("text", "done");
        };
        AgentDefinition definition = new AgentDefinition("outer", null, null, null, List.of(), 0, null, null, null, null,
            null, null, null, turn -> nested("model-x"), turn -> nested("be brief"), null, null, null, null);
        within(() -> agent(definition).run("go", model));
        assertEquals(List.of("be brief", "model-x"), seen);
    }

    @Test
    void aModelClientRunsAnotherAgent() {
        AgentSdk.ModelClient model = request -> Map.of("text", nested("delegated"));
        assertEquals("delegated", within(() -> agent(new AgentDefinition("outer", List.of())).run("go", model)).output());
    }

    @Test
    void stopConditionsAndReviewRunAnotherAgent() {
        AgentDefinition stopping = new AgentDefinition("outer", List.of(new Tool("t", (input, ctx) -> "ok")))
            .withStopWhen(List.of(state -> nested("enough")));
        RunResult stopped = within(() -> agent(stopping).run("go", client(calls(call("c1", "t", "{}")), text("done"))));
        assertEquals("stopped", stopped.status());
        assertEquals("enough", stopped.stopReason());

        AgentDefinition reviewed = new AgentDefinition("outer", null, null, null, List.of(), 0, null,
            context -> new AgentSdk.HumanReviewRequest(nested("look"), null), null, null);
        RunResult paused = within(() -> agent(reviewed).run("go", client(text("done"))));
        assertEquals("waiting_for_human", paused.status());
        assertEquals("look", paused.pause().get("reason"));
    }

    @Test
    void anEventListenerRunsAnotherAgent() {
        List<String> answers = Collections.synchronizedList(new ArrayList<>());
        within(() -> agent(new AgentDefinition("outer", List.of())).run(new RunOptions("go", client(text("done")))
            .withOnEvent(e -> {
                if (e.type().equals("run.completed")) {
                    answers.add(nested("heard"));
                }
            })));
        assertEquals(List.of("heard"), answers);
    }

    @Test
    void aCancelledRunStopsWaitingForABlockedValidator() throws Exception {
        // The validator keeps its thread (nothing interrupts it) but not the run.
        java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        AgentSdk.Agent outer = agent(new AgentDefinition("outer", List.of()).withOutputSchema(value -> {
            entered.countDown();
            release.await();
            return value;
        }));
        app.phaseo.agent.CancelToken token = new app.phaseo.agent.CancelToken();
        try {
            CompletableFuture<RunResult> run = outer.runAsync(new RunOptions("go", client(text("draft"))).withCancel(token));
            assertTrue(entered.await(20, java.util.concurrent.TimeUnit.SECONDS), "the validator did not start");
            token.cancel();
            assertEquals("cancelled", run.get(20, java.util.concurrent.TimeUnit.SECONDS).status());
        } finally {
            release.countDown();
        }
    }

    @Test
    void aCancelledRunStopsWaitingForABlockedListener() throws Exception {
        // The listener keeps its thread (nothing interrupts it) but not the run, cancelled by
        // its token or by cancelling the run's future; it still gets the later events, in order.
        for (boolean byToken : new boolean[] {true, false}) {
            java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            List<String> seen = Collections.synchronizedList(new ArrayList<>());
            AgentSdk.Agent outer = agent(new AgentDefinition("outer", List.of()));
            app.phaseo.agent.CancelToken token = new app.phaseo.agent.CancelToken();
            try {
                CompletableFuture<RunResult> run = outer.runAsync(new RunOptions("go", client(text("draft"))).withCancel(token)
                    .withOnEvent(e -> {
                        seen.add(e.type());
                        if (e.type().equals("run.started")) {
                            entered.countDown();
                            try {
                                release.await();
                            } catch (InterruptedException interrupted) {
                                Thread.currentThread().interrupt();
                            }
                        }
                    }));
                assertTrue(entered.await(20, java.util.concurrent.TimeUnit.SECONDS), "the listener did not start");
                if (byToken) {
                    token.cancel();
                    assertEquals("cancelled", run.get(20, java.util.concurrent.TimeUnit.SECONDS).status());
                } else {
                    run.cancel(true);
                    assertThrows(java.util.concurrent.CancellationException.class, () -> run.get(20, java.util.concurrent.TimeUnit.SECONDS));
                }
            } finally {
                release.countDown();
            }
            if (byToken) {
                long until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
                while (!seen.contains("run.cancelled") && System.nanoTime() < until) {
                    Thread.sleep(10);
                }
                assertEquals("run.started", seen.get(0));
                assertEquals("run.cancelled", seen.get(seen.size() - 1), seen.toString());
            }
        }
    }

    @Test
    void manyRunsAtOnceEachValidateThroughAnotherAgent() {
        // More outer runs than the machine has cores, each holding a callback thread while its
        // nested run goes on: none may wait on another's thread.
        int runs = Runtime.getRuntime().availableProcessors() * 4;
        AgentSdk.Agent outer = agent(new AgentDefinition("outer", List.of())
            .withOutputSchema(value -> value + " / " + nested("checked")));
        List<CompletableFuture<RunResult>> all = new ArrayList<>();
        within(() -> {
            for (int i = 0; i < runs; i++) {
                all.add(outer.runAsync(new RunOptions("go", client(text("draft " + i)))));
            }
            for (int i = 0; i < runs; i++) {
                assertEquals("draft " + i + " / checked", all.get(i).join().output());
            }
            return null;
        });
    }
}
