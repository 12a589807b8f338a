package app.phaseo.agent.javaapi;

import static app.phaseo.agent.javaapi.Scripts.call;
import static app.phaseo.agent.javaapi.Scripts.calls;
import static app.phaseo.agent.javaapi.Scripts.client;
import static app.phaseo.agent.javaapi.Scripts.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.AgentException;
import app.phaseo.agent.AgentSdk.ContinueOptions;
import app.phaseo.agent.AgentSdk.RunOptions;
import app.phaseo.agent.AgentSdk.RunResult;
import app.phaseo.agent.AgentSdk.StreamResult;
import app.phaseo.agent.AgentSdk.Tool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Runs, pauses, continues, futures, streams and stop conditions through the Java API. */
class AgentSdkRunsTest {
    private static AgentSdk.Agent agent(Tool... tools) {
        return AgentSdk.createAgent(new AgentDefinition("java-agent", List.of(tools)));
    }

    private static Tool approvalTool() {
        return new Tool("pay", (input, ctx) -> Map.of("paid", ((Map<?, ?>) input).get("amount")), "Pays",
            Map.of("type", "object"), null, null, null, null, true, null, null, null, "fail-run");
    }

    @Test
    void aBlockingRunsStatusAndOutputAreThoseOfItsState() {
        // The blocking run hands its status and a short output over as it ends; the state
        // read back from JSON answers from the native result: both must agree, for texts
        // that need escaping, for an output longer than what is handed over, and for a
        // paused run (no output).
        String escaped = "say \"hi\"\n\\ tab\t é 😀 \u0001";
        String longText = "x".repeat(5_000);
        for (String answer : List.of("done", "", escaped, longText)) {
            RunResult run = agent().run("go", client(text(answer)));
            RunResult read = RunResult.fromJson(run.toJson());
            assertEquals("completed", run.status());
            if (!answer.isEmpty()) {
                assertEquals(answer, run.output());
            }
            assertEquals(read.output(), run.output());
            assertEquals(read.status(), run.status());
        }
        RunResult paused = agent(approvalTool()).run("pay 5", client(calls(call("c1", "pay", "{\"amount\":5}"))));
        assertEquals("waiting_for_human", paused.status());
        assertNull(paused.output());
        assertEquals(RunResult.fromJson(paused.toJson()).status(), paused.status());
    }

    @Test
    void pauseGoesThroughJsonAndAnotherAgentContinues() {
        RunResult paused = agent(approvalTool()).run("pay 5", client(calls(call("c1", "pay", "{\"amount\":5}")), text("Paid.")));
        assertEquals("waiting_for_human", paused.status());
        assertEquals("tool_approval", paused.pause().get("kind"));
        String json = paused.toJson();

        // As another process would: a fresh agent and the state from its JSON text.
        RunResult restored = RunResult.fromJson(json);
        assertEquals(paused.id(), restored.id());
        RunResult done = agent(approvalTool()).continueRun(new ContinueOptions(restored, client(text("Paid."))).approve("c1"));
        assertEquals("completed", done.status());
        assertEquals("Paid.", done.output());
        assertTrue(((String) Scripts.toolMessages(done).get("c1").get("content")).contains("\"paid\":5"));
        assertEquals(paused.id(), done.id());
        assertTrue(done.usage().containsKey("totalTokens"));
        assertEquals(2, done.steps().size());
        assertEquals("completed", done.run().get("status"));
    }

    @Test
    void aRefusedContinueThrowsContinueInvalidAndTheStateStaysUsable() {
        AgentSdk.Agent agent = agent(approvalTool());
        RunResult paused = agent.run("pay", client(calls(call("c1", "pay", "{\"amount\":5}")), text("Paid.")));

        AgentException undecided = assertThrows(AgentException.class,
            () -> agent.continueRun(new ContinueOptions(paused, client(text("x")))));
        assertEquals("continue_invalid", undecided.code());
        assertNull(undecided.state());
        AgentException unknown = assertThrows(AgentException.class,
            () -> agent.continueRun(new ContinueOptions(paused, client(text("x"))).approve("c1", "nope")));
        assertEquals("continue_invalid", unknown.code());
        assertTrue(unknown.getMessage().contains("nope"), unknown.getMessage());
        AgentException badState = assertThrows(AgentException.class, () -> RunResult.fromJson("{\"run\": 1}"));
        assertEquals("state_invalid", badState.code());

        RunResult done = agent.continueRun(new ContinueOptions(paused, client(text("Paid."))).approve("c1"));
        assertEquals("completed", done.status());
        AgentException again = assertThrows(AgentException.class,
            () -> agent.continueRun(new ContinueOptions(done, client(text("x"))).approve("c1")));
        assertEquals("continue_invalid", again.code());
    }

    @Test
    void futuresCompleteWithResultsOrTheException() throws Exception {
        AgentSdk.Agent agent = agent(approvalTool());
        CompletableFuture<RunResult> paused = agent.runAsync(new RunOptions("pay",
            client(calls(call("c1", "pay", "{\"amount\":1}")), text("ok"))));
        RunResult state = paused.get(10, TimeUnit.SECONDS);
        assertEquals("waiting_for_human", state.status());
        RunResult done = agent.continueRunAsync(new ContinueOptions(state, client(text("ok"))).approve("c1")).get(10, TimeUnit.SECONDS);
        assertEquals("ok", done.output());

        Tool boom = new Tool("boom", (input, ctx) -> {
            throw new IllegalStateException("boom");
        });
        ExecutionException e = assertThrows(ExecutionException.class,
            () -> agent(boom).runAsync(new RunOptions("go", client(calls(call("c1", "boom", "{}"))))).get(10, TimeUnit.SECONDS));
        AgentException cause = assertInstanceOf(AgentException.class, e.getCause());
        assertEquals("tool_failed", cause.code());
        assertEquals("failed", cause.state().status());
    }

