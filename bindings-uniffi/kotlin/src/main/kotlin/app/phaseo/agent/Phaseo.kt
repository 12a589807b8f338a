// The idiomatic Kotlin layer over the uniffi-generated bindings (phaseo_agent_uniffi.kt, same
// package). It only adapts: suspend lambdas become the generated foreign-trait interfaces,
// values are kotlinx.serialization `JsonElement`s (JSON text underneath), streams are Flows,
// and the generated error becomes `AgentException`. Every behaviour lives in the Rust core.
@file:Suppress("unused")

package app.phaseo.agent

import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import kotlin.coroutines.EmptyCoroutineContext
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.FlowCollector
import kotlinx.coroutines.flow.filter
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.mapNotNull
import kotlinx.coroutines.flow.takeWhile
import kotlinx.coroutines.withContext
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.contentOrNull
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive

// ---------------------------------------------------------------------------------------
// Values

/** Parses JSON text. */
fun parseJson(text: String): JsonElement = Json.parseToJsonElement(text)

/**
 * A value the SDK cannot turn into JSON: a cycle, a value nested more than 64 levels, a
 * non-finite number, an object of no JSON type, or one that throws while it is read. The
 * message says which, in the words every binding uses. A tool's result of this kind is
 * `tool_output_invalid`.
 */
class NotJsonValueException(message: String) : IllegalArgumentException(message)

/** How many containers deep a value may be (the core's limit for any one value). */
internal const val MAX_VALUE_DEPTH = 64

/**
 * How deep the conversion goes before it refuses: far past [MAX_VALUE_DEPTH] (the core
 * checks the limit where the value is used, with the code of that place: a 65-level tool
 * result is `tool_output_invalid`, a 65-level progress value `tool_event_invalid`), but
 * well within a thread's stack. A value deeper than this is past every limit anyway.
 */
private const val CONVERSION_DEPTH = 512

/** The initial capacity of a hash map that holds [size] entries without growing (load 0.75). */
internal fun capacityFor(size: Int): Int =
    if (size < 3) size + 1 else if (size < (1 shl 30)) (size / 0.75f + 1f).toInt() else Int.MAX_VALUE

/**
 * A Kotlin or Java value as JSON: a `JsonElement` as is; `null`, strings (any
 * `CharSequence`, a `Char`), finite numbers and booleans as primitives; an enum as its
 * name; an `Optional` as its value or `null`; maps (keys as text), iterables and arrays
 * (object and primitive) recursively; a record as the object of its components. Anything
 * else throws [NotJsonValueException] naming what is wrong; so do a cycle and a value
 * nested so deep that no limit could take it (checked before the stack could overflow;
 * the core checks the 64-level limit itself).
 */
fun toJsonElement(value: Any?): JsonElement = JsonValueWriter().write(value, 0)

/** A JSON number literal (RFC 8259). */
private val JSON_NUMBER = Regex("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?")

/**
 * One conversion: the containers open on the current path (by identity) find cycles. Their
 * set is made when the first container is entered: most values a call returns are scalars.
 */
private class JsonValueWriter {
    private var open: java.util.IdentityHashMap<Any, Boolean>? = null

    fun write(value: Any?, depth: Int): JsonElement = when (value) {
        null -> JsonNull
        is JsonElement -> value
        is String -> JsonPrimitive(value)
        is Char -> JsonPrimitive(value.toString())
        is Boolean -> JsonPrimitive(value)
        is Double -> finite(value, value)
        is Float -> finite(value.toDouble(), value)
        is Int, is Long, is Short, is Byte, is java.math.BigInteger,
        is java.util.concurrent.atomic.AtomicInteger, is java.util.concurrent.atomic.AtomicLong,
        -> JsonPrimitive(value as Number)
        is java.math.BigDecimal -> decimal(value)
        is Number -> otherNumber(value)
        is Enum<*> -> JsonPrimitive(value.name)
        is java.util.Optional<*> -> write(value.orElse(null), depth)
        is CharSequence -> JsonPrimitive(read { value.toString() })
        is Map<*, *> -> nested(value, depth) {
            val entries = read { value.entries.toList() }
            val members = LinkedHashMap<String, JsonElement>(capacityFor(entries.size))
            for ((k, v) in entries) members[key(k)] = write(v, depth + 1)
            JsonObject(members)
        }
        is Iterable<*> -> nested(value, depth) { JsonArray(read { value.toList() }.map { write(it, depth + 1) }) }
        is Array<*> -> nested(value, depth) { JsonArray(value.map { write(it, depth + 1) }) }
        is IntArray -> leaves(depth) { JsonArray(value.map(::JsonPrimitive)) }
        is LongArray -> leaves(depth) { JsonArray(value.map(::JsonPrimitive)) }
        is ShortArray -> leaves(depth) { JsonArray(value.map(::JsonPrimitive)) }
        is DoubleArray -> leaves(depth) { JsonArray(value.map { finite(it, it) }) }
        is FloatArray -> leaves(depth) { JsonArray(value.map { finite(it.toDouble(), it) }) }
        is BooleanArray -> leaves(depth) { JsonArray(value.map(::JsonPrimitive)) }
        is java.lang.Record -> nested(value, depth) { record(value, depth) }
        else -> throw NotJsonValueException("a value of type ${value.javaClass.name} has no JSON form")
    }

    /**
     * A number of another type (a `DoubleAdder`, an application's own): its text is written
     * as it is, so it must be a JSON number; anything else (`NaN`, text that would add keys
     * of its own) has no JSON form.
     */
    private fun otherNumber(value: Number): JsonElement {
        val text = read { value.toString() }
        val number = text.takeIf(JSON_NUMBER::matches)?.toBigDecimalOrNull()
            ?: throw NotJsonValueException("number $text has no JSON form")
        return decimal(number)
    }

