// Kotlin conformance runner: runs the cross-language JSON cases through the PUBLIC Kotlin API
// of the uniffi binding (Phaseo.kt over the generated bindings), with real Kotlin suspend
// executors, Kotlin function validators wrapping the binding's JSON Schema helper, Kotlin
// predicates and hooks, and a Kotlin model client (see tests/conformance/README.md and
// tests/conformance/README.md).
//
//   tests/conformance/kotlin_runner.sh [--stop-after N --save-state DIR |
//       --resume-state DIR --from-step N] PATH...
//
// Executor forms: a `suspend` lambda by default, `blocking { }` (a plain function run on
// Dispatchers.IO) for `"async": false`, `generator { }` (progress through `emit`) for
// `"asGenerator": true`.
//
// Entry points: a case whose file name sorts at an odd index among the `*.json` files of its
// folder runs its steps through `agent.stream(...)` / `agent.continueStream(...)`, collecting
// the events from the stream's Flow (cancelAfterMs through `stream.cancel()`); every other
// case uses `agent.run(...)` / `agent.continueRun(...)` with `onEvent` (cancelAfterMs through
// a CancelToken).
package app.phaseo.agent.conformance

import app.phaseo.agent.*
import java.io.File
import java.math.BigDecimal
import java.util.Collections
import kotlin.system.exitProcess
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.withContext
import kotlinx.serialization.json.*

// ---------------------------------------------------------------------------------------
// Keys this runner understands (anything else fails the case, naming the key)

val CASE_KEYS = setOf("name", "description", "agent", "tools", "model", "steps", "expectDefinitionError")
val AGENT_KEYS = setOf(
    "id", "model", "instructions", "maxSteps", "stopWhen", "modelRetry", "toolExecution",
    "temperature", "maxOutputTokens", "topP", "outputSchema", "requireApproval", "humanReview",
    "stateSecret", "toolChoice", "parallelToolCalls", "activeTools",
)
val TOOL_KEYS = setOf(
    "id", "description", "asAgent", "parameters", "inputSchema", "outputSchema", "eventSchema", "timeoutMs",
    "onError", "requireApproval", "nextTurnParams", "manual", "onToolCalled",
    "onResponseReceived", "behavior", "asGenerator", "async", "strict", "inputExamples",
    "maxCalls", "retry", "deferLoading",
)
val MODEL_ENTRY_KEYS = setOf("text", "toolCalls", "usage", "cost", "finishReason", "fail")
val OVERRIDE_KEYS = listOf(
    "model", "maxSteps", "stopWhen", "modelRetry", "toolExecution", "temperature",
    "maxOutputTokens", "topP", "toolChoice", "parallelToolCalls", "activeTools",
)
val RUN_KEYS = setOf("input", "context", "messages", "cancelAfterMs") + OVERRIDE_KEYS
val CONTINUE_KEYS = setOf(
    "approvals", "rejections", "toolOutputs", "responses", "humanInput", "context", "cancelAfterMs",
) + OVERRIDE_KEYS
val STEP_KEYS = setOf("run", "continue", "expect")
val EXPECT_KEYS = setOf(
    "status", "output", "stopReason", "pauseKind", "context", "error", "pending", "executed",
    "cancelled", "maxConcurrent", "modelRequests", "events", "toolEvents",
    "preliminaryResults", "usage", "minWallMs", "maxWallMs",
)
val ERROR_KEYS = setOf("code", "messageContains")
val REQUEST_KEYS = setOf(
    "toolMessages", "tools", "context", "temperature", "model", "instructions",
    "lastUserMessage", "maxOutputTokens", "topP", "toolChoice", "parallelToolCalls", "toolSpecs",
    "toolCalls",
)
val REQUEST_TOOL_CALL_KEYS = setOf("id", "name", "arguments")
val TOOL_SPEC_KEYS = setOf("id", "strict", "inputExamples")
val TOOL_MESSAGE_KEYS = setOf("toolCallId", "content", "contentContains", "isError")
val USAGE_KEYS = setOf("inputTokens", "outputTokens", "cachedTokens", "totalTokens", "cost")
val TOOL_EXECUTION_KEYS = setOf("toolConcurrency", "onError", "maxOutputChars", "maxToolCalls")
val TOOL_RETRY_KEYS = setOf("maxAttempts", "backoffMs")
val MODEL_RETRY_KEYS = setOf("maxRetries", "backoffMs")
val DECISION_KEYS = setOf("toolCallId", "reason")
val APPROVAL_KEYS = DECISION_KEYS + "editedInput"
val TOOL_OUTPUT_KEYS = setOf("toolCallId", "output")
val TERMINAL_ACTIONS = setOf(
    "return", "returnInput", "throw", "returnContext", "returnRuntime", "returnAttempt", "returnIdempotencyKey",
)
val ACTIONS = TERMINAL_ACTIONS + setOf("progress", "setContext", "sleepMs", "blockingSleepMs", "throwUntilAttempt")
val TOOL_EVENT_TYPES = setOf("tool.started", "tool.preliminary_result", "tool.completed", "tool.failed", "tool.retrying")
const val EXECUTOR_GRACE_MS = 1000L

/** The first difference, or a feature of the case this runner cannot express. */
class CaseError(message: String) : Exception(message)

// ---------------------------------------------------------------------------------------
// JSON helpers (numbers by value, absent == null)

val JsonElement?.orNull: JsonElement get() = this ?: JsonNull
val JsonElement.obj: JsonObject? get() = this as? JsonObject
val JsonElement.str: String? get() = (this as? JsonPrimitive)?.takeIf { it.isString }?.content
val JsonElement.num: Double? get() = (this as? JsonPrimitive)?.takeIf { !it.isString }?.doubleOrNull
fun JsonObject.has(key: String) = containsKey(key)
fun JsonObject.present(key: String): JsonElement? = this[key]?.takeIf { it !is JsonNull }

/** Deep equality where `2` equals `2.0` and an absent object key equals `null`. */
fun jsonEq(a: JsonElement?, b: JsonElement?): Boolean {
    val x = a ?: JsonNull
    val y = b ?: JsonNull
    if (x is JsonArray || y is JsonArray) {
        return x is JsonArray && y is JsonArray && x.size == y.size && x.indices.all { jsonEq(x[it], y[it]) }
    }
    if (x is JsonObject || y is JsonObject) {
        if (x !is JsonObject || y !is JsonObject) return false
        return (x.keys + y.keys).all { jsonEq(x[it], y[it]) }
    }
    if (x is JsonNull || y is JsonNull) return x is JsonNull && y is JsonNull
    val p = x as JsonPrimitive
    val q = y as JsonPrimitive
    if (p.isString || q.isString) return p.isString && q.isString && p.content == q.content
    val pb = p.booleanOrNull
    val qb = q.booleanOrNull
    if (pb != null || qb != null) return pb == qb
    return try {
        BigDecimal(p.content).compareTo(BigDecimal(q.content)) == 0
    } catch (_: NumberFormatException) {
        p.content == q.content
    }
}

val JSON_NUMBER = Regex("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?")

/** Whether every unquoted literal in a parsed tree is really JSON (kotlinx accepts `abc`). */
fun isStrict(v: JsonElement): Boolean = when (v) {
    is JsonObject -> v.values.all(::isStrict)
    is JsonArray -> v.all(::isStrict)
    is JsonNull -> true
    is JsonPrimitive -> v.isString || v.content == "true" || v.content == "false" || JSON_NUMBER.matches(v.content)
}

