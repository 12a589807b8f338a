package app.phaseo.agent.javaapi;

import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.AgentException;
import app.phaseo.agent.AgentSdk.ContinueOptions;
import app.phaseo.agent.AgentSdk.RunOptions;
import app.phaseo.agent.AgentSdk.RunResult;
import app.phaseo.agent.AgentSdk.Tool;
import app.phaseo.agent.AgentSdk.ToolCalledResult;
import app.phaseo.agent.CancelToken;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The risky half of the Java fuzzing, run in a JVM of its own ({@link FuzzTest} starts it
 * and reads its lines), so that a crash or a hang is counted instead of ending the suite:
 * real stack overflows and heap exhaustion in every kind of callback, Errors of every sort,
 * values nested 10,000 deep, callbacks that block for ever (a cancelled run must still end
 * at once), interrupts of the thread that called {@code run}, cancellation at random points
 * of concurrent runs and streams, and refused continues (the state must still continue).
 *
 * <p>Each input {@code i} draws from its own {@code Random(seed * 1_000_003 + i)}, so the
 * parent restarts after a death at the next input and {@code PHASEO_FUZZ_CASE=i} replays one.
 * Lines: {@code BEGIN i <what>}, then {@code END i OK}, {@code END i WRONG <why>} (an
 * outcome outside the documented ones), {@code END i LOST <why>} (a refused continue left
 * the state unusable) or {@code END i LIMIT <why>} (a limit the README states); at the end {@code LEAKS n <what>} and {@code DONE}.
 */
public final class FuzzChild {
    private FuzzChild() {}

    /** How long one input may take before the child reports it as wrong (the parent's bound is longer). */
    static final long BOUND_MS = 15_000;

    private static final Set<String> DOCUMENTED = Set.of(
        "tool_input_invalid", "tool_output_invalid", "tool_event_invalid", "agent_output_invalid", "unknown_tool", "tool_timeout",
        "tool_failed", "max_steps", "continue_invalid", "state_invalid", "model_failed", "gateway", "definition_invalid",
        "cancelled", "store_failed", "lease_lost", "mcp_failed");

    /** Released when the child ends: what the "blocks for ever" callbacks wait on. */
    static final CountDownLatch FOREVER = new CountDownLatch(1);

    /** Callbacks still running (by input), to find those that outlive their run. */
    static final Map<Integer, AtomicInteger> RUNNING = new ConcurrentHashMap<>();

    /** Inputs whose callbacks block for ever on purpose: they keep their threads (documented). */
    static final Set<Integer> BLOCKED_ON_PURPOSE = ConcurrentHashMap.newKeySet();

    static final class Wrong extends RuntimeException {
        final boolean lost;

        Wrong(String why, boolean lost) {
            super(why, null, false, false);
            this.lost = lost;
        }
    }

    /** An outcome the README lists as a known limit: counted apart, not a failure. */
    static final class Limit extends RuntimeException {
        Limit(String why) {
            super(why, null, false, false);
        }
    }

    static Wrong wrong(String why) {
        return new Wrong(why, false);
    }

    public static void main(String[] args) throws Exception {
        long seed = Long.parseLong(args[0]);
        int from = Integer.parseInt(args[1]);
        int to = Integer.parseInt(args[2]);
        for (int i = from; i < to; i++) {
            Random r = new Random(seed * 1_000_003L + i);
            String kind = KINDS[r.nextInt(KINDS.length)];
            System.out.println("BEGIN " + i + " " + kind);
            System.out.flush();
            String verdict;
            try {
                runOne(i, kind, r);
                verdict = "OK";
            } catch (Wrong w) {
                verdict = (w.lost ? "LOST " : "WRONG ") + kind + ": " + Hostile.safe(w.getMessage(), 1500);
            } catch (Limit l) {
                verdict = "LIMIT " + kind + ": " + Hostile.safe(l.getMessage(), 1500);
            } catch (Throwable t) {
                verdict = "WRONG " + kind + ": the probe itself threw " + Hostile.safe(String.valueOf(t), 1500);
            }
            System.out.println("END " + i + " " + verdict);
            System.out.flush();
        }
        System.out.println("LEAKS " + leaks());
        System.out.println("DONE");
        System.out.flush();
        FOREVER.countDown();
        System.exit(0);
    }