    /**
     * A decimal is read as a 64-bit float (docs/behaviour.md §7): one beyond a float's range (`1E+400`)
     * has no JSON form the SDK can keep. Integers keep their digits (the core refuses those
     * past 64 bits).
     */
    private fun decimal(value: java.math.BigDecimal): JsonElement {
        val text = value.toString()
        if (text.any { it == '.' || it == 'E' || it == 'e' } && value.toDouble().isInfinite()) {
            throw NotJsonValueException("number $text has no JSON form")
        }
        return JsonPrimitive(value)
    }

    /** A primitive array is a container too: it counts towards the depth. */
    private inline fun leaves(depth: Int, body: () -> JsonElement): JsonElement {
        if (depth >= CONVERSION_DEPTH) throw NotJsonValueException("value is nested more than $MAX_VALUE_DEPTH levels deep")
        return body()
    }

    private fun finite(value: Double, number: Number): JsonElement =
        if (value.isFinite()) JsonPrimitive(number) else throw NotJsonValueException("number $value has no JSON form")

    private fun key(key: Any?): String = when (key) {
        is String -> key
        is Enum<*> -> key.name
        null -> throw NotJsonValueException("an object key is null")
        else -> read { key.toString() }
    }

    private fun record(value: java.lang.Record, depth: Int): JsonObject =
        JsonObject(
            value.javaClass.recordComponents.associate { component ->
                val accessor = component.accessor
                read {
                    accessor.trySetAccessible()
                    component.name to accessor.invoke(value)
                }.let { (name, v) -> name to write(v, depth + 1) }
            },
        )

    private inline fun nested(value: Any, depth: Int, body: () -> JsonElement): JsonElement {
        if (depth >= CONVERSION_DEPTH) throw NotJsonValueException("value is nested more than $MAX_VALUE_DEPTH levels deep")
        val open = open ?: java.util.IdentityHashMap<Any, Boolean>().also { open = it }
        if (open.put(value, true) != null) throw NotJsonValueException("value contains a cycle")
        try {
            return body()
        } finally {
            open.remove(value)
        }
    }

    /** Reads a host value; whatever its code throws makes the value unreadable. */
    private inline fun <T> read(body: () -> T): T =
        try {
            body()
        } catch (e: NotJsonValueException) {
            throw e
        } catch (e: Throwable) {
            val cause = (e as? java.lang.reflect.InvocationTargetException)?.targetException ?: e
            throw NotJsonValueException("value cannot be read: ${describe(cause)}")
        }
}

private fun JsonElement?.text(): String = (this ?: JsonNull).toString()

// ---------------------------------------------------------------------------------------
// Errors

/**
 * The error of every SDK operation (docs/behaviour.md §9): [code] is the stable code (`tool_failed`,
 * `continue_invalid`, …). An error raised because the run itself failed carries the failed
 * run's final state as [result]; a refused continue carries none.
 */
class AgentException(
    val code: String,
    message: String,
    val result: RunResult? = null,
    val gateway: GatewayErrorInfo? = null,
    cause: Throwable? = null,
) : Exception(message, cause)

/** The generated error as an [AgentException]. */
fun PhaseoException.toAgentException(): AgentException = when (this) {
    is PhaseoException.Failed ->
        AgentException(code, errorMessage, stateJson?.let { RunResult.fromJson(it) }, gateway, this)
}

/** Runs a call into the native library, rethrowing its error as an [AgentException]. */
@PublishedApi
internal inline fun <T> sdk(block: () -> T): T =
    try {
        block()
    } catch (e: PhaseoException) {
        throw e.toAgentException()
    }

/**
 * Runs a host callback for the native library: cancellation propagates, a [ToolException]
 * passes as is, a value with no JSON form ([NotJsonValueException]) is an invalid value,
 * anything else thrown becomes a [ToolException] with its message (so the model and the
 * error see `boom`, not `java.lang.IllegalStateException: boom`).
 */
@PublishedApi
internal inline fun <T> hostCall(block: () -> T): T =
    try {
        block()
    } catch (e: CancellationException) {
        throw e
    } catch (e: ToolException) {
        throw e
    } catch (e: NotJsonValueException) {
        throw ToolException.InvalidValue(describe(e))
    } catch (e: Throwable) {
        throw ToolException.Failed(describe(e))
    }

/**
 * Whether [text] has no lone surrogate. Text going to the native library needs no check:
 * its conversion to UTF-8 writes each lone surrogate as U+FFFD (see
 * `bindings-uniffi/scripts/generate.sh`); a state holding one is refused ([parseState]).
 */
@PublishedApi
internal fun isWellFormed(text: String): Boolean {
    var i = 0
    while (i < text.length) {
        val c = text[i]
        if (Character.isHighSurrogate(c) && i + 1 < text.length && Character.isLowSurrogate(text[i + 1])) {
            i += 2
            continue
        }
        if (Character.isSurrogate(c)) return false
        i++
    }
    return true
}

/**
 * The message of anything a host callback threw, best effort: a `message` or `toString()`
 * that itself throws (or a StackOverflowError from a value too deep) cannot escape.
 */
@PublishedApi
internal fun describe(e: Throwable): String =
    runCatching { e.message }.getOrNull()
        ?: runCatching { e.toString() }.getOrNull()
        ?: "host callback failed"

/** Throws from a callback with exactly this message (what the model or the error sees). */
fun toolError(message: String): Nothing = throw ToolException.Failed(message)

// ---------------------------------------------------------------------------------------
// The runtime a tool call sees

/** A tool call: its id (unique in the run: an idempotency key), tool id and input. */
data class ToolCallInfo(val id: String, val name: String, val input: JsonElement)

/**
 * What a tool call sees of its run (docs/behaviour.md §2.1). Cancellation is coroutine cancellation: a
 * timeout or a cancelled run cancels the executor's coroutine.
 */
class ToolContext internal constructor(private val runtime: Lazy<ToolRuntime>) {
    /** The context of a call whose runtime is [native]. */
    constructor(native: ToolRuntime) : this(lazyOf(native))

