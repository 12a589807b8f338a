package app.phaseo.agent.conformance;

import app.phaseo.agent.AgentException;
import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.ContinueOptions;
import app.phaseo.agent.AgentSdk.Overrides;
import app.phaseo.agent.AgentSdk.RunOptions;
import app.phaseo.agent.AgentSdk.StreamResult;
import app.phaseo.agent.AgentSdk.Tool;
import app.phaseo.agent.AgentSdk.ToolCalledResult;
import app.phaseo.agent.AgentSdk.ToolDecision;
import app.phaseo.agent.AgentSdk.ToolOutput;
import app.phaseo.agent.CancelToken;
import app.phaseo.agent.Decision;
import app.phaseo.agent.PhaseoKt;
import app.phaseo.agent.RunResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import kotlin.Triple;
import kotlinx.serialization.json.JsonElement;
import kotlinx.serialization.json.JsonObject;

/**
 * Java conformance runner: runs the cross-language JSON cases through the Java API
 * ({@code AgentSdk}) with real Java lambdas as executors, validators, predicates, hooks, stop
 * conditions and the model client. The case loop, the handoff modes and every check are the
 * Kotlin runner's (KotlinRunner.kt, {@link Driver}); what this class builds and calls is the
 * Java API only.
 *
 * <p>Executors: Java has one form, a blocking function on its own thread; {@code "async"} and
 * {@code "asGenerator"} change nothing (progress goes through {@code emitProgress}).
 * {@code sleepMs} sleeps interruptibly (a timeout or cancellation interrupts the thread: the
 * call is recorded cancelled); {@code blockingSleepMs} ignores interrupts.
 *
 * <p>Entry points as in the Kotlin runner: a case at an odd index in its folder runs through
 * {@code agent.stream(...)} / {@code continueStream(...)} (cancelAfterMs via
 * {@code stream.cancel()}), every other through {@code agent.run(...)} /
 * {@code continueRun(...)} with {@code onEvent} (cancelAfterMs via a {@link CancelToken}).
 */
