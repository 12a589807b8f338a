package app.phaseo.agent.javaapi;

import static app.phaseo.agent.javaapi.Scripts.call;
import static app.phaseo.agent.javaapi.Scripts.calls;
import static app.phaseo.agent.javaapi.Scripts.client;
import static app.phaseo.agent.javaapi.Scripts.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import app.phaseo.agent.AgentSdk.Tool;
import app.phaseo.agent.AgentSdk.ToolCalledResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Every feature of the Tools page, in the product's Java shapes. */
class AgentSdkToolsTest {
    private static final Map<String, Object> OBJECT = Map.of("type", "object");

    private static AgentSdk.Agent agent(Tool... tools) {
        return AgentSdk.createAgent(new AgentDefinition("java-agent", List.of(tools)));
    }

    @Test
    void theThreeConstructorsAndTheRuntimeContext() {
        List<Object> seen = Collections.synchronizedList(new ArrayList<>());
        Tool minimal = AgentSdk.defineTool(new Tool("ping", (input, context) -> "pong"));
        Tool weather = AgentSdk.defineTool(new Tool("weather", (input, context) -> {
            seen.add(context.runId());
            seen.add(context.agentId());
            seen.add(context.stepIndex());
            seen.add(context.context());
            seen.add(context.toolCall());
            @SuppressWarnings("unchecked")
            Map<String, Object> in = (Map<String, Object>) input;
            return Map.of("city", in.get("city"), "celsius", 21, "sunny", true, "tags", List.of("a", 1.5));
        }, "Current weather", Map.of("type", "object", "properties", Map.of("city", Map.of("type", "string"))), Duration.ofSeconds(5)));
        Tool full = AgentSdk.defineTool(new Tool("full", (input, context) -> "ok", "All options", OBJECT, null,
            null, null, null, false, null, null, null, "fail-run"));
        assertEquals("ping", minimal.id());
        assertEquals(Duration.ofSeconds(5), weather.timeout());
        assertEquals("fail-run", full.onError());

        RunResult result = agent(minimal, weather, full).run(new RunOptions("weather?",
            client(calls(call("c1", "weather", "{\"city\":\"Oslo\"}"), call("c2", "ping", "{}")), text("Sunny")),
            Map.of("user", "ada")));
        assertEquals("completed", result.status());
        assertEquals("Sunny", result.output());
        assertEquals(result.id(), seen.get(0));
        assertEquals("java-agent", seen.get(1));
        assertEquals(0, seen.get(2));
        assertEquals(Map.of("user", "ada"), seen.get(3));
        assertEquals(new AgentSdk.ToolCall("c1", "weather", Map.of("city", "Oslo")), seen.get(4));
        Map<String, Map<String, Object>> messages = Scripts.toolMessages(result);
        String content = (String) messages.get("c1").get("content");
        assertTrue(content.contains("\"celsius\":21") && content.contains("\"tags\":[\"a\",1.5]"), content);
    }

    @Test
    void aBadDefinitionIsRefusedWithACode() {
        AgentException e = assertThrows(AgentException.class,
            () -> AgentSdk.defineTool(new Tool("x", (i, c) -> 1, "d", null, null, null, null, null, false, null, null, null, "explode")));
        assertEquals("definition_invalid", e.code());
        assertTrue(e.getMessage().contains("explode"), e.getMessage());
        assertEquals("definition_invalid", assertThrows(AgentException.class,
            () -> AgentSdk.defineTool(new Tool("", (i, c) -> 1))).code());
    }