    /** The call's runtime object (made on first use for a blocking body, see JvmDispatch.kt). */
    val native: ToolRuntime get() = runtime.value

    // Each value is read from the runtime when first asked for, then kept: most bodies never
    // look, and a `lazy` delegate per value cost eight allocations a call. Threads that ask at
    // once may each read it; they read the same value (immutable, safely published).
    @Volatile private var runIdValue: String? = null
    @Volatile private var agentIdValue: String? = null
    @Volatile private var stepIndexValue: Int = -1
    @Volatile private var contextValue: JsonElement? = null
    @Volatile private var toolCallValue: ToolCallInfo? = null
    @Volatile private var toolAnnotationsValue: Any? = Unread
    @Volatile private var attemptValue: Int = 0
    @Volatile private var idempotencyKeyValue: String? = null

    /** Not read from the runtime yet (for values that may be null). */
    private object Unread

    val runId: String get() = runIdValue ?: native.runId().also { runIdValue = it }
    val agentId: String get() = agentIdValue ?: native.agentId().also { agentIdValue = it }
    val stepIndex: Int
        get() = stepIndexValue.takeIf { it >= 0 } ?: native.stepIndex().toInt().also { stepIndexValue = it }

    /** The application context as it was when the tool phase began. */
    val context: JsonElement get() = contextValue ?: parseJson(native.contextJson()).also { contextValue = it }

    /** The call `{id, name, input}`. */
    val toolCall: ToolCallInfo
        get() = toolCallValue ?: parseJson(native.toolCallJson()).jsonObject.let { call ->
            ToolCallInfo(
                call["id"]?.jsonPrimitive?.content ?: "",
                call["name"]?.jsonPrimitive?.content ?: "",
                call["input"] ?: JsonNull,
            )
        }.also { toolCallValue = it }

    /** The tool's annotations (an MCP tool's `readOnlyHint`, `destructiveHint`, …), or null. */
    val toolAnnotations: JsonObject?
        get() {
            val kept = toolAnnotationsValue
            if (kept !== Unread) return kept as JsonObject?
            return native.toolAnnotationsJson()?.let { parseJson(it).jsonObject }.also { toolAnnotationsValue = it }
        }

    /** Whether the call was cancelled (timeout or run cancellation). */
    val isCancelled: Boolean get() = native.isCancelled()

    /** The executor's attempt: 1, then 2, 3… when the tool's `retry` runs the call again. */
    val attempt: Int get() = attemptValue.takeIf { it > 0 } ?: native.attempt().toInt().also { attemptValue = it }

    /**
     * `"<runId>:<toolCallId>"`: the same for every attempt of the call, for a call approved on
     * continue in another process and for a call run again by `recover`. Hand it to the
     * service a side-effecting tool calls, so that the effect happens at most once.
     */
    val idempotencyKey: String get() = idempotencyKeyValue ?: native.idempotencyKey().also { idempotencyKeyValue = it }

    /** Publishes a progress value (`tool.preliminary_result`, checked by `eventSchema`). */
    fun emitProgress(value: JsonElement) = native.emitProgress(value.toString())

    /** Replaces the whole application context for later turns. */
    fun setContext(value: JsonElement) = native.setContext(value.toString())
}

// ---------------------------------------------------------------------------------------
// Tools

/** A tool's body: a suspend function of the validated input and the call's runtime. */
typealias ToolFunction = suspend (input: JsonElement, runtime: ToolContext) -> JsonElement

/** A hook or predicate of the input (or output) and the call's runtime. */
typealias ToolHook<T> = suspend (value: JsonElement, runtime: ToolContext) -> T

private class KotlinApproval(val fn: ToolHook<Boolean>) : ApprovalPredicate {
    override suspend fun requiresApproval(inputJson: String, runtime: ToolRuntime): Boolean =
        hostCall { fn(parseJson(inputJson), ToolContext(runtime)) }
}

private class KotlinAgentApproval(val fn: suspend (ToolCallInfo, ToolContext) -> Boolean) : ApprovalPredicate {
    override suspend fun requiresApproval(inputJson: String, runtime: ToolRuntime): Boolean =
        hostCall { ToolContext(runtime).let { fn(it.toolCall, it) } }
}

private class KotlinToolCalled(val fn: ToolHook<JsonElement?>) : ToolCalledHook {
    override suspend fun onToolCalled(inputJson: String, runtime: ToolRuntime): String? =
        hostCall { fn(parseJson(inputJson), ToolContext(runtime))?.toString() }
}

private class KotlinResponseReceived(val fn: ToolHook<JsonElement>) : ResponseReceivedHook {
    override suspend fun onResponseReceived(outputJson: String, runtime: ToolRuntime): String =
        hostCall { fn(parseJson(outputJson), ToolContext(runtime)).toString() }
}

private class KotlinNextTurn(val fn: ToolHook<JsonObject>) : NextTurnParamsProvider {
    override suspend fun nextTurnParams(inputJson: String, runtime: ToolRuntime): String =
        hostCall { fn(parseJson(inputJson), ToolContext(runtime)).toString() }
}

private class KotlinValidator(val schema: JsonElement?, val fn: (JsonElement) -> JsonElement) : Validator {
    override fun validate(valueJson: String): String = hostCall { fn(parseJson(valueJson)).toString() }
    override fun jsonSchema(): String? = schema?.toString()
}

/**
 * A validator written in Kotlin: returns the accepted (possibly transformed) value or
 * throws; the exception's message is the validation message. [schema], when given,
 * describes the accepted values (sent to the model when a tool has no `parameters`).
 */
fun validator(schema: JsonElement? = null, check: (JsonElement) -> JsonElement): Validator =
    KotlinValidator(schema, check)

/** A JSON Schema compiled by the core, as a [Validator] (messages `<pointer>: <reason>`). */
fun jsonSchemaValidator(schema: JsonElement): Validator = sdk { jsonSchemaValidator(schema.toString()) }