/** The JSON value of a text, or null when the text is not JSON. */
fun strictJson(text: String): JsonElement? =
    try {
        parseJson(text).takeIf(::isStrict)
    } catch (_: Exception) {
        null
    }

/** Compact JSON text of a value for difference messages (cut at 300 characters). */
fun show(value: JsonElement?): String {
    val s = (value ?: JsonNull).toString()
    val cps = s.codePoints().toArray()
    return if (cps.size <= 300) s else String(cps, 0, 300) + "…"
}

/** A string verbatim, anything else as compact JSON. */
fun text(v: JsonElement?): String = v?.str ?: (v ?: JsonNull).toString()

fun diff(key: String, expected: JsonElement?, actual: JsonElement?) {
    if (!jsonEq(expected, actual)) throw CaseError("$key: expected ${show(expected)}, got ${show(actual)}")
}

fun checkKeys(value: JsonElement?, allowed: Set<String>, what: String) {
    val obj = value?.obj ?: return
    for (key in obj.keys) if (key !in allowed) throw CaseError("$what: unsupported key ${JsonPrimitive(key)}")
}

fun singleEntry(action: JsonElement, what: String): Pair<String, JsonElement> {
    val obj = action.obj
    if (obj == null || obj.size != 1) throw CaseError("$what must be an object with one key: ${show(action)}")
    return obj.entries.first().toPair()
}

/**
 * A behaviour action: one key, except `{"throwUntilAttempt": n, "message": "..."}`, whose
 * argument is then the whole action (the executor needs both).
 */
fun behaviorAction(action: JsonElement): Pair<String, JsonElement> {
    val obj = action.obj
    if (obj != null && obj.containsKey("throwUntilAttempt")) {
        if (obj.keys != setOf("throwUntilAttempt", "message")) {
            throw CaseError("behavior action throwUntilAttempt needs exactly a message: ${show(action)}")
        }
        return "throwUntilAttempt" to obj
    }
    return singleEntry(action, "behavior action")
}

fun strings(values: Collection<String>) = JsonArray(values.map(::JsonPrimitive))

// ---------------------------------------------------------------------------------------
// What executors record during one step (executors run on other threads)

class Observations {
    private val lock = Any()
    private val executed = mutableListOf<String>()
    private val cancelled = mutableListOf<String>()
    private var running = 0
    private var maxRunning = 0

    @Volatile
    var active = 0
        private set

    fun reset() = synchronized(lock) {
        executed.clear()
        cancelled.clear()
        maxRunning = 0
    }

    /** An executor's first action. */
    fun start(callId: String) = synchronized(lock) {
        executed.add(callId)
        active += 1
        running += 1
        maxRunning = maxOf(maxRunning, running)
    }

    /** An executor returned or threw. */
    fun end() = synchronized(lock) {
        running -= 1
        active -= 1
    }

    fun recordCancelled(callId: String) = synchronized(lock) { cancelled.add(callId) }

    fun snapshot(): Triple<List<String>, List<String>, Int> = synchronized(lock) {
        Triple(executed.sorted(), cancelled.toSortedSet().toList(), maxRunning)
    }
}

// ---------------------------------------------------------------------------------------
// Tool executors: the case's behaviour as real Kotlin functions

fun runtimeValue(rt: ToolContext): JsonElement {
    if (rt.runId.isEmpty()) throw IllegalStateException("runtime run id is not a non-empty string: ${JsonPrimitive(rt.runId)}")
    return buildJsonObject {
        put("runId", "<run>")
        put("agentId", rt.agentId)
        put("stepIndex", rt.stepIndex)
        put("toolCallId", rt.toolCall.id)
    }
}

/** The value a terminal action returns (or the error it throws). */
fun terminal(key: String, arg: JsonElement, input: JsonElement, rt: ToolContext): JsonElement = when (key) {
    "return" -> arg
    "returnInput" -> input
    "throw" -> throw RuntimeException(text(arg))
    "returnContext" -> rt.context
    "returnAttempt" -> JsonPrimitive(rt.attempt)
    "returnIdempotencyKey" -> idempotencyKeyValue(rt.idempotencyKey, rt.runId)
    else -> runtimeValue(rt)
}

/** The idempotency key with the real run id (checked to be its prefix) written as `<run>`. */
fun idempotencyKeyValue(key: String, runId: String): JsonElement {
    if (runId.isEmpty() || !key.startsWith("$runId:")) {
        throw IllegalStateException("idempotency key ${JsonPrimitive(key)} does not start with the run id ${JsonPrimitive(runId)}")
    }
    return JsonPrimitive("<run>:" + key.removePrefix("$runId:"))
}

/** `{"throwUntilAttempt": n, "message"}`: throws the message while the attempt is below n. */
fun throwUntilAttempt(action: JsonElement, attempt: Int) {
    val until = action.obj?.get("throwUntilAttempt")?.num
        ?: throw CaseError("throwUntilAttempt: a number is required, got ${show(action)}")
    if (attempt < until) throw RuntimeException(text(action.obj!!["message"]))
}

fun millis(arg: JsonElement): Long = arg.num?.toLong() ?: throw CaseError("expected a number of milliseconds, got ${show(arg)}")

/** A synchronous sleep that ignores cancellation (and interrupts). */
fun blockingSleep(ms: Long) {
    val deadline = System.nanoTime() + ms * 1_000_000
    while (true) {
        val left = deadline - System.nanoTime()
        if (left <= 0) return
        try {
            Thread.sleep(left / 1_000_000, (left % 1_000_000).toInt())
        } catch (_: InterruptedException) {
            // ignored on purpose
        }
    }
}

/** A cooperative wait that ends early when the call's coroutine is cancelled (then records
 * the call as cancelled and rethrows). */
suspend fun cooperativeSleep(ms: Long, rt: ToolContext, obs: Observations) {
    try {
        delay(ms)
    } catch (e: CancellationException) {
        obs.recordCancelled(rt.toolCall.id)
        throw e
    }
}

/** The same wait in a blocking executor: polls the call's cancellation. */
fun pollingSleep(ms: Long, rt: ToolContext, obs: Observations) {
    val deadline = System.nanoTime() + ms * 1_000_000
    while (System.nanoTime() < deadline) {
        if (rt.isCancelled) {
            obs.recordCancelled(rt.toolCall.id)
            throw RuntimeException("cancelled")
        }
        Thread.sleep(2)
    }
}