    @Test
    void validatorsCheckInputOutputAndProgress() {
        AgentSdk.Validator positive = value -> {
            Object n = ((Map<?, ?>) value).get("n");
            if (!(n instanceof Number) || ((Number) n).intValue() < 0) {
                throw new IllegalArgumentException("n must be a positive number");
            }
            return value;
        };
        Tool square = new Tool("square", (input, ctx) -> {
            int n = ((Number) ((Map<?, ?>) input).get("n")).intValue();
            ctx.emitProgress().receive(Map.of("phase", "squaring"), ctx);
            return Map.of("result", n * n);
        }, "Squares", OBJECT, null, positive, AgentSdk.jsonSchema(Map.of("type", "object", "required", List.of("result"))),
            AgentSdk.jsonSchema(Map.of("type", "object", "required", List.of("phase"))), false, null, null, null, "fail-run");

        RunResult ok = agent(square).run("go", client(calls(call("c1", "square", "{\"n\":4}")), text("16")));
        assertEquals("completed", ok.status());
        assertTrue(((String) Scripts.toolMessages(ok).get("c1").get("content")).contains("16"));

        AgentException bad = assertThrows(AgentException.class,
            () -> agent(square).run("go", client(calls(call("c1", "square", "{\"n\":-1}")))));
        assertEquals("tool_input_invalid", bad.code());
        assertTrue(bad.getMessage().contains("n must be a positive number"), bad.getMessage());
        assertEquals("failed", bad.state().status());

        Tool noisy = new Tool("noisy", (input, ctx) -> {
            ctx.emitProgress().receive(Map.of("wrong", true), ctx);
            return "never";
        }, "d", OBJECT, null, null, null, AgentSdk.jsonSchema(Map.of("type", "object", "required", List.of("phase"))),
            false, null, null, null, "return-to-model");
        assertEquals("tool_event_invalid", assertThrows(AgentException.class,
            () -> agent(noisy).run("go", client(calls(call("c1", "noisy", "{}")), text("x")))).code());

        Tool liar = new Tool("liar", (input, ctx) -> List.of(1), "d", OBJECT, null, null,
            AgentSdk.jsonSchema(Map.of("type", "object")), null, false, null, null, null, "fail-run");
        assertEquals("tool_output_invalid", assertThrows(AgentException.class,
            () -> agent(liar).run("go", client(calls(call("c1", "liar", "{}")), text("x")))).code());
    }

    @Test
    void progressAndContextReachEventsAndLaterTurns() {
        List<AgentSdk.AgentEvent> events = Collections.synchronizedList(new ArrayList<>());
        Tool index = new Tool("index", (input, ctx) -> {
            ctx.emitProgress().receive(Map.of("phase", "scan"), ctx);
            ctx.emitProgress().receive(Map.of("phase", "embed"), ctx);
            ctx.setContext().accept(Map.of("indexed", true));
            return Map.of("indexed", 248);
        });
        RunResult result = agent(index).run(new RunOptions("index", client(calls(call("c1", "index", "{}")), text("done")),
            Map.of("indexed", false)).withOnEvent(events::add));
        assertEquals(Map.of("indexed", true), result.context());
        List<Object> progress = new ArrayList<>();
        for (AgentSdk.AgentEvent e : events) {
            if ("tool.preliminary_result".equals(e.type())) {
                progress.add(e.details().get("result"));
            }
        }
        assertEquals(List.of(Map.of("phase", "scan"), Map.of("phase", "embed")), progress);
    }

    @Test
    void approvalByFlagByFunctionAndByTheAgent() {
        AtomicInteger deployed = new AtomicInteger();
        Tool deploy = new Tool("deploy", (input, ctx) -> "deployed " + deployed.incrementAndGet(), "Deploy", OBJECT, null,
            null, null, null, false,
            (input, ctx) -> "production".equals(((Map<?, ?>) input).get("environment")), null, null, "fail-run");
        Tool wipe = new Tool("wipe", (input, ctx) -> "wiped", "Wipe", OBJECT, null, null, null, null, true, null, null, null, "fail-run");
        AgentSdk.Agent agent = agent(deploy, wipe);

        RunResult paused = agent.run("ship", client(calls(call("c1", "deploy", "{\"environment\":\"staging\"}"),
            call("c2", "deploy", "{\"environment\":\"production\"}"), call("c3", "wipe", "{}")), text("done")));
        assertEquals("waiting_for_human", paused.status());
        assertEquals(1, deployed.get());
        List<Object> pending = new ArrayList<>();
        for (Map<String, Object> p : paused.pendingToolCalls()) {
            pending.add(((Map<?, ?>) p.get("call")).get("id"));
            assertEquals("approval", p.get("kind"));
        }
        assertEquals(List.of("c2", "c3"), pending);

        RunResult done = agent.continueRun(new ContinueOptions(RunResult.fromJson(paused.toJson()),
            client(text("done"))).approve("c2").reject("c3", "not today"));
        assertEquals("completed", done.status());
        assertEquals(2, deployed.get());
        assertTrue(((String) Scripts.toolMessages(done).get("c3").get("content")).contains("not today"));

        AgentSdk.Agent strict = AgentSdk.createAgent(new AgentDefinition("strict", List.of(deploy))
            .withRequireApproval((call, ctx) -> call.name().equals("deploy") && ctx.toolCall().id().equals("c9")));
        RunResult held = strict.run("x", client(calls(call("c8", "deploy", "{\"environment\":\"production\"}"),
            call("c9", "deploy", "{\"environment\":\"staging\"}")), text("ok")));
        assertEquals("waiting_for_human", held.status());
        assertEquals("c9", ((Map<?, ?>) held.pendingToolCalls().get(0).get("call")).get("id"));
        assertEquals(1, held.pendingToolCalls().size());
    }