/** Validates [value]: the accepted value, or a [ToolException] with the validator's message. */
fun Validator.parse(value: JsonElement): JsonElement = parseJson(validate(value.toString()))

/** Runs a blocking function on `Dispatchers.IO` (it keeps its thread if cancelled; the
 * core discards its late result). */
fun blocking(fn: (input: JsonElement, runtime: ToolContext) -> JsonElement): ToolFunction =
    { input, runtime -> withContext(Dispatchers.IO) { fn(input, runtime) } }

/** What a [generator] body emits progress values through. */
class ProgressScope internal constructor(private val runtime: ToolContext) {
    /** Publishes a progress value (like `runtime.emitProgress`). */
    fun emit(value: JsonElement) = runtime.emitProgress(value)
}

/** A generator-style body: every `emit(value)` is a progress value, the return value is the
 * result (the Kotlin form of Python/JS generator executors). */
fun generator(fn: suspend ProgressScope.(input: JsonElement, runtime: ToolContext) -> JsonElement): ToolFunction =
    { input, runtime -> ProgressScope(runtime).fn(input, runtime) }

/**
 * Defines a tool (docs/behaviour.md §2). [execute] is a suspend function (see [blocking] and
 * [generator] for other forms); without it the tool is manual. [maxCalls] bounds how many
 * of its calls a run admits and [retry] ([toolRetry]) runs a call again when an attempt
 * throws or times out (docs/behaviour.md §15; the body sees `runtime.attempt` and
 * `runtime.idempotencyKey`). With [deferLoading] the tool is not offered to the model
 * until the built-in `tool_search` finds it; it is then offered to the end of the run, and
 * the state's `loadedTools` keeps it across a pause (docs/behaviour.md §17). [annotations]
 * (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`, `title`) are listed
 * when the tool is served over MCP ([serveMcp], docs/behaviour.md §19). An invalid
 * definition (`maxCalls = 0`, …) throws [AgentException] `definition_invalid`.
 *
 * [execute] starts on the thread that takes the call, often the thread of the coroutine
 * that awaits the run (which drives it), and must not block it: blocking work belongs in
 * [blocking] or `withContext(Dispatchers.IO)`. A body that blocks holds that thread, and so
 * the run's caller, until it returns; the call's timeout still ends the call on time.
 */
fun defineTool(
    id: String,
    description: String = "",
    parameters: JsonElement? = null,
    timeoutMs: Long? = null,
    requireApproval: Boolean = false,
    approval: ToolHook<Boolean>? = null,
    onError: OnError? = null,
    inputSchema: Validator? = null,
    outputSchema: Validator? = null,
    eventSchema: Validator? = null,
    onToolCalled: ToolHook<JsonElement?>? = null,
    onResponseReceived: ToolHook<JsonElement>? = null,
    nextTurnParams: JsonObject? = null,
    nextTurnParamsFn: ToolHook<JsonObject>? = null,
    strict: Boolean = false,
    inputExamples: List<JsonObject>? = null,
    maxCalls: Int? = null,
    retry: ToolRetry? = null,
    deferLoading: Boolean = false,
    annotations: JsonObject? = null,
    execute: ToolFunction? = null,
): Tool = newTool(
    id, description, parameters, timeoutMs, requireApproval, approval, onError, inputSchema, outputSchema,
    eventSchema, onToolCalled, onResponseReceived, nextTurnParams, nextTurnParamsFn, strict, inputExamples,
    maxCalls, retry, deferLoading, suspendingExecute = execute, annotations = annotations,
)

/** A blocking tool body: runs on the calling thread, which it may block. */
internal typealias BlockingToolFunction = (input: JsonElement, runtime: ToolContext) -> JsonElement

/**
 * [defineTool] with the executor given as a suspend body ([suspendingExecute], see
 * SuspendingCalls.kt), a blocking body ([blockingExecute]; a cancelled call's thread is
 * interrupted when [interruptible]), both run by the threads of [JvmDispatch] (no callback
 * or dispatcher per call), or an executor of the generated bindings ([execute]).
 */
internal fun newTool(
    id: String,
    description: String = "",
    parameters: JsonElement? = null,
    timeoutMs: Long? = null,
    requireApproval: Boolean = false,
    approval: ToolHook<Boolean>? = null,
    onError: OnError? = null,
    inputSchema: Validator? = null,
    outputSchema: Validator? = null,
    eventSchema: Validator? = null,
    onToolCalled: ToolHook<JsonElement?>? = null,
    onResponseReceived: ToolHook<JsonElement>? = null,
    nextTurnParams: JsonObject? = null,
    nextTurnParamsFn: ToolHook<JsonObject>? = null,
    strict: Boolean = false,
    inputExamples: List<JsonObject>? = null,
    maxCalls: Int? = null,
    retry: ToolRetry? = null,
    deferLoading: Boolean = false,
    execute: ToolExecutor? = null,
    blockingExecute: BlockingToolFunction? = null,
    interruptible: Boolean = true,
    suspendingExecute: ToolFunction? = null,
    annotations: JsonObject? = null,
): Tool {
    val blocking = blockingExecute?.let { JvmDispatch.register(it, interruptible) }
        ?: suspendingExecute?.let(JvmDispatch::registerSuspending)
    try {
        return defineNative(
            id, description, parameters, timeoutMs, requireApproval, approval, onError, inputSchema, outputSchema,
            eventSchema, onToolCalled, onResponseReceived, nextTurnParams, nextTurnParamsFn, strict, inputExamples,
            maxCalls, retry, deferLoading, execute, blocking, annotations,
        )
    } catch (e: Throwable) {
        blocking?.let(JvmDispatch::unregister)
        throw e
    }
}