public final class JavaRunner implements Driver {
    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "java-runner-timer");
        t.setDaemon(true);
        return t;
    });

    /** Runs the cases named on the command line (see {@code tests/conformance/java_runner.sh}). */
    public static void main(String[] args) {
        KotlinRunnerKt.runMain(args, new JavaRunner(), "java_runner.sh");
    }

    // -----------------------------------------------------------------------------------
    // Values

    private static Object java(JsonElement element) {
        return JavaRunnerSupportKt.javaOf(element);
    }

    private static JsonElement json(Object value) {
        return PhaseoKt.toJsonElement(value);
    }

    private static String text(Object value) {
        return value instanceof String ? (String) value : json(value).toString();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object value, String what) throws CaseError {
        if (!(value instanceof Map)) {
            throw new CaseError(what + ": expected an object, got " + text(value));
        }
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object value, String what) throws CaseError {
        if (!(value instanceof List)) {
            throw new CaseError(what + ": expected a list, got " + text(value));
        }
        return (List<Object>) value;
    }

    private static Number num(Object value, String what) throws CaseError {
        if (!(value instanceof Number)) {
            throw new CaseError(what + ": a number is required, got " + text(value));
        }
        return (Number) value;
    }

    private static Integer optInt(Map<String, Object> spec, String key) throws CaseError {
        Object v = spec.get(key);
        return v == null ? null : num(v, key).intValue();
    }

    private static Double optDouble(Map<String, Object> spec, String key) throws CaseError {
        Object v = spec.get(key);
        return v == null ? null : num(v, key).doubleValue();
    }

    private static Boolean optBoolean(Map<String, Object> spec, String key) throws CaseError {
        Object v = spec.get(key);
        if (v != null && !(v instanceof Boolean)) {
            throw new CaseError(key + ": a boolean is required");
        }
        return (Boolean) v;
    }

    @SuppressWarnings("unchecked")
    private static List<String> ids(Object value, String what) throws CaseError {
        if (value == null) {
            return null;
        }
        for (Object id : list(value, what)) {
            if (!(id instanceof String)) {
                throw new CaseError(what + ": ids are strings");
            }
        }
        return (List<String>) value;
    }

    /** The single {@code {key: arg}} entry of an action or condition. */
    private static Map.Entry<String, Object> single(Object value, String what) throws CaseError {
        Map<String, Object> m = map(value, what);
        if (m.size() != 1) {
            throw new CaseError(what + ": expected a single-key object, got " + text(value));
        }
        return m.entrySet().iterator().next();
    }

    private static boolean inputEquals(Map<String, Object> expected, Object input) {
        return KotlinRunnerKt.inputEquals((JsonObject) json(expected), json(input));
    }

    private static String onError(Object value) throws CaseError {
        if ("fail-run".equals(value) || "return-to-model".equals(value)) {
            return (String) value;
        }
        throw new CaseError("onError: unsupported policy " + text(value));
    }

    // -----------------------------------------------------------------------------------
    // Tools

    private static Map<String, Object> runtimeValue(AgentSdk.RuntimeContext ctx) {
        if (ctx.runId().isEmpty()) {
            throw new IllegalStateException("runtime run id is not a non-empty string: \"\"");
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("runId", "<run>");
        out.put("agentId", ctx.agentId());
        out.put("stepIndex", ctx.stepIndex());
        out.put("toolCallId", ctx.toolCall().id());
        return out;
    }

    /** The idempotency key with the real run id (checked to be its prefix) written as {@code <run>}. */
    private static String idempotencyKeyValue(AgentSdk.RuntimeContext ctx) {
        String key = ctx.idempotencyKey();
        String prefix = ctx.runId() + ":";
        if (ctx.runId().isEmpty() || !key.startsWith(prefix)) {
            throw new IllegalStateException("idempotency key \"" + key + "\" does not start with the run id \"" + ctx.runId() + "\"");
        }
        return "<run>:" + key.substring(prefix.length());
    }

    /**
     * A behaviour action: one key, except {@code {"throwUntilAttempt": n, "message": "..."}},
     * whose argument is then the whole action.
     */
    private static Map.Entry<String, Object> behaviorAction(Object value) throws CaseError {
        if (value instanceof Map && ((Map<?, ?>) value).containsKey("throwUntilAttempt")) {
            if (!((Map<?, ?>) value).keySet().equals(Set.of("throwUntilAttempt", "message"))) {
                throw new CaseError("behavior action throwUntilAttempt needs exactly a message: " + text(value));
            }
            return Map.entry("throwUntilAttempt", value);
        }
        return single(value, "behavior action");
    }

    /** Sleeps [ms]; an interrupt (timeout, cancellation) records the call cancelled and fails it. */
    private static void interruptibleSleep(long ms, AgentSdk.RuntimeContext ctx, Observations obs) throws InterruptedException {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            obs.recordCancelled(ctx.toolCall().id());
            throw e;
        }
    }

    private static AgentSdk.ToolExecutor executor(Map<String, Object> spec, Observations obs) throws CaseError {
        String id = String.valueOf(spec.get("id"));
        List<Map.Entry<String, Object>> actions = new ArrayList<>();
        Object behavior = spec.get("behavior");
        for (Object a : behavior == null ? List.of() : list(behavior, "behavior")) {
            Map.Entry<String, Object> action = behaviorAction(a);
            if (!KotlinRunnerKt.getACTIONS().contains(action.getKey())) {
                throw new CaseError("tool \"" + id + "\": unsupported behavior action \"" + action.getKey() + "\"");
            }
            actions.add(action);
        }
        return (input, ctx) -> {
            obs.start(ctx.toolCall().id());
            try {
                for (Map.Entry<String, Object> action : actions) {
                    Object arg = action.getValue();
                    switch (action.getKey()) {
                        case "return":
                            return arg;
                        case "returnInput":
                            return input;
                        case "throw":
                            throw new RuntimeException(text(arg));
                        case "returnContext":
                            return ctx.context();
                        case "returnRuntime":
                            return runtimeValue(ctx);
                        case "returnAttempt":
                            return ctx.attempt();
                        case "returnIdempotencyKey":
                            return idempotencyKeyValue(ctx);
                        case "throwUntilAttempt": {
                            Map<?, ?> m = (Map<?, ?>) arg;
                            if (ctx.attempt() < num(m.get("throwUntilAttempt"), "throwUntilAttempt").doubleValue()) {
                                throw new RuntimeException(text(m.get("message")));
                            }
                            break;
                        }
                        case "progress":
                            ctx.emitProgress().receive(arg, ctx);
                            break;
                        case "setContext":
                            ctx.setContext().accept(arg);
                            break;
                        case "sleepMs":
                            interruptibleSleep(num(arg, "sleepMs").longValue(), ctx, obs);
                            break;
                        case "blockingSleepMs":
                            KotlinRunnerKt.blockingSleep(num(arg, "blockingSleepMs").longValue());
                            break;
                        default:
                            throw new CaseError("unsupported behavior action " + action.getKey());
                    }
                }
                return null;
            } finally {
                obs.end();
            }
        };
    }

    /** A Java function validator backed by the Java API's JSON Schema helper. */
    private static AgentSdk.Validator schemaValidator(Object schema) throws CaseError {
        AgentSdk.Validator helper = AgentSdk.jsonSchema(map(schema, "schema"));
        return value -> helper.validate(value);
    }

    private static AgentSdk.Validator optionalValidator(Map<String, Object> spec, String key) throws CaseError {
        Object schema = spec.get(key);
        return schema == null ? null : schemaValidator(schema);
    }

    private static AgentSdk.NextTurnParams nextTurn(Object value) throws CaseError {
        if (value == null) {
            return null;
        }
        Map<String, Object> m = map(value, "nextTurnParams");
        Set<String> known = Set.of("model", "instructions", "temperature", "maxOutputTokens", "topP", "tools", "toolChoice",
            "parallelToolCalls");
        for (String k : m.keySet()) {
            if (!known.contains(k)) {
                throw new CaseError("nextTurnParams: unsupported key \"" + k + "\"");
            }
        }
        List<Tool> tools = null;
        List<String> toolIds = ids(m.get("tools"), "nextTurnParams.tools");
        if (toolIds != null) {
            tools = new ArrayList<>();
            for (String id : toolIds) {
                tools.add(new Tool(id, null)); // only the id is sent
            }
        }
        return new AgentSdk.NextTurnParams((String) m.get("model"), (String) m.get("instructions"), optDouble(m, "temperature"),
            optInt(m, "maxOutputTokens"), optDouble(m, "topP"), tools, m.get("toolChoice"), optBoolean(m, "parallelToolCalls"));
    }

    @SuppressWarnings("unchecked")
    private static Tool buildTool(Map<String, Object> spec, Observations obs) throws CaseError {
        Object idValue = spec.get("id");
        if (!(idValue instanceof String)) {
            throw new CaseError("tool without id");
        }
        String id = (String) idValue;
        Object rule = spec.get("requireApproval");
        boolean requireApproval = false;
        AgentSdk.Approval approval = null;
        if (rule instanceof Boolean) {
            requireApproval = (Boolean) rule;
        } else if (rule instanceof Map && ((Map<?, ?>) rule).size() == 1 && ((Map<?, ?>) rule).get("inputEquals") instanceof Map) {
            Map<String, Object> expected = (Map<String, Object>) ((Map<?, ?>) rule).get("inputEquals");
            approval = (input, ctx) -> inputEquals(expected, input);
        } else if (rule != null) {
            throw new CaseError("tool requireApproval: unsupported rule " + text(rule));
        }
        AgentSdk.ToolCalled onToolCalled = null;
        Object called = spec.get("onToolCalled");
        if ("pause".equals(called)) {
            onToolCalled = (input, ctx) -> new ToolCalledResult(false, null);
        } else if (called instanceof Map && ((Map<?, ?>) called).size() == 1 && ((Map<?, ?>) called).containsKey("return")) {
            Object value = ((Map<?, ?>) called).get("return");
            onToolCalled = (input, ctx) -> new ToolCalledResult(true, value);
        } else if (called != null) {
            throw new CaseError("onToolCalled: unsupported form " + text(called));
        }
        AgentSdk.ToolResponse onResponse = null;
        Object received = spec.get("onResponseReceived");
        if (received != null) {
            Object key = received instanceof Map && ((Map<?, ?>) received).size() == 1 ? ((Map<?, ?>) received).get("wrap") : null;
            if (!(key instanceof String)) {
                throw new CaseError("onResponseReceived: unsupported form " + text(received));
            }
            onResponse = (output, ctx) -> {
                Map<String, Object> wrapped = new LinkedHashMap<>();
                wrapped.put((String) key, output);
                return wrapped;
            };
        }
        Object timeout = spec.get("timeoutMs");
        List<Map<String, Object>> examples = null;
        Object ex = spec.get("inputExamples");
        if (ex != null) {
            examples = new ArrayList<>();
            for (Object e : list(ex, "inputExamples")) {
                examples.add(map(e, "inputExamples"));
            }
        }
        Object params = spec.get("parameters");
        Object retry = spec.get("retry");
        AgentSdk.ToolRetryConfig retryConfig = null;
        if (retry != null) {
            Map<String, Object> r = map(retry, "retry");
            KotlinRunnerKt.checkKeys(json(r), KotlinRunnerKt.getTOOL_RETRY_KEYS(), "retry");
            Object backoff = r.get("backoffMs");
            retryConfig = new AgentSdk.ToolRetryConfig(num(r.get("maxAttempts"), "retry.maxAttempts").intValue(),
                Duration.ofMillis(backoff == null ? 0 : num(backoff, "retry.backoffMs").longValue()));
        }
        return new Tool(id,
            Boolean.TRUE.equals(spec.get("manual")) ? null : executor(spec, obs),
            spec.get("description") instanceof String ? (String) spec.get("description") : "",
            params == null ? null : map(params, "parameters"),
            timeout == null ? null : Duration.ofNanos(Math.round(num(timeout, "timeoutMs").doubleValue() * 1e6)),
            optionalValidator(spec, "inputSchema"), optionalValidator(spec, "outputSchema"), optionalValidator(spec, "eventSchema"),
            requireApproval, approval, onToolCalled, onResponse,
            spec.get("onError") == null ? null : onError(spec.get("onError")),
            nextTurn(spec.get("nextTurnParams")),
            Boolean.TRUE.equals(spec.get("strict")), examples, optInt(spec, "maxCalls"), retryConfig)
            .withDeferLoading(deferLoading(spec.get("deferLoading")));
    }

    /** A tool's {@code deferLoading} (docs/behaviour.md §17): a boolean, false when absent. */
    private static boolean deferLoading(Object value) throws CaseError {
        if (value == null) {
            return false;
        }
        if (!(value instanceof Boolean)) {
            throw new CaseError("deferLoading: a boolean is required, got " + text(value));
        }
        return (Boolean) value;
    }

    // -----------------------------------------------------------------------------------
    // The agent

    private static List<AgentSdk.StopCondition> stopConditions(Object value) throws CaseError {
        if (value == null) {
            return null;
        }
        List<Object> items = value instanceof List ? list(value, "stopWhen") : List.of(value);
        List<AgentSdk.StopCondition> out = new ArrayList<>();
        for (Object item : items) {
            Map.Entry<String, Object> c = single(item, "stopWhen condition");
            Object arg = c.getValue();
            switch (c.getKey()) {
                case "stepCountIs":
                    out.add(AgentSdk.stepCountIs(num(arg, "stopWhen stepCountIs").intValue()));
                    break;
                case "maxTokensUsed":
                    out.add(AgentSdk.maxTokensUsed(num(arg, "stopWhen maxTokensUsed").intValue()));
                    break;
                case "maxCost":
                    out.add(AgentSdk.maxCost(num(arg, "stopWhen maxCost").doubleValue()));
                    break;
                case "maxDuration":
                    out.add(AgentSdk.maxDuration(Duration.ofMillis(num(arg, "stopWhen maxDuration").longValue())));
                    break;
                case "hasToolCall":
                    out.add(AgentSdk.hasToolCall(text(arg)));
                    break;
                case "finishReasonIs":
                    out.add(AgentSdk.finishReasonIs(text(arg)));
                    break;
                default:
                    throw new CaseError("stopWhen: unsupported condition \"" + c.getKey() + "\"");
            }
        }
        return out;
    }

    private static AgentSdk.ToolExecutionConfig toolExecution(Object value) throws CaseError {
        if (value == null) {
            return null;
        }
        Map<String, Object> m = map(value, "toolExecution");
        KotlinRunnerKt.checkKeys(json(m), KotlinRunnerKt.getTOOL_EXECUTION_KEYS(), "toolExecution");
        return AgentSdk.ToolExecutionConfig.of(optInt(m, "toolConcurrency"),
            m.get("onError") == null ? null : onError(m.get("onError")), optInt(m, "maxOutputChars"), optInt(m, "maxToolCalls"));
    }

    private static AgentSdk.ModelRetryConfig modelRetry(Object value) throws CaseError {
        if (value == null) {
            return null;
        }
        Map<String, Object> m = map(value, "modelRetry");
        KotlinRunnerKt.checkKeys(json(m), KotlinRunnerKt.getMODEL_RETRY_KEYS(), "modelRetry");
        Integer retries = optInt(m, "maxRetries");
        Double backoff = optDouble(m, "backoffMs");
        return new AgentSdk.ModelRetryConfig(retries == null ? 0 : retries,
            Duration.ofNanos(Math.round((backoff == null ? 250.0 : backoff) * 1e6)));
    }

    @SuppressWarnings("unchecked")
    private static AgentSdk.HumanReview humanReview(Object form) throws CaseError {
        Object spec = form instanceof Map && ((Map<?, ?>) form).size() == 1 ? ((Map<?, ?>) form).get("pauseOnFinal") : null;
        if (!(spec instanceof Map)) {
            throw new CaseError("humanReview: unsupported form " + text(form));
        }
        KotlinRunnerKt.checkKeys(json(spec), Set.of("reason", "payload"), "humanReview.pauseOnFinal");
        Object reasonValue = ((Map<?, ?>) spec).get("reason");
        String reason = reasonValue instanceof String ? (String) reasonValue : "";
        Object payload = ((Map<?, ?>) spec).get("payload");
        return ctx -> {
            int users = 0;
            Object messages = ctx.get("messages");
            for (Object m : messages instanceof List ? (List<Object>) messages : List.of()) {
                if (m instanceof Map && "user".equals(((Map<?, ?>) m).get("role"))) {
                    users++;
                }
            }
            return Boolean.TRUE.equals(ctx.get("isFinal")) && users == 1 ? new AgentSdk.HumanReviewRequest(reason, payload) : null;
        };
    }

    @SuppressWarnings("unchecked")
    private static AgentSdk.CallApproval agentApproval(Object rule) throws CaseError {
        Map.Entry<String, Object> r = single(rule, "agent requireApproval");
        if (r.getKey().equals("toolIds") && r.getValue() instanceof List) {
            Set<Object> toolIds = new HashSet<>((List<Object>) r.getValue());
            return (call, ctx) -> toolIds.contains(call.name());
        }
        if (r.getKey().equals("inputEquals") && r.getValue() instanceof Map) {
            Map<String, Object> expected = (Map<String, Object>) r.getValue();
            return (call, ctx) -> inputEquals(expected, call.input());
        }
        throw new CaseError("agent requireApproval: unsupported rule " + text(rule));
    }

    /** {id, description?, asAgent: {agent, tools}}: the nested agent built like the case's own
     * and registered with asTool (docs/behaviour.md §18). */
    private Tool agentTool(Map<String, Object> spec, JsonObject nestedJson, Observations obs) throws Exception {
        for (String k : spec.keySet()) {
            if (!Set.of("id", "description", "asAgent").contains(k)) throw new CaseError("tool: unsupported key \"" + k + "\"");
        }
        Object nested = build(nestedJson, obs);
        if (!(nested instanceof AgentSdk.Agent)) throw new CaseError("asAgent: the nested agent was refused: " + nested);
        return ((AgentSdk.Agent) nested).asTool((String) spec.get("id"), (String) spec.get("description"));
    }

    @Override
    public Object build(JsonObject caseJson, Observations obs) throws Exception {
        Map<String, Object> c = map(java(caseJson), "case");
        Map<String, Object> a = map(c.get("agent"), "agent");
        try {
            List<Tool> tools = new ArrayList<>();
            Object specs = c.get("tools");
            List<Object> toolList = specs == null ? List.of() : list(specs, "tools");
            for (int i = 0; i < toolList.size(); i++) {
                Map<String, Object> spec = map(toolList.get(i), "tool");
                if (spec.containsKey("asAgent")) {
                    JsonObject toolJson = (JsonObject) ((kotlinx.serialization.json.JsonArray) caseJson.get("tools")).get(i);
                    tools.add(agentTool(spec, (JsonObject) toolJson.get("asAgent"), obs));
                    continue;
                }
                tools.add(AgentSdk.defineTool(buildTool(spec, obs)));
            }
            Object agentId = a.get("id");
            if (!(agentId instanceof String)) {
                throw new CaseError("agent without id");
            }
            Integer maxSteps = optInt(a, "maxSteps");
            AgentDefinition definition = new AgentDefinition((String) agentId, (String) a.get("model"), null,
                (String) a.get("instructions"), tools, maxSteps == null ? 0 : maxSteps, null,
                a.get("humanReview") == null ? null : humanReview(a.get("humanReview")),
                modelRetry(a.get("modelRetry")), toolExecution(a.get("toolExecution")), stopConditions(a.get("stopWhen")),
                optionalValidator(a, "outputSchema"),
                a.get("requireApproval") == null ? null : agentApproval(a.get("requireApproval")),
                KotlinRunnerKt.stateSecretsOf(caseJson.get("agent") instanceof JsonObject
                    ? ((JsonObject) caseJson.get("agent")).get("stateSecret") : null),
                null, null, optDouble(a, "temperature"), optInt(a, "maxOutputTokens"), optDouble(a, "topP"),
                a.get("toolChoice"), optBoolean(a, "parallelToolCalls"), ids(a.get("activeTools"), "activeTools"));
            return AgentSdk.createAgent(definition);
        } catch (AgentSdk.AgentException e) {
            return kotlinError(e);
        }
    }

    /** The Kotlin layer's error behind the Java API's (a timeout's is one cause further). */
    private static AgentException kotlinError(Throwable e) {
        for (Throwable at = e.getCause(); at != null; at = at.getCause()) {
            if (at instanceof AgentException) {
                return (AgentException) at;
            }
        }
        throw new IllegalStateException("no SDK error behind " + e, e);
    }

    @Override
    public Stepper start(Object agent, ScriptedModel model, Observations obs, RunResult state, boolean streaming) throws Exception {
        if (!(agent instanceof AgentSdk.Agent)) {
            throw new CaseError("unexpected definition outcome");
        }
        return new Steps((AgentSdk.Agent) agent, model, obs, state, streaming);
    }

    // -----------------------------------------------------------------------------------
    // Steps

    /** The steps of one case through the Java API. */
    private static final class Steps implements Stepper {
        private final AgentSdk.Agent agent;
        private final ScriptedModel model;
        private final Observations obs;
        private final boolean streaming;
        private final AgentSdk.ModelClient client;
        private AgentSdk.RunResult state;
        private String edited;

        Steps(AgentSdk.Agent agent, ScriptedModel model, Observations obs, RunResult state, boolean streaming) {
            this.agent = agent;
            this.model = model;
            this.obs = obs;
            this.streaming = streaming;
            this.state = state == null ? null : AgentSdk.RunResult.fromJson(state.toJson());
            // The scripted model as a Java model client: records each request, answers in order.
            this.client = request -> model.answer((JsonObject) json(request));
        }

        @Override
        public RunResult getState() {
            return state == null ? null : PhaseoKt.parseState(state.toJson());
        }

        @Override
        public void setState(RunResult value) {
            state = value == null ? null : AgentSdk.RunResult.fromJson(value.toJson());
        }

        @Override
        public String getEdited() {
            return edited;
        }

        @Override
        public void setEdited(String value) {
            edited = value;
        }

        private static Overrides overrides(Map<String, Object> spec) throws CaseError {
            return new Overrides(stopConditions(spec.get("stopWhen")), optDouble(spec, "temperature"), optInt(spec, "maxOutputTokens"),
                optDouble(spec, "topP"), spec.get("toolChoice"), optBoolean(spec, "parallelToolCalls"),
                ids(spec.get("activeTools"), "activeTools"));
        }

        private static List<ToolDecision> decisions(JsonElement items, String what) throws CaseError {
            List<ToolDecision> out = new ArrayList<>();
            for (Decision d : KotlinRunnerKt.decisions(items, what)) {
                String edited = d.getEditedInputJson();
                out.add(new ToolDecision(d.getToolCallId(), d.getReason(), edited == null ? null : java(PhaseoKt.parseJson(edited))));
            }
            return out;
        }

        private static List<ToolOutput> outputs(JsonElement items, String what) throws CaseError {
            List<ToolOutput> out = new ArrayList<>();
            for (Map.Entry<String, JsonElement> e : KotlinRunnerKt.toolOutputsOf(items, what).entrySet()) {
                out.add(new ToolOutput(e.getKey(), java(e.getValue())));
            }
            return out;
        }

        @Override
        @SuppressWarnings("unchecked")
        public Outcome stepBlocking(JsonObject stepJson) throws Exception {
            obs.reset();
            model.getRequests().clear();
            List<Map<String, Object>> events = Collections.synchronizedList(new ArrayList<>());
            CancelToken token = new CancelToken();
            StreamResult[] stream = new StreamResult[1];
            Map<String, Object> step = map(java(stepJson), "step");
            Long cancelAfter;
            // Exactly one of these runs the step.
            java.util.concurrent.Callable<StreamResult> startStream;
            java.util.concurrent.Callable<AgentSdk.RunResult> call;
            if (step.get("run") != null) {
                Map<String, Object> spec = map(step.get("run"), "run");
                JsonObject specJson = (JsonObject) stepJson.get("run");
                cancelAfter = spec.get("cancelAfterMs") == null ? null : num(spec.get("cancelAfterMs"), "cancelAfterMs").longValue();
                List<Map<String, Object>> messages = null;
                if (spec.get("messages") != null) {
                    messages = new ArrayList<>();
                    for (Object m : list(spec.get("messages"), "messages")) {
                        messages.add(map(m, "message"));
                    }
                }
                RunOptions options = new RunOptions(spec.get("input"), client, spec.get("context"), (String) spec.get("model"), null,
                    optInt(spec, "maxSteps"), modelRetry(spec.get("modelRetry")), toolExecution(spec.get("toolExecution")), null, null,
                    messages, overrides(spec), null);
                startStream = () -> agent.stream(options);
                call = () -> agent.run(options.withOnEvent(e -> events.add(e.toMap())).withCancel(token));
                assert specJson != null;
            } else if (step.get("continue") != null) {
                Map<String, Object> spec = map(step.get("continue"), "continue");
                JsonObject specJson = (JsonObject) stepJson.get("continue");
                AgentSdk.AgentException refused = null;
                AgentSdk.RunResult current = null;
                if (edited != null) {
                    try {
                        current = AgentSdk.RunResult.fromJson(edited);
                    } catch (AgentSdk.AgentException e) {
                        refused = e;
                    }
                }
                if (current == null) {
                    current = state;
                }
                if (current == null && refused == null) {
                    throw new CaseError("continue without a state");
                }
                cancelAfter = spec.get("cancelAfterMs") == null ? null : num(spec.get("cancelAfterMs"), "cancelAfterMs").longValue();
                Object humanInput = spec.get("humanInput");
                ContinueOptions base = new ContinueOptions(current, client, spec.get("context"), (String) spec.get("model"), null,
                    optInt(spec, "maxSteps"), humanInput == null ? null : text(humanInput), modelRetry(spec.get("modelRetry")),
                    toolExecution(spec.get("toolExecution")), null, decisions(specJson.get("approvals"), "approvals"),
                    decisions(specJson.get("rejections"), "rejections"), outputs(specJson.get("toolOutputs"), "toolOutputs"), null, null,
                    overrides(spec), null);
                for (ToolOutput answer : outputs(specJson.get("responses"), "responses")) {
                    base = base.respond(answer.toolCallId(), answer.output());
                }
                ContinueOptions options = base;
                AgentSdk.AgentException refusal = refused;
                startStream = () -> {
                    if (refusal != null) {
                        throw refusal;
                    }
                    return agent.continueStream(options);
                };
                call = () -> {
                    if (refusal != null) {
                        throw refusal;
                    }
                    return agent.continueRun(options.withOnEvent(e -> events.add(e.toMap())).withCancel(token));
                };
            } else {
                throw new CaseError("a step is neither run nor continue");
            }
            AgentSdk.RunResult result = null;
            AgentException error = null;
            long started = System.nanoTime();
            ScheduledFuture<?> canceller = cancelAfter == null ? null : TIMER.schedule(() -> {
                StreamResult s = stream[0];
                if (s != null) {
                    s.cancel();
                } else {
                    token.cancel();
                }
            }, cancelAfter, TimeUnit.MILLISECONDS);
            try {
                if (streaming) {
                    StreamResult s = startStream.call();
                    stream[0] = s;
                    try {
                        for (AgentSdk.AgentEvent event : s.events()) {
                            events.add(event.toMap());
                        }
                    } catch (AgentSdk.AgentException e) {
                        // the run failed: getResult() below raises the same error
                    }
                    result = s.getResult();
                } else {
                    result = call.call();
                }
            } catch (AgentSdk.AgentException e) {
                error = kotlinError(e);
                result = e.state();
            } finally {
                if (canceller != null) {
                    canceller.cancel(false);
                }
            }
            double wallMs = (System.nanoTime() - started) / 1e6;
            // Let executors the run stopped waiting for observe their cancellation.
            long deadline = System.nanoTime() + KotlinRunnerKt.EXECUTOR_GRACE_MS * 1_000_000;
            while (obs.getActive() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            if (model.getRanOut() != null) {
                throw new CaseError(model.getRanOut());
            }
            // Between steps the state always round-trips through its canonical JSON text.
            if (result != null) {
                state = AgentSdk.RunResult.fromJson(result.toJson());
                edited = null;
            }
            Triple<List<String>, List<String>, Integer> seen = obs.snapshot();
            List<JsonObject> eventJson = new ArrayList<>();
            synchronized (events) {
                for (Map<String, Object> e : events) {
                    eventJson.add((JsonObject) json(e));
                }
            }
            List<JsonObject> requests;
            synchronized (model.getRequests()) {
                requests = new ArrayList<>(model.getRequests());
            }
            return new Outcome(state == null ? null : (JsonObject) PhaseoKt.parseJson(state.toJson()), error, eventJson, requests,
                seen.getFirst(), seen.getSecond(), seen.getThird(), wallMs);
        }
    }
}