fun executor(spec: JsonObject, obs: Observations): ToolFunction {
    val id = spec["id"]?.str ?: ""
    val actions = (spec["behavior"] as? JsonArray ?: JsonArray(emptyList())).map(::behaviorAction)
    for ((key, _) in actions) {
        if (key !in ACTIONS) throw CaseError("tool ${JsonPrimitive(id)}: unsupported behavior action ${JsonPrimitive(key)}")
    }
    val sync = spec["async"] == JsonPrimitive(false)
    val gen = spec["asGenerator"] == JsonPrimitive(true)
    if (sync) {
        return blocking { input, rt ->
            obs.start(rt.toolCall.id)
            try {
                for ((key, arg) in actions) {
                    when (key) {
                        in TERMINAL_ACTIONS -> return@blocking terminal(key, arg, input, rt)
                        "progress" -> rt.emitProgress(arg)
                        "setContext" -> rt.setContext(arg)
                        "sleepMs" -> pollingSleep(millis(arg), rt, obs)
                        "blockingSleepMs" -> blockingSleep(millis(arg))
                        "throwUntilAttempt" -> throwUntilAttempt(arg, rt.attempt)
                    }
                }
                JsonNull
            } finally {
                obs.end()
            }
        }
    }
    if (gen) {
        return generator { input, rt ->
            obs.start(rt.toolCall.id)
            try {
                for ((key, arg) in actions) {
                    when (key) {
                        in TERMINAL_ACTIONS -> return@generator terminal(key, arg, input, rt)
                        "progress" -> emit(arg)
                        "setContext" -> rt.setContext(arg)
                        "sleepMs" -> cooperativeSleep(millis(arg), rt, obs)
                        "blockingSleepMs" -> blockingSleep(millis(arg))
                        "throwUntilAttempt" -> throwUntilAttempt(arg, rt.attempt)
                    }
                }
                JsonNull
            } finally {
                obs.end()
            }
        }
    }
    return { input, rt ->
        obs.start(rt.toolCall.id)
        try {
            var result: JsonElement = JsonNull
            for ((key, arg) in actions) {
                if (key in TERMINAL_ACTIONS) {
                    result = terminal(key, arg, input, rt)
                    break
                }
                when (key) {
                    "progress" -> rt.emitProgress(arg)
                    "setContext" -> rt.setContext(arg)
                    "sleepMs" -> cooperativeSleep(millis(arg), rt, obs)
                    "blockingSleepMs" -> blockingSleep(millis(arg))
                    "throwUntilAttempt" -> throwUntilAttempt(arg, rt.attempt)
                }
            }
            result
        } finally {
            obs.end()
        }
    }
}

// ---------------------------------------------------------------------------------------
// Validators, predicates and hooks as Kotlin functions

/** A Kotlin function validator backed by the binding's public JSON Schema helper. */
fun schemaValidator(schema: JsonElement): Validator {
    val helper = jsonSchemaValidator(schema)
    return validator { value -> helper.parse(value) }
}

fun inputEquals(expected: JsonObject, input: JsonElement): Boolean {
    val obj = input.obj ?: return false
    return expected.all { (k, v) -> obj.containsKey(k) && jsonEq(obj[k], v) }
}

fun optionalValidator(spec: JsonObject, key: String): Validator? = spec.present(key)?.let(::schemaValidator)

fun buildTool(spec: JsonObject, obs: Observations): Tool {
    checkKeys(spec, TOOL_KEYS, "tool")
    val id = spec["id"]?.str ?: throw CaseError("tool without id")
    val rule = spec.present("requireApproval")
    var requireApproval = false
    var approval: ToolHook<Boolean>? = null
    when {
        rule == null -> {}
        rule is JsonPrimitive && rule.booleanOrNull != null -> requireApproval = rule.boolean
        rule.obj?.size == 1 && rule.obj?.get("inputEquals") is JsonObject -> {
            val expected = rule.obj!!["inputEquals"] as JsonObject
            approval = { input, _ -> inputEquals(expected, input) }
        }
        else -> throw CaseError("tool requireApproval: unsupported rule ${show(rule)}")
    }
    val onToolCalled: ToolHook<JsonElement?>? = spec.present("onToolCalled")?.let { form ->
        when {
            form == JsonPrimitive("pause") -> { _, _ -> null }
            form.obj?.size == 1 && form.obj!!.containsKey("return") -> {
                val value = form.obj!!["return"]!!
                ({ _, _ -> value })
            }
            else -> throw CaseError("onToolCalled: unsupported form ${show(form)}")
        }
    }
    val onResponseReceived: ToolHook<JsonElement>? = spec.present("onResponseReceived")?.let { form ->
        val key = form.obj?.takeIf { it.size == 1 }?.get("wrap")?.str
            ?: throw CaseError("onResponseReceived: unsupported form ${show(form)}")
        ({ output, _ -> buildJsonObject { put(key, output) } })
    }
    val onError = spec.present("onError")?.let { onErrorOf(it) }
    val nextTurn = spec.present("nextTurnParams")?.let {
        it.obj ?: throw CaseError("nextTurnParams: expected an object, got ${show(it)}")
    }
    val timeout = spec.present("timeoutMs")?.let {
        it.num ?: throw CaseError("timeoutMs: expected a number, got ${show(it)}")
    }
    val examples = spec.present("inputExamples")?.let { list ->
        (list as? JsonArray)?.map { it.obj ?: throw CaseError("inputExamples: objects are required") }
            ?: throw CaseError("inputExamples: a list is required, got ${show(list)}")
    }
    val maxCalls = spec.present("maxCalls")?.let { it.num?.toInt() ?: throw CaseError("maxCalls: a number is required") }
    return defineTool(
            id = id,
            description = spec["description"]?.str ?: "",
            parameters = spec.present("parameters"),
            timeoutMs = timeout?.toLong(),
            requireApproval = requireApproval,
            approval = approval,
            onError = onError,
            inputSchema = optionalValidator(spec, "inputSchema"),
            outputSchema = optionalValidator(spec, "outputSchema"),
            eventSchema = optionalValidator(spec, "eventSchema"),
            onToolCalled = onToolCalled,
            onResponseReceived = onResponseReceived,
            nextTurnParams = nextTurn,
            strict = spec["strict"] == JsonPrimitive(true),
            inputExamples = examples,
            maxCalls = maxCalls,
            retry = toolRetryOf(spec["retry"]),
            deferLoading = deferLoadingOf(spec),
            execute = if (spec["manual"] == JsonPrimitive(true)) null else executor(spec, obs),
        )
}

/** A tool's `deferLoading` (docs/behaviour.md §17): a boolean, false when absent. */
fun deferLoadingOf(spec: JsonObject): Boolean = when (val value = spec.present("deferLoading")) {
    null -> false
    JsonPrimitive(true) -> true
    JsonPrimitive(false) -> false
    else -> throw CaseError("deferLoading: a boolean is required, got ${show(value)}")
}

/** A tool's `retry: {maxAttempts, backoffMs?}`. */
fun toolRetryOf(value: JsonElement?): ToolRetry? {
    if (value == null || value is JsonNull) return null
    checkKeys(value, TOOL_RETRY_KEYS, "retry")
    val obj = value.obj ?: throw CaseError("retry: expected an object")
    val attempts = obj.present("maxAttempts")?.num ?: throw CaseError("retry: maxAttempts is required")
    return toolRetry(attempts.toInt(), obj.present("backoffMs")?.num?.toLong() ?: 0)
}

/** A case's toolChoice (`"auto"`, `"required"`, `"none"`, `{"toolId": id}`) as the Kotlin type. */
fun toolChoiceOf(value: JsonElement): ToolChoice = when {
    value == JsonPrimitive("auto") -> ToolChoice.Auto
    value == JsonPrimitive("required") -> ToolChoice.Required
    value == JsonPrimitive("none") -> ToolChoice.None
    value.obj?.size == 1 && value.obj?.get("toolId")?.str != null -> ToolChoice.Tool(value.obj!!["toolId"]!!.str!!)
    else -> throw CaseError("toolChoice: unsupported value ${show(value)}")
}

fun toolIdsOf(value: JsonElement): List<String> =
    (value as? JsonArray)?.map { it.str ?: throw CaseError("activeTools: ids are strings") }
        ?: throw CaseError("activeTools: a list is required, got ${show(value)}")

/** The case's agent, or the [AgentException] with which the binding refused its definition. */
fun buildAgentOrRefusal(case: JsonObject, obs: Observations): Any = try {
    buildAgent(case, obs)
} catch (e: AgentException) {
    e
}

fun onErrorOf(value: JsonElement): OnError = when (value.str) {
    "fail-run" -> OnError.FAIL_RUN
    "return-to-model" -> OnError.RETURN_TO_MODEL
    else -> throw CaseError("onError: unsupported policy ${show(value)}")
}