private fun defineNative(
    id: String,
    description: String,
    parameters: JsonElement?,
    timeoutMs: Long?,
    requireApproval: Boolean,
    approval: ToolHook<Boolean>?,
    onError: OnError?,
    inputSchema: Validator?,
    outputSchema: Validator?,
    eventSchema: Validator?,
    onToolCalled: ToolHook<JsonElement?>?,
    onResponseReceived: ToolHook<JsonElement>?,
    nextTurnParams: JsonObject?,
    nextTurnParamsFn: ToolHook<JsonObject>?,
    strict: Boolean,
    inputExamples: List<JsonObject>?,
    maxCalls: Int?,
    retry: ToolRetry?,
    deferLoading: Boolean,
    execute: ToolExecutor?,
    blockingTool: Long?,
    annotations: JsonObject?,
): Tool = sdk {
    Tool(
        ToolDefinition(
            id = id,
            description = description,
            parametersJson = parameters?.toString(),
            execute = execute,
            blockingTool = blockingTool,
            timeoutMs = timeoutMs?.toDouble(),
            requireApproval = requireApproval,
            approval = approval?.let(::KotlinApproval),
            onError = onError,
            inputSchema = inputSchema,
            outputSchema = outputSchema,
            eventSchema = eventSchema,
            onToolCalled = onToolCalled?.let(::KotlinToolCalled),
            onResponseReceived = onResponseReceived?.let(::KotlinResponseReceived),
            nextTurnParamsJson = nextTurnParams?.toString(),
            nextTurnParams = nextTurnParamsFn?.let(::KotlinNextTurn),
            strict = strict,
            inputExamplesJson = inputExamples?.let { JsonArray(it).toString() },
            maxCalls = maxCalls?.toLong(),
            retry = retry,
            deferLoading = deferLoading,
            annotationsJson = annotations?.toString(),
        ),
    )
}

// ---------------------------------------------------------------------------------------
// Agents

/** A request to pause for human review. */
data class ReviewRequest(val reason: String, val payload: JsonElement = JsonNull)

private class KotlinReview(val fn: suspend (JsonObject) -> ReviewRequest?) : HumanReview {
    override suspend fun review(contextJson: String): String? = hostCall {
        fn(parseJson(contextJson).jsonObject)?.let {
            JsonObject(mapOf("reason" to JsonPrimitive(it.reason), "payload" to it.payload)).toString()
        }
    }
}

private class KotlinTurn(val fn: suspend (JsonObject) -> JsonElement?) : TurnResolver {
    override suspend fun resolve(turnJson: String): String = hostCall { fn(parseJson(turnJson).jsonObject).text() }
}

private class KotlinStop(val fn: suspend (JsonObject) -> JsonElement) : StopCondition {
    override suspend fun check(stateJson: String): String = hostCall { fn(parseJson(stateJson).jsonObject).toString() }
}

/** Stop after at least [n] steps (`step_count:<n>`). */
fun stepCountIs(n: Int): StopWhen = StopWhen.StepCountIs(n.toLong())

/** Stop when total tokens reach [n] (`max_tokens:<n>`). */
fun maxTokensUsed(n: Long): StopWhen = StopWhen.MaxTokensUsed(n)

/** Stop when the cumulative cost reaches [cost] (`max_cost:<x>`). */
fun maxCost(cost: Double): StopWhen = StopWhen.MaxCost(cost)

/** Stop when the run is [ms] milliseconds old (`max_duration:<ms>`). */
fun maxDuration(ms: Long): StopWhen = StopWhen.MaxDuration(ms)

/** Stop once any step called [name] (`tool_call:<name>`). */
fun hasToolCall(name: String): StopWhen = StopWhen.HasToolCall(name)

/** Stop once any step finished with [reason] (`finish_reason:<reason>`). */
fun finishReasonIs(reason: String): StopWhen = StopWhen.FinishReasonIs(reason)

/** A host stop condition of `{steps, usage, elapsedMs, stepCount}`: true stops the run
 * with reason `custom_condition`. */
fun stopWhen(check: suspend (state: JsonObject) -> Boolean): StopWhen =
    StopWhen.Custom(KotlinStop { JsonPrimitive(check(it)) })

/** A host stop condition answering with a reason (stop) or null (go on). */
fun stopWhenReason(check: suspend (state: JsonObject) -> String?): StopWhen =
    StopWhen.Custom(KotlinStop { JsonPrimitive(check(it)) })

private fun turn(fn: (suspend (JsonObject) -> JsonElement?)?): TurnResolver? = fn?.let(::KotlinTurn)

/**
 * Defines an agent (docs/behaviour.md §3). [requireApproval] is the agent-level predicate of
 * `(call, runtime)`; it decides for every tool. [humanReview] returns a [ReviewRequest]
 * to pause. The `…Fn` parameters compute a field per turn from `{numberOfTurns, stepIndex,
 * messages, context}` (`toolChoiceFn`: `"auto"`, `"required"`, `"none"`, `{"toolId": id}` or
 * null; `activeToolsFn`: a JSON array of tool ids or null). [toolChoice], [parallelToolCalls]
 * and [activeTools] are the request controls of docs/behaviour.md §12. [stateSecret] signs every state
 * the agent produces (HMAC-SHA256, top-level `signature`) and refuses to continue one whose
 * signature is missing or wrong; [stateSecrets] rotates secrets (the first signs, any
 * verifies). The product's [preset] names the model `@<preset>` when [model] is unset; its
 * [parseOutput] turns the final text into the output (then [outputSchema] checks what it
 * returns). [mcpServers] offers the tools of MCP servers ([mcpStdio], [mcpHttp]); the agent
 * is [AutoCloseable]: `createAgent(…).use { }` (or [closeServers]) stops them. An invalid
 * definition throws [AgentException] `definition_invalid`.
 */