    @Test
    void manualAndInteractiveToolsPauseAndTakeOutputs() {
        Tool lookup = new Tool("lookup", null, "Done by the application", OBJECT, null);
        Tool ask = new Tool("ask", (input, ctx) -> "never runs", "Asks a person", OBJECT, null, null, null, null, false, null,
            (input, ctx) -> "auto".equals(((Map<?, ?>) input).get("mode")) ? new ToolCalledResult(true, "auto answer")
                : new ToolCalledResult(false, null),
            (value, ctx) -> "reviewed: " + value, "fail-run");
        AgentSdk.Agent agent = agent(lookup, ask);
        RunResult paused = agent.run("go", client(calls(call("m1", "lookup", "{}"), call("h1", "ask", "{\"mode\":\"person\"}"),
            call("h2", "ask", "{\"mode\":\"auto\"}")), text("all done")));
        assertEquals("waiting_for_human", paused.status());
        List<Object> kinds = new ArrayList<>();
        for (Map<String, Object> p : paused.pendingToolCalls()) {
            kinds.add(p.get("kind"));
        }
        assertEquals(List.of("manual", "hitl"), kinds);

        RunResult done = agent.continueRun(new ContinueOptions(paused, client(text("all done")))
            .output("m1", Map.of("rows", 3)).output("h1", "yes"));
        assertEquals("completed", done.status());
        Map<String, Map<String, Object>> tools = Scripts.toolMessages(done);
        assertTrue(((String) tools.get("m1").get("content")).contains("\"rows\":3"));
        assertTrue(((String) tools.get("h1").get("content")).contains("reviewed: yes"));
        assertTrue(((String) tools.get("h2").get("content")).contains("auto answer"));
    }

    @Test
    void onErrorReturnToModelAndFailRun() {
        Tool flaky = new Tool("flaky", (input, ctx) -> {
            throw new IllegalStateException("disk full");
        }, "d", OBJECT, null, null, null, null, false, null, null, null, "return-to-model");
        RunResult result = agent(flaky).run("go", client(calls(call("c1", "flaky", "{}")), text("recovered")));
        assertEquals("completed", result.status());
        assertTrue(((String) Scripts.toolMessages(result).get("c1").get("content")).contains("disk full"));

        Tool fatal = new Tool("fatal", (input, ctx) -> {
            throw new java.io.IOException("no network");
        });
        AgentException e = assertThrows(AgentException.class, () -> agent(fatal).run("go", client(calls(call("c1", "fatal", "{}")))));
        assertEquals("tool_failed", e.code());
        assertEquals("no network", e.getMessage());
        assertEquals("failed", e.state().status());

        Tool weird = new Tool("weird", (input, ctx) -> new Object());
        AgentException notJson = assertThrows(AgentException.class, () -> agent(weird).run("go", client(calls(call("c1", "weird", "{}")))));
        assertEquals("tool_output_invalid", notJson.code());
        assertEquals("Invalid tool output: a value of type java.lang.Object has no JSON form", notJson.getMessage());
    }

    record Point(int x, String label) {}

    record Broken(int x) {
        public int x() {
            throw new IllegalStateException("no x");
        }
    }

    enum Stage { INDEXING }

    /** The tool message the model gets for a tool returning [value]. */
    private static Object outputOf(Object value) {
        Tool tool = new Tool("t", (input, ctx) -> value);
        RunResult done = agent(tool).run("go", client(calls(call("c1", "t", "{}")), text("ok")));
        return Scripts.toolMessages(done).get("c1").get("content");
    }