fun stopConditions(value: JsonElement?): List<StopWhen>? {
    if (value == null || value is JsonNull) return null
    val items = value as? JsonArray ?: JsonArray(listOf(value))
    return items.map { item ->
        val (key, arg) = singleEntry(item, "stopWhen condition")
        val n = { arg.num ?: throw CaseError("stopWhen $key: a number is required") }
        when (key) {
            "stepCountIs" -> stepCountIs(n().toInt())
            "maxTokensUsed" -> maxTokensUsed(n().toLong())
            "maxCost" -> maxCost(n())
            "maxDuration" -> maxDuration(n().toLong())
            "hasToolCall" -> hasToolCall(text(arg))
            "finishReasonIs" -> finishReasonIs(text(arg))
            else -> throw CaseError("stopWhen: unsupported condition ${JsonPrimitive(key)}")
        }
    }
}

fun toolExecutionOf(value: JsonElement?): ToolExecution? {
    if (value == null || value is JsonNull) return null
    checkKeys(value, TOOL_EXECUTION_KEYS, "toolExecution")
    val obj = value.obj ?: throw CaseError("toolExecution: expected an object")
    return toolExecution(
        toolConcurrency = obj.present("toolConcurrency")?.num?.toInt(),
        onError = obj.present("onError")?.let(::onErrorOf),
        maxOutputChars = obj.present("maxOutputChars")?.num?.toInt(),
        maxToolCalls = obj.present("maxToolCalls")?.num?.toInt(),
    )
}

fun modelRetryOf(value: JsonElement?): ModelRetry? {
    if (value == null || value is JsonNull) return null
    checkKeys(value, MODEL_RETRY_KEYS, "modelRetry")
    val obj = value.obj ?: throw CaseError("modelRetry: expected an object")
    return ModelRetry(
        maxRetries = obj.present("maxRetries")?.num?.toLong() ?: 0,
        backoffMs = obj.present("backoffMs")?.num ?: 250.0,
    )
}

fun humanReviewOf(form: JsonElement): suspend (JsonObject) -> ReviewRequest? {
    val spec = form.obj?.takeIf { it.size == 1 && it.containsKey("pauseOnFinal") }?.get("pauseOnFinal")
        ?: throw CaseError("humanReview: unsupported form ${show(form)}")
    checkKeys(spec, setOf("reason", "payload"), "humanReview.pauseOnFinal")
    val reason = spec.obj?.get("reason")?.str ?: ""
    val payload = spec.obj?.get("payload") ?: JsonNull
    return { ctx ->
        val users = (ctx["messages"] as? JsonArray ?: JsonArray(emptyList()))
            .count { it.obj?.get("role")?.str == "user" }
        if (ctx["isFinal"] == JsonPrimitive(true) && users == 1) ReviewRequest(reason, payload) else null
    }
}

fun agentApprovalOf(rule: JsonElement): suspend (ToolCallInfo, ToolContext) -> Boolean {
    val (key, arg) = singleEntry(rule, "agent requireApproval")
    if (key == "toolIds" && arg is JsonArray) {
        val ids = arg.mapNotNull { it.str }.toSet()
        return { call, _ -> call.name in ids }
    }
    if (key == "inputEquals" && arg is JsonObject) return { call, _ -> inputEquals(arg, call.input) }
    throw CaseError("agent requireApproval: unsupported rule ${show(rule)}")
}

/** `{id, description?, asAgent: {agent, tools}}`: the nested agent built like the case's own
 * and registered with `asTool` (docs/behaviour.md §18). */
fun agentTool(spec: JsonObject, obs: Observations): Tool {
    checkKeys(spec, setOf("id", "description", "asAgent"), "tool")
    val nested = spec["asAgent"]?.obj ?: throw CaseError("asAgent: expected an object")
    checkKeys(nested, setOf("agent", "tools"), "asAgent")
    return buildAgent(nested, obs).asTool(id = spec.present("id")?.str, description = spec.present("description")?.str)
}

fun buildAgent(case: JsonObject, obs: Observations): Agent {
    val a = case["agent"]?.obj ?: throw CaseError("case without agent")
    checkKeys(a, AGENT_KEYS, "agent")
    val tools = (case["tools"] as? JsonArray ?: JsonArray(emptyList())).map {
        val spec = it.obj ?: throw CaseError("tool: expected an object")
        if ("asAgent" in spec) agentTool(spec, obs) else buildTool(spec, obs)
    }
    return createAgent(
            id = a["id"]?.str ?: throw CaseError("agent without id"),
            tools = tools,
            model = a.present("model")?.str,
            instructions = a.present("instructions")?.str,
            maxSteps = a.present("maxSteps")?.num?.toInt(),
            temperature = a.present("temperature")?.num,
            maxOutputTokens = a.present("maxOutputTokens")?.num?.toLong(),
            topP = a.present("topP")?.num,
            stopWhen = stopConditions(a["stopWhen"]) ?: emptyList(),
            modelRetry = modelRetryOf(a["modelRetry"]),
            toolExecution = toolExecutionOf(a["toolExecution"]),
            outputSchema = optionalValidator(a, "outputSchema"),
            requireApproval = a.present("requireApproval")?.let(::agentApprovalOf),
            humanReview = a.present("humanReview")?.let(::humanReviewOf),
            stateSecrets = stateSecretsOf(a["stateSecret"]),
            toolChoice = a.present("toolChoice")?.let(::toolChoiceOf),
            parallelToolCalls = a.present("parallelToolCalls")?.let {
                (it as? JsonPrimitive)?.booleanOrNull ?: throw CaseError("parallelToolCalls: a boolean is required")
            },
            activeTools = a.present("activeTools")?.let(::toolIdsOf),
        )
}

// ---------------------------------------------------------------------------------------
// The scripted model: a Kotlin model client recording every request

fun requestSummary(request: JsonObject): JsonObject {
    val messages = request["messages"] as? JsonArray ?: JsonArray(emptyList())
    var start = messages.size
    while (start > 0 && messages[start - 1].obj?.get("role")?.str == "tool") start -= 1
    val users = messages.filter { it.obj?.get("role")?.str == "user" }
    return buildJsonObject {
        put("toolMessages", JsonArray(messages.subList(start, messages.size).map { m ->
            val o = m.obj!!
            buildJsonObject {
                put("toolCallId", o["toolCallId"] ?: JsonNull)
                put("content", o["content"] ?: JsonNull)
                put("isError", o["isError"] == JsonPrimitive(true))
            }
        }))
        put("tools", JsonArray((request["tools"] as? JsonArray ?: JsonArray(emptyList())).map { it.obj?.get("id") ?: JsonNull }))
        put("context", request["context"].orNull)
        put("temperature", request["temperature"].orNull)
        put("model", request["model"].orNull)
        put("instructions", request["instructions"].orNull)
        put("lastUserMessage", users.lastOrNull()?.obj?.get("content").orNull)
        put("maxOutputTokens", request["maxOutputTokens"].orNull)
        put("topP", request["topP"].orNull)
        put("toolChoice", request["toolChoice"].orNull)
        put("parallelToolCalls", request["parallelToolCalls"].orNull)
        put("toolSpecs", JsonArray((request["tools"] as? JsonArray ?: JsonArray(emptyList())).map { t ->
            buildJsonObject {
                put("id", t.obj?.get("id") ?: JsonNull)
                put("strict", t.obj?.get("strict") == JsonPrimitive(true))
                put("inputExamples", t.obj?.get("inputExamples").orNull)
            }
        }))
        // The last assistant message with tool calls, as the model will read it.
        val calls = messages.asReversed().firstNotNullOfOrNull { m ->
            (m.obj?.get("toolCalls") as? JsonArray)?.takeIf { it.isNotEmpty() }
        } ?: JsonArray(emptyList())
        put("toolCalls", JsonArray(calls.map { c ->
            buildJsonObject {
                put("id", c.obj?.get("id").orNull)
                put("name", c.obj?.get("name").orNull)
                put("arguments", c.obj?.get("input").orNull)
            }
        }))
    }
}