fun createAgent(
    id: String,
    tools: List<Tool> = emptyList(),
    instructions: String? = null,
    model: String? = null,
    maxSteps: Int? = null,
    stopWhen: List<StopWhen> = emptyList(),
    modelRetry: ModelRetry? = null,
    toolExecution: ToolExecution? = null,
    temperature: Double? = null,
    maxOutputTokens: Long? = null,
    topP: Double? = null,
    outputSchema: Validator? = null,
    requireApproval: (suspend (call: ToolCallInfo, runtime: ToolContext) -> Boolean)? = null,
    humanReview: (suspend (context: JsonObject) -> ReviewRequest?)? = null,
    instructionsFn: (suspend (turn: JsonObject) -> JsonElement?)? = null,
    modelFn: (suspend (turn: JsonObject) -> JsonElement?)? = null,
    temperatureFn: (suspend (turn: JsonObject) -> JsonElement?)? = null,
    maxOutputTokensFn: (suspend (turn: JsonObject) -> JsonElement?)? = null,
    topPFn: (suspend (turn: JsonObject) -> JsonElement?)? = null,
    stateSecret: String? = null,
    stateSecrets: List<String> = emptyList(),
    toolChoice: ToolChoice? = null,
    toolChoiceFn: (suspend (turn: JsonObject) -> JsonElement?)? = null,
    parallelToolCalls: Boolean? = null,
    activeTools: List<String>? = null,
    activeToolsFn: (suspend (turn: JsonObject) -> JsonElement?)? = null,
    preset: String? = null,
    parseOutput: ((text: String) -> JsonElement)? = null,
    store: RunStore? = null,
    lease: Lease? = null,
    mcpServers: List<McpServerConfig> = emptyList(),
): Agent = sdk {
    Agent(
        AgentDefinition(
            id = id,
            tools = tools,
            model = model ?: presetModel(preset),
            instructions = instructions,
            maxSteps = maxSteps?.toLong(),
            stopWhen = stopWhen,
            modelRetry = modelRetry,
            toolExecution = toolExecution,
            temperature = temperature,
            maxOutputTokens = maxOutputTokens,
            topP = topP,
            outputSchema = parseOutput?.let { outputParser(it, outputSchema) } ?: outputSchema,
            requireApproval = requireApproval?.let(::KotlinAgentApproval),
            humanReview = humanReview?.let(::KotlinReview),
            modelFn = turn(modelFn),
            instructionsFn = turn(instructionsFn),
            temperatureFn = turn(temperatureFn),
            maxOutputTokensFn = turn(maxOutputTokensFn),
            topPFn = turn(topPFn),
            stateSecrets = listOfNotNull(stateSecret) + stateSecrets,
            toolChoice = toolChoice,
            toolChoiceFn = turn(toolChoiceFn),
            parallelToolCalls = parallelToolCalls,
            activeTools = activeTools,
            activeToolsFn = turn(activeToolsFn),
            store = store,
            lease = lease,
            mcpServers = mcpServers,
        ),
    )
}

/**
 * Tool execution settings (docs/behaviour.md §2.8, §2.9); [maxToolCalls] bounds all tool calls of a run
 * (docs/behaviour.md §15), as an agent setting or a run/continue override.
 */
fun toolExecution(
    toolConcurrency: Int? = null,
    onError: OnError? = null,
    maxOutputChars: Int? = null,
    maxToolCalls: Int? = null,
) = ToolExecution(toolConcurrency?.toLong(), onError, maxOutputChars?.toLong(), maxToolCalls?.toLong())

/**
 * A tool's retries (docs/behaviour.md §15): [maxAttempts] attempts in all, the first too;
 * [backoffMs] × n milliseconds before the n-th retry.
 */
fun toolRetry(maxAttempts: Int, backoffMs: Long = 0): ToolRetry = ToolRetry(maxAttempts.toLong(), backoffMs)

// ---------------------------------------------------------------------------------------
// Model clients

private class KotlinModel(val fn: suspend (JsonObject) -> JsonElement) : ModelClient {
    override suspend fun generate(requestJson: String): String =
        hostCall { fn(parseJson(requestJson).jsonObject).toString() }
}

/** The built-in scripted client: [responses] in order (short form `{text?, toolCalls?,
 * usage?, cost?, finishReason?}` or `{fail: message}`); [used] of them already consumed. */
fun scriptedClient(responses: List<JsonElement>, used: Int = 0): Client =
    sdk { Client.Scripted(ScriptedClient(JsonArray(responses).toString(), used.toLong())) }

/** The built-in scripted client. */
fun scriptedClient(vararg responses: JsonElement): Client = scriptedClient(responses.toList())

/** The built-in offline test client (calls each tool once, then summarizes). */
fun testClient(): Client = Client.Test(TestClient())

/** A model client written in Kotlin: `generate(request)` returns a response in the short
 * scripted form (or the full `{message: {...}, usage, …}` form); throwing is a model failure. */
fun modelClient(generate: suspend (request: JsonObject) -> JsonElement): Client = Client.Host(KotlinModel(generate))

/** A [ModelClient] implementation as a [Client]. */
fun ModelClient.asClient(): Client = Client.Host(this)

/** The Phaseo gateway client (`PHASEO_API_KEY`, `PHASEO_BASE_URL` when not given). */
fun gatewayClient(
    apiKey: String? = null,
    baseUrl: String? = null,
    model: String? = null,
    timeoutMs: Long? = null,
    headers: Map<String, String> = emptyMap(),
): Client = sdk { Client.Http(HttpModelClient.gateway(HttpClientOptions(apiKey, baseUrl, model, timeoutMs?.toDouble(), headers))) }

/** An OpenAI-compatible chat-completions client (`OPENAI_BASE_URL`, `OPENAI_API_KEY`). */
fun openAICompatibleClient(
    apiKey: String? = null,
    baseUrl: String? = null,
    model: String? = null,
    timeoutMs: Long? = null,
    headers: Map<String, String> = emptyMap(),
): Client = sdk { Client.Http(HttpModelClient.openaiCompatible(HttpClientOptions(apiKey, baseUrl, model, timeoutMs?.toDouble(), headers))) }

// ---------------------------------------------------------------------------------------
// Runs