    private static AgentException invalidOutput(Object value, String onError) {
        Tool tool = new Tool("t", (input, ctx) -> value, "d", OBJECT, null, null, null, null, false, null, null, null, onError);
        return assertThrows(AgentException.class, () -> agent(tool).run("go", client(calls(call("c1", "t", "{}")), text("ok"))));
    }

    @Test
    void recordsOptionalsAndEnumsAreValuesAndWhatHasNoJsonFormIsAnInvalidOutput() {
        assertEquals("{\"x\":1,\"label\":\"a\"}", outputOf(new Point(1, "a")));
        assertEquals("v", outputOf(java.util.Optional.of("v")));
        assertEquals("null", outputOf(java.util.Optional.empty()));
        assertEquals("INDEXING", outputOf(Stage.INDEXING));
        assertEquals("[1,2]", outputOf(new int[] {1, 2}));

        Map<String, Object> cyclic = new java.util.HashMap<>();
        cyclic.put("self", cyclic);
        List<Object> deep = new ArrayList<>();
        List<Object> at = deep;
        for (int i = 0; i < 10_000; i++) {
            List<Object> inner = new ArrayList<>();
            at.add(inner);
            at = inner;
        }
        // Pairs, not a map: a cyclic map has no hash code.
        Object[][] expected = {
            {cyclic, "Invalid tool output: value contains a cycle"},
            {deep, "Invalid tool output: value is nested more than 64 levels deep"},
            {new Broken(1), "Invalid tool output: value cannot be read: no x"},
            {Double.NaN, "Invalid tool output: number NaN has no JSON form"},
            {new Thread(), "Invalid tool output: a value of type java.lang.Thread has no JSON form"},
        };
        for (Object[] each : expected) {
            // An output that cannot be stored fails the run whatever onError says.
            for (String onError : new String[] {"fail-run", "return-to-model"}) {
                AgentException e = invalidOutput(each[0], onError);
                assertEquals("tool_output_invalid", e.code(), (String) each[1]);
                assertEquals(each[1], e.getMessage());
                assertEquals("failed", e.state().status());
            }
        }
    }

    @Test
    void aCallerValueWithoutJsonFormIsRefusedBeforeTheRun() {
        Map<String, Object> cyclic = new java.util.HashMap<>();
        cyclic.put("self", cyclic);
        AgentException e = assertThrows(AgentException.class,
            () -> agent().run(new RunOptions(cyclic, client(text("ok")))));
        assertEquals("state_invalid", e.code());
        assertEquals("Invalid run input: value contains a cycle", e.getMessage());
    }

    @Test
    void aPrimitiveArrayCountsTowardsTheDepthOfACallersValue() {
        // 63 lists around an int[]: 64 levels, a value; one more list and it is too deep,
        // refused as any caller's value beyond the limits (before: definition_invalid).
        Object value = new int[] {1};
        for (int i = 0; i < 63; i++) {
            value = List.of(value);
        }
        assertEquals("completed", agent().run(new RunOptions(value, client(text("ok")))).status());
        Object deeper = List.of(value);
        AgentException e = assertThrows(AgentException.class, () -> agent().run(new RunOptions(deeper, client(text("ok")))));
        assertEquals("state_invalid", e.code());
        assertEquals("Invalid run input: value is nested more than 64 levels deep", e.getMessage());

        RunResult paused = agent(new Tool("manual", null)).run("go", client(calls(call("m1", "manual", "{}")), text("ok")));
        AgentException output = assertThrows(AgentException.class,
            () -> agent(new Tool("manual", null)).continueRun(new ContinueOptions(paused, client(text("ok"))).output("m1", deeper)));
        assertEquals("state_invalid", output.code());
        assertEquals("Invalid run tool output for m1: value is nested more than 64 levels deep", output.getMessage());
    }

    @Test
    void aDecimalBeyondAFloatsRangeHasNoJsonForm() {
        // The SDK reads a decimal as a 64-bit float: 1E+400 used to reach the core as text
        // it could not read (definition_invalid, "number out of range").
        java.math.BigDecimal huge = new java.math.BigDecimal("1E+400");
        AgentException input = assertThrows(AgentException.class, () -> agent().run(new RunOptions(huge, client(text("ok")))));
        assertEquals("state_invalid", input.code());
        assertEquals("Invalid run input: number 1E+400 has no JSON form", input.getMessage());
        AgentException result = assertThrows(AgentException.class, () -> agent(new Tool("t", (i, c) -> List.of(huge)))
            .run("go", client(calls(call("c1", "t", "{}")), text("ok"))));
        assertEquals("tool_output_invalid", result.code());
        RunResult tiny = agent(new Tool("t", (i, c) -> List.of(new java.math.BigDecimal("1E-400"), new java.math.BigDecimal("2.50"))))
            .run("go", client(calls(call("c1", "t", "{}")), text("ok")));
        assertEquals("[0,2.5]", Scripts.toolMessages(tiny).get("c1").get("content"));
    }

