package app.phaseo.agent.javaapi;

import static app.phaseo.agent.javaapi.Scripts.call;
import static app.phaseo.agent.javaapi.Scripts.calls;
import static app.phaseo.agent.javaapi.Scripts.client;
import static app.phaseo.agent.javaapi.Scripts.text;
import static app.phaseo.agent.javaapi.Scripts.toolMessages;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.AgentException;
import app.phaseo.agent.AgentSdk.ContinueOptions;
import app.phaseo.agent.AgentSdk.RunOptions;
import app.phaseo.agent.AgentSdk.RunResult;
import app.phaseo.agent.AgentSdk.Tool;
import app.phaseo.agent.CancelToken;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The blocking {@code run}, {@code continueRun} and {@code recover} are driven by the thread
 * that calls them: a turn's only call runs on that thread, and whatever that call does (block,
 * time out, be cancelled, run another agent) the run still behaves as one on the SDK's threads.
 */
class DrivenRunsTest {
    private static final Map<String, Object> OBJECT = Map.of("type", "object");

    private static AgentSdk.Agent agent(Tool... tools) {
        return AgentSdk.createAgent(new AgentDefinition("driven", List.of(tools)));
    }

    @Test
    void aTurnsOnlyCallRunsOnTheCallingThreadTurnAfterTurn() {
        Thread caller = Thread.currentThread();
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        AtomicBoolean elsewhere = new AtomicBoolean();
        Tool add = new Tool("add", (input, ctx) -> {
            if (ranOn.getAndSet(Thread.currentThread()) != null && Thread.currentThread() != caller) {
                elsewhere.set(true);
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> in = (Map<String, Object>) input;
            return ((Number) in.get("a")).intValue() + ((Number) in.get("b")).intValue();
        }, "Adds", Map.of("type", "object", "properties", Map.of("a", Map.of("type", "integer"), "b", Map.of("type", "integer"))), null);
        Object[] turns = new Object[11];
        for (int i = 0; i < 10; i++) {
            turns[i] = calls(call("c" + i, "add", "{\"a\":" + i + ",\"b\":1}"));
        }
        turns[10] = text("done");
        RunResult result = agent(add).run("go", client(turns));
        assertEquals("completed", result.status());
        assertSame(caller, ranOn.get());
        assertFalse(elsewhere.get(), "a one-call turn ran on another thread");
        assertEquals("10", String.valueOf(toolMessages(result).get("c9").get("content")));
    }

    @Test
    void theCallsOfATurnOfSeveralRunAtOnce() {
        CyclicBarrier together = new CyclicBarrier(3);
        Tool meet = new Tool("meet", (input, ctx) -> {
            together.await(10, TimeUnit.SECONDS); // fails unless the three run at once
            return "met";
        }, "Waits for the others", OBJECT, null);
        RunResult result = AgentSdk.createAgent(new AgentDefinition("driven", List.of(meet))
            .withToolExecution(new AgentSdk.ToolExecutionConfig(3)))
            .run("go", client(calls(call("a", "meet", "{}"), call("b", "meet", "{}"), call("c", "meet", "{}")), text("done")));
        assertEquals("completed", result.status());
        for (String id : List.of("a", "b", "c")) {
            assertEquals("met", toolMessages(result).get(id).get("content"), id);
        }
    }

    @Test
    void aCallOnTheCallingThreadIsTimedOutAndTheCallerIsNotLeftInterrupted() throws Exception {
        Thread caller = Thread.currentThread();
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        CountDownLatch interrupted = new CountDownLatch(1);
        Tool slow = new Tool("slow", (input, ctx) -> {
            ranOn.set(Thread.currentThread());
            try {
                Thread.sleep(30_000);
                return "late";
            } catch (InterruptedException e) {
                interrupted.countDown();
                throw e;
            }
        }, "Sleeps", OBJECT, Duration.ofMillis(300)).withOnError("return-to-model");
        long start = System.nanoTime();
        RunResult result = agent(slow).run("go", client(calls(call("c1", "slow", "{}")), text("gave up")));
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertEquals("completed", result.status());
        assertSame(caller, ranOn.get());
        assertTrue(interrupted.await(0, TimeUnit.SECONDS), "the call was not interrupted");
        assertTrue(ms < 5_000, "took " + ms + " ms");
        assertTrue(String.valueOf(toolMessages(result).get("c1").get("content")).contains("timed out"),
            String.valueOf(toolMessages(result).get("c1")));
        assertFalse(Thread.interrupted(), "the interrupt meant for the call was left on the caller's thread");
    }

    @Test
    void cancellingARunWhoseCallBlocksTheCallingThreadEndsIt() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        Tool hang = new Tool("hang", (input, ctx) -> {
            entered.countDown();
            Thread.sleep(30_000);
            return "late";
        }, "Hangs", OBJECT, null);
        CancelToken token = new CancelToken();
        CompletableFuture.runAsync(() -> {
            try {
                if (entered.await(10, TimeUnit.SECONDS)) {
                    token.cancel();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        long start = System.nanoTime();
        RunResult result = agent(hang).run(new RunOptions("go", client(calls(call("c1", "hang", "{}")), text("no"))).withCancel(token));
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertEquals("cancelled", result.status());
        assertTrue(ms < 5_000, "took " + ms + " ms");
    }

    @Test
    void interruptingTheCallingThreadCancelsTheRunAndKeepsItsInterruptStatus() throws Exception {
        CountDownLatch asked = new CountDownLatch(1);
        AgentSdk.ModelClient stuck = request -> {
            asked.countDown();
            Thread.sleep(30_000);
            return text("late");
        };
        AtomicReference<Object> outcome = new AtomicReference<>();
        AtomicBoolean stillInterrupted = new AtomicBoolean();
        Thread caller = new Thread(() -> {
            try {
                outcome.set(agent().run("go", stuck));
            } catch (Throwable e) {
                outcome.set(e);
            }
            stillInterrupted.set(Thread.currentThread().isInterrupted());
        }, "driven-caller");
        caller.start();
        assertTrue(asked.await(10, TimeUnit.SECONDS));
        caller.interrupt();
        caller.join(5_000);
        assertFalse(caller.isAlive(), "the interrupted run did not end");
        AgentException e = (AgentException) outcome.get();
        assertEquals("cancelled", e.code());
        assertTrue(stillInterrupted.get());
    }

    @Test
    void aContinueIsDrivenByItsCallerToo() {
        Thread caller = Thread.currentThread();
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        Tool deploy = new Tool("deploy", (input, ctx) -> {
            ranOn.set(Thread.currentThread());
            return "deployed";
        }, "Deploys", OBJECT, null).withApproval((input, ctx) -> true);
        AgentSdk.Agent agent = agent(deploy);
        AgentSdk.ModelClient model = client(calls(call("c1", "deploy", "{}")), text("done"));
        RunResult paused = agent.run("go", model);
        assertEquals("waiting_for_human", paused.status());
        assertEquals(null, ranOn.get());
        RunResult done = agent.continueRun(new ContinueOptions(paused, model).approve("c1"));
        assertEquals("completed", done.status());
        assertSame(caller, ranOn.get());
    }

    @Test
    void aRunDrivenInsideACallOnTheCallingThreadRunsItsOwnCallsThere() {
        Thread caller = Thread.currentThread();
        AtomicReference<Thread> innerRanOn = new AtomicReference<>();
        Tool leaf = new Tool("leaf", (input, ctx) -> {
            innerRanOn.set(Thread.currentThread());
            return "leaf ok";
        }, "Leaf", OBJECT, null);
        AgentSdk.Agent inner = agent(leaf);
        Tool outer = new Tool("outer", (input, ctx) -> {
            RunResult r = inner.run("go", client(calls(call("i1", "leaf", "{}")), text("inner done")));
            return r.output();
        }, "Runs the inner agent", OBJECT, null);
        RunResult result = agent(outer).run("go", client(calls(call("o1", "outer", "{}")), text("outer done")));
        assertEquals("completed", result.status());
        assertEquals("inner done", toolMessages(result).get("o1").get("content"));
        assertSame(caller, innerRanOn.get());
        assertNotSame(null, result.output());
    }

    @Test
    void aFailedDrivenRunThrowsWithItsStateAndTheNextRunWorks() {
        Tool boom = new Tool("boom", (input, ctx) -> {
            throw new IllegalStateException("boom");
        }, "Fails", OBJECT, null).withOnError("fail-run");
        AgentSdk.Agent agent = agent(boom);
        AgentException e = assertThrows(AgentException.class, () -> agent.run("go", client(calls(call("c1", "boom", "{}")))));
        assertEquals("tool_failed", e.code());
        assertEquals("failed", e.state().status());
        RunResult next = agent.run("again", client(text("fine")));
        assertEquals("completed", next.status());
    }
}