    @Test
    void cancellingTheFutureCancelsTheRunAndInterruptsTheTool() throws Exception {
        java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch interrupted = new java.util.concurrent.CountDownLatch(1);
        Tool hang = new Tool("hang", (input, ctx) -> {
            started.countDown();
            try {
                Thread.sleep(30_000);
            } catch (InterruptedException e) {
                interrupted.countDown();
            }
            return "late";
        });
        CompletableFuture<RunResult> future = agent(hang).runAsync(new RunOptions("go", client(calls(call("c1", "hang", "{}")), text("x"))));
        assertTrue(started.await(10, TimeUnit.SECONDS));
        future.cancel(true);
        assertTrue(interrupted.await(10, TimeUnit.SECONDS), "the tool's thread was not interrupted");
    }

    @Test
    void streamsDeliverEventsTextAndTheResult() {
        Tool add = new Tool("add", (input, ctx) -> {
            ctx.emitProgress().receive("adding", ctx);
            return 3;
        });
        StreamResult stream = agent(add).stream(new RunOptions("1+2?", client(calls(call("c1", "add", "{}")), text("It is 3."))));
        List<String> live = new ArrayList<>();
        for (AgentSdk.AgentEvent event : stream.events()) {
            live.add(event.type());
        }
        assertTrue(live.contains("tool.preliminary_result"), live.toString());
        assertTrue(live.contains("tool.completed"), live.toString());
        assertEquals(live, Scripts.types(stream.fullStream()));
        assertEquals("It is 3.", String.join("", stream.textStream()));
        assertEquals("completed", stream.getResult().status());
        assertEquals("completed", stream.resultAsync().join().status());

        StreamResult paused = agent(approvalTool()).stream(new RunOptions("pay", client(calls(call("c1", "pay", "{\"amount\":2}")), text("ok"))));
        RunResult state = paused.getResult();
        assertEquals("waiting_for_human", state.status());
        StreamResult resumed = agent(approvalTool()).continueStream(new ContinueOptions(state, client(text("ok"))).approve("c1"));
        assertEquals("ok", resumed.getResult().output());

        Tool boom = new Tool("boom", (input, ctx) -> {
            throw new IllegalStateException("kaput");
        });
        StreamResult failing = agent(boom).stream(new RunOptions("go", client(calls(call("c1", "boom", "{}")))));
        assertTrue(Scripts.types(failing.fullStream()).contains("tool.failed"));
        assertEquals("tool_failed", assertThrows(AgentException.class, failing::getResult).code());
    }

    @Test
    void aStreamCanBeCancelled() {
        Tool hang = new Tool("hang", (input, ctx) -> {
            Thread.sleep(30_000);
            return "late";
        });
        StreamResult stream = agent(hang).stream(new RunOptions("go", client(calls(call("c1", "hang", "{}")), text("x"))));
        for (AgentSdk.AgentEvent event : stream.events()) {
            if ("tool.started".equals(event.type())) {
                stream.cancel();
            }
        }
        assertEquals("cancelled", stream.getResult().status());
    }

    @Test
    void stopConditionsHumanReviewParseOutputAndRetries() {
        Tool again = new Tool("again", (input, ctx) -> "more");
        AgentSdk.ModelClient loop = request -> calls(call("c" + System.nanoTime(), "again", "{}"));
        RunResult stopped = AgentSdk.createAgent(new AgentDefinition("stopper", List.of(again))
            .withStopWhen(List.of(AgentSdk.stepCountIs(2)))).run("go", loop);
        assertEquals("stopped", stopped.status());
        assertEquals("step_count:2", stopped.stopReason());

        RunResult custom = AgentSdk.createAgent(new AgentDefinition("custom", List.of(again))
            .withStopWhen(List.of(state -> ((Number) state.get("stepCount")).intValue() >= 3 ? "enough" : null))).run("go", loop);
        assertEquals("enough", custom.stopReason());

        java.util.concurrent.atomic.AtomicInteger reviews = new java.util.concurrent.atomic.AtomicInteger();
        AgentSdk.Agent reviewed = AgentSdk.createAgent(new AgentDefinition("reviewed", null, null, null, List.of(), 0,
            text -> Map.of("answer", text.toUpperCase()),
            ctx -> reviews.getAndIncrement() == 0 ? new AgentSdk.HumanReviewRequest("check it", Map.of("n", 1)) : null,
            new AgentSdk.ModelRetryConfig(2, Duration.ofMillis(1)), new AgentSdk.ToolExecutionConfig(4)));
        int[] calls = {0};
        AgentSdk.ModelClient flaky = request -> {
            if (calls[0]++ == 0) {
                throw new java.io.IOException("503");
            }
            return text("draft");
        };
        RunResult review = reviewed.run("write", flaky);
        assertEquals("waiting_for_human", review.status());
        assertEquals("check it", review.pause().get("reason"));
        assertEquals(Map.of("n", 1), review.pause().get("payload"));
        assertEquals(2, calls[0]);
        RunResult approved = reviewed.continueRun(new ContinueOptions(review, client(text("final"))).withHumanInput("looks good"));
        assertEquals("completed", approved.status());
        assertEquals(Map.of("answer", "FINAL"), approved.output());
    }

    @Test
    void aModelClientFailureIsModelFailed() {
        AgentSdk.ModelClient down = request -> {
            throw new java.io.IOException("connection refused");
        };
        AgentException e = assertThrows(AgentException.class, () -> agent().run("hi", down));
        assertEquals("model_failed", e.code());
        assertTrue(e.getMessage().contains("connection refused"), e.getMessage());
    }
}