/**
 * An event listener as the core calls it: synchronously and in order, each event handed to
 * the listener on a thread of the IO pool (one event at a time) and waited for. Once the run
 * is cancelled ([cancel], the coroutine awaiting the run ([job]), or [stopWaiting] for a
 * stream) the run waits for no more events, so a listener that blocks never keeps a
 * cancelled run from ending: it keeps its thread until it returns, and the events after it
 * still reach it in order.
 */
internal class KotlinListener(
    val fn: (JsonObject) -> Unit,
    private val cancel: CancelToken? = null,
    private val job: Job? = null,
) : EventListener {
    private val serial = Dispatchers.IO.limitedParallelism(1)

    @Volatile
    private var stopped = false

    /** The run was cancelled another way (a stream's `cancel`): wait for no more events. */
    fun stopWaiting() {
        stopped = true
    }

    private fun cancelled(): Boolean =
        stopped || job?.isCancelled == true || runCatching { cancel?.isCancelled() == true }.getOrDefault(false)

    override fun onEvent(eventJson: String) {
        val done = CompletableFuture<Unit>()
        serial.dispatch(EmptyCoroutineContext, Runnable {
            try {
                fn(parseJson(eventJson).jsonObject)
            } catch (_: Throwable) {
                // A listener's failure never affects the run.
            } finally {
                done.complete(Unit)
            }
        })
        while (!cancelled()) {
            try {
                done.get(LISTENER_POLL_MS, TimeUnit.MILLISECONDS)
                return
            } catch (_: TimeoutException) {
                // still running: look at the run's cancellation again
            } catch (_: InterruptedException) {
                Thread.currentThread().interrupt()
                return
            }
        }
    }

    private companion object {
        /** How often a waiting run looks whether it was cancelled while a listener runs. */
        const val LISTENER_POLL_MS = 20L
    }
}

/**
 * Approves a call (or rejects it, with the reason sent to the model). An approval may carry
 * [editedInput], the person's corrected arguments: checked like the model's before the tool
 * runs with them, and an invalid one refuses the continue (docs/behaviour.md §14).
 */
fun decision(toolCallId: String, reason: String? = null, editedInput: JsonElement? = null) =
    Decision(toolCallId, reason, editedInput?.toString())

/**
 * Runs the agent until it completes, stops, pauses, fails or is cancelled (docs/behaviour.md §3).
 * A failed run throws [AgentException] carrying the failed state. Cancelling the coroutine
 * that awaits this cancels the run; [cancel] ends it `cancelled` and still returns its result.
 */
suspend fun Agent.run(
    input: JsonElement,
    client: Client,
    context: JsonElement? = null,
    messages: JsonArray? = null,
    overrides: RunOverrides? = null,
    onEvent: ((event: JsonObject) -> Unit)? = null,
    cancel: CancelToken? = null,
    store: RunStore? = null,
    traceparent: String? = null,
): RunResult {
    val listener = onEvent?.let { KotlinListener(it, cancel, currentCoroutineContext()[Job]) }
    return sdk {
        JvmDispatch.driveSuspending(
            runDriven(RunOptions(input.toString(), client, context?.toString(), messages?.toString(), overrides, listener, cancel, store, hostTraceparent(traceparent))),
        )
    }
}

/** [run] with a text input (the user message). */
suspend fun Agent.run(
    input: String,
    client: Client,
    context: JsonElement? = null,
    messages: JsonArray? = null,
    overrides: RunOverrides? = null,
    onEvent: ((event: JsonObject) -> Unit)? = null,
    cancel: CancelToken? = null,
    store: RunStore? = null,
    traceparent: String? = null,
): RunResult = run(JsonPrimitive(input), client, context, messages, overrides, onEvent, cancel, store, traceparent)

internal fun continueOptions(
    client: Client,
    approvals: List<Decision>,
    rejections: List<Decision>,
    toolOutputs: Map<String, JsonElement>,
    humanInput: String?,
    context: JsonElement?,
    overrides: RunOverrides?,
    onEvent: ((JsonObject) -> Unit)?,
    cancel: CancelToken?,
    store: RunStore? = null,
    traceparent: String? = null,
    job: Job? = null,
    listener: KotlinListener? = onEvent?.let { KotlinListener(it, cancel, job) },
    responses: Map<String, JsonElement> = emptyMap(),
) = ContinueOptions(
    client = client,
    approvals = approvals,
    rejections = rejections,
    toolOutputs = toolOutputs.map { (id, v) -> ToolOutput(id, v.toString()) },
    responses = responses.map { (id, v) -> ToolOutput(id, v.toString()) },
    humanInput = humanInput,
    contextJson = context?.toString(),
    overrides = overrides,
    onEvent = listener,
    cancel = cancel,
    store = store,
    traceparent = hostTraceparent(traceparent),
)

/**
 * Continues a paused run (docs/behaviour.md §4): every pending call must be decided ([approvals],
 * [rejections]), given an output ([toolOutputs], call id → output) or, for an approval-gated
 * call, answered in the tool's place ([responses], call id → output: the tool never runs;
 * docs/behaviour.md §14). [state] is not changed: a refused continue throws
 * `continue_invalid` and the state stays usable.
 */
suspend fun Agent.continueRun(
    state: RunResult,
    client: Client,
    approvals: List<Decision> = emptyList(),
    rejections: List<Decision> = emptyList(),
    toolOutputs: Map<String, JsonElement> = emptyMap(),
    humanInput: String? = null,
    context: JsonElement? = null,
    overrides: RunOverrides? = null,
    onEvent: ((event: JsonObject) -> Unit)? = null,
    cancel: CancelToken? = null,
    traceparent: String? = null,
    responses: Map<String, JsonElement> = emptyMap(),
): RunResult {
    val job = currentCoroutineContext()[Job]
    return sdk {
        JvmDispatch.driveSuspending(
            continueDriven(
                state,
                continueOptions(
                    client, approvals, rejections, toolOutputs, humanInput, context, overrides, onEvent, cancel,
                    traceparent = traceparent, job = job, responses = responses,
                ),
            ),
        )
    }
}