/** Answers with the case's entries in order, one per attempt. */
class ScriptedModel(private val entries: List<JsonElement>, @Volatile var cursor: Int) {
    val requests: MutableList<JsonObject> = Collections.synchronizedList(mutableListOf())

    @Volatile
    var ranOut: String? = null

    val client: Client = modelClient { request -> answer(request) }

    /** Records [request] and answers with the next entry (a `fail` entry throws). */
    fun answer(request: JsonObject): JsonElement {
        requests.add(requestSummary(request))
        val index = synchronized(this) { cursor.also { cursor += 1 } }
        if (index >= entries.size) {
            val message = "case error: the scripted model ran out of responses (${entries.size} scripted)"
            ranOut = message
            throw RuntimeException(message)
        }
        val entry = entries[index]
        val failure = entry.obj?.get("fail")
        if (failure != null) throw RuntimeException(failure.obj?.get("message")?.let(::text) ?: text(failure))
        return entry
    }
}

// ---------------------------------------------------------------------------------------
// Steps

fun overridesOf(spec: JsonObject): RunOverrides = RunOverrides(
    model = spec.present("model")?.str,
    maxSteps = spec.present("maxSteps")?.num?.toLong(),
    stopWhen = stopConditions(spec["stopWhen"]),
    modelRetry = modelRetryOf(spec["modelRetry"]),
    toolExecution = toolExecutionOf(spec["toolExecution"]),
    temperature = spec.present("temperature")?.num,
    maxOutputTokens = spec.present("maxOutputTokens")?.num?.toLong(),
    topP = spec.present("topP")?.num,
    toolChoice = spec.present("toolChoice")?.let(::toolChoiceOf),
    parallelToolCalls = spec.present("parallelToolCalls")?.let {
        (it as? JsonPrimitive)?.booleanOrNull ?: throw CaseError("parallelToolCalls: a boolean is required")
    },
    activeTools = spec.present("activeTools")?.let(::toolIdsOf),
)

/** Approvals (which may carry `editedInput`) or rejections. */
fun decisions(items: JsonElement?, what: String): List<Decision> {
    if (items == null || items is JsonNull) return emptyList()
    val list = items as? JsonArray ?: throw CaseError("$what: expected a list, got ${show(items)}")
    return list.map { d ->
        d.str?.let { return@map decision(it) }
        val o = d.obj
        val id = o?.get("toolCallId")?.str ?: throw CaseError("$what: unsupported decision ${show(d)}")
        checkKeys(o, if (what == "approvals") APPROVAL_KEYS else DECISION_KEYS, what)
        decision(id, o["reason"]?.str, if (o.containsKey("editedInput")) o["editedInput"].orNull else null)
    }
}

/** `toolOutputs` or `responses`: call id → output. */
fun toolOutputsOf(items: JsonElement?, what: String = "toolOutputs"): Map<String, JsonElement> {
    if (items == null || items is JsonNull) return emptyMap()
    val list = items as? JsonArray ?: throw CaseError("$what: expected a list, got ${show(items)}")
    val out = LinkedHashMap<String, JsonElement>()
    for (o in list) {
        checkKeys(o, TOOL_OUTPUT_KEYS, what)
        val id = o.obj?.get("toolCallId")?.str ?: throw CaseError("$what entry without toolCallId: ${show(o)}")
        out[id] = o.obj!!["output"].orNull
    }
    return out
}

/** Deterministic: the case's file name sorts at an odd index in its folder. */
fun usesStream(file: File): Boolean {
    val abs = file.absoluteFile
    val siblings = abs.parentFile.list { _, n -> n.endsWith(".json") }!!.sorted()
    return siblings.indexOf(abs.name) % 2 == 1
}

class Outcome(
    val state: JsonObject?,
    val error: AgentException?,
    val events: List<JsonObject>,
    val requests: List<JsonObject>,
    val executed: List<String>,
    val cancelled: List<String>,
    val maxConcurrent: Int,
    val wallMs: Double,
)

/**
 * How a runner builds a case's agent and runs its steps: the Kotlin API here, the Java API
 * in JavaRunner (src/test/java); the case loop and every check are shared.
 */
interface Driver {
    /** The case's agent, or the [AgentException] with which the binding refused its definition. */
    @Throws(Exception::class)
    fun build(case: JsonObject, obs: Observations): Any

    /** The steps of one case on [agent] (what [build] returned). */
    @Throws(Exception::class)
    fun start(agent: Any, model: ScriptedModel, obs: Observations, state: RunResult?, streaming: Boolean): Stepper
}

/** Runs the steps of one case; [state] and [edited] carry over between steps. */
interface Stepper {
    /** The current state. */
    var state: RunResult?

    /** The state's JSON text after an `editState` step, read by the next continue. */
    var edited: String?

    /** Runs one `run` or `continue` step. */
    @Throws(Exception::class)
    fun stepBlocking(step: JsonObject): Outcome
}

/** The Kotlin API's driver. */
object KotlinDriver : Driver {
    override fun build(case: JsonObject, obs: Observations): Any = buildAgentOrRefusal(case, obs)

    override fun start(agent: Any, model: ScriptedModel, obs: Observations, state: RunResult?, streaming: Boolean): Stepper =
        CaseRun(agent as? Agent ?: throw CaseError("unexpected definition outcome"), model, obs, state, streaming)
}