    @Test
    void aNumberOfAnotherTypeIsWrittenOnlyWhenItsTextIsAJsonNumber() {
        Tool fine = new Tool("t", (input, ctx) -> Map.of("n", new Hostile.OddNumber("12.5e3")));
        RunResult done = agent(fine).run("go", client(calls(call("c1", "t", "{}")), text("ok")));
        assertEquals("{\"n\":12500}", Scripts.toolMessages(done).get("c1").get("content"));
        // Its text used to be written as it was: this one added a key of its own.
        Tool injecting = new Tool("t", (input, ctx) -> Map.of("n", new Hostile.OddNumber("1,\"admin\":true")));
        AgentException e = assertThrows(AgentException.class,
            () -> agent(injecting).run("go", client(calls(call("c1", "t", "{}")), text("ok"))));
        assertEquals("tool_output_invalid", e.code());
        assertTrue(e.getMessage().contains("number 1,\"admin\":true has no JSON form"), e.getMessage());
    }

    @Test
    void anInterruptedExceptionACallbackThrowsItselfIsItsFailure() {
        // Not a cancellation: nothing cancelled the call, so it fails with the exception's
        // message (it used to read "Blocking call was interrupted due to parent cancellation").
        Tool tool = new Tool("t", (input, ctx) -> {
            throw new InterruptedException("gave up waiting for the lock");
        });
        AgentException e = assertThrows(AgentException.class, () -> agent(tool).run("go", client(calls(call("c1", "t", "{}")), text("x"))));
        assertEquals("tool_failed", e.code());
        assertEquals("gave up waiting for the lock", e.getMessage());
        Tool approved = new Tool("a", (input, ctx) -> "ran", "d", OBJECT, null, null, null, null, false, (input, ctx) -> {
            throw new InterruptedException("no answer");
        }, null, null, "fail-run");
        AgentException a = assertThrows(AgentException.class, () -> agent(approved).run("go", client(calls(call("c1", "a", "{}")), text("x"))));
        assertEquals("no answer", a.getMessage());
    }

