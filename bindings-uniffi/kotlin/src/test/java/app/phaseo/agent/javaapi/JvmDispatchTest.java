package app.phaseo.agent.javaapi;

import static app.phaseo.agent.javaapi.Scripts.call;
import static app.phaseo.agent.javaapi.Scripts.calls;
import static app.phaseo.agent.javaapi.Scripts.client;
import static app.phaseo.agent.javaapi.Scripts.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.RunOptions;
import app.phaseo.agent.AgentSdk.RunResult;
import app.phaseo.agent.AgentSdk.Tool;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The threads that run the Java API's tools (JvmDispatch.kt, bindings-uniffi/src/jvm_dispatch.rs):
 * they are reused from call to call, so what one call leaves on its thread must not reach
 * the next one.
 */
class JvmDispatchTest {
    @Test
    void anInterruptForATimedOutCallDoesNotReachTheNextCallsOnItsThread() throws Exception {
        CountDownLatch interrupted = new CountDownLatch(1);
        Tool slow = new Tool("slow", (input, ctx) -> {
            try {
                Thread.sleep(30_000);
                return "late";
            } catch (InterruptedException e) {
                interrupted.countDown();
                return "interrupted";
            }
        }, "Sleeps", Map.of("type", "object"), Duration.ofMillis(300), null, null, null, false, null, null, null,
            "return-to-model");
        List<String> seen = new ArrayList<>();
        Tool after = new Tool("after", (input, ctx) -> {
            boolean flagged = Thread.currentThread().isInterrupted();
            // Throws if an interrupt meant for the slow call were still pending here.
            Thread.sleep(1);
            synchronized (seen) {
                seen.add(flagged ? "interrupted" : "clear");
            }
            return "ok";
        });
        AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("dispatch", List.of(slow, after)).withMaxSteps(100));

        RunResult first = agent.run(new RunOptions("go", client(calls(call("c1", "slow", "{}")), text("done"))));
        assertEquals("completed", first.status());
        assertTrue(interrupted.await(10, TimeUnit.SECONDS), "the slow call's thread was not interrupted");

        // Then many quick calls, one turn after the other: the interrupted thread takes some.
        List<Object> turns = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            turns.add(calls(call("a" + i, "after", "{}")));
        }
        turns.add(text("done"));
        RunResult second = agent.run(new RunOptions("go", AgentSdk.scriptedClient(turns)));
        assertEquals("completed", second.status());
        assertEquals(50, seen.size());
        assertTrue(seen.stream().allMatch("clear"::equals), seen.toString());
    }

    @Test
    void aContextKeptPastItsCallStillAnswersAndOneNeverReadIsReleased() throws Exception {
        // A body that never reads its context, many times (their runtimes are released once
        // unreachable), and one that keeps its context and reads it only after the run.
        List<AgentSdk.RuntimeContext> kept = new ArrayList<>();
        Tool quiet = new Tool("quiet", (input, ctx) -> ((Map<?, ?>) input).get("n"));
        Tool keeper = new Tool("keeper", (input, ctx) -> {
            synchronized (kept) {
                kept.add(ctx);
            }
            return "kept";
        });
        List<Object> turns = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            turns.add(calls(call("q" + i, "quiet", "{\"n\":" + i + "}"), call("k" + i, "keeper", "{}")));
        }
        turns.add(text("done"));
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("contexts", List.of(quiet, keeper)).withMaxSteps(100))) {
            RunResult result = agent.run(new RunOptions("go", AgentSdk.scriptedClient(turns)));
            assertEquals("completed", result.status());
            System.gc();
            assertEquals(20, kept.size());
            for (int i = 0; i < 20; i++) {
                AgentSdk.RuntimeContext ctx = kept.get(i);
                assertEquals(result.id(), ctx.runId());
                assertEquals("k" + i, ctx.toolCall().id());
                assertEquals("keeper", ctx.toolCall().name());
                assertEquals(i, ctx.stepIndex());
            }
        }
    }

    @Test
    void turnsOfManyQuickCallsBackToBackStartFewThreads() throws Exception {
        // While a turn's calls wait, a call in progress for longer than a moment counts as
        // blocked and threads are started for the calls behind it. A pause of the whole JVM
        // (the collector's) or a class being loaded holds every call in progress at once:
        // one such moment may start a few threads, not double them every time. Turns of 500
        // quick calls, back to back, with collections in between.
        Tool quick = new Tool("quick", (input, ctx) -> ((Map<?, ?>) input).get("n"));
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        AgentDefinition definition = new AgentDefinition("quick-turns", List.of(quick))
            .withMaxSteps(5)
            .withToolExecution(new AgentSdk.ToolExecutionConfig(1000));
        try (AgentSdk.Agent agent = AgentSdk.createAgent(definition)) {
            List<Map<String, Object>> fan = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                fan.add(call("c" + i, "quick", "{\"n\":" + i + "}"));
            }
            long before = threads.getTotalStartedThreadCount();
            for (int run = 0; run < 200; run++) {
                if (run % 10 == 0) {
                    System.gc();
                }
                RunResult result = agent.run(new RunOptions("go", AgentSdk.scriptedClient(List.of(Map.of("toolCalls", fan), text("done")))));
                assertEquals("completed", result.status());
            }
            long started = threads.getTotalStartedThreadCount() - before;
            assertTrue(started <= 64, started + " threads started over 200 turns of 500 quick calls");
        }
    }
}