class CaseRun(
    val agent: Agent,
    val model: ScriptedModel,
    val obs: Observations,
    override var state: RunResult?,
    val streaming: Boolean,
) : Stepper {
    override var edited: String? = null

    override fun stepBlocking(step: JsonObject): Outcome = runBlocking { step(step) }

    suspend fun step(step: JsonObject): Outcome {
        obs.reset()
        model.requests.clear()
        val events: MutableList<JsonObject> = Collections.synchronizedList(mutableListOf())
        val onEvent: ((JsonObject) -> Unit)? = if (streaming) null else { e -> events.add(e) }
        val token = CancelToken()
        var stream: RunStream? = null
        val cancelAfter: Long?
        // Streaming: starts the stream. Otherwise: the awaited call.
        val startStream: () -> RunStream
        val call: suspend () -> RunResult
        val runSpec = step["run"]
        val continueSpec = step["continue"]
        when {
            runSpec != null -> {
                val spec = runSpec.obj ?: throw CaseError("run: expected an object")
                cancelAfter = spec.present("cancelAfterMs")?.let(::millis)
                val input = spec["input"].orNull
                val context = spec["context"]
                val messages = spec.present("messages")?.let { it as? JsonArray ?: throw CaseError("messages: expected a list") }
                val overrides = overridesOf(spec)
                startStream = { agent.stream(input, model.client, context, messages, overrides) }
                call = { agent.run(input, model.client, context, messages, overrides, onEvent, token) }
            }
            continueSpec != null -> {
                val spec = continueSpec.obj ?: throw CaseError("continue: expected an object")
                // An edited state is read as an application reads a stored one; a refusal is
                // this continue's error.
                val stored = edited?.let { text -> runCatching { parseState(text) } }
                val refused = stored?.exceptionOrNull()
                if (refused != null && refused !is AgentException) throw refused
                val current = stored?.getOrNull() ?: state ?: throw CaseError("continue without a state")
                cancelAfter = spec.present("cancelAfterMs")?.let(::millis)
                val approvals = decisions(spec["approvals"], "approvals")
                val rejections = decisions(spec["rejections"], "rejections")
                val outputs = toolOutputsOf(spec["toolOutputs"])
                val responses = toolOutputsOf(spec["responses"], "responses")
                val humanInput = spec.present("humanInput")?.let(::text)
                val context = spec["context"]
                val overrides = overridesOf(spec)
                startStream = {
                    if (refused != null) throw refused
                    agent.continueStream(
                        current, model.client, approvals, rejections, outputs, humanInput, context, overrides,
                        responses = responses,
                    )
                }
                call = {
                    if (refused != null) throw refused
                    agent.continueRun(
                        current, model.client, approvals, rejections, outputs, humanInput, context, overrides, onEvent, token,
                        responses = responses,
                    )
                }
            }
            else -> throw CaseError("a step is neither run nor continue")
        }
        var result: RunResult? = null
        var error: AgentException? = null
        val started = System.nanoTime()
        coroutineScope {
            val canceller = cancelAfter?.let { ms ->
                launch {
                    delay(ms)
                    val s = stream
                    if (s != null) s.cancel() else token.cancel()
                }
            }
            try {
                if (streaming) {
                    val s = startStream().also { stream = it }
                    try {
                        s.collect { events.add(it) }
                    } catch (_: AgentException) {
                        // the run failed: result() below raises the same error
                    }
                    result = s.result()
                } else {
                    result = call()
                }
            } catch (e: AgentException) {
                error = e
                result = e.result
            } finally {
                canceller?.cancel()
            }
        }
        val wallMs = (System.nanoTime() - started) / 1e6
        // Let executors the run stopped waiting for observe their cancellation.
        val deadline = System.nanoTime() + EXECUTOR_GRACE_MS * 1_000_000
        while (obs.active > 0 && System.nanoTime() < deadline) delay(5)
        model.ranOut?.let { throw CaseError(it) }
        // Between steps the state always round-trips through its canonical JSON text.
        result?.let {
            state = parseState(it.toJson())
            edited = null
        }
        val (executed, cancelled, maxConcurrent) = obs.snapshot()
        return Outcome(
            state = state?.let { parseJson(it.toJson()).jsonObject },
            error = error,
            events = synchronized(events) { events.toList() },
            requests = synchronized(model.requests) { model.requests.toList() },
            executed = executed,
            cancelled = cancelled,
            maxConcurrent = maxConcurrent,
            wallMs = wallMs,
        )
    }
}

// ---------------------------------------------------------------------------------------
// Expectations

fun toolMessageMatches(expected: JsonObject, actual: JsonObject): Boolean {
    if (!jsonEq(expected["toolCallId"], actual["toolCallId"])) return false
    if ((expected["isError"] == JsonPrimitive(true)) != (actual["isError"] == JsonPrimitive(true))) return false
    val content = actual["content"]?.str ?: ""
    if (expected.containsKey("content")) {
        val parsed = strictJson(content) ?: JsonPrimitive(content)
        if (!jsonEq(expected["content"], parsed)) return false
    }
    val contains = expected["contentContains"]?.str
    if (contains != null && !content.contains(contains)) return false
    return true
}

fun checkRequest(i: Int, expected: JsonObject, actual: JsonObject) {
    for ((key, want) in expected) {
        val got = actual[key]
        if (key == "toolMessages") {
            val wantList = want as? JsonArray ?: JsonArray(emptyList())
            val gotList = got as? JsonArray ?: JsonArray(emptyList())
            val same = wantList.size == gotList.size &&
                wantList.indices.all { toolMessageMatches(wantList[it].obj!!, gotList[it].obj!!) }
            if (!same) throw CaseError("modelRequests[$i].toolMessages: expected ${show(wantList)}, got ${show(gotList)}")
        } else if (key == "toolSpecs") {
            val wantList = want as? JsonArray ?: JsonArray(emptyList())
            val gotList = got as? JsonArray ?: JsonArray(emptyList())
            val same = wantList.size == gotList.size && wantList.indices.all { j ->
                val w = wantList[j].obj ?: return@all false
                w.all { (k, v) -> k in TOOL_SPEC_KEYS && jsonEq(v, gotList[j].obj?.get(k).orNull) }
            }
            if (!same) throw CaseError("modelRequests[$i].toolSpecs: expected ${show(wantList)}, got ${show(gotList)}")
        } else if (key == "toolCalls") {
            val wantList = want as? JsonArray ?: JsonArray(emptyList())
            val gotList = got as? JsonArray ?: JsonArray(emptyList())
            val same = wantList.size == gotList.size && wantList.indices.all { j ->
                val w = wantList[j].obj ?: return@all false
                val g = gotList[j].obj ?: return@all false
                jsonEq(w["id"], g["id"]) && jsonEq(w["name"], g["name"]) &&
                    jsonEq(argumentsJson(w["arguments"]), argumentsJson(g["arguments"]))
            }
            if (!same) throw CaseError("modelRequests[$i].toolCalls: expected ${show(wantList)}, got ${show(gotList)}")
        } else {
            diff("modelRequests[$i].$key", want, got)
        }
    }
}

/** Tool call arguments compared as JSON: a text holding JSON stands for that JSON. */
fun argumentsJson(value: JsonElement?): JsonElement? = value?.str?.let(::strictJson) ?: value

fun checkDefinitionError(want: JsonObject, built: Any) {
    val e = built as? AgentException
        ?: throw CaseError("expectDefinitionError: expected ${show(want)}, but the definition was accepted")
    val code = want["code"]
    if (code != null && !jsonEq(code, JsonPrimitive(e.code))) {
        throw CaseError("expectDefinitionError.code: expected ${show(code)}, got ${show(JsonPrimitive(e.code))} (message: ${e.message})")
    }
    val contains = want["messageContains"]?.str
    if (contains != null && !(e.message ?: "").contains(contains)) {
        throw CaseError("expectDefinitionError.message: expected to contain ${JsonPrimitive(contains)}, got ${JsonPrimitive(e.message ?: "")}")
    }
}

fun checkError(want: JsonObject, o: Outcome) {
    val runError = o.state?.get("run")?.obj?.get("error")?.obj
    val code: String?
    val message: String
    when {
        o.error != null -> {
            code = o.error.code
            message = o.error.message ?: ""
        }
        runError != null -> {
            code = runError["code"]?.str
            message = runError["message"]?.str ?: ""
        }
        else -> throw CaseError("error: expected ${show(want)}, got no error")
    }
    if (want.containsKey("code") && !jsonEq(want["code"], code?.let(::JsonPrimitive))) {
        throw CaseError("error.code: expected ${show(want["code"])}, got ${show(code?.let(::JsonPrimitive))} (message: $message)")
    }
    val contains = want["messageContains"]?.str
    if (contains != null && !message.contains(contains)) {
        throw CaseError("error.message: expected to contain ${JsonPrimitive(contains)}, got ${JsonPrimitive(message)}")
    }
}

fun eventsByCall(events: List<JsonObject>, types: Set<String>, pick: (JsonObject) -> JsonElement): Map<String, List<JsonElement>> {
    val out = LinkedHashMap<String, MutableList<JsonElement>>()
    for (e in events) {
        if (e.type !in types) continue
        out.getOrPut(text(e["toolCallId"])) { mutableListOf() }.add(pick(e))
    }
    return out
}

