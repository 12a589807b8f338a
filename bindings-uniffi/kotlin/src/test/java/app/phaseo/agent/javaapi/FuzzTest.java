package app.phaseo.agent.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.AgentException;
import app.phaseo.agent.AgentSdk.ContinueOptions;
import app.phaseo.agent.AgentSdk.RunOptions;
import app.phaseo.agent.AgentSdk.RunResult;
import app.phaseo.agent.AgentSdk.Tool;
import app.phaseo.agent.AgentSdk.ToolCalledResult;
import app.phaseo.agent.javaapi.Hostile.Expect;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Seeded fuzzing, as the Python (hypothesis), Node (fast-check) and C# suites do: hostile
 * host values and exceptions through every kind of callback, and mutated paused states
 * through continue. Each input ends, within a bound, in a result or an
 * {@link AgentException} with a documented code (docs/behaviour.md §9), never another exception, a hang
 * or a crash. {@code PHASEO_FUZZ_SEED} replays a run (the seed is in every failure message),
 * {@code PHASEO_FUZZ_RUNS} sets the inputs per property (default 2000; {@code make
 * fuzz-java} runs 20000).
 */
class FuzzTest {
    private static final long SEED = env("PHASEO_FUZZ_SEED", 20240611L);
    private static final int RUNS = (int) env("PHASEO_FUZZ_RUNS", 2000L);
    private static final long BOUND_SECONDS = 30;

    private static final Set<String> DOCUMENTED = Set.of(
        "tool_input_invalid", "tool_output_invalid", "tool_event_invalid", "agent_output_invalid", "unknown_tool", "tool_timeout",
        "tool_failed", "max_steps", "continue_invalid", "state_invalid", "model_failed", "gateway", "definition_invalid",
        "cancelled", "store_failed", "lease_lost", "mcp_failed");

    private static final Map<String, Object> OBJECT = Map.of("type", "object");

