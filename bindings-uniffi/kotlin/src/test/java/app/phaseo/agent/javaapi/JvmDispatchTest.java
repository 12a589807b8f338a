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
}