fun stateFields(state: JsonObject?): Map<String, JsonElement> {
    if (state == null) return emptyMap()
    val run = state["run"]?.obj ?: JsonObject(emptyMap())
    val pause = run["pause"]?.obj
    return mapOf(
        "status" to run["status"].orNull,
        "output" to state["output"].orNull,
        "stopReason" to run["stopReason"].orNull,
        "pauseKind" to (pause?.get("kind") ?: JsonNull),
        "context" to run["context"].orNull,
        "pending" to JsonArray((pause?.get("pendingToolCalls") as? JsonArray ?: JsonArray(emptyList())).map { p ->
            val call = p.obj?.get("call")?.obj
            buildJsonObject {
                put("toolCallId", call?.get("id") ?: JsonNull)
                put("toolName", call?.get("name") ?: JsonNull)
                put("kind", p.obj?.get("kind") ?: JsonNull)
            }
        }),
    )
}

/** Checks every key of `expect`; the first difference throws. */
fun checkExpect(expect: JsonObject, o: Outcome) {
    val fields = stateFields(o.state)
    for ((key, want) in expect) {
        when (key) {
            "status", "output", "stopReason", "pauseKind", "context", "pending" -> diff(key, want, fields[key])
            "error" -> checkError(want.obj ?: throw CaseError("expect.error: expected an object"), o)
            "executed" -> diff(key, want, strings(o.executed))
            "cancelled" -> diff(key, want, strings(o.cancelled))
            "maxConcurrent" -> diff(key, want, JsonPrimitive(o.maxConcurrent))
            "modelRequests" -> {
                val list = want as? JsonArray ?: throw CaseError("expect.modelRequests: expected a list")
                if (list.size != o.requests.size) {
                    throw CaseError("modelRequests: expected ${list.size} requests, got ${o.requests.size}")
                }
                list.forEachIndexed { i, w -> checkRequest(i, w.obj!!, o.requests[i]) }
            }
            "events" -> diff(key, want, strings(o.events.mapNotNull { it.type }.filter { !it.startsWith("response.") }))
            "toolEvents" -> {
                val got = eventsByCall(o.events, TOOL_EVENT_TYPES) { JsonPrimitive(it.type) }
                for ((id, types) in want.obj!!) diff("toolEvents.$id", types, JsonArray(got[id] ?: emptyList()))
            }
            "preliminaryResults" -> {
                val got = eventsByCall(o.events, setOf("tool.preliminary_result")) { it["result"].orNull }
                for ((id, values) in want.obj!!) diff("preliminaryResults.$id", values, JsonArray(got[id] ?: emptyList()))
            }
            "usage" -> {
                val usage = o.state?.get("usage")?.obj
                for ((k, v) in want.obj!!) diff("usage.$k", v, usage?.get(k))
            }
            "minWallMs" -> {
                val floor = want.num ?: throw CaseError("minWallMs: expected a number")
                if (o.wallMs < floor) throw CaseError("minWallMs: took ${Math.round(o.wallMs)} ms, at least ${text(want)} ms expected")
            }
            "maxWallMs" -> {
                val limit = want.num ?: throw CaseError("maxWallMs: expected a number")
                if (o.wallMs > limit) throw CaseError("maxWallMs: took ${Math.round(o.wallMs)} ms, limit ${text(want)} ms")
            }
            else -> throw CaseError("expect: unsupported key ${JsonPrimitive(key)}")
        }
    }
    if (o.error != null && !expect.containsKey("error")) {
        throw CaseError("unexpected error ${o.error.code}: ${o.error.message}")
    }
}

// ---------------------------------------------------------------------------------------
// Cases

/** Refuses, before anything runs, a case using a key this runner does not know. */
/** `stateSecret`: a string, or a list for rotation. */
fun stateSecretsOf(value: JsonElement?): List<String> = when (value) {
    null, JsonNull -> emptyList()
    is JsonArray -> value.map { it.str ?: throw CaseError("stateSecret: a list must hold strings") }
    else -> listOf(value.str ?: throw CaseError("stateSecret: unsupported ${show(value)}"))
}

/**
 * The `editState` step: RFC 6902 `add`/`remove`/`replace` on the state's JSON text, as an
 * attacker editing a stored state would.
 */
fun applyPatch(text: String, ops: JsonElement): String {
    var doc = parseJson(text)
    val list = ops as? JsonArray ?: throw CaseError("editState must be a list of operations")
    for (op in list) {
        checkKeys(op, setOf("op", "path", "value"), "editState")
        val o = op.obj ?: throw CaseError("editState: an operation must be an object")
        val kind = o["op"]?.str
        val path = o["path"]?.str ?: throw CaseError("editState: operation without path")
        val value = o["value"]
        if (kind !in setOf("add", "remove", "replace")) throw CaseError("editState: unsupported op ${show(o["op"] ?: JsonNull)}")
        if (kind != "remove" && value == null) throw CaseError("editState: $kind $path without value")
        if (path.isEmpty() && kind != "remove") {
            doc = value!!
            continue
        }
        if (!path.startsWith("/")) throw CaseError("editState: bad path ${JsonPrimitive(path)}")
        val parts = path.substring(1).split("/").map { it.replace("~1", "/").replace("~0", "~") }
        doc = edit(doc, parts, kind!!, value, path)
    }
    return doc.toString()
}

private fun edit(node: JsonElement, parts: List<String>, kind: String, value: JsonElement?, path: String): JsonElement {
    val key = parts[0]
    val last = parts.size == 1
    fun missing() = CaseError("editState: no such path ${JsonPrimitive(path)}")
    return when (node) {
        is JsonObject -> {
            val m = node.toMutableMap()
            if (!last) {
                m[key] = edit(m[key] ?: throw missing(), parts.drop(1), kind, value, path)
            } else when (kind) {
                "add" -> m[key] = value!!
                "replace" -> if (key in m) m[key] = value!! else throw missing()
                else -> m.remove(key) ?: throw missing()
            }
            JsonObject(m)
        }
        is JsonArray -> {
            val l = node.toMutableList()
            val i = if (last && kind == "add" && key == "-") l.size else key.toIntOrNull() ?: throw missing()
            if (i < 0 || i > l.size || (i == l.size && !(last && kind == "add"))) throw missing()
            if (!last) {
                l[i] = edit(l[i], parts.drop(1), kind, value, path)
            } else when (kind) {
                "add" -> l.add(i, value!!)
                "replace" -> l[i] = value!!
                else -> l.removeAt(i)
            }
            JsonArray(l)
        }
        else -> throw missing()
    }
}