    /** Runs each blocking call, so that one that never ends fails the test instead of hanging it. */
    private static final ExecutorService CALLER = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "fuzz-caller");
        t.setDaemon(true);
        return t;
    });

    private static long env(String name, long fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : Long.parseLong(value.trim());
    }

    @AfterAll
    static void stopCaller() {
        CALLER.shutdownNow();
    }

    /** The model side of every fuzzed run: [first] answers the first request, then text. */
    static final class FuzzClient implements AgentSdk.ModelClient {
        Function<Map<String, Object>, Object> first;
        final List<Map<String, Object>> requests = Collections.synchronizedList(new ArrayList<>());

        FuzzClient(Function<Map<String, Object>, Object> first) {
            this.first = first;
        }

        @Override
        public Object generate(Map<String, Object> request) {
            requests.add(request);
            if (requests.size() == 1 && first != null) {
                return first.apply(request);
            }
            return Map.of("text", "done");
        }
    }

    private static Object callT(Map<String, Object> request) {
        return Map.of("toolCalls", List.of(Map.of("id", "c1", "name", "t", "arguments", "{}")));
    }

    record Outcome(RunResult result, Throwable error) {}

    /** Runs one call to its end (a refusal before the run counts as its end), bounded. */
    private static Outcome outcome(Callable<RunResult> call, String what) {
        Future<RunResult> future = CALLER.submit(call);
        try {
            return new Outcome(future.get(BOUND_SECONDS, TimeUnit.SECONDS), null);
        } catch (ExecutionException e) {
            return new Outcome(null, e.getCause());
        } catch (TimeoutException e) {
            future.cancel(true);
            return fail(what + ": did not end within " + BOUND_SECONDS + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return fail(what + ": interrupted");
        }
    }

    private static String trace(Throwable e) {
        if (e == null) {
            return "null";
        }
        StringWriter out = new StringWriter();
        try {
            e.printStackTrace(new PrintWriter(out));
        } catch (RuntimeException unprintable) {
            return e.getClass().getName() + " (unprintable)";
        }
        return Hostile.safe(out.toString(), 3000);
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

    /** [e] is the SDK's error with a documented code (one of [codes] when given). */
    private static AgentException refusal(Throwable e, String what, Set<String> codes) {
        if (!(e instanceof AgentException ae)) {
            return fail(what + ": not the SDK's error: " + trace(e));
        }
        assertTrue(DOCUMENTED.contains(ae.code()), what + ": undocumented code " + ae.code() + ": " + trace(ae));
        if (codes != null) {
            assertTrue(codes.contains(ae.code()), what + ": code " + ae.code() + ", expected one of " + codes + ": " + trace(ae));
        }
        String message = ae.getMessage();
        assertTrue(message != null && wellFormed(message), what + ": message " + Hostile.safe(message, 300));
        return ae;
    }

    /** What the SDK reports of a callback's exception: its message, else its text. */
    private static String messageOf(Throwable t) {
        String text;
        try {
            text = t.getMessage();
        } catch (RuntimeException e) {
            text = null;
        }
        if (text == null) {
            try {
                text = t.toString();
            } catch (RuntimeException e) {
                text = "host callback failed";
            }
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                out.append(c).append(text.charAt(++i));
            } else {
                out.append(Character.isSurrogate(c) ? '\uFFFD' : c);
            }
        }
        return out.toString();
    }

    private static String canon(Object v) {
        return Hostile.safe(Expect.canon(v), 100_000);
    }

    @SuppressWarnings("unchecked")
    private static Object toolResult(RunResult result, String callId) {
        for (Map<String, Object> step : (List<Map<String, Object>>) result.toMap().get("stepResults")) {
            for (Map<String, Object> r : (List<Map<String, Object>>) step.get("toolResults")) {
                if (callId.equals(r.get("toolCallId")) && r.containsKey("result")) {
                    return r.get("result");
                }
            }
        }
        return "<no result>";
    }

    // The values and exceptions the callbacks hand over, one input at a time.
    private static volatile Object current;
    private static volatile Throwable toThrow;
    private static volatile Object received;
    private static volatile Throwable thrownInTool;
    /** `response`: the value is the output the caller supplies, which the hook passes on. */
    private static volatile boolean fromCaller;

    /** What a callback of a value does: hand [current] over, or throw [toThrow]. */
    private static Object deliver() {
        Throwable t = toThrow;
        if (t != null) {
            throw Hostile.<RuntimeException>sneaky(t);
        }
        return current;
    }

    private static final String[] KINDS = {
        "result", "progress", "context", "validator", "called", "response", "review", "approval", "callApproval", "model",
        "input", "stop", "turn", "throws", "listener",
    };

    private static Map<String, AgentSdk.Agent> agents() {
        AgentSdk.Validator record = value -> {
            received = value;
            return value;
        };
        Map<String, AgentSdk.Agent> agents = new LinkedHashMap<>();
        agents.put("result", tools(new Tool("t", (i, c) -> current, "d", OBJECT, null, null, record, null, false, null, null, null, "fail-run")));
        agents.put("progress", tools(new Tool("t", (i, c) -> {
            try {
                c.emitProgress().receive(current, c);
            } catch (Throwable t) {
                thrownInTool = t;
            }
            return "ok";
        })));
        agents.put("context", tools(new Tool("t", (i, c) -> {
            try {
                c.setContext().accept(current);
            } catch (Throwable t) {
                thrownInTool = t;
            }
            return "ok";
        })));
        agents.put("validator", tools(new Tool("t", (i, c) -> {
            received = i;
            return "ok";
        }, "d", OBJECT, null, value -> current, null, null, false, null, null, null, "fail-run")));
        agents.put("called", tools(new Tool("t", (i, c) -> "never", "d", OBJECT, null, null, null, null, false, null,
            (i, c) -> new ToolCalledResult(true, current), null, "fail-run")));
        agents.put("response", tools(new Tool("t", (i, c) -> "never", "d", OBJECT, null, null, null, null, false, null,
            (i, c) -> new ToolCalledResult(false, null), (v, c) -> fromCaller ? v : deliver(), "fail-run")));
        agents.put("review", AgentSdk.createAgent(new AgentDefinition("review", null, null, null, List.of(), 0, null,
            ctx -> ((Number) ctx.get("stepIndex")).intValue() == 0 ? new AgentSdk.HumanReviewRequest("check", deliver()) : null,
            null, null)));
        agents.put("approval", tools(new Tool("t", (i, c) -> "ran", "d", OBJECT, null, null, null, null, false,
            (i, c) -> (Boolean) deliver(), null, null, "fail-run")));
        agents.put("callApproval", AgentSdk.createAgent(new AgentDefinition("callApproval", List.of(new Tool("t", (i, c) -> "ran")))
            .withRequireApproval((call, c) -> (Boolean) deliver())));
        agents.put("model", tools(new Tool("t", (i, c) -> "ran")));
        agents.put("input", tools(new Tool("t", (i, c) -> "ran")));
        agents.put("stop", AgentSdk.createAgent(new AgentDefinition("stop", List.of(new Tool("t", (i, c) -> "ran")))
            .withStopWhen(List.of(state -> (String) deliver()))));
        agents.put("turn", AgentSdk.createAgent(new AgentDefinition("turn", List.of(new Tool("t", (i, c) -> "ran")))
            .withDynamicInstructions(turn -> (String) deliver())));
        agents.put("throws", tools(new Tool("t", (i, c) -> {
            throw Hostile.<Exception>sneaky(toThrow);
        })));
        agents.put("listener", tools(new Tool("t", (i, c) -> "ran")));
        return agents;
    }

    private static AgentSdk.Agent tools(Tool tool) {
        return AgentSdk.createAgent(new AgentDefinition("fuzz", List.of(tool)));
    }

    @Test
    void hostileValuesThroughEveryCallback() throws Exception {
        Random r = new Random(SEED);
        long started = System.nanoTime();
        Map<String, AgentSdk.Agent> agents = agents();
        Map<String, Integer> counts = new TreeMap<>();
        Map<String, Integer> codes = new TreeMap<>();
        List<Object> events = Collections.synchronizedList(new ArrayList<>());
        // One paused run for every `response` input: its hitl call is answered each time.
        RunResult hitl = agents.get("response").run(new RunOptions("go", new FuzzClient(FuzzTest::callT)));
        assertEquals("waiting_for_human", hitl.status());
        for (int i = 0; i < RUNS; i++) {
            String kind = KINDS[r.nextInt(KINDS.length)];
            counts.merge(kind, 1, Integer::sum);
            AgentSdk.Agent agent = agents.get(kind);
            current = Hostile.value(r, 0);
            toThrow = null;
            received = "<nothing>";
            thrownInTool = null;
            events.clear();
            Expect expect = Expect.of(current, 0);
            FuzzClient client = new FuzzClient(FuzzTest::callT);
            RunOptions options = new RunOptions("go", client);
            switch (kind) {
                case "called", "response" -> {
                    // A null answer would leave the call pending (hitl): not this property.
                    if (!expect.refuse && "null".equals(expect.canonical)) {
                        current = "null";
                        expect = Expect.of(current, 0);
                    }
                    if (kind.equals("response")) {
                        client.first = null; // after the answer, the model just answers
                        fromCaller = r.nextBoolean();
                        if (!fromCaller && r.nextInt(4) == 0) {
                            toThrow = Hostile.throwable(r);
                        }
                    }
                }
                case "progress" -> options = options.withOnEvent(e -> {
                    if (e.type().equals("tool.preliminary_result")) {
                        events.add(e.details().get("result"));
                    }
                });
                case "review" -> {
                    // The hook's answer is {reason, payload}: the payload has 63 levels left.
                    expect = Expect.of(current, 1);
                    client.first = null;
                    if (r.nextInt(4) == 0) {
                        toThrow = Hostile.throwable(r);
                    }
                }
                case "approval", "callApproval" -> {
                    current = r.nextBoolean();
                    if (r.nextBoolean()) {
                        toThrow = Hostile.throwable(r);
                    }
                }
                case "stop", "turn" -> {
                    current = r.nextInt(4) == 0 ? null : Hostile.text(r);
                    expect = Expect.of(current, 0);
                    if (r.nextInt(3) == 0) {
                        toThrow = Hostile.throwable(r);
                    }
                }
                case "throws" -> toThrow = Hostile.throwable(r);
                case "listener" -> {
                    Throwable t = Hostile.throwable(r);
                    options = options.withOnEvent(e -> {
                        throw Hostile.<RuntimeException>sneaky(t);
                    });
                }
                case "input" -> {
                    options = new RunOptions(current, client, current);
                    client.first = null;
                }
                case "model" -> {
                    Object hostile = current;
                    Object answer = switch (r.nextInt(6)) {
                        case 0 -> hostile;
                        case 1 -> Map.of("text", "done", "usage", Collections.singletonMap("inputTokens", hostile));
                        case 2 -> Collections.singletonMap("text", hostile);
                        case 3 -> Map.of("toolCalls", List.of(Collections.singletonMap("arguments", hostile)));
                        case 4 -> Map.of("toolCalls", List.of(Map.of("id", "c1", "name", "t", "arguments", Hostile.text(r))));
                        default -> Collections.singletonMap("toolCalls", hostile);
                    };
                    Throwable t = r.nextInt(4) == 0 ? Hostile.throwable(r) : null;
                    client.first = request -> {
                        if (t != null) {
                            throw Hostile.<RuntimeException>sneaky(t);
                        }
                        return answer;
                    };
                }
                default -> { }
            }
            String what = "seed " + SEED + ", input " + i + ", " + kind + ": " + Hostile.describe(current)
                + (toThrow == null ? "" : ", throwing " + toThrow.getClass().getName());
            RunOptions run = options;
            Outcome o = kind.equals("response")
                ? outcome(() -> agent.continueRun(new ContinueOptions(RunResult.fromJson(hitl.toJson()), client)
                    .output("c1", fromCaller ? current : "answer")), what)
                : i % 4 == 0 ? outcome(() -> agent.runAsync(run).get(), what) : outcome(() -> agent.run(run), what);
            Throwable error = o.error() instanceof ExecutionException ee ? ee.getCause() : o.error();
            if (error != null) {
                AgentException ae = refusal(error, what, null);
                codes.merge(kind + " " + ae.code(), 1, Integer::sum);
                if (toThrow != null && !kind.equals("model")) {
                    // A callback's exception fails the call with its message, whatever its type
                    // (after the place, for some: `instructions: …`, `stopWhen failed: …`).
                    assertEquals("tool_failed", ae.code(), what + ": " + trace(ae));
                    String expected = messageOf(toThrow);
                    String message = ae.getMessage();
                    assertTrue(message.endsWith(expected) && message.length() - expected.length() <= 40,
                        what + ": message " + Hostile.safe(message, 2000) + ", expected " + Hostile.safe(expected, 2000));
                }
            }
            check(kind, expect, o.result(), error, client, events, what);
        }
        for (AgentSdk.Agent a : agents.values()) {
            a.close();
        }
        System.out.printf("fuzz values: seed %d, %d inputs %s in %.1f s; refusals %s%n", SEED, RUNS, counts,
            (System.nanoTime() - started) / 1e9, codes);
    }

    /** What each kind of callback must make of its input. */
    private static void check(String kind, Expect expect, RunResult result, Throwable error, FuzzClient client,
                              List<Object> events, String what) {
        switch (kind) {
            case "result", "validator", "called", "response" -> {
                Set<String> refused = Set.of(kind.equals("validator") ? "tool_input_invalid"
                    : kind.equals("response") && fromCaller ? "state_invalid" : "tool_output_invalid");
                if (toThrow != null) {
                    assertTrue(error != null, what + ": a throwing hook did not fail the run");
                    refusal(error, what, Set.of("tool_failed", "cancelled"));
                    return;
                }
                if (error != null) {
                    assertFalse(expect.exact, what + ": refused: " + trace(error));
                    refusal(error, what, refused);
                    return;
                }
                assertFalse(expect.refuse, what + ": accepted (" + expect.why + ")");
                assertEquals("completed", result.status(), what);
                Object got = kind.equals("called") || kind.equals("response") ? toolResult(result, "c1") : received;
                if (expect.exact) {
                    assertEquals(Hostile.safe(expect.canonical, 100_000), canon(got), what);
                }
            }
            case "progress", "context" -> {
                Set<String> refused = Set.of(kind.equals("progress") ? "tool_event_invalid" : "state_invalid");
                if (error != null) {
                    assertFalse(expect.exact, what + ": refused: " + trace(error));
                    refusal(error, what, refused);
                    return;
                }
                assertEquals("completed", result.status(), what);
                if (thrownInTool != null) {
                    assertFalse(expect.exact, what + ": refused in the tool: " + trace(thrownInTool));
                    assertTrue(thrownInTool instanceof IllegalArgumentException, what + ": thrown in the tool: " + trace(thrownInTool));
                    assertTrue(wellFormed(String.valueOf(thrownInTool.getMessage())), what);
                    return;
                }
                assertFalse(expect.refuse, what + ": accepted (" + expect.why + ")");
                Object got = kind.equals("progress") ? (events.size() == 1 ? events.get(0) : "<" + events.size() + " events>")
                    : client.requests.get(1).get("context");
                if (expect.exact) {
                    assertEquals(Hostile.safe(expect.canonical, 100_000), canon(got), what);
                }
            }
            case "review" -> {
                if (toThrow != null) {
                    assertTrue(error != null, what + ": a throwing review did not fail the run");
                    return;
                }
                if (error != null) {
                    assertFalse(expect.exact, what + ": refused: " + trace(error));
                    return;
                }
                assertFalse(expect.refuse, what + ": accepted (" + expect.why + ")");
                assertEquals("waiting_for_human", result.status(), what);
                if (expect.exact) {
                    assertEquals(Hostile.safe(expect.canonical, 100_000), canon(result.pause().get("payload")), what);
                }
            }
            case "input" -> {
                if (error != null) {
                    assertFalse(expect.exact, what + ": refused: " + trace(error));
                    refusal(error, what, Set.of("state_invalid"));
                    return;
                }
                assertFalse(expect.refuse, what + ": accepted (" + expect.why + ")");
                assertEquals("completed", result.status(), what);
                if (expect.exact) {
                    assertEquals(Hostile.safe(expect.canonical, 100_000), canon(client.requests.get(0).get("context")), what);
                    assertEquals(Hostile.safe(expect.canonical, 100_000), canon(result.run().get("input")), what);
                }
            }
            case "turn" -> {
                if (toThrow != null) {
                    assertTrue(error != null, what + ": a throwing per-turn function did not fail the run");
                    return;
                }
                assertTrue(error == null, what + ": " + trace(error));
                assertEquals("completed", result.status(), what);
                Object instructions = client.requests.get(0).get("instructions");
                assertEquals(current == null ? "null" : Hostile.safe(expect.canonical, 100_000), canon(instructions), what);
            }
            case "stop" -> {
                if (toThrow != null) {
                    assertTrue(error != null, what + ": a throwing stop condition did not fail the run");
                    return;
                }
                assertTrue(error == null, what + ": " + trace(error));
                // An empty reason goes on, as null does (core/src/stop.rs).
                boolean stops = current != null && !current.equals("");
                assertEquals(stops ? "stopped" : "completed", result.status(), what);
                if (stops) {
                    assertEquals(Hostile.safe(expect.canonical, 100_000), canon(result.stopReason()), what);
                }
            }
            case "approval", "callApproval" -> {
                if (toThrow != null) {
                    assertTrue(error != null, what + ": a throwing predicate did not fail the run");
                    return;
                }
                assertTrue(error == null, what + ": " + trace(error));
                assertEquals(Boolean.TRUE.equals(current) ? "waiting_for_human" : "completed", result.status(), what);
            }
            case "throws" -> assertTrue(error != null, what + ": a throwing tool did not fail the run");
            case "listener" -> {
                assertTrue(error == null, what + ": a listener's failure affected the run: " + trace(error));
                assertEquals("completed", result.status(), what);
            }
            default -> {
                // model: any result or documented error (checked above)
            }
        }
    }

    // -----------------------------------------------------------------------------------
    // Mutated paused states

    private static final String[] TOKENS = {
        "\"", "{", "}", "[", "]", ",", ":", "null", "true", "-1", "0", "1e999", "99999999999999999999", "\"\ud800\"",
        "\\u0000", "\\ud800", "\"waiting_for_human\"", "\"completed\"", "\"c1\"", "\"c2\"", "\"manual\"", "\"approval\"",
        "{\"a\":[]}", "\u00e9", "\ud83d",
    };

    private static final String[][] SWAPS = {
        {"\"c1\"", "\"c2\""}, {"\"approval\"", "\"manual\""}, {"\"waiting_for_human\"", "\"running\""},
        {"\"waiting_for_human\"", "\"completed\""}, {"\"version\":1", "\"version\":2"}, {"\"stepCount\":1", "\"stepCount\":99"},
        {"\"deploy\"", "\"nope\""}, {"\"tool_approval\"", "\"human_review\""}, {"\"role\":\"assistant\"", "\"role\":\"tool\""},
    };

    private static String mutateText(Random r, String s) {
        int ops = 1 + r.nextInt(3);
        for (int k = 0; k < ops && !s.isEmpty(); k++) {
            int at = r.nextInt(s.length());
            switch (r.nextInt(7)) {
                case 0 -> s = s.substring(0, at) + s.substring(Math.min(s.length(), at + 1 + r.nextInt(8)));
                case 1 -> s = s.substring(0, at) + TOKENS[r.nextInt(TOKENS.length)] + s.substring(at);
                case 2 -> s = s.substring(0, at) + (char) (0x20 + r.nextInt(0x5F)) + s.substring(at + 1);
                case 3 -> s = s.substring(0, at) + s.substring(at, Math.min(s.length(), at + 1 + r.nextInt(40))) + s.substring(at);
                case 4 -> s = s.substring(0, at);
                case 5 -> s = s.substring(0, at) + (char) (0xD800 + r.nextInt(0x800)) + s.substring(at + 1);
                default -> {
                    String[] swap = SWAPS[r.nextInt(SWAPS.length)];
                    int i = s.indexOf(swap[0]);
                    if (i >= 0) {
                        s = s.substring(0, i) + swap[1] + s.substring(i + swap[0].length());
                    }
                }
            }
        }
        return s;
    }

    /** Every path to a member of [value]: keys and indexes. */
    private static void paths(Object value, List<Object> prefix, List<List<Object>> out) {
        out.add(prefix);
        if (value instanceof Map<?, ?> m) {
            for (Object key : m.keySet()) {
                List<Object> next = new ArrayList<>(prefix);
                next.add(key);
                paths(m.get(key), next, out);
            }
        } else if (value instanceof List<?> l) {
            for (int i = 0; i < l.size(); i++) {
                List<Object> next = new ArrayList<>(prefix);
                next.add(i);
                paths(l.get(i), next, out);
            }
        }
    }

    /** A deep copy of [root] (plain Java values) with the member at [path] replaced. */
    @SuppressWarnings("unchecked")
    private static Object replaced(Object root, List<Object> path, int at, Object replacement) {
        if (at == path.size()) {
            return replacement;
        }
        Object key = path.get(at);
        if (root instanceof Map<?, ?> m) {
            Map<Object, Object> copy = new LinkedHashMap<>((Map<Object, Object>) m);
            copy.put(key, replaced(m.get(key), path, at + 1, replacement));
            return copy;
        }
        List<Object> copy = new ArrayList<>((List<Object>) root);
        copy.set((Integer) key, replaced(copy.get((Integer) key), path, at + 1, replacement));
        return copy;
    }

    private static final Object[] REPLACEMENTS = {
        null, true, false, -1, 0, 1L << 53, BigInteger.TWO.pow(64).subtract(BigInteger.ONE), BigInteger.TWO.pow(64), 1e300, "",
        "xxxxx", List.of(), Map.of(), "c2", "waiting_for_human", "completed", "approval", "manual", 2, 99,
    };

    private static String mutate(Random r, String original, Map<String, Object> state, List<List<Object>> all) {
        if (r.nextBoolean()) {
            return mutateText(r, original);
        }
        List<Object> path = all.get(r.nextInt(all.size()));
        Object replacement = r.nextBoolean() ? REPLACEMENTS[r.nextInt(REPLACEMENTS.length)] : Hostile.value(r, 2);
        if (Expect.of(replacement, 0).refuse) {
            replacement = REPLACEMENTS[r.nextInt(REPLACEMENTS.length)];
        }
        return Expect.canon(replaced(state, path, 0, replacement));
    }

    @Test
    void mutatedPausedStatesContinueOrAreRefused() {
        Random r = new Random(SEED ^ 0x5eed);
        long started = System.nanoTime();
        Tool deploy = new Tool("deploy", (i, c) -> "deployed", "d", OBJECT, null, null, null, null, true, null, null, null, "fail-run");
        int refused = 0;
        int ran = 0;
        int failedRuns = 0;
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("fz", List.of(deploy)))) {
            RunResult paused = agent.run(new RunOptions("deploy", new FuzzClient(
                request -> Map.of("toolCalls", List.of(Map.of("id", "c1", "name", "deploy", "arguments", "{}")))), Map.of("n", 1)));
            assertEquals("waiting_for_human", paused.status());
            String original = paused.toJson();
            Map<String, Object> state = paused.toMap();
            List<List<Object>> all = new ArrayList<>();
            paths(state, List.of(), all);
            for (int i = 0; i < RUNS; i++) {
                String mutated = mutate(r, original, state, all);
                boolean approve = r.nextInt(8) != 0;
                String what = "seed " + SEED + ", state " + i + ": " + Hostile.safe(mutated, 400);
                Outcome o = outcome(() -> {
                    ContinueOptions options = new ContinueOptions(RunResult.fromJson(mutated), new FuzzClient(null));
                    return agent.continueRun(approve ? options.approve("c1") : options);
                }, what);
                if (o.error() == null) {
                    ran++;
                    continue;
                }
                AgentException ae = refusal(o.error(), what, null);
                if (ae.state() != null) {
                    failedRuns++; // it ran, and failed: a result
                    continue;
                }
                assertTrue(Set.of("state_invalid", "continue_invalid").contains(ae.code()), what + ": " + trace(ae));
                refused++;
                // Nothing ran: the original state still continues.
                Outcome again = outcome(() -> agent.continueRun(
                    new ContinueOptions(RunResult.fromJson(original), new FuzzClient(null)).approve("c1")), what + " (the original)");
                assertTrue(again.error() == null, what + ": the original no longer continues: " + trace(again.error()));
                assertEquals("completed", again.result().status(), what);
            }
        }
        System.out.printf("fuzz states: seed %d, %d mutations (%d refused, %d ran, %d ran and failed) in %.1f s%n", SEED, RUNS,
            refused, ran, failedRuns, (System.nanoTime() - started) / 1e9);
    }

    // -----------------------------------------------------------------------------------
    // Risky inputs in a JVM of their own (FuzzChild): crashes and hangs are counted

    /** The inputs of the child JVM: PHASEO_FUZZ_CHILD_RUNS, else a tenth of RUNS (at least 300). */
    private static final int CHILD_RUNS = (int) env("PHASEO_FUZZ_CHILD_RUNS", Math.max(300, RUNS / 10));
    /** How long one input of the child may take before it counts as a hang (the child's own bound is shorter). */
    private static final long CHILD_INPUT_SECONDS = 60;

    /** The test JVM's classpath as files (Surefire may start it from a manifest-only jar). */
    private static String childClasspath() throws java.io.IOException {
        java.nio.file.Path target = java.nio.file.Path.of("target");
        String deps = java.nio.file.Files.readString(target.resolve("classpath.txt")).trim();
        return target.resolve("test-classes").toAbsolutePath() + java.io.File.pathSeparator + target.resolve("classes").toAbsolutePath()
            + java.io.File.pathSeparator + deps;
    }

    /** Counts of what the child's inputs came to. */
    static final class Tally {
        int inputs;
        int deaths;
        int hangs;
        int wrong;
        int lost;
        int leaks;
        int limits;
        final List<String> findings = new ArrayList<>();

        void note(String what) {
            if (findings.size() < 40) {
                findings.add(what);
            }
        }

        @Override
        public String toString() {
            return "inputs " + inputs + ", deaths " + deaths + ", hangs " + hangs + ", wrong kind " + wrong + ", lost states " + lost
                + ", leaks " + leaks
                + " (known limits met: " + limits + ")";
        }
    }

    /**
     * Runs the child's inputs [from, to), restarting it after a death or a hang at the next
     * input, and tallies them. A single case replays with PHASEO_FUZZ_CASE.
     */
    static Tally runChild(long seed, int from, int to) throws Exception {
        Tally tally = new Tally();
        int next = from;
        while (next < to) {
            ProcessBuilder pb = new ProcessBuilder(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx192m",
                "-Djna.library.path=" + System.getProperty("jna.library.path"), "-cp", childClasspath(),
                FuzzChild.class.getName(), Long.toString(seed), Integer.toString(next), Integer.toString(to));
            pb.redirectErrorStream(true);
            Process child = pb.start();
            java.util.concurrent.BlockingQueue<String> lines = new java.util.concurrent.LinkedBlockingQueue<>();
            Thread reader = new Thread(() -> {
                try (java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(child.getInputStream(),
                    java.nio.charset.StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = in.readLine()) != null) {
                        lines.add(line);
                    }
                } catch (java.io.IOException ignored) {
                    // the child is gone
                }
                lines.add("\u0000EOF");
            }, "fuzz-child-reader");
            reader.setDaemon(true);
            reader.start();
            int open = -1;
            List<String> tail = new ArrayList<>();
            boolean done = false;
            while (true) {
                String line = lines.poll(open >= 0 ? CHILD_INPUT_SECONDS : 120, TimeUnit.SECONDS);
                if (line == null) {
                    tally.hangs++;
                    tally.note("HANG at input " + open + " (seed " + seed + "): " + String.join(" | ", tail));
                    child.destroyForcibly().waitFor();
                    next = open >= 0 ? open + 1 : to;
                    break;
                }
                if (line.equals("\u0000EOF")) {
                    int code = child.waitFor();
                    if (!done) {
                        tally.deaths++;
                        tally.note("DEATH (exit " + code + ") at input " + open + " (seed " + seed + "): " + String.join(" | ", tail));
                        next = open >= 0 ? open + 1 : to;
                    } else {
                        next = to;
                    }
                    break;
                }
                tail.add(Hostile.safe(line, 300));
                if (tail.size() > 6) {
                    tail.remove(0);
                }
                if (line.startsWith("BEGIN ")) {
                    open = Integer.parseInt(line.split(" ")[1]);
                    tally.inputs++;
                } else if (line.startsWith("END ")) {
                    String[] parts = line.split(" ", 4);
                    if (parts[2].equals("WRONG")) {
                        tally.wrong++;
                        tally.note("input " + parts[1] + " (seed " + seed + "): " + parts[3]);
                    } else if (parts[2].equals("LIMIT")) {
                        tally.limits++;
                    } else if (parts[2].equals("LOST")) {
                        tally.lost++;
                        tally.note("input " + parts[1] + " (seed " + seed + "): LOST " + parts[3]);
                    }
                    open = -1;
                } else if (line.startsWith("LEAKS ")) {
                    int n = Integer.parseInt(line.split(" ")[1]);
                    tally.leaks += n;
                    if (n > 0) {
                        tally.note(line);
                    }
                } else if (line.equals("DONE")) {
                    done = true;
                }
            }
        }
        return tally;
    }

    @Test
    void riskyInputsInAChildJvm() throws Exception {
        long started = System.nanoTime();
        String one = System.getenv("PHASEO_FUZZ_CASE");
        int from = one == null || one.isBlank() ? 0 : Integer.parseInt(one.trim());
        int to = one == null || one.isBlank() ? CHILD_RUNS : from + 1;
        Tally tally = runChild(SEED, from, to);
        System.out.printf("fuzz child: seed %d, %s in %.1f s%n", SEED, tally, (System.nanoTime() - started) / 1e9);
        tally.findings.forEach(f -> System.out.println("  " + f));
        assertEquals(to - from, tally.inputs, "inputs run: " + tally + "; " + tally.findings);
        assertTrue(tally.deaths == 0 && tally.hangs == 0 && tally.wrong == 0 && tally.lost == 0 && tally.leaks == 0,
            tally + ": " + String.join("\n", tally.findings));
    }
}