/** Starts a streamed run (docs/behaviour.md §6). */
fun Agent.stream(
    input: JsonElement,
    client: Client,
    context: JsonElement? = null,
    messages: JsonArray? = null,
    overrides: RunOverrides? = null,
    onEvent: ((event: JsonObject) -> Unit)? = null,
    cancel: CancelToken? = null,
): RunStream = sdk {
    val listener = onEvent?.let { KotlinListener(it, cancel) }
    RunStream(stream(RunOptions(input.toString(), client, context?.toString(), messages?.toString(), overrides, listener, cancel, traceparent = hostTraceparent())))
        .also { it.listener = listener }
}

/** [stream] with a text input. */
fun Agent.stream(
    input: String,
    client: Client,
    context: JsonElement? = null,
    messages: JsonArray? = null,
    overrides: RunOverrides? = null,
    onEvent: ((event: JsonObject) -> Unit)? = null,
    cancel: CancelToken? = null,
): RunStream = stream(JsonPrimitive(input), client, context, messages, overrides, onEvent, cancel)

/** Continues a paused run as a stream (the decisions as in [continueRun]). */
fun Agent.continueStream(
    state: RunResult,
    client: Client,
    approvals: List<Decision> = emptyList(),
    rejections: List<Decision> = emptyList(),
    toolOutputs: Map<String, JsonElement> = emptyMap(),
    humanInput: String? = null,
    context: JsonElement? = null,
    overrides: RunOverrides? = null,
    onEvent: ((event: JsonObject) -> Unit)? = null,
    cancel: CancelToken? = null,
    responses: Map<String, JsonElement> = emptyMap(),
): RunStream = sdk {
    val listener = onEvent?.let { KotlinListener(it, cancel) }
    RunStream(
        continueStream(
            state,
            continueOptions(
                client, approvals, rejections, toolOutputs, humanInput, context, overrides, onEvent, cancel,
                listener = listener, responses = responses,
            ),
        ),
    )
        .also { it.listener = listener }
}

/**
 * A streamed run: a cold [Flow] of its events (each collection replays the whole history
 * from the start, any number of collectors at once; it ends when the run ends and throws
 * [AgentException] if the run failed), plus [result], [text], [cancel] and filtered flows.
 */
class RunStream(val native: AgentStream) : Flow<JsonObject> {
    /** The run's listener, told by [cancel] to hold the run up no longer. */
    internal var listener: KotlinListener? = null

    /** Every event, then `{type: "result", result: <state>}`. */
    val fullStream: Flow<JsonObject> = flow {
        val cursor = native.cursor()
        try {
            while (true) {
                val item = sdk { cursor.next() } ?: break
                emit(parseJson(item).jsonObject)
            }
        } finally {
            cursor.close()
        }
    }

    /** Every event (without the final result item). */
    val events: Flow<JsonObject> = fullStream.takeWhile { it["type"]?.jsonPrimitive?.contentOrNull != "result" }

    /** Text deltas (`response.output_text.delta`). */
    val textStream: Flow<String> = events.mapNotNull {
        if (it.type == "response.output_text.delta") it["delta"]?.jsonPrimitive?.content else null
    }

    /** Reasoning deltas (`response.reasoning.delta`). */
    val reasoningStream: Flow<String> = events.mapNotNull {
        if (it.type == "response.reasoning.delta") it["delta"]?.jsonPrimitive?.content else null
    }

    /** `tool.*` events: a call's input as the model writes it (`tool.input_started
     * {toolCallId, toolName}`, then `tool.input_delta {toolCallId, delta}`, docs/behaviour.md
     * §16), then its run (`tool.started`, `tool.completed`, …). */
    val toolEvents: Flow<JsonObject> = events.filter { it.type?.startsWith("tool.") == true }

    /** Items (`response.item`). */
    val items: Flow<JsonObject> = events.mapNotNull { if (it.type == "response.item") it["item"]?.jsonObject else null }

    override suspend fun collect(collector: FlowCollector<JsonObject>) = events.collect(collector)

    /** The final result (a failed run throws its [AgentException]). */
    suspend fun result(): RunResult = sdk { native.result() }

    /** The final output as text. */
    suspend fun text(): String = sdk { native.text() }

    /** Cancels the run; it ends `cancelled` and its result is still returned. */
    fun cancel(reason: String? = null) {
        listener?.stopWaiting()
        native.cancel(reason)
    }
}

/** An event's `type`. */
val JsonObject.type: String? get() = this["type"]?.jsonPrimitive?.contentOrNull

// ---------------------------------------------------------------------------------------
// Results

/** The whole state as a JSON object (the canonical JSON, parsed). */
val RunResult.state: JsonObject get() = parseJson(toJson()).jsonObject

/** The final output (null unless completed or stopped). */
val RunResult.output: JsonElement get() = parseJson(outputJson())

/** The pause `{id, reason, payload, requestedAt, kind, pendingToolCalls}`, while waiting. */
val RunResult.pause: JsonObject? get() = pauseJson()?.let { parseJson(it).jsonObject }

/** The pending calls `[{call: {id, name, input}, kind, reason}]`. */
val RunResult.pending: JsonArray get() = parseJson(pendingJson()) as JsonArray

/** Cumulative usage `{inputTokens, outputTokens, cachedTokens, totalTokens, cost}`. */
val RunResult.usage: JsonObject get() = parseJson(usageJson()).jsonObject

/** The conversation. */
val RunResult.messages: JsonArray get() = parseJson(messagesJson()) as JsonArray

/** The application context. */
val RunResult.context: JsonElement get() = parseJson(contextJson())

/** The state as a [RunResult] (`state_invalid` when malformed or of an unsupported version). */
fun parseState(json: String): RunResult {
    // UTF-8 has no form for a lone surrogate: such text is not a state any SDK wrote.
    if (!isWellFormed(json)) throw AgentException("state_invalid", "Invalid state: the text holds a lone UTF-16 surrogate")
    return sdk { RunResult.fromJson(json) }
}