    @Test
    void interruptingTheThreadThatRunsCancelsTheRunWithTheSdksError() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        Tool block = new Tool("block", (input, ctx) -> {
            started.countDown();
            Thread.sleep(30_000);
            return "late";
        });
        java.util.concurrent.atomic.AtomicReference<Throwable> thrown = new java.util.concurrent.atomic.AtomicReference<>();
        AtomicBoolean stillInterrupted = new AtomicBoolean();
        Thread caller = new Thread(() -> {
            try {
                agent(block).run("go", client(calls(call("c1", "block", "{}")), text("ok")));
            } catch (Throwable t) {
                thrown.set(t);
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            }
        });
        caller.start();
        assertTrue(started.await(20, TimeUnit.SECONDS), "the tool did not start");
        caller.interrupt();
        caller.join(20_000);
        assertFalse(caller.isAlive(), "the interrupted run did not return");
        AgentException e = assertInstanceOf(AgentException.class, thrown.get());
        assertEquals("cancelled", e.code());
        assertTrue(stillInterrupted.get(), "the caller's interrupt status was lost");
    }

    @Test
    void aTimeoutInterruptsTheBlockingExecutorAndTheRunReturnsOnTime() throws Exception {
        CountDownLatch interrupted = new CountDownLatch(1);
        AtomicBoolean finished = new AtomicBoolean();
        Tool slow = new Tool("slow", (input, ctx) -> {
            try {
                Thread.sleep(30_000);
                finished.set(true);
                return "late";
            } catch (InterruptedException e) {
                interrupted.countDown();
                throw e;
            }
        // The deadline is 1 s away so that the executor's thread has begun (and can be
        // interrupted) even when a loaded machine is slow to start it.
        }, "Sleeps", OBJECT, Duration.ofMillis(1_000));
        long start = System.nanoTime();
        AgentException e = assertThrows(AgentException.class, () -> agent(slow).run("go", client(calls(call("c1", "slow", "{}")))));
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertEquals("tool_timeout", e.code());
        // The JDK's timeout type is its cause, for code that looks for it.
        assertInstanceOf(java.util.concurrent.TimeoutException.class, e.getCause());
        assertEquals(e.getMessage(), e.getCause().getMessage());
        assertTrue(ms < 5_000, "took " + ms + " ms");
        assertTrue(interrupted.await(10, TimeUnit.SECONDS), "the executor's thread was not interrupted");
        assertFalse(finished.get());
    }

    @Test
    void fiveHundredConcurrentBlockingTools() {
        int n = 500;
        CountDownLatch all = new CountDownLatch(n);
        Tool wait = new Tool("wait", (input, ctx) -> {
            all.countDown();
            // Only returns once every call is running at the same time.
            if (!all.await(20, TimeUnit.SECONDS)) {
                throw new IllegalStateException("not all calls ran at once");
            }
            return ((Map<?, ?>) input).get("i");
        });
        List<Map<String, Object>> turn = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            turn.add(call("c" + i, "wait", "{\"i\":" + i + "}"));
        }
        AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("many", List.of(wait))
            .withToolExecution(new AgentSdk.ToolExecutionConfig(n)));
        RunResult result = agent.run("go", client(Map.of("toolCalls", turn), text("done")));
        assertEquals("completed", result.status());
        assertEquals(n, Scripts.toolMessages(result).size());
        assertEquals("499", Scripts.toolMessages(result).get("c499").get("content"));
    }

    @Test
    void toolExecutionConfigBoundsConcurrencyAndIsClamped() {
        assertEquals(1, new AgentSdk.ToolExecutionConfig(0).concurrency());
        assertEquals(1, new AgentSdk.ToolExecutionConfig(-3).concurrency());
        AtomicInteger running = new AtomicInteger();
        AtomicInteger peak = new AtomicInteger();
        AtomicInteger limit = new AtomicInteger(2);
        Tool busy = new Tool("busy", (input, ctx) -> {
            peak.accumulateAndGet(running.incrementAndGet(), Math::max);
            // A barrier rather than a fixed sleep: wait (up to 10 s) until the limit is reached,
            // so that threads a loaded machine starts slowly still overlap.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (peak.get() < limit.get() && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            running.decrementAndGet();
            return "ok";
        });
        List<Map<String, Object>> turn = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            turn.add(call("c" + i, "busy", "{}"));
        }
        AgentSdk.Agent agent = agent(busy);
        agent.run(new RunOptions("go", client(Map.of("toolCalls", turn), text("done")))
            .withToolExecution(new AgentSdk.ToolExecutionConfig(2)));
        assertEquals(2, peak.get());
        peak.set(0);
        limit.set(1);
        agent.run(new RunOptions("go", client(Map.of("toolCalls", turn), text("done")))
            .withToolExecution(new AgentSdk.ToolExecutionConfig(0)));
        assertEquals(1, peak.get());
    }

    @Test
    void nextTurnParamsOverrideTheNextRequest() {
        List<Map<String, Object>> requests = Collections.synchronizedList(new ArrayList<>());
        Tool escalate = new Tool("escalate", (input, ctx) -> "escalated", "d", OBJECT, null, null, null, null, false, null, null, null,
            "fail-run", new AgentSdk.NextTurnParams("big-model", "Be thorough.", null, null, null, null));
        AgentSdk.ModelClient model = request -> {
            requests.add(request);
            return requests.size() == 1 ? calls(call("c1", "escalate", "{}")) : text("ok");
        };
        RunResult result = agent(escalate).run("go", model);
        assertEquals("completed", result.status());
        assertEquals("big-model", requests.get(1).get("model"));
        assertEquals("Be thorough.", requests.get(1).get("instructions"));
        assertNull(requests.get(0).get("model"));
    }

    @Test
    void loneSurrogatesInWhatAToolGivesBackAreReplacedNotAHang() {
        // UTF-16 allows "\ud800" alone, UTF-8 does not: the run must still get an answer.
        Tool thrower = new Tool("thrower", (input, context) -> { throw new IllegalStateException("bad \ud800"); });
        Tool returner = new Tool("returner", (input, context) -> Map.of("k\udc00", "v \ud800"));
        AgentException e = assertThrows(AgentException.class,
            () -> agent(thrower).run("go", client(calls(call("c1", "thrower", "{}")), text("x"))));
        assertEquals("tool_failed", e.code());
        assertEquals("bad \uFFFD", e.getMessage());
        RunResult done = agent(returner).run("go", client(calls(call("c1", "returner", "{}")), text("ok")));
        assertEquals("ok", done.output());
        assertEquals("{\"k\uFFFD\":\"v \uFFFD\"}", Scripts.toolMessages(done).get("c1").get("content"));
        AgentException state = assertThrows(AgentException.class, () -> RunResult.fromJson("{\"version\": \"\ud800\"}"));
        assertEquals("state_invalid", state.code());
    }

    @Test
    void aNewContextBeyondTheLimitsIsAnIllegalArgumentInTheTool() {
        // The core refuses an integer past 64 bits; the tool sees the same exception type as
        // for a value with no JSON form, not the binding's internal one.
        List<Throwable> thrown = Collections.synchronizedList(new ArrayList<>());
        Tool tool = new Tool("t", (input, ctx) -> {
            for (Object value : List.of(Map.of("n", java.math.BigInteger.TWO.pow(64)), List.of(Double.NaN))) {
                try {
                    ctx.setContext().accept(value);
                } catch (Throwable e) {
                    thrown.add(e);
                }
            }
            return "ok";
        });
        RunResult done = agent(tool).run("go", client(calls(call("c1", "t", "{}")), text("x")));
        assertEquals("completed", done.status());
        assertEquals(2, thrown.size());
        assertInstanceOf(IllegalArgumentException.class, thrown.get(0));
        assertTrue(thrown.get(0).getMessage().contains("18446744073709551616 does not fit in 64 bits"), thrown.get(0).getMessage());
        assertInstanceOf(IllegalArgumentException.class, thrown.get(1));
    }

    @Test
    void loneSurrogatesInWhatIsHandedToTheSdkAreReplaced() {
        // Progress, a new context, a run's input and context, a tool's description, an output
        // and a reason supplied on continue: each used to throw java.nio's
        // MalformedInputException from the conversion to native text.
        List<Object> progress = Collections.synchronizedList(new ArrayList<>());
        List<Object> contexts = Collections.synchronizedList(new ArrayList<>());
        Tool noisy = new Tool("noisy", (input, ctx) -> {
            ctx.emitProgress().receive(Map.of("phase\udc00", "scan \ud800"), ctx);
            ctx.setContext().accept(List.of("ctx \ud800"));
            return "ok";
        }, "Describes \ud800 itself", OBJECT, null);
        Tool manual = new Tool("manual", null, "d", OBJECT, null);
        AgentSdk.ModelClient model = request -> {
            contexts.add(request.get("context"));
            return contexts.size() == 1
                ? Map.of("toolCalls", List.of(call("c1", "noisy", "{}"), call("c2", "manual", "{}"), call("c3", "noisy", "{}")))
                : Map.of("text", "done");
        };
        AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("java-agent", List.of(noisy, manual))
            .withRequireApproval((call, ctx) -> call.id().equals("c3")));
        RunResult paused = agent.run(new RunOptions("in \ud800", model, Map.of("k\udfff", 1)).withOnEvent(e -> {
            if (e.type().equals("tool.preliminary_result")) {
                progress.add(e.details().get("result"));
            }
        }));
        assertEquals("waiting_for_human", paused.status());
        assertEquals("in \uFFFD", paused.run().get("input"));
        assertEquals(Map.of("k\uFFFD", 1), contexts.get(0));
        assertEquals(List.of(Map.of("phase\uFFFD", "scan \uFFFD")), progress);
        RunResult done = agent.continueRun(new ContinueOptions(paused, model).output("c2", "out \ud800").reject("c3", "no \ud800"));
        assertEquals("completed", done.status());
        assertEquals(List.of("ctx \uFFFD"), contexts.get(1));
        assertEquals("out \uFFFD", Scripts.toolMessages(done).get("c2").get("content"));
        assertTrue(((String) Scripts.toolMessages(done).get("c3").get("content")).contains("no \uFFFD"));
    }
}