    /** Callbacks of ended runs still running (those blocked on purpose aside), after a grace period. */
    private static String leaks() throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            List<String> left = new ArrayList<>();
            RUNNING.forEach((input, n) -> {
                if (n.get() > 0 && !BLOCKED_ON_PURPOSE.contains(input)) {
                    left.add(input + "x" + n.get());
                }
            });
            if (left.isEmpty() || System.nanoTime() > until) {
                return left.size() + " " + left;
            }
            Thread.sleep(100);
        }
    }

    private static final String[] KINDS = {
        "error", "error", "error", "deep", "deep", "interrupt", "forever", "forever", "cancel", "cancel", "concurrent", "stream",
        "continue",
    };

    private static final String[] CALLBACKS = {
        "execute", "inputSchema", "outputSchema", "eventSchema", "agentOutputSchema", "parseOutput", "approval", "callApproval",
        "onToolCalled", "onResponseReceived", "humanReview", "stopWhen", "dynamicInstructions", "model", "listener", "storeSave",
        "storeLoad", "progressValue", "contextValue",
    };

    private static final Map<String, Object> OBJECT = Map.of("type", "object");

    /** What a callback does when its turn comes: throw this, or return what the supplier gives. */
    private static volatile Supplier<Object> behaviour = () -> null;
    private static volatile int currentInput;

    private static Object act(Object normal) {
        AtomicInteger n = RUNNING.computeIfAbsent(currentInput, k -> new AtomicInteger());
        n.incrementAndGet();
        try {
            Object v = behaviour.get();
            return v == NORMAL ? normal : v;
        } finally {
            n.decrementAndGet();
        }
    }

    private static final Object NORMAL = new Object();

    /** A Throwable as host code may raise it, the ones only a real JVM failure raises included. */
    static Throwable raise(Random r) {
        switch (r.nextInt(12)) {
            case 0:
                return recurse(0); // a real StackOverflowError, thrown from deep in the stack
            case 1:
                return exhaustHeap();
            case 2:
                return new OutOfMemoryError("Requested array size exceeds VM limit");
            case 3:
                return new StackOverflowError();
            case 4:
                return new NullPointerException();
            case 5:
                return new Hostile.Unprintable();
            case 6:
                return new LinkageError("\ud800 linkage", new IllegalStateException((String) null));
            case 7:
                return new ExceptionInInitializerError((String) null);
            case 8:
                return new InternalError();
            case 9: {
                // Its message and cause chain are cyclic and its text throws.
                Hostile.Unprintable u = new Hostile.Unprintable();
                RuntimeException outer = new RuntimeException(null, u);
                u.initCause(outer);
                return outer;
            }
            default:
                return Hostile.throwable(r);
        }
    }

    private static Throwable recurse(int depth) {
        try {
            return recurse(depth + 1);
        } catch (StackOverflowError e) {
            return e;
        }
    }

    /** Fills the heap until it is exhausted, then frees it and hands back the OutOfMemoryError. */
    private static Throwable exhaustHeap() {
        List<long[]> hog = new ArrayList<>();
        try {
            while (true) {
                hog.add(new long[1 << 20]);
            }
        } catch (OutOfMemoryError e) {
            hog.clear();
            return e;
        }
    }

    private static FuzzTest.FuzzClient callT() {
        return new FuzzTest.FuzzClient(req -> Map.of("toolCalls", List.of(Map.of("id", "c1", "name", "t", "arguments", "{}"))));
    }

    /** One input, checked; throws {@link Wrong} when its outcome is not a documented one. */
    static void runOne(int i, String kind, Random r) throws Exception {
        currentInput = i;
        behaviour = () -> NORMAL;
        switch (kind) {
            case "error" -> errorIn(r, CALLBACKS[r.nextInt(CALLBACKS.length)], raise(r));
            case "deep" -> deep(r);
            case "interrupt" -> interrupt(r);
            case "forever" -> forever(i, r);
            case "cancel" -> cancel(r);
            case "concurrent" -> concurrent(r);
            case "stream" -> stream(r);
            default -> continues(r);
        }
    }

    // ---------------------------------------------------------------------------------------
    // Outcomes

    record Outcome(RunResult result, Throwable error) {}

    private static Outcome bounded(java.util.concurrent.Callable<RunResult> call, String what) {
        CompletableFuture<RunResult> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                f.complete(call.call());
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        }, "fuzz-child-caller");
        t.setDaemon(true);
        t.start();
        try {
            return new Outcome(f.get(BOUND_MS, TimeUnit.MILLISECONDS), null);
        } catch (ExecutionException e) {
            return new Outcome(null, e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw wrong(what + ": did not end within " + BOUND_MS + " ms");
        } catch (InterruptedException e) {
            throw wrong(what + ": interrupted");
        }
    }

    private static AgentException sdkError(Throwable e, String what, Set<String> codes) {
        if (e instanceof ExecutionException ee) {
            e = ee.getCause();
        }
        if (!(e instanceof AgentException ae)) {
            throw wrong(what + ": not the SDK's error: " + describe(e));
        }
        if (!DOCUMENTED.contains(ae.code())) {
            throw wrong(what + ": undocumented code " + ae.code());
        }
        if (codes != null && !codes.contains(ae.code())) {
            throw wrong(what + ": code " + ae.code() + " (" + Hostile.safe(ae.getMessage(), 300) + "), expected " + codes);
        }
        String m = ae.getMessage();
        if (m == null || !wellFormed(m)) {
            throw wrong(what + ": message " + Hostile.safe(m, 300));
        }
        return ae;
    }

    private static String describe(Throwable e) {
        if (e == null) {
            return "null";
        }
        String text;
        try {
            text = e.toString();
        } catch (RuntimeException bad) {
            text = e.getClass().getName();
        }
        java.io.StringWriter out = new java.io.StringWriter();
        try {
            e.printStackTrace(new java.io.PrintWriter(out));
        } catch (RuntimeException bad) {
            return text;
        }
        return Hostile.safe(out.toString(), 1200);
    }

    private static boolean wellFormed(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    private static void expectStatus(Outcome o, String what, String... statuses) {
        if (o.error() != null) {
            throw wrong(what + ": failed: " + describe(o.error()));
        }
        if (!List.of(statuses).contains(o.result().status())) {
            throw wrong(what + ": status " + o.result().status() + ", expected " + List.of(statuses));
        }
    }

    // ---------------------------------------------------------------------------------------
    // An Error (or any Throwable) in each kind of callback

    private static void errorIn(Random r, String callback, Throwable thrown) {
        String what = "error in " + callback + ": " + thrown.getClass().getName();
        Supplier<Object> raise = () -> {
            throw Hostile.<RuntimeException>sneaky(thrown);
        };
        AgentSdk.Validator validator = v -> act(v);
        Map<String, String> expected = Map.ofEntries(
            Map.entry("execute", "tool_failed"), Map.entry("inputSchema", "tool_input_invalid"),
            Map.entry("outputSchema", "tool_output_invalid"), Map.entry("eventSchema", "tool_event_invalid"),
            Map.entry("agentOutputSchema", "agent_output_invalid"), Map.entry("parseOutput", "agent_output_invalid"),
            Map.entry("approval", "tool_failed"), Map.entry("callApproval", "tool_failed"), Map.entry("onToolCalled", "tool_failed"),
            Map.entry("onResponseReceived", "tool_failed"), Map.entry("humanReview", "tool_failed"), Map.entry("stopWhen", "tool_failed"),
            Map.entry("dynamicInstructions", "tool_failed"), Map.entry("model", "model_failed"), Map.entry("storeSave", "store_failed"),
            Map.entry("storeLoad", "store_failed"));
        Tool tool;
        AgentDefinition def;
        RunOptions options = new RunOptions("go", callT());
        switch (callback) {
            case "execute", "inputSchema", "outputSchema", "eventSchema", "approval", "onToolCalled", "onResponseReceived" -> {
                tool = new Tool("t", (in, c) -> {
                    if (callback.equals("execute")) {
                        return act("ok");
                    }
                    if (callback.equals("eventSchema")) {
                        c.emitProgress().receive(Map.of("p", 1), c);
                    }
                    return "ok";
                }, "d", OBJECT, null,
                    callback.equals("inputSchema") ? validator : null,
                    callback.equals("outputSchema") ? validator : null,
                    callback.equals("eventSchema") ? validator : null,
                    false,
                    callback.equals("approval") ? (in, c) -> (Boolean) act(false) : null,
                    callback.equals("onToolCalled") ? (in, c) -> (ToolCalledResult) act(new ToolCalledResult(true, "x"))
                        : callback.equals("onResponseReceived") ? (in, c) -> new ToolCalledResult(false, null) : null,
                    callback.equals("onResponseReceived") ? (v, c) -> act(v) : null,
                    "fail-run");
                def = new AgentDefinition("err", List.of(tool));
            }
            default -> def = new AgentDefinition("err", List.of(new Tool("t", (in, c) -> {
                if (callback.equals("progressValue")) {
                    try {
                        c.emitProgress().receive(act(null), c);
                    } catch (IllegalArgumentException refused) {
                        return "refused";
                    }
                }
                if (callback.equals("contextValue")) {
                    try {
                        c.setContext().accept(act(null));
                    } catch (IllegalArgumentException refused) {
                        return "refused";
                    }
                }
                return "ok";
            })));
        }
        switch (callback) {
            case "agentOutputSchema" -> def = def.withOutputSchema(validator);
            case "parseOutput" -> def = new AgentDefinition("err", null, null, null, def.tools(), 0, text -> act(text), null, null, null);
            case "callApproval" -> def = def.withRequireApproval((call, c) -> (Boolean) act(false));
            case "humanReview" -> def = new AgentDefinition("err", null, null, null, def.tools(), 0, null,
                ctx -> (AgentSdk.HumanReviewRequest) act(null), null, null);
            case "stopWhen" -> def = def.withStopWhen(List.of(state -> (String) act(null)));
            case "dynamicInstructions" -> def = def.withDynamicInstructions(turn -> (String) act("be brief"));
            case "model" -> options = new RunOptions("go", new FuzzTest.FuzzClient(req -> act(Map.of("text", "hi"))));
            case "listener" -> options = options.withOnEvent(e -> act(null));
            default -> { }
        }
        Map<String, RunResult> saved = new ConcurrentHashMap<>();
        AgentSdk.StateAccessor accessor = new AgentSdk.StateAccessor() {
            @Override
            public RunResult load(String runId) {
                return callback.equals("storeLoad") ? (RunResult) act(saved.get(runId)) : saved.get(runId);
            }

            @Override
            public void save(RunResult result) {
                if (callback.equals("storeSave")) {
                    act(null);
                }
                saved.put(result.id(), result);
            }
        };
        if (callback.equals("storeSave") || callback.equals("storeLoad")) {
            def = def.withStore(AgentSdk.accessorStore(accessor));
        }
        // The payload of the throwing callback is set only now: building the agent ran nothing.
        try (AgentSdk.Agent agent = AgentSdk.createAgent(def)) {
            if (callback.equals("onResponseReceived")) {
                RunResult paused = agent.run(options);
                if (!paused.status().equals("waiting_for_human")) {
                    throw wrong(what + ": did not pause");
                }
                behaviour = raise;
                Outcome o = bounded(() -> agent.continueRun(new ContinueOptions(paused, callT()).output("c1", "answer")), what);
                sdkError(o.error(), what, Set.of("tool_failed"));
                return;
            }
            if (callback.equals("storeLoad")) {
                RunResult paused = agent.run(new RunOptions("go", callT()));
                if (!paused.status().equals("completed")) {
                    throw wrong(what + ": status " + paused.status());
                }
                behaviour = raise;
                Outcome o = bounded(() -> agent.continueRun(new ContinueOptions(paused.id(), callT())), what);
                sdkError(o.error(), what, Set.of("store_failed", "continue_invalid"));
                return;
            }
            behaviour = raise;
            RunOptions run = options;
            Outcome o = bounded(() -> agent.run(run), what);
            switch (callback) {
                case "listener" -> expectStatus(o, what, "completed");
                case "progressValue", "contextValue" -> {
                    // The tool catches the refusal (IllegalArgumentException) of the value the
                    // throwing supplier never produced: the tool's own exception fails the call.
                    if (o.error() != null) {
                        sdkError(o.error(), what, Set.of("tool_failed"));
                    }
                }
                case "humanReview", "stopWhen", "dynamicInstructions", "callApproval", "approval" ->
                    sdkError(o.error(), what, Set.of(expected.get(callback)));
                default -> sdkError(o.error(), what, Set.of(expected.get(callback)));
            }
        }
    }

    // ---------------------------------------------------------------------------------------
    // Values nested far beyond the limit

    private static final int[] DEPTHS = {60, 63, 64, 65, 10_000, 100_000};

    private static void deep(Random r) {
        int depth = DEPTHS[r.nextInt(DEPTHS.length)];
        Object value = Hostile.chain(r, depth);
        Hostile.Expect expect = Hostile.Expect.of(value, 0);
        String place = new String[] {"result", "progress", "context", "model", "input", "output", "validator"}[r.nextInt(7)];
        String what = "value nested " + depth + " in " + place;
        Map<String, Set<String>> refused = Map.of("result", Set.of("tool_output_invalid"), "progress", Set.of("tool_event_invalid"),
            "context", Set.of("state_invalid"), "model", Set.of("model_failed", "tool_input_invalid"), "input", Set.of("state_invalid"),
            "output", Set.of("state_invalid"), "validator", Set.of("tool_input_invalid"));
        AtomicInteger inTool = new AtomicInteger();
        Tool tool = new Tool("t", (in, c) -> {
            switch (place) {
                case "result":
                    return value;
                case "progress":
                    try {
                        c.emitProgress().receive(value, c);
                    } catch (IllegalArgumentException e) {
                        inTool.incrementAndGet();
                    }
                    return "ok";
                case "context":
                    try {
                        c.setContext().accept(value);
                    } catch (IllegalArgumentException e) {
                        inTool.incrementAndGet();
                    }
                    return "ok";
                default:
                    return "ok";
            }
        }, "d", OBJECT, null, place.equals("validator") ? v -> value : null, null, null, false, null,
            place.equals("output") ? (in, c) -> new ToolCalledResult(false, null) : null, null, "fail-run");
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("deep", List.of(tool)))) {
            Outcome o;
            switch (place) {
                case "model" -> o = bounded(() -> agent.run(new RunOptions("go", new FuzzTest.FuzzClient(req -> Map.of("toolCalls",
                    List.of(Map.of("id", "c1", "name", "t", "arguments", value)))))), what);
                case "input" -> o = bounded(() -> agent.run(new RunOptions(value, new FuzzTest.FuzzClient(null), value)), what);
                case "output" -> {
                    RunResult paused = agent.run(new RunOptions("go", callT()));
                    o = bounded(() -> agent.continueRun(new ContinueOptions(paused, new FuzzTest.FuzzClient(null)).output("c1", value)), what);
                    if (o.error() != null) {
                        // Refused: the pause must still be answerable.
                        sdkError(o.error(), what, refused.get(place));
                        Outcome again = bounded(() -> agent.continueRun(new ContinueOptions(paused, new FuzzTest.FuzzClient(null)).output("c1", "x")), what);
                        if (again.error() != null || !again.result().status().equals("completed")) {
                            throw new Wrong(what + ": the pause was lost: " + describe(again.error()), true);
                        }
                        return;
                    }
                }
                default -> o = bounded(() -> agent.run(new RunOptions("go", callT())), what);
            }
            if (o.error() != null) {
                if (!expect.refuse && !place.equals("model")) {
                    throw wrong(what + ": refused within the limit: " + describe(o.error()));
                }
                sdkError(o.error(), what, place.equals("model") ? null : refused.get(place));
                return;
            }
            if (expect.refuse && inTool.get() == 0 && !place.equals("model")) {
                throw wrong(what + ": accepted beyond the limit");
            }
        }
    }

    // ---------------------------------------------------------------------------------------
    // The caller's thread interrupted

    private static void interrupt(Random r) throws Exception {
        long delay = r.nextInt(40);
        boolean before = r.nextInt(4) == 0;
        boolean async = r.nextBoolean();
        String what = "interrupt " + (before ? "before the call" : "after " + delay + " ms") + (async ? " (runAsync.get)" : "");
        Tool slow = new Tool("t", (in, c) -> {
            Thread.sleep(r.nextInt(30));
            return "ok";
        });
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("int", List.of(slow)))) {
            CompletableFuture<Object> outcome = new CompletableFuture<>();
            Thread caller = new Thread(() -> {
                if (before) {
                    Thread.currentThread().interrupt();
                }
                try {
                    RunOptions o = new RunOptions("go", callT());
                    outcome.complete(async ? agent.runAsync(o).get() : agent.run(o));
                } catch (Throwable e) {
                    outcome.complete(e);
                }
                // The thread keeps its interrupt status when the SDK stopped for it.
                if (outcome.getNow(null) instanceof AgentException ae && ae.code().equals("cancelled")
                    && !async && !Thread.currentThread().isInterrupted()) {
                    outcome.obtrudeValue(wrong(what + ": the interrupt status was cleared"));
                }
            }, "fuzz-interrupted");
            caller.setDaemon(true);
            caller.start();
            if (!before) {
                Thread.sleep(delay);
                caller.interrupt();
            }
            Object got;
            try {
                got = outcome.get(BOUND_MS, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                throw wrong(what + ": did not end");
            }
            if (got instanceof Wrong w) {
                throw w;
            }
            if (got instanceof RunResult rr) {
                if (!rr.status().equals("completed")) {
                    throw wrong(what + ": status " + rr.status());
                }
                return;
            }
            Throwable e = (Throwable) got;
            if (async && e instanceof InterruptedException) {
                return; // CompletableFuture.get's own documented exception
            }
            sdkError(e, what, Set.of("cancelled"));
        }
    }

    // ---------------------------------------------------------------------------------------
    // Callbacks that never return

    private static void forever(int input, Random r) {
        String where = new String[] {"validator", "outputValidator", "tool", "toolIgnoringInterrupts", "model", "approval", "listener",
            "stopWhen", "storeSave"}[r.nextInt(9)];
        long cancelAfter = 20 + r.nextInt(200);
        String what = where + " blocks for ever, cancelled after " + cancelAfter + " ms";
        BLOCKED_ON_PURPOSE.add(input);
        CountDownLatch entered = new CountDownLatch(1);
        Supplier<Object> block = () -> {
            entered.countDown();
            while (true) {
                try {
                    FOREVER.await();
                    return "late";
                } catch (InterruptedException e) {
                    if (!where.equals("toolIgnoringInterrupts")) {
                        throw Hostile.<RuntimeException>sneaky(e);
                    }
                }
            }
        };
        AgentSdk.Validator v = value -> act(value);
        Tool tool = new Tool("t", (in, c) -> where.startsWith("tool") ? act("ok") : "ok", "d", OBJECT,
            where.equals("toolIgnoringInterrupts") ? java.time.Duration.ofMillis(cancelAfter) : null,
            where.equals("validator") ? v : null, where.equals("outputValidator") ? v : null, null, false,
            where.equals("approval") ? (in, c) -> (Boolean) act(false) : null, null, null, "fail-run");
        AgentDefinition def = new AgentDefinition("forever", List.of(tool));
        if (where.equals("stopWhen")) {
            def = def.withStopWhen(List.of(s -> (String) act(null)));
        }
        if (where.equals("storeSave")) {
            def = def.withStore(AgentSdk.accessorStore(new AgentSdk.StateAccessor() {
                @Override
                public RunResult load(String runId) {
                    return null;
                }

                @Override
                public void save(RunResult result) {
                    act(null);
                }
            }));
        }
        RunOptions options = new RunOptions("go", where.equals("model") ? new FuzzTest.FuzzClient(req -> act(Map.of("text", "x")))
            : callT());
        if (where.equals("listener")) {
            options = options.withOnEvent(e -> act(null));
        }
        CancelToken token = new CancelToken();
        options = options.withCancel(token);
        behaviour = block;
        try (AgentSdk.Agent agent = AgentSdk.createAgent(def)) {
            RunOptions run = options;
            CompletableFuture<RunResult> f = agent.runAsync(run);
            try {
                entered.await(BOUND_MS, TimeUnit.MILLISECONDS);
                Thread.sleep(cancelAfter);
            } catch (InterruptedException e) {
                throw wrong(what + ": interrupted");
            }
            long cancelled = System.nanoTime();
            token.cancel();
            RunResult result;
            try {
                // A store that never saves holds the run (a known limit): no need to wait the full bound.
                result = f.get(where.equals("storeSave") ? 3_000 : BOUND_MS, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                if (where.equals("storeSave")) {
                    // A cancelled run still saves its final state first (docs/behaviour.md §10).
                    throw new Limit(what + ": the cancelled run waits for its final save");
                }
                throw wrong(what + ": the cancelled run did not end");
            } catch (ExecutionException e) {
                AgentException ae = sdkError(e.getCause(), what, Set.of("tool_timeout", "cancelled", "store_failed"));
                if (!where.equals("toolIgnoringInterrupts") && ae.code().equals("tool_timeout")) {
                    throw wrong(what + ": " + ae.code());
                }
                return;
            } catch (InterruptedException e) {
                throw wrong(what + ": interrupted");
            }
            long tookMs = (System.nanoTime() - cancelled) / 1_000_000;
            if (!Set.of("cancelled", "completed").contains(result.status())) {
                throw wrong(what + ": status " + result.status());
            }
            if (tookMs > 5_000) {
                throw wrong(what + ": the run ended " + tookMs + " ms after its cancellation");
            }
        }
    }

    // ---------------------------------------------------------------------------------------
    // Cancellation at random points, concurrent runs, streams

    private static Tool sleeper(Random r) {
        int ms = r.nextInt(60);
        return new Tool("t", (in, c) -> {
            act(null);
            Thread.sleep(ms);
            c.emitProgress().receive(Map.of("slept", ms), c);
            return Map.of("slept", ms);
        });
    }

    private static FuzzTest.FuzzClient manyCalls(int n) {
        List<Object> calls = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            calls.add(Map.of("id", "c" + k, "name", "t", "arguments", "{}"));
        }
        return new FuzzTest.FuzzClient(req -> Map.of("toolCalls", calls));
    }

    private static void cancel(Random r) throws Exception {
        int how = r.nextInt(3);
        long after = r.nextInt(80);
        String what = "cancel by " + new String[] {"token", "future.cancel", "interrupting get"}[how] + " after " + after + " ms";
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("cancel", List.of(sleeper(r)))
            .withToolExecution(new AgentSdk.ToolExecutionConfig(1 + r.nextInt(4))))) {
            CancelToken token = new CancelToken();
            CompletableFuture<RunResult> f = agent.runAsync(new RunOptions("go", manyCalls(1 + r.nextInt(6))).withCancel(token));
            Thread.sleep(after);
            if (how == 0) {
                token.cancel();
            } else {
                f.cancel(true);
            }
            try {
                RunResult result = f.get(BOUND_MS, TimeUnit.MILLISECONDS);
                if (!Set.of("cancelled", "completed").contains(result.status())) {
                    throw wrong(what + ": status " + result.status());
                }
            } catch (java.util.concurrent.CancellationException e) {
                if (how == 0) {
                    throw wrong(what + ": CancellationException for a token");
                }
            } catch (ExecutionException e) {
                sdkError(e.getCause(), what, Set.of("cancelled"));
            } catch (java.util.concurrent.TimeoutException e) {
                throw wrong(what + ": did not end");
            }
        }
    }

    private static void concurrent(Random r) throws Exception {
        int runs = 2 + r.nextInt(30);
        String what = runs + " concurrent runs, some cancelled";
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("many", List.of(sleeper(r)))
            .withToolExecution(new AgentSdk.ToolExecutionConfig(1 + r.nextInt(3))))) {
            List<CompletableFuture<RunResult>> all = new ArrayList<>();
            List<CancelToken> tokens = new ArrayList<>();
            for (int k = 0; k < runs; k++) {
                CancelToken token = new CancelToken();
                tokens.add(token);
                all.add(agent.runAsync(new RunOptions("go " + k, manyCalls(1 + r.nextInt(3))).withCancel(token)));
            }
            Thread.sleep(r.nextInt(50));
            for (CancelToken t : tokens) {
                if (r.nextInt(3) == 0) {
                    t.cancel();
                }
            }
            for (CompletableFuture<RunResult> f : all) {
                try {
                    RunResult result = f.get(BOUND_MS, TimeUnit.MILLISECONDS);
                    if (!Set.of("cancelled", "completed").contains(result.status())) {
                        throw wrong(what + ": status " + result.status());
                    }
                } catch (ExecutionException e) {
                    sdkError(e.getCause(), what, Set.of("cancelled"));
                } catch (java.util.concurrent.TimeoutException e) {
                    throw wrong(what + ": a run did not end");
                }
            }
        }
    }

    private static void stream(Random r) throws Exception {
        long after = r.nextInt(60);
        int how = r.nextInt(3);
        String what = "stream, " + new String[] {"cancel()", "token", "read to the end"}[how] + " after " + after + " ms";
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("stream", List.of(sleeper(r))))) {
            CancelToken token = new CancelToken();
            AgentSdk.StreamResult s = agent.stream(new RunOptions("go", manyCalls(1 + r.nextInt(4))).withCancel(token));
            Thread.sleep(after);
            if (how == 0) {
                s.cancel();
            } else if (how == 1) {
                token.cancel();
            }
            Outcome o = bounded(() -> {
                int seen = 0;
                for (AgentSdk.AgentEvent e : s.events()) {
                    seen++;
                    if (e == null) {
                        throw wrong(what + ": a null event");
                    }
                }
                return s.getResult();
            }, what);
            if (o.error() != null) {
                sdkError(o.error(), what, Set.of("cancelled"));
            } else if (!Set.of("cancelled", "completed").contains(o.result().status())) {
                throw wrong(what + ": status " + o.result().status());
            }
        }
    }

    // ---------------------------------------------------------------------------------------
    // Refused continues leave the paused state usable

    @SuppressWarnings("unchecked")
    private static void continues(Random r) {
        Tool deploy = new Tool("deploy", (in, c) -> "deployed", "d", OBJECT, null, null, null, null, true, null, null, null, "fail-run");
        Tool manual = new Tool("manual", null, "d", OBJECT, null, null, null, null, false, null, null, null, "fail-run");
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("cont", List.of(deploy, manual)))) {
            RunResult paused = agent.run(new RunOptions("go", new FuzzTest.FuzzClient(req -> Map.of("toolCalls", List.of(
                Map.of("id", "c1", "name", "deploy", "arguments", "{}"), Map.of("id", "c2", "name", "manual", "arguments", "{}"))))));
            if (!paused.status().equals("waiting_for_human")) {
                throw wrong("did not pause: " + paused.status());
            }
            String text = paused.toJson();
            // A continue with hostile decisions, outputs, context, or of a hostile state.
            Object hostile = Hostile.value(r, 0);
            String hostileText = textOf(hostile);
            int how = r.nextInt(6);
            String what = "continue " + how + " with " + Hostile.describe(hostile);
            Outcome o = bounded(() -> {
                ContinueOptions c = new ContinueOptions(how == 5 ? RunResult.fromJson(mutate(r, text)) : paused, new FuzzTest.FuzzClient(null));
                return agent.continueRun(switch (how) {
                    case 0 -> c.approve("c1").output("c2", hostile);
                    case 1 -> c.approve("c1").output("c2", "x").withContext(hostile);
                    case 2 -> c.approve(hostileText).output("c2", "x");
                    case 3 -> c.reject("c1", hostileText).output("c2", "x").output(hostileText, "y");
                    case 4 -> c.approve("c1", "c1").output("c2", "x").output("c2", "y");
                    default -> c.approve("c1").output("c2", "x");
                });
            }, what);
            if (o.error() != null) {
                AgentException ae = sdkError(o.error(), what, null);
                if (ae.state() == null && !Set.of("state_invalid", "continue_invalid").contains(ae.code())) {
                    throw wrong(what + ": refused with " + ae.code());
                }
            }
            // Whatever happened, the original state continues, from the object and from its text.
            for (RunResult again : List.of(paused, RunResult.fromJson(text))) {
                Outcome ok = bounded(() -> agent.continueRun(new ContinueOptions(again, new FuzzTest.FuzzClient(null)).approve("c1")
                    .output("c2", "done")), what + " (the original)");
                if (ok.error() != null || !ok.result().status().equals("completed")) {
                    throw new Wrong(what + ": the original no longer continues: " + describe(ok.error()), true);
                }
            }
        }
    }

    /** The value's text, as a caller would make an id or a reason of it (its own failure aside). */
    private static String textOf(Object v) {
        try {
            return String.valueOf(v);
        } catch (RuntimeException | StackOverflowError e) {
            return "unprintable"; // a throwing toString, or one of a value nested 20,000 deep
        }
    }

    private static String mutate(Random r, String s) {
        int at = r.nextInt(s.length());
        return switch (r.nextInt(4)) {
            case 0 -> s.substring(0, at);
            case 1 -> s.substring(0, at) + (char) (0xD800 + r.nextInt(0x800)) + s.substring(at + 1);
            case 2 -> s.replace("\"c2\"", "\"c1\"");
            default -> s.substring(0, at) + "{\"a\":" + s.substring(at);
        };
    }
}