fun checkCase(case: JsonObject) {
    checkKeys(case, CASE_KEYS, "case")
    checkKeys(case["agent"], AGENT_KEYS, "agent")
    for (t in case["tools"] as? JsonArray ?: JsonArray(emptyList())) checkKeys(t, TOOL_KEYS, "tool")
    for (e in case["model"] as? JsonArray ?: JsonArray(emptyList())) {
        checkKeys(e, MODEL_ENTRY_KEYS, "model entry")
        for (c in e.obj?.get("toolCalls") as? JsonArray ?: JsonArray(emptyList())) {
            checkKeys(c, setOf("id", "name", "arguments"), "model entry toolCalls")
        }
    }
    (case["steps"] as? JsonArray ?: JsonArray(emptyList())).forEachIndexed { i, step ->
        if (step.obj?.containsKey("editState") == true) {
            checkKeys(step, setOf("editState"), "step $i")
            return@forEachIndexed
        }
        checkKeys(step, STEP_KEYS, "step $i")
        checkKeys(step.obj?.get("run"), RUN_KEYS, "step $i: run")
        checkKeys(step.obj?.get("continue"), CONTINUE_KEYS, "step $i: continue")
        val expect = step.obj?.get("expect")?.obj ?: JsonObject(emptyMap())
        checkKeys(expect, EXPECT_KEYS, "step $i: expect")
        checkKeys(expect["error"], ERROR_KEYS, "step $i: expect.error")
        checkKeys(expect["usage"], USAGE_KEYS, "step $i: expect.usage")
        for (request in expect["modelRequests"] as? JsonArray ?: JsonArray(emptyList())) {
            checkKeys(request, REQUEST_KEYS, "step $i: expect.modelRequests")
            for (m in request.obj?.get("toolMessages") as? JsonArray ?: JsonArray(emptyList())) {
                checkKeys(m, TOOL_MESSAGE_KEYS, "step $i: expect.modelRequests.toolMessages")
            }
            for (c in request.obj?.get("toolCalls") as? JsonArray ?: JsonArray(emptyList())) {
                checkKeys(c, REQUEST_TOOL_CALL_KEYS, "step $i: expect.modelRequests.toolCalls")
            }
        }
    }
}

class Mode(val stopAfter: Int?, val saveDir: File?, val resumeDir: File?, val fromStep: Int?)

/** Runs the case (or its handoff half); false when it is not one this mode runs. */
suspend fun runCase(file: File, case: JsonObject, mode: Mode, driver: Driver = KotlinDriver): Boolean {
    val steps = case["steps"] as? JsonArray ?: throw CaseError("case without steps")
    var state: RunResult? = null
    var cursor = 0
    var from = 0
    var to = steps.size
    if (mode.stopAfter != null) {
        if (steps.size <= mode.stopAfter) return false
        to = mode.stopAfter
    } else if (mode.resumeDir != null) {
        val saved = File(mode.resumeDir, file.name)
        if (!saved.exists()) return false
        val doc = parseJson(saved.readText()).jsonObject
        state = try {
            parseState(doc["state"].orNull.toString())
        } catch (e: AgentException) {
            throw CaseError("saved state refused: ${e.code}: ${e.message}")
        }
        cursor = doc["modelCursor"]?.num?.toInt() ?: 0
        from = mode.fromStep!!
    }
    checkCase(case)
    val obs = Observations()
    val built = driver.build(case, obs)
    if (case.containsKey("expectDefinitionError")) {
        if (mode.stopAfter != null || mode.resumeDir != null) return false
        checkDefinitionError(case["expectDefinitionError"]?.obj ?: JsonObject(emptyMap()), built)
        return true
    }
    if (built is AgentException) throw CaseError("agent definition refused: ${built.code}: ${built.message}")
    val model = ScriptedModel((case["model"] as? JsonArray)?.toList() ?: emptyList(), cursor)
    val run = driver.start(built, model, obs, state, usesStream(file))
    for (i in from until to) {
        val ops = steps[i].obj?.get("editState")
        if (ops != null) {
            val text = run.edited ?: run.state?.toJson() ?: throw CaseError("step $i: editState without a state")
            run.edited = try {
                applyPatch(text, ops)
            } catch (e: CaseError) {
                throw CaseError("step $i: ${e.message}")
            }
            continue
        }
        try {
            val step = steps[i].obj ?: throw CaseError("a step must be an object")
            // A blocking stepper (the Java API) must not hold a Default thread: the binding's
            // callbacks run there.
            val outcome = (run as? CaseRun)?.step(step) ?: withContext(Dispatchers.IO) { run.stepBlocking(step) }
            checkExpect(step["expect"]?.obj ?: JsonObject(emptyMap()), outcome)
        } catch (e: CaseError) {
            throw CaseError("step $i: ${e.message}")
        } catch (e: CancellationException) {
            throw e
        } catch (e: Exception) {
            throw CaseError("step $i: ${e::class.simpleName}: ${e.message}")
        }
    }
    if (mode.saveDir != null) {
        val current = run.edited ?: run.state?.toJson() ?: throw CaseError("no state to save")
        mode.saveDir.mkdirs()
        val doc = buildJsonObject {
            put("state", parseJson(current))
            put("modelCursor", model.cursor)
        }
        File(mode.saveDir, file.name).writeText(doc.toString())
    }
    return true
}

fun collect(f: File, out: MutableList<File>) {
    if (f.isDirectory) {
        for (name in f.list()!!.sorted()) collect(File(f, name), out)
    } else if (f.name.endsWith(".json")) {
        out.add(f)
    }
}

fun usage(runner: String = "kotlin_runner.sh"): Nothing {
    System.err.println("usage: tests/conformance/$runner [--stop-after N --save-state DIR | --resume-state DIR --from-step N] PATH...")
    exitProcess(2)
}

fun main(args: Array<String>) = runMain(args, KotlinDriver, "kotlin_runner.sh")

/** The runner's command line over [driver] ([runner] names it in the usage message). */
fun runMain(args: Array<String>, driver: Driver, runner: String) {
    fun usage(): Nothing = usage(runner)
    var stopAfter: Int? = null
    var saveDir: File? = null
    var resumeDir: File? = null
    var fromStep: Int? = null
    val paths = mutableListOf<String>()
    var i = 0
    fun int(v: String?): Int = v?.takeIf { it.matches(Regex("\\d+")) }?.toInt() ?: usage()
    while (i < args.size) {
        when (val arg = args[i]) {
            "--" -> {}
            "--stop-after" -> stopAfter = int(args.getOrNull(++i))
            "--save-state" -> saveDir = File(args.getOrNull(++i) ?: usage())
            "--resume-state" -> resumeDir = File(args.getOrNull(++i) ?: usage())
            "--from-step" -> fromStep = int(args.getOrNull(++i))
            else -> if (arg.startsWith("--")) usage() else paths.add(arg)
        }
        i += 1
    }
    val stopping = stopAfter != null || saveDir != null
    val resuming = resumeDir != null || fromStep != null
    if (stopping && (resuming || saveDir == null || stopAfter == null || stopAfter < 1)) usage()
    if (resuming && (resumeDir == null || fromStep == null)) usage()
    val mode = Mode(stopAfter, saveDir, resumeDir, fromStep)
    if (paths.isEmpty()) paths.add("tests/conformance/cases")
    val files = mutableListOf<File>()
    for (p in paths) {
        val f = File(p)
        if (!f.exists()) {
            System.err.println("no such case file or folder: $p")
            exitProcess(2)
        }
        collect(f, files)
    }
    var passed = 0
    var failed = 0
    runBlocking(Dispatchers.Default) {
        for (file in files) {
            var name = file.path
            val ran: Boolean? = try {
                val case = parseJson(file.readText()).jsonObject
                name = case["name"]?.str ?: file.path
                runCase(file, case, mode, driver)
            } catch (e: CaseError) {
                println("FAIL $name: ${e.message}")
                null
            } catch (e: Exception) {
                println("FAIL $name: ${e::class.simpleName}: ${e.message}")
                null
            }
            when (ran) {
                null -> failed += 1
                true -> {
                    passed += 1
                    println("PASS $name")
                }
                false -> {}
            }
            System.out.flush()
        }
    }
    println("$passed passed, $failed failed")
    System.out.flush()
    exitProcess(if (failed == 0) 0 else 1)
}
