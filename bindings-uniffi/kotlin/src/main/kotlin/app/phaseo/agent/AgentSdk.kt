// The product's Java API, `app.phaseo.agent.AgentSdk` (the product's Java SDK names and
// shapes: nested records and functional interfaces, plain Java values), over the Kotlin
// layer. Written in Kotlin so it can drive the suspend API; to Java it reads as a final
// class of static methods and nested records. It only adapts: every behaviour is the core's.
@file:Suppress("unused")

package app.phaseo.agent

import app.phaseo.agent.Agent as NativeAgent
import app.phaseo.agent.AgentException as KotlinAgentException
import app.phaseo.agent.RunResult as NativeRunResult
import app.phaseo.agent.Tool as NativeTool
import app.phaseo.agent.Validator as NativeValidator
import app.phaseo.agent.McpServeOptions as ServeOptions
import java.time.Duration
import java.util.concurrent.CompletableFuture
import java.util.function.Consumer
import java.util.function.Function
import kotlinx.coroutines.DelicateCoroutinesApi
import kotlinx.coroutines.GlobalScope
import kotlinx.coroutines.future.future
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonObject

/**
 * The Phaseo Agent SDK for Java: `AgentSdk.defineTool(new AgentSdk.Tool(...))`,
 * `AgentSdk.createAgent(new AgentSdk.AgentDefinition(...))`, then `agent.run(new
 * AgentSdk.RunOptions(input, client))`. Values are plain Java (`Map`, `List`, `String`,
 * `Number`, `Boolean`, `null`); errors are the unchecked [AgentException] with the documented code (docs/behaviour.md §9).
 * Executors and hooks run on JVM threads and may block; a timeout interrupts them.
 */
@JvmSuppressWildcards
class AgentSdk private constructor() {

    // -----------------------------------------------------------------------------------
    // Functional interfaces

    /** A tool's body: `(input, context) -> result` (it may block; a timeout interrupts it). */
    @JvmSuppressWildcards
    /** The executor of a tool made by [Agent.asTool]: the core runs the nested agent. */
    internal class NestedAgentExecutor(val tool: NativeTool) : ToolExecutor {
        override fun execute(input: Any?, context: RuntimeContext): Any? =
            throw UnsupportedOperationException("An agent tool runs inside an agent's run, not on its own")
    }

    fun interface ToolExecutor {
        /** Runs the call; throwing fails it with the exception's message. */
        @Throws(Exception::class)
        fun execute(input: Any?, context: RuntimeContext): Any?
    }

    /** A typed tool's body: the arguments decoded into the input class, the call's runtime. */
    @JvmSuppressWildcards
    fun interface TypedExecutor<I, O> {
        /** Runs the call; throwing fails it with the exception's message. */
        @Throws(Exception::class)
        fun execute(input: I, context: RuntimeContext): O
    }

    /** Checks a value: returns the accepted (possibly transformed) value or throws. */
    @JvmSuppressWildcards
    fun interface Validator {
        /** The accepted value; the exception's message is the validation message. */
        @Throws(Exception::class)
        fun validate(value: Any?): Any?
    }

    /** A tool's approval predicate of the call's input: true pauses the call for approval. */
    @JvmSuppressWildcards
    fun interface Approval {
        /** Whether this call needs approval. */
        @Throws(Exception::class)
        fun approve(input: Any?, context: RuntimeContext): Boolean
    }

    /** The agent's approval predicate of every call (`AgentDefinition.requireApproval`). */
    @JvmSuppressWildcards
    fun interface CallApproval {
        /** Whether this call needs approval. */
        @Throws(Exception::class)
        fun approve(call: ToolCall, context: RuntimeContext): Boolean
    }

    /** An interactive tool's hook: answers the call now or leaves it pending (`hitl`). */
    @JvmSuppressWildcards
    fun interface ToolCalled {
        /** `completed` answers with `output`; not completed (or `null`) pauses the call. */
        @Throws(Exception::class)
        fun call(input: Any?, context: RuntimeContext): ToolCalledResult?
    }

    /** Receives a value with the call's context: `onResponseReceived` and `emitProgress`. */
    @JvmSuppressWildcards
    fun interface ToolResponse {
        /** The (possibly transformed) value. */
        @Throws(Exception::class)
        fun receive(value: Any?, context: RuntimeContext): Any?
    }

    /** Pauses the run for human review after a model turn, or lets it go on (`null`). */
    @JvmSuppressWildcards
    fun interface HumanReview {
        /** A review request to pause, or `null`. [context] is the core's review context. */
        @Throws(Exception::class)
        fun review(context: Map<String, Any?>): HumanReviewRequest?
    }

    /**
     * A stop condition: a reason to stop the run, or `null` to go on. Built-in ones come
     * from [stepCountIs], [maxTokensUsed], [maxCost], [maxDuration], [hasToolCall],
     * [finishReasonIs]; a custom one sees `{steps, usage, elapsedMs, stepCount}`.
     */
    @JvmSuppressWildcards
    fun interface StopCondition {
        /** The stop reason, or `null`. */
        @Throws(Exception::class)
        fun shouldStop(state: Map<String, Any?>): String?
    }

    /**
     * A model client written in Java: the request `{model, instructions, messages, tools,
     * …}` → a response in the short form `{text, toolCalls: [{id, name, arguments}], usage,
     * finishReason}`. Built-in clients: [scriptedClient], [createGatewayAgentClient],
     * [openAICompatibleClient].
     */
    @JvmSuppressWildcards
    fun interface ModelClient {
        /** The model's response; throwing is a model failure (retried per `modelRetry`). */
        @Throws(Exception::class)
        fun generate(request: Map<String, Any?>): Any?
    }

    /** The application keeping each run's state itself (use with [accessorStore]). */
    @JvmSuppressWildcards
    interface StateAccessor {
        /** The state of run [runId], or `null` when unknown. */
        @Throws(Exception::class)
        fun load(runId: String): RunResult?

        /** Keeps [result] (replacing the earlier state of its run). */
        @Throws(Exception::class)
        fun save(result: RunResult)
    }

    // -----------------------------------------------------------------------------------
    // Records

    /** A tool call: its id (unique in the run), tool id and input. */
    @JvmSuppressWildcards
    @JvmRecord
    data class ToolCall(val id: String, val name: String, val input: Any?)

    /** What an `onToolCalled` hook answers: `completed` with `output`, or pending (`hitl`). */
    @JvmSuppressWildcards
    @JvmRecord
    data class ToolCalledResult(val completed: Boolean, val output: Any?)

    /** A request to pause the run for review, with its reason and payload. */
    @JvmSuppressWildcards
    @JvmRecord
    data class HumanReviewRequest(val reason: String, val payload: Any?)

    /**
     * Approves a call, or rejects it with a reason the model sees. An approval may carry
     * [editedInput], the person's corrected arguments (any JSON-able value; `null`: the
     * model's arguments run): checked like the model's before the tool runs with them, and
     * an invalid one refuses the continue (docs/behaviour.md §14).
     */
    @JvmSuppressWildcards
    @JvmRecord
    data class ToolDecision(val toolCallId: String, val reason: String?, val editedInput: Any?) {
        /** A decision without a reason. */
        constructor(toolCallId: String) : this(toolCallId, null, null)

        /** A decision with a reason (a rejection's reason is sent to the model). */
        constructor(toolCallId: String, reason: String?) : this(toolCallId, reason, null)

        companion object {
            /** An approval of [toolCallId] that runs the tool with [editedInput] instead. */
            @JvmStatic
            fun edited(toolCallId: String, editedInput: Any?) = ToolDecision(toolCallId, null, editedInput)
        }
    }

    /** The output of a pending (manual or `hitl`) call, supplied on continue. */
    @JvmSuppressWildcards
    @JvmRecord
    data class ToolOutput(val toolCallId: String, val output: Any?)

    /**
     * A tool's retries (docs/behaviour.md §15): [maxAttempts] attempts in all, the first too
     * (at least 1); `backoff × n` before the n-th retry. An attempt that throws or times out
     * is retried; the runtime's `attempt()` tells which one runs.
     */
    @JvmSuppressWildcards
    @JvmRecord
    data class ToolRetryConfig(val maxAttempts: Int, val backoff: Duration) {
        /** [maxAttempts] attempts with no wait between them. */
        constructor(maxAttempts: Int) : this(maxAttempts, Duration.ZERO)

        internal fun native() = toolRetry(maxAttempts, backoff.toMillis())
    }

    /** Model retries: [maxRetries] extra attempts, sleeping `backoff × attempt` between them. */
    @JvmSuppressWildcards
    @JvmRecord
    data class ModelRetryConfig(val maxRetries: Int, val backoff: Duration) {
        internal fun native() = ModelRetry(maxRetries.toLong(), backoff.toNanos() / 1e6)
    }

    /**
     * Overrides a tool call contributes to the next model request only (docs/behaviour.md §2.6); `null`
     * fields are left alone; [tools] narrows the tools offered; [toolChoice] (`"auto"`,
     * `"required"`, `"none"`, `Map.of("toolId", id)`) and [parallelToolCalls] as in docs/behaviour.md §12.
     */
    @JvmSuppressWildcards
    @JvmRecord
    data class NextTurnParams(
        val model: String?,
        val instructions: String?,
        val temperature: Double?,
        val maxOutputTokens: Int?,
        val topP: Double?,
        val tools: List<Tool>?,
        val toolChoice: Any?,
        val parallelToolCalls: Boolean?,
    ) {
        /** The product's fields (without the request controls of docs/behaviour.md §12). */
        constructor(model: String?, instructions: String?, temperature: Double?, maxOutputTokens: Int?, topP: Double?, tools: List<Tool>?) :
            this(model, instructions, temperature, maxOutputTokens, topP, tools, null, null)

        internal fun json(): JsonObject = JsonObject(
            listOf(
                "model" to model?.let(::JsonPrimitive),
                "instructions" to instructions?.let(::JsonPrimitive),
                "temperature" to temperature?.let(::JsonPrimitive),
                "maxOutputTokens" to maxOutputTokens?.let(::JsonPrimitive),
                "topP" to topP?.let(::JsonPrimitive),
                "tools" to tools?.let { list -> toJsonElement(list.map { it.id }) },
                "toolChoice" to toolChoice?.let(::toJsonElement),
                "parallelToolCalls" to parallelToolCalls?.let(::JsonPrimitive),
            ).mapNotNull { (k, v) -> v?.let { k to it } }.toMap(),
        )
    }

    /**
     * How the automatic calls of a turn run: at most [concurrency] at once (values below 1
     * are raised to 1), and the default error policy of tools without their own
     * (`"fail-run"` or `"return-to-model"`, `null`: the core's default); [maxToolCalls]
     * bounds all tool calls of a run (docs/behaviour.md §15).
     */
    @JvmSuppressWildcards
    class ToolExecutionConfig private constructor(
        private val requested: Int?,
        private val onError: String?,
        private val maxOutputChars: Int?,
        private val maxToolCalls: Int?,
        @Suppress("UNUSED_PARAMETER") marker: Unit,
    ) {
        /** At most [concurrency] calls at once, with the default error policy [onError] and output limit [maxOutputChars]. */
        @JvmOverloads
        constructor(concurrency: Int, onError: String? = null, maxOutputChars: Int? = null) :
            this(concurrency, onError, maxOutputChars, null, Unit)

        private val concurrency = maxOf(1, requested ?: 1)

        /** Calls of one turn running at once (at least 1). */
        fun concurrency(): Int = concurrency

        /** The default error policy, or `null`. */
        fun onError(): String? = onError

        /** How many characters of a tool's output the model sees, or `null` (no limit). */
        fun maxOutputChars(): Int? = maxOutputChars

        /** How many tool calls a run admits in all, or `null` (no limit). */
        fun maxToolCalls(): Int? = maxToolCalls

        /**
         * This config admitting at most [maxToolCalls] tool calls in a run (a whole number ≥ 1;
         * a call beyond is refused with an error the model sees and the run goes on).
         */
        fun withMaxToolCalls(maxToolCalls: Int?) = ToolExecutionConfig(requested, onError, maxOutputChars, maxToolCalls, Unit)

        internal fun native() = toolExecution(
            toolConcurrency = requested?.let { concurrency },
            onError = onError?.let(::onErrorPolicy),
            maxOutputChars = maxOutputChars,
            maxToolCalls = maxToolCalls,
        )

        companion object {
            /**
             * A config that sets only what is not `null`: as a run's override, an unset
             * [concurrency] keeps the agent's.
             */
            @JvmStatic
            fun of(concurrency: Int?, onError: String?, maxOutputChars: Int?) =
                ToolExecutionConfig(concurrency, onError, maxOutputChars, null, Unit)

            /** [of] with a run's tool call budget [maxToolCalls] too (`null`: unset). */
            @JvmStatic
            fun of(concurrency: Int?, onError: String?, maxOutputChars: Int?, maxToolCalls: Int?) =
                ToolExecutionConfig(concurrency, onError, maxOutputChars, maxToolCalls, Unit)
        }

        override fun equals(other: Any?) = other is ToolExecutionConfig && other.requested == requested &&
            other.onError == onError && other.maxOutputChars == maxOutputChars && other.maxToolCalls == maxToolCalls
        override fun hashCode() =
            ((concurrency * 31 + (onError?.hashCode() ?: 0)) * 31 + (maxOutputChars ?: 0)) * 31 + (maxToolCalls ?: 0)
        override fun toString() =
            "ToolExecutionConfig[concurrency=$concurrency, onError=$onError, maxOutputChars=$maxOutputChars, maxToolCalls=$maxToolCalls]"
    }

    /**
     * A tool (docs/behaviour.md §2). [execute] `null` makes a manual tool (each call pauses until its
     * output is supplied). [timeout] bounds each call (the executor's thread is interrupted
     * and the call fails `tool_timeout`). [onError] is `"fail-run"` (the default) or
     * `"return-to-model"`. [maxCalls] bounds how many of its calls a run admits and [retry]
     * runs a call again when an attempt throws or times out (docs/behaviour.md §15; both
     * checked when the tool is built: `maxCalls` 0 is `definition_invalid`). With
     * [deferLoading] the tool is not offered until the built-in `tool_search` finds it; it
     * is then offered to the end of the run and kept in the state's `loadedTools`
     * (docs/behaviour.md §17). [annotations] are the MCP hints listed when the tool is served
     * (docs/behaviour.md §19). Pass it to [defineTool], which checks it.
     */
    @JvmSuppressWildcards
    @JvmRecord
    data class Tool(
        val id: String,
        val execute: ToolExecutor?,
        val description: String?,
        val parameters: Map<String, Any?>?,
        val timeout: Duration?,
        val inputSchema: Validator?,
        val outputSchema: Validator?,
        val eventSchema: Validator?,
        val requireApproval: Boolean,
        val approval: Approval?,
        val onToolCalled: ToolCalled?,
        val onResponseReceived: ToolResponse?,
        val onError: String?,
        val nextTurnParams: NextTurnParams?,
        val strict: Boolean,
        val inputExamples: List<Map<String, Any?>>?,
        val maxCalls: Int?,
        val retry: ToolRetryConfig?,
        val deferLoading: Boolean,
        val annotations: Map<String, Any?>?,
    ) {
        /** Every option but the MCP annotations (docs/behaviour.md §19). */
        constructor(
            id: String,
            execute: ToolExecutor?,
            description: String?,
            parameters: Map<String, Any?>?,
            timeout: Duration?,
            inputSchema: Validator?,
            outputSchema: Validator?,
            eventSchema: Validator?,
            requireApproval: Boolean,
            approval: Approval?,
            onToolCalled: ToolCalled?,
            onResponseReceived: ToolResponse?,
            onError: String?,
            nextTurnParams: NextTurnParams?,
            strict: Boolean,
            inputExamples: List<Map<String, Any?>>?,
            maxCalls: Int?,
            retry: ToolRetryConfig?,
            deferLoading: Boolean,
        ) : this(
            id, execute, description, parameters, timeout, inputSchema, outputSchema, eventSchema, requireApproval,
            approval, onToolCalled, onResponseReceived, onError, nextTurnParams, strict, inputExamples, maxCalls, retry,
            deferLoading, null,
        )

        /** Every option but deferred loading (docs/behaviour.md §17). */
        constructor(
            id: String,
            execute: ToolExecutor?,
            description: String?,
            parameters: Map<String, Any?>?,
            timeout: Duration?,
            inputSchema: Validator?,
            outputSchema: Validator?,
            eventSchema: Validator?,
            requireApproval: Boolean,
            approval: Approval?,
            onToolCalled: ToolCalled?,
            onResponseReceived: ToolResponse?,
            onError: String?,
            nextTurnParams: NextTurnParams?,
            strict: Boolean,
            inputExamples: List<Map<String, Any?>>?,
            maxCalls: Int?,
            retry: ToolRetryConfig?,
        ) : this(
            id, execute, description, parameters, timeout, inputSchema, outputSchema, eventSchema, requireApproval,
            approval, onToolCalled, onResponseReceived, onError, nextTurnParams, strict, inputExamples, maxCalls, retry,
            false,
        )

        /** Every option but the call budget and retries of docs/behaviour.md §15. */
        constructor(
            id: String,
            execute: ToolExecutor?,
            description: String?,
            parameters: Map<String, Any?>?,
            timeout: Duration?,
            inputSchema: Validator?,
            outputSchema: Validator?,
            eventSchema: Validator?,
            requireApproval: Boolean,
            approval: Approval?,
            onToolCalled: ToolCalled?,
            onResponseReceived: ToolResponse?,
            onError: String?,
            nextTurnParams: NextTurnParams?,
            strict: Boolean,
            inputExamples: List<Map<String, Any?>>?,
        ) : this(
            id, execute, description, parameters, timeout, inputSchema, outputSchema, eventSchema, requireApproval,
            approval, onToolCalled, onResponseReceived, onError, nextTurnParams, strict, inputExamples, null, null,
            false,
        )

        /** The product's full form (every option of the product's Java SDK). */
        constructor(
            id: String,
            execute: ToolExecutor?,
            description: String?,
            parameters: Map<String, Any?>?,
            timeout: Duration?,
            inputSchema: Validator?,
            outputSchema: Validator?,
            eventSchema: Validator?,
            requireApproval: Boolean,
            approval: Approval?,
            onToolCalled: ToolCalled?,
            onResponseReceived: ToolResponse?,
            onError: String?,
            nextTurnParams: NextTurnParams?,
        ) : this(
            id, execute, description, parameters, timeout, inputSchema, outputSchema, eventSchema,
            requireApproval, approval, onToolCalled, onResponseReceived, onError, nextTurnParams, false, null,
        )

        /** A tool with just an id and an executor. */
        constructor(id: String, execute: ToolExecutor?) :
            this(id, execute, null, null, null)

        /** A tool with a description, JSON Schema parameters and a timeout (`null`: none). */
        constructor(id: String, execute: ToolExecutor?, description: String?, parameters: Map<String, Any?>?, timeout: Duration?) :
            this(id, execute, description, parameters, timeout, null, null, null, false, null, null, null, "fail-run")

        /** Every option but `nextTurnParams`. */
        constructor(
            id: String,
            execute: ToolExecutor?,
            description: String?,
            parameters: Map<String, Any?>?,
            timeout: Duration?,
            inputSchema: Validator?,
            outputSchema: Validator?,
            eventSchema: Validator?,
            requireApproval: Boolean,
            approval: Approval?,
            onToolCalled: ToolCalled?,
            onResponseReceived: ToolResponse?,
            onError: String?,
        ) : this(
            id, execute, description, parameters, timeout, inputSchema, outputSchema, eventSchema,
            requireApproval, approval, onToolCalled, onResponseReceived, onError, null as NextTurnParams?,
        )

        // Every option has a `with…` method returning a new tool, so Java code builds a tool
        // from `new Tool(id, execute)` without the long constructors:
        // `new Tool("deploy", fn).withDescription("…").withRequireApproval(true)`.

        /** This tool with the text sent to the model. */
        fun withDescription(description: String?) = copy(description = description)

        /** This tool with the JSON Schema of its arguments (checked by the core). */
        fun withParameters(parameters: Map<String, Any?>?) = copy(parameters = parameters)

        /** This tool with a per-attempt time limit (`null`: none). */
        fun withTimeout(timeout: Duration?) = copy(timeout = timeout)

        /** This tool with a host validator of its input, run after `parameters`. */
        fun withInputSchema(validator: Validator?) = copy(inputSchema = validator)

        /** This tool with a validator of its result. */
        fun withOutputSchema(validator: Validator?) = copy(outputSchema = validator)

        /** This tool with a validator of its progress events. */
        fun withEventSchema(validator: Validator?) = copy(eventSchema = validator)

        /** This tool needing a person's approval for every call (or not). */
        fun withRequireApproval(requireApproval: Boolean) = copy(requireApproval = requireApproval)

        /** This tool asking [approval] per call whether it needs approval (wins over `requireApproval`). */
        fun withApproval(approval: Approval?) = copy(approval = approval)

        /** This tool with a hook that may answer a call before it runs (docs/behaviour.md §2.4). */
        fun withOnToolCalled(hook: ToolCalled?) = copy(onToolCalled = hook)

        /** This tool with a hook that may replace its result. */
        fun withOnResponseReceived(hook: ToolResponse?) = copy(onResponseReceived = hook)

        /** This tool with its error policy: `"fail-run"` or `"return-to-model"`. */
        fun withOnError(onError: String?) = copy(onError = onError)

        /** This tool with next-turn overrides. */
        fun withNextTurnParams(params: NextTurnParams?) = copy(nextTurnParams = params)

        /** This tool asking providers for strict argument adherence (docs/behaviour.md §12). */
        fun withStrict(strict: Boolean) = copy(strict = strict)

        /** This tool with example inputs sent to the model (docs/behaviour.md §12). */
        fun withInputExamples(examples: List<Map<String, Any?>>?) = copy(inputExamples = examples)

        /** This tool admitting at most [maxCalls] of its calls in a run (a whole number ≥ 1). */
        fun withMaxCalls(maxCalls: Int?) = copy(maxCalls = maxCalls)

        /** This tool retrying a call whose attempt throws or times out. */
        fun withRetry(retry: ToolRetryConfig?) = copy(retry = retry)

        /**
         * This tool kept out of the model's offer until the built-in `tool_search` finds it
         * (docs/behaviour.md §17).
         */
        fun withDeferLoading(deferLoading: Boolean) = copy(deferLoading = deferLoading)

        /**
         * This tool with the MCP annotations listed when it is served (docs/behaviour.md §19):
         * `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint` (booleans) and
         * `title`, checked by [defineTool].
         */
        fun withAnnotations(annotations: Map<String, Any?>?) = copy(annotations = annotations)

        /**
         * This tool with `strict: true` and its [parameters] in the core's strict form
         * (docs/behaviour.md §12, §20): every object closed, every property required, optional
         * ones nullable (a value the model leaves out arrives as `null`). For a tool defined
         * from a class ([fromClass]), whose generated schema is not strict-compatible as it is.
         */
        fun withStrictParameters(): Tool = copy(
            strict = true,
            parameters = parameters?.let { schema -> javaMap(parseJson(javaCall { schemaStrict(toJsonElement(schema).toString()) })) },
        )

        /**
         * Builds a [Tool] named [name] one option at a time, in place of the long
         * constructors: `Tool.builder("deploy").description("…").execute(fn).requireApproval(true).build()`.
         * Every setter returns the builder; an option not set keeps the default of
         * `new Tool(name, null)` (no executor: a manual tool; `onError` `"fail-run"`). The
         * tool is checked when it is passed to [defineTool] or an agent.
         */
        @JvmSuppressWildcards
        class Builder internal constructor(name: String) {
            // Each setter is the matching `with…` copy, so a built tool is exactly the one the
            // `with…` chain or the full constructor gives.
            private var tool = Tool(name, null)

            /** What runs a call (`null`: a manual tool, whose calls pause for their output). */
            fun execute(execute: ToolExecutor?) = apply { tool = tool.copy(execute = execute) }

            /** The text sent to the model. */
            fun description(description: String?) = apply { tool = tool.withDescription(description) }

            /** The JSON Schema of the arguments (checked by the core). */
            fun parameters(parameters: Map<String, Any?>?) = apply { tool = tool.withParameters(parameters) }

            /** A per-attempt time limit (`null`: none). */
            fun timeout(timeout: Duration?) = apply { tool = tool.withTimeout(timeout) }

            /** A host validator of the input, run after `parameters`. */
            fun inputSchema(validator: Validator?) = apply { tool = tool.withInputSchema(validator) }

            /** A validator of the result. */
            fun outputSchema(validator: Validator?) = apply { tool = tool.withOutputSchema(validator) }

            /** A validator of progress events. */
            fun eventSchema(validator: Validator?) = apply { tool = tool.withEventSchema(validator) }

            /** Whether every call needs a person's approval. */
            fun requireApproval(requireApproval: Boolean) = apply { tool = tool.withRequireApproval(requireApproval) }

            /** Asks [approval] per call whether it needs approval (the same as [approval]). */
            fun requireApproval(approval: Approval?) = apply { tool = tool.withApproval(approval) }

            /** Asks [approval] per call whether it needs approval (wins over `requireApproval(boolean)`). */
            fun approval(approval: Approval?) = apply { tool = tool.withApproval(approval) }

            /** A hook that may answer a call before it runs (docs/behaviour.md §2.4). */
            fun onToolCalled(hook: ToolCalled?) = apply { tool = tool.withOnToolCalled(hook) }

            /** A hook that may replace the result. */
            fun onResponseReceived(hook: ToolResponse?) = apply { tool = tool.withOnResponseReceived(hook) }

            /** The error policy: `"fail-run"` (the default) or `"return-to-model"`. */
            fun onError(onError: String?) = apply { tool = tool.withOnError(onError) }

            /** Next-turn overrides a call contributes (docs/behaviour.md §2.6). */
            fun nextTurnParams(params: NextTurnParams?) = apply { tool = tool.withNextTurnParams(params) }

            /** Asks providers for strict argument adherence (docs/behaviour.md §12). */
            fun strict(strict: Boolean) = apply { tool = tool.withStrict(strict) }

            /** Example inputs sent to the model (docs/behaviour.md §12). */
            fun inputExamples(examples: List<Map<String, Any?>>?) = apply { tool = tool.withInputExamples(examples) }

            /** At most [maxCalls] calls of the tool in a run (a whole number ≥ 1). */
            fun maxCalls(maxCalls: Int?) = apply { tool = tool.withMaxCalls(maxCalls) }

            /** Retries of a call whose attempt throws or times out (docs/behaviour.md §15). */
            fun retry(retry: ToolRetryConfig?) = apply { tool = tool.withRetry(retry) }

            /** Kept out of the model's offer until `tool_search` finds it (docs/behaviour.md §17). */
            fun deferLoading(deferLoading: Boolean) = apply { tool = tool.withDeferLoading(deferLoading) }

            /** The MCP annotations listed when the tool is served (docs/behaviour.md §19). */
            fun annotations(annotations: Map<String, Any?>?) = apply { tool = tool.withAnnotations(annotations) }

            /** The tool. */
            fun build(): Tool = tool
        }

        companion object {
            /**
             * A tool whose arguments are the class [input] (a record or POJO) instead of a
             * hand-written JSON Schema (docs/behaviour.md §20): [parameters] is
             * [TypedSchemas.schemaOf] of it, checked by the core on every call; the arguments
             * are then decoded into [input] (Jackson) before [execute] runs. A value that cannot
             * be decoded is a tool input error (`Invalid tool input: <pointer>: <reason>`) that
             * `withOnError("return-to-model")` sends back to the model. [output] gives the
             * output schema; results are written as Jackson writes them. [execute] `null`
             * makes a manual tool. Add the rest with the `with…` methods
             * (`withDescription`, `withRequireApproval`, `withStrictParameters`, …).
             */
            @JvmStatic
            fun <I, O> fromClass(id: String, input: Class<I>, output: Class<O>?, execute: TypedExecutor<I, O>?): Tool {
                val schema = TypedSchemas.schemaOf(input)
                val check = output?.let { AgentSdk.jsonSchema(TypedSchemas.schemaOf(it)) }
                return Tool(
                    id,
                    execute?.let { run -> ToolExecutor { value, context -> TypedSchemas.plain(run.execute(TypedSchemas.decode(input, value), context)) } },
                    null,
                    schema,
                    null,
                ).copy(
                    // Runs after the core checked `parameters`: what the schema cannot say (a
                    // number's range for an `int`) is refused here, before approval or execute.
                    inputSchema = Validator { value -> TypedSchemas.decode(input, value); value },
                    outputSchema = check?.let { c -> Validator { value -> c.validate(TypedSchemas.plain(value)) } },
                    onError = null,
                )
            }

            /** A builder of a tool named [name] (see [Builder]). */
            @JvmStatic
            fun builder(name: String) = Builder(name)

            /** [fromClass] without a declared result class (no output schema). */
            @JvmStatic
            fun <I> fromClass(id: String, input: Class<I>, execute: TypedExecutor<I, Any?>?): Tool =
                fromClass(id, input, null, execute)
        }

        internal fun native(): NativeTool = javaCall {
            (execute as? NestedAgentExecutor)?.let { return@javaCall it.tool }
            val run = execute
            val called = onToolCalled
            val response = onResponseReceived
            val approve = approval
            app.phaseo.agent.newTool(
                id = id,
                description = description ?: "",
                parameters = parameters?.let(::toJsonElement),
                timeoutMs = timeout?.toMillis(),
                requireApproval = requireApproval,
                approval = approve?.let { { input, rt -> JvmThreads.call { approve.approve(javaValue(input), RuntimeContext(rt)) } } },
                onError = onError?.let(::onErrorPolicy),
                inputSchema = inputSchema?.let(::nativeValidator),
                outputSchema = outputSchema?.let(::nativeValidator),
                eventSchema = eventSchema?.let(::nativeValidator),
                onToolCalled = called?.let {
                    { input, rt ->
                        val answer = JvmThreads.call { called.call(javaValue(input), RuntimeContext(rt)) }
                        if (answer != null && answer.completed) toJsonElement(answer.output) else null
                    }
                },
                onResponseReceived = response?.let {
                    { output, rt -> toJsonElement(JvmThreads.call { response.receive(javaValue(output), RuntimeContext(rt)) }) }
                },
                nextTurnParams = nextTurnParams?.json(),
                strict = strict,
                inputExamples = inputExamples?.map { toJsonElement(it).jsonObject },
                maxCalls = maxCalls,
                retry = retry?.native(),
                deferLoading = deferLoading,
                annotations = annotations?.let { toJsonElement(it).jsonObject },
                // Run on a thread of JvmDispatch, which the body may block (a timeout or a
                // cancelled run interrupts it).
                blockingExecute = run?.let {
                    { input, rt -> toJsonElement(run.execute(javaValue(input), RuntimeContext(rt))) }
                },
            )
        }
    }

    /**
     * An agent (docs/behaviour.md §3). [maxSteps] 0 keeps the core's default (a negative one is refused); [preset] names the model
     * `@<preset>` when [model] is unset; [parseOutput] turns the final text into the output
     * (then [outputSchema] checks it); [requireApproval] decides for every call. Beyond the
     * product: [stateSecrets] sign and verify states (the first signs), [store] keeps every
     * run (continue by run id, recover), [mcpServers] offer the tools of MCP servers
     * (close the agent to stop them).
     */
    @JvmSuppressWildcards
    @JvmRecord
    data class AgentDefinition(
        val id: String,
        val model: String?,
        val preset: String?,
        val instructions: String?,
        val tools: List<Tool>?,
        val maxSteps: Int,
        val parseOutput: Function<String, Any?>?,
        val humanReview: HumanReview?,
        val modelRetry: ModelRetryConfig?,
        val toolExecution: ToolExecutionConfig?,
        val stopWhen: List<StopCondition>?,
        val outputSchema: Validator?,
        val requireApproval: CallApproval?,
        val stateSecrets: List<String>?,
        val store: RunStore?,
        val mcpServers: List<McpServer>?,
        val temperature: Double?,
        val maxOutputTokens: Int?,
        val topP: Double?,
        val toolChoice: Any?,
        val parallelToolCalls: Boolean?,
        val activeTools: List<String>?,
        val dynamicModel: Function<TurnContext, String?>?,
        val dynamicInstructions: Function<TurnContext, String?>?,
        val dynamicTemperature: Function<TurnContext, Double?>?,
        val dynamicMaxOutputTokens: Function<TurnContext, Int?>?,
        val dynamicTopP: Function<TurnContext, Double?>?,
        val dynamicTools: Function<TurnContext, List<Tool>?>?,
    ) {
        /** Every field but the per-turn functions. */
        constructor(
            id: String, model: String?, preset: String?, instructions: String?, tools: List<Tool>?, maxSteps: Int,
            parseOutput: Function<String, Any?>?, humanReview: HumanReview?, modelRetry: ModelRetryConfig?,
            toolExecution: ToolExecutionConfig?, stopWhen: List<StopCondition>?, outputSchema: Validator?,
            requireApproval: CallApproval?, stateSecrets: List<String>?, store: RunStore?, mcpServers: List<McpServer>?,
            temperature: Double?, maxOutputTokens: Int?, topP: Double?, toolChoice: Any?, parallelToolCalls: Boolean?,
            activeTools: List<String>?,
        ) : this(
            id, model, preset, instructions, tools, maxSteps, parseOutput, humanReview, modelRetry, toolExecution,
            stopWhen, outputSchema, requireApproval, stateSecrets, store, mcpServers, temperature, maxOutputTokens, topP,
            toolChoice, parallelToolCalls, activeTools, null, null, null, null, null, null,
        )

        /**
         * The product's nineteen-argument form: the thirteen-argument one plus functions of
         * the turn ([TurnContext]) computing the model, the instructions, the sampling
         * settings and the tools of each model request (a function replaces the fixed
         * value; its `null` answer leaves the field unset for that request, [dynamicTools]'s
         * offers every tool). The tools [dynamicTools] returns must be tools of [tools] (by id): the
         * agent can only run tools it was defined with; others fail the run naming them.
         */
        constructor(
            id: String, model: String?, preset: String?, instructions: String?, tools: List<Tool>?, maxSteps: Int,
            parseOutput: Function<String, Any?>?, humanReview: HumanReview?, modelRetry: ModelRetryConfig?,
            toolExecution: ToolExecutionConfig?, stopWhen: List<StopCondition>?, outputSchema: Validator?,
            requireApproval: CallApproval?, dynamicModel: Function<TurnContext, String?>?,
            dynamicInstructions: Function<TurnContext, String?>?, temperature: Function<TurnContext, Double?>?,
            maxOutputTokens: Function<TurnContext, Int?>?, topP: Function<TurnContext, Double?>?,
            dynamicTools: Function<TurnContext, List<Tool>?>?,
        ) : this(
            id, model, preset, instructions, tools, maxSteps, parseOutput, humanReview, modelRetry, toolExecution,
            stopWhen, outputSchema, requireApproval, null, null, null, null, null, null, null, null, null,
            dynamicModel, dynamicInstructions, temperature, maxOutputTokens, topP, dynamicTools,
        )

        /** An agent with an id and tools. */
        constructor(id: String, tools: List<Tool>?) :
            this(id, null, null, null, tools, 0, null, null, null, null)

        /** The product's ten-argument form. */
        constructor(
            id: String, model: String?, preset: String?, instructions: String?, tools: List<Tool>?, maxSteps: Int,
            parseOutput: Function<String, Any?>?, humanReview: HumanReview?, modelRetry: ModelRetryConfig?,
            toolExecution: ToolExecutionConfig?,
        ) : this(id, model, preset, instructions, tools, maxSteps, parseOutput, humanReview, modelRetry, toolExecution, null, null, null)

        /** The product's thirteen-argument form (with stop conditions, output schema, approval). */
        constructor(
            id: String, model: String?, preset: String?, instructions: String?, tools: List<Tool>?, maxSteps: Int,
            parseOutput: Function<String, Any?>?, humanReview: HumanReview?, modelRetry: ModelRetryConfig?,
            toolExecution: ToolExecutionConfig?, stopWhen: List<StopCondition>?, outputSchema: Validator?,
            requireApproval: CallApproval?,
        ) : this(
            id, model, preset, instructions, tools, maxSteps, parseOutput, humanReview, modelRetry, toolExecution,
            stopWhen, outputSchema, requireApproval, null, null, null, null, null, null, null, null, null,
        )

        /** This definition with instructions. */
        fun withInstructions(instructions: String?) = copy(instructions = instructions)

        /** This definition with a tool execution config. */
        fun withToolExecution(config: ToolExecutionConfig?) = copy(toolExecution = config)

        /** This definition with the agent-level approval predicate. */
        fun withRequireApproval(approval: CallApproval?) = copy(requireApproval = approval)

        /** This definition with stop conditions. */
        fun withStopWhen(conditions: List<StopCondition>?) = copy(stopWhen = conditions)

        /** This definition signing its states with [secret] (and refusing unsigned ones). */
        fun withStateSecret(secret: String) = copy(stateSecrets = listOf(secret))

        /** This definition keeping its runs in [store]. */
        fun withStore(store: RunStore?) = copy(store = store)

        /** This definition with MCP servers. */
        fun withMcpServers(servers: List<McpServer>?) = copy(mcpServers = servers)

        /** This definition with a model id. */
        fun withModel(model: String?) = copy(model = model)

        /** This definition with a step limit (≤ 0: the core's default). */
        fun withMaxSteps(maxSteps: Int) = copy(maxSteps = maxSteps)

        /** This definition with an output validator. */
        fun withOutputSchema(schema: Validator?) = copy(outputSchema = schema)

        /** This definition with model retries. */
        fun withModelRetry(retry: ModelRetryConfig?) = copy(modelRetry = retry)

        /** This definition signing with the first of [secrets] and verifying with any (rotation). */
        fun withStateSecrets(secrets: List<String>?) = copy(stateSecrets = secrets)

        /** This definition with sampling settings (`null`: the model's default). */
        fun withSampling(temperature: Double?, maxOutputTokens: Int?, topP: Double?) =
            copy(temperature = temperature, maxOutputTokens = maxOutputTokens, topP = topP)

        /**
         * This definition with the request controls of docs/behaviour.md §12: [toolChoice] `"auto"`,
         * `"required"`, `"none"` or `Map.of("toolId", id)`; [parallelToolCalls]; the
         * [activeTools] offered (ids of the agent's tools). `null` leaves one unset.
         */
        fun withRequestControls(toolChoice: Any?, parallelToolCalls: Boolean?, activeTools: List<String>?) =
            copy(toolChoice = toolChoice, parallelToolCalls = parallelToolCalls, activeTools = activeTools)

        /** This definition choosing each request's model from the turn (`null` answer: unset, the client's default). */
        fun withDynamicModel(fn: Function<TurnContext, String?>?) = copy(dynamicModel = fn)

        /** This definition choosing each request's instructions from the turn (`null` answer: none). */
        fun withDynamicInstructions(fn: Function<TurnContext, String?>?) = copy(dynamicInstructions = fn)

        /** This definition choosing each request's sampling settings from the turn (`null` answer: unset). */
        fun withDynamicSampling(
            temperature: Function<TurnContext, Double?>?,
            maxOutputTokens: Function<TurnContext, Int?>?,
            topP: Function<TurnContext, Double?>?,
        ) = copy(dynamicTemperature = temperature, dynamicMaxOutputTokens = maxOutputTokens, dynamicTopP = topP)

        /** This definition offering, per turn, the tools [fn] returns (tools of this definition; `null`: all). */
        fun withDynamicTools(fn: Function<TurnContext, List<Tool>?>?) = copy(dynamicTools = fn)

        internal fun native(): NativeAgent = javaCall {
            val review = humanReview
            val approve = requireApproval
            val parse = parseOutput
            app.phaseo.agent.createAgent(
                id = id,
                tools = tools.orEmpty().map { it.native() },
                instructions = instructions,
                model = model,
                preset = preset,
                maxSteps = maxSteps.takeIf { it != 0 },
                stopWhen = stopWhen.orEmpty().map(::nativeStop),
                modelRetry = modelRetry?.native(),
                toolExecution = toolExecution?.native(),
                outputSchema = outputSchema?.let(::nativeValidator),
                requireApproval = approve?.let {
                    { call, rt ->
                        JvmThreads.call { approve.approve(ToolCall(call.id, call.name, javaValue(call.input)), RuntimeContext(rt)) }
                    }
                },
                humanReview = review?.let {
                    { ctx ->
                        JvmThreads.call { review.review(javaMap(ctx)) }?.let { ReviewRequest(it.reason, toJsonElement(it.payload)) }
                    }
                },
                parseOutput = parse?.let { { text -> toJsonElement(parse.apply(text)) } },
                stateSecrets = stateSecrets.orEmpty(),
                temperature = temperature,
                maxOutputTokens = maxOutputTokens?.toLong(),
                topP = topP,
                toolChoice = toolChoice?.let(::toolChoiceOf),
                parallelToolCalls = parallelToolCalls,
                activeTools = activeTools,
                store = store,
                mcpServers = mcpServers.orEmpty().map { it.config },
                modelFn = perTurn(dynamicModel) { JsonPrimitive(it) },
                instructionsFn = perTurn(dynamicInstructions) { JsonPrimitive(it) },
                temperatureFn = perTurn(dynamicTemperature) { JsonPrimitive(it) },
                maxOutputTokensFn = perTurn(dynamicMaxOutputTokens) { JsonPrimitive(it) },
                topPFn = perTurn(dynamicTopP) { JsonPrimitive(it) },
                activeToolsFn = perTurn(dynamicTools) { list -> JsonArray(list.map { JsonPrimitive(it.id) }) },
            )
        }
    }

    /**
     * What one run or continue changes over the agent definition (docs/behaviour.md §3, §12): its
     * [stopWhen] conditions (replacing the agent's), sampling ([temperature],
     * [maxOutputTokens], [topP]) and request controls ([toolChoice] `"auto"`, `"required"`,
     * `"none"` or `Map.of("toolId", id)`; [parallelToolCalls]; [activeTools]). `null`: the
     * agent's.
     */
    @JvmSuppressWildcards
    @JvmRecord
    data class Overrides(
        val stopWhen: List<StopCondition>?,
        val temperature: Double?,
        val maxOutputTokens: Int?,
        val topP: Double?,
        val toolChoice: Any?,
        val parallelToolCalls: Boolean?,
        val activeTools: List<String>?,
    ) {
        /** No overrides. */
        constructor() : this(null, null, null, null, null, null, null)

        /** With stop conditions. */
        fun withStopWhen(conditions: List<StopCondition>?) = copy(stopWhen = conditions)

        /** With sampling settings. */
        fun withSampling(temperature: Double?, maxOutputTokens: Int?, topP: Double?) =
            copy(temperature = temperature, maxOutputTokens = maxOutputTokens, topP = topP)

        /** With the tool choice. */
        fun withToolChoice(choice: Any?) = copy(toolChoice = choice)

        /** With whether the model may request several calls in one turn. */
        fun withParallelToolCalls(parallel: Boolean?) = copy(parallelToolCalls = parallel)

        /** With the tool ids offered. */
        fun withActiveTools(ids: List<String>?) = copy(activeTools = ids)
    }

    /**
     * A run's options: the [input] (text or any JSON value), the [client], the application
     * [context], per-run overrides ([model], [preset], [maxSteps] (`null`: the agent's),
     * [modelRetry], [toolExecution]), an [onEvent] listener (its failures never affect the
     * run) and a run [store] (else the agent's).
     */
    @JvmSuppressWildcards
    @JvmRecord
    data class RunOptions(
        val input: Any?,
        val client: ModelClient,
        val context: Any?,
        val model: String?,
        val preset: String?,
        val maxSteps: Int?,
        val modelRetry: ModelRetryConfig?,
        val toolExecution: ToolExecutionConfig?,
        val onEvent: Consumer<AgentEvent>?,
        val store: RunStore?,
        val messages: List<Map<String, Any?>>?,
        val overrides: Overrides?,
        val cancel: CancelToken?,
    ) {
        /** The product's ten fields (our [store] in the place of its devtools). */
        constructor(
            input: Any?, client: ModelClient, context: Any?, model: String?, preset: String?, maxSteps: Int?,
            modelRetry: ModelRetryConfig?, toolExecution: ToolExecutionConfig?, onEvent: Consumer<AgentEvent>?,
            store: RunStore?,
        ) : this(input, client, context, model, preset, maxSteps, modelRetry, toolExecution, onEvent, store, null, null, null)

        /** Input and client only. */
        constructor(input: Any?, client: ModelClient) : this(input, client, null)

        /** Input, client and application context. */
        constructor(input: Any?, client: ModelClient, context: Any?) :
            this(input, client, context, null, null, null, null, null, null, null)

        /** These options with a tool execution config for this run. */
        fun withToolExecution(config: ToolExecutionConfig?) = copy(toolExecution = config)

        /** These options with an event listener. */
        fun withOnEvent(listener: Consumer<AgentEvent>?) = copy(onEvent = listener)

        /** These options with a run store. */
        fun withStore(store: RunStore?) = copy(store = store)

        /** These options with an earlier conversation (`[{role, content, …}]`) before the input. */
        fun withMessages(messages: List<Map<String, Any?>>?) = copy(messages = messages)

        /** These options with per-run overrides. */
        fun withOverrides(overrides: Overrides?) = copy(overrides = overrides)

        /** These options with a model id and step limit for this run. */
        fun withModel(model: String?, maxSteps: Int?) = copy(model = model, maxSteps = maxSteps)

        /** These options with model retries for this run. */
        fun withModelRetry(retry: ModelRetryConfig?) = copy(modelRetry = retry)

        /** These options with a cancel token: `token.cancel()` ends the run `cancelled` and it still returns its result. */
        fun withCancel(token: CancelToken?) = copy(cancel = token)
    }

    /**
     * How to continue a paused run: the paused [run] (or its [runId] in a run store), the
     * [client], decisions ([approvals], [rejections]), outputs of pending calls
     * ([toolOutputs]), a [humanInput] answering a review pause, a new [context], per-run
     * overrides, an [onEvent] listener and a [store]. A continue that does not decide every
     * pending call is refused (`continue_invalid`) and the state stays usable.
     */
    @JvmSuppressWildcards
    @JvmRecord
    data class ContinueOptions(
        val run: RunResult?,
        val client: ModelClient,
        val context: Any?,
        val model: String?,
        val preset: String?,
        val maxSteps: Int?,
        val humanInput: String?,
        val modelRetry: ModelRetryConfig?,
        val toolExecution: ToolExecutionConfig?,
        val onEvent: Consumer<AgentEvent>?,
        val approvals: List<ToolDecision>?,
        val rejections: List<ToolDecision>?,
        val toolOutputs: List<ToolOutput>?,
        val runId: String?,
        val store: RunStore?,
        val overrides: Overrides?,
        val cancel: CancelToken?,
        val responses: List<ToolOutput>?,
    ) {
        /** Every option but [responses]. */
        constructor(
            run: RunResult?,
            client: ModelClient,
            context: Any?,
            model: String?,
            preset: String?,
            maxSteps: Int?,
            humanInput: String?,
            modelRetry: ModelRetryConfig?,
            toolExecution: ToolExecutionConfig?,
            onEvent: Consumer<AgentEvent>?,
            approvals: List<ToolDecision>?,
            rejections: List<ToolDecision>?,
            toolOutputs: List<ToolOutput>?,
            runId: String?,
            store: RunStore?,
            overrides: Overrides?,
            cancel: CancelToken?,
        ) : this(
            run, client, context, model, preset, maxSteps, humanInput, modelRetry, toolExecution, onEvent, approvals,
            rejections, toolOutputs, runId, store, overrides, cancel, null,
        )

        /** Continues [run] with [client]; add decisions with [approve], [reject], [output], [respond]. */
        constructor(run: RunResult, client: ModelClient) :
            this(run, client, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null)

        /** Continues the stored run [runId] (of the agent's store, or [withStore]'s). */
        constructor(runId: String, client: ModelClient) :
            this(null, client, null, null, null, null, null, null, null, null, null, null, null, runId, null, null, null, null)

        /** These options approving the calls [toolCallIds]. */
        fun approve(vararg toolCallIds: String) = copy(approvals = approvals.orEmpty() + toolCallIds.map { ToolDecision(it) })

        /**
         * These options approving the call [toolCallId] with [editedInput], the person's
         * corrected arguments, which the tool then runs with (docs/behaviour.md §14).
         */
        fun approveEdited(toolCallId: String, editedInput: Any?) =
            copy(approvals = approvals.orEmpty() + ToolDecision.edited(toolCallId, editedInput))

        /**
         * These options answering the approval-gated call [toolCallId] with [output] in the
         * tool's place: the tool never runs (docs/behaviour.md §14).
         */
        fun respond(toolCallId: String, output: Any?) = copy(responses = responses.orEmpty() + ToolOutput(toolCallId, output))

        /** These options rejecting the call [toolCallId] with [reason] (the model sees it). */
        fun reject(toolCallId: String, reason: String?) = copy(rejections = rejections.orEmpty() + ToolDecision(toolCallId, reason))

        /** These options supplying [output] for the pending call [toolCallId]. */
        fun output(toolCallId: String, output: Any?) = copy(toolOutputs = toolOutputs.orEmpty() + ToolOutput(toolCallId, output))

        /** These options answering a review pause with [text]. */
        fun withHumanInput(text: String?) = copy(humanInput = text)

        /** These options with a new application context. */
        fun withContext(context: Any?) = copy(context = context)

        /** These options with an event listener. */
        fun withOnEvent(listener: Consumer<AgentEvent>?) = copy(onEvent = listener)

        /** These options with a run store. */
        fun withStore(store: RunStore?) = copy(store = store)

        /** These options with per-run overrides. */
        fun withOverrides(overrides: Overrides?) = copy(overrides = overrides)

        /** These options with a model id and step limit for this continue. */
        fun withModel(model: String?, maxSteps: Int?) = copy(model = model, maxSteps = maxSteps)

        /** These options with a tool execution config for this continue. */
        fun withToolExecution(config: ToolExecutionConfig?) = copy(toolExecution = config)

        /** These options with model retries for this continue. */
        fun withModelRetry(retry: ModelRetryConfig?) = copy(modelRetry = retry)

        /** These options with a cancel token. */
        fun withCancel(token: CancelToken?) = copy(cancel = token)
    }

    /** The Phaseo gateway client's options; `null` fields fall back (`PHASEO_API_KEY`). */
    @JvmSuppressWildcards
    @JvmRecord
    data class GatewayOptions(
        val apiKey: String?,
        val baseUrl: String?,
        val model: String?,
        val preset: String?,
        val requestOptions: Map<String, Any?>?,
        val timeout: Duration?,
        val headers: Map<String, String>?,
    ) {
        /** The product's fields (without the product's `Phaseo` client, which we do not have). */
        constructor(apiKey: String?, baseUrl: String?, model: String?, preset: String?, requestOptions: Map<String, Any?>?) :
            this(apiKey, baseUrl, model, preset, requestOptions, null, null)
    }

    /**
     * What a per-turn function of [AgentDefinition] sees: [numberOfTurns] (from 1),
     * [stepIndex] (from 0), the conversation so far ([messages], `{role, content, …}` maps),
     * the application [context], and [lastToolCall], the most recent call the model made
     * (`null` before the first).
     */
    @JvmSuppressWildcards
    @JvmRecord
    data class TurnContext(
        val numberOfTurns: Int,
        val stepIndex: Int,
        val messages: List<Map<String, Any?>>,
        val context: Any?,
        val lastToolCall: ToolCall?,
    )

    /**
     * A run event (docs/behaviour.md §5) in the product's shape: [type] (`run.started`, `tool.completed`,
     * `response.output_text.delta`, …), [runId], [agentId], [timestamp] (ISO-8601 UTC),
     * [status] (`null` on events without one) and the event's other fields in [details] with
     * snake_case keys (`step_index`, `tool_call_id`, `tool_name`, `previous_status`, `delta`,
     * …; values unchanged). In a streamed run, `tool.input_started` has `tool_call_id` and
     * `tool_name`, and `tool.input_delta` has `tool_call_id` and `delta`, the next fragment
     * of the call's arguments text (docs/behaviour.md §16). [toMap] is the core's event as it
     * is (camelCase keys).
     */
    @JvmSuppressWildcards
    @JvmRecord
    data class AgentEvent(
        val type: String,
        val runId: String?,
        val agentId: String?,
        val timestamp: String?,
        val status: String?,
        val details: Map<String, Any?>,
    ) {
        /** The event as the core writes it: `{type, runId, agentId, timestamp, status?, …}`, camelCase keys. */
        fun toMap(): Map<String, Any?> {
            val out = LinkedHashMap<String, Any?>()
            out["type"] = type
            runId?.let { out["runId"] = it }
            agentId?.let { out["agentId"] = it }
            timestamp?.let { out["timestamp"] = it }
            status?.let { out["status"] = it }
            for ((key, value) in details) out[camelCase(key)] = value
            return out
        }

        companion object {
            private val head = setOf("type", "runId", "agentId", "timestamp", "status")

            /** The event of the core's event map [event] (camelCase keys). */
            @JvmStatic
            fun of(event: Map<String, Any?>): AgentEvent = AgentEvent(
                event["type"] as String,
                event["runId"] as String?,
                event["agentId"] as String?,
                event["timestamp"] as String?,
                event["status"] as String?,
                event.filterKeys { it !in head }.mapKeys { snakeCase(it.key) },
            )

            private fun snakeCase(key: String) = key.replace(Regex("([a-z0-9])([A-Z])"), "$1_$2").lowercase()

            private fun camelCase(key: String) = key.replace(Regex("_([a-z0-9])")) { it.groupValues[1].uppercase() }
        }
    }

    /**
     * Tracing options (docs/behaviour.md, tracing): the OTLP HTTP [endpoint] (`null`:
     * `OTEL_EXPORTER_OTLP_ENDPOINT`, else `http://localhost:4318`), extra [headers], the
     * [serviceName] (`null`: `OTEL_SERVICE_NAME`), and whether spans carry tool arguments,
     * results and model messages ([captureContent], off by default).
     */
    @JvmSuppressWildcards
    @JvmRecord
    data class TracingOptions(
        val endpoint: String?,
        val headers: Map<String, String>?,
        val serviceName: String?,
        val captureContent: Boolean,
    ) {
        /** Everything from the `OTEL_*` environment variables. */
        constructor() : this(null, null, null, false)

        /** These options with the endpoint. */
        fun withEndpoint(endpoint: String?) = copy(endpoint = endpoint)

        /** These options with headers sent with every export. */
        fun withHeaders(headers: Map<String, String>?) = copy(headers = headers)

        /** These options with the service name. */
        fun withServiceName(name: String?) = copy(serviceName = name)

        /** These options recording content (arguments, results, messages) or not. */
        fun withCaptureContent(capture: Boolean) = copy(captureContent = capture)
    }

    // -----------------------------------------------------------------------------------
    // Runtime, agent, results, streams, errors, MCP

    /**
     * What a tool call sees of its run: [runId], [agentId], [stepIndex], the application
     * [context], the [toolCall]; `emitProgress().receive(value, context)` publishes a progress
     * value, `setContext().accept(value)` replaces the application context for later turns.
     */
    @JvmSuppressWildcards
    class RuntimeContext internal constructor(private val native: ToolContext) {
        internal constructor(runtime: ToolRuntime) : this(ToolContext(runtime))

        /** The run id. */
        fun runId(): String = native.runId

        /** The agent id. */
        fun agentId(): String = native.agentId

        /** The step (model turn) index, from 0. */
        fun stepIndex(): Int = native.stepIndex

        /** The application context as it was when the tool phase began. */
        fun context(): Any? = javaValue(native.context)

        /** The call. */
        fun toolCall(): ToolCall = native.toolCall.let { ToolCall(it.id, it.name, javaValue(it.input)) }

        /** The tool's annotations (an MCP tool's hints), or `null`. */
        fun toolAnnotations(): Map<String, Any?>? = native.toolAnnotations?.let(::javaMap)

        /** Whether the call was cancelled (timeout or run cancellation). */
        fun isCancelled(): Boolean = native.isCancelled

        /** The executor's attempt: 1, then 2, 3… when the tool's `retry` runs the call again. */
        fun attempt(): Int = native.attempt

        /**
         * `"<runId>:<toolCallId>"`: the same for every attempt of the call, for a call approved
         * on continue in another process and for a call run again by `recover`. Hand it to the
         * service a side-effecting tool calls, so that the effect happens at most once.
         */
        fun idempotencyKey(): String = native.idempotencyKey

        /**
         * Publishes a progress value (checked by the tool's `eventSchema`); returns it. A value
         * with no JSON form throws `IllegalArgumentException` naming why; one beyond the
         * limits of docs/behaviour.md §7 (nested too deep, an integer past 64 bits) fails the call
         * `tool_event_invalid`.
         */
        fun emitProgress(): ToolResponse = ToolResponse { value, _ ->
            hostArgument { native.emitProgress(hostValue(value)) }
            value
        }

        /**
         * Replaces the whole application context for later turns. A value with no JSON form
         * or beyond the limits of docs/behaviour.md §7 throws `IllegalArgumentException` naming why.
         */
        fun setContext(): Consumer<Any?> = Consumer { value -> hostArgument { native.setContext(hostValue(value)) } }
    }

    /**
     * An agent: [run], [continueRun] and [recover] block and return the result, their
     * `…Async` forms return a [CompletableFuture] (cancelling it cancels the run), [stream]
     * and [continueStream] return a [StreamResult]. A failed run throws [AgentException]
     * with the failed state. Closing the agent stops its MCP servers.
     */
    @JvmSuppressWildcards
    class Agent internal constructor(private val native: NativeAgent) : AutoCloseable {
        /** The agent id. */
        fun id(): String = native.id()

        /** The native agent (served over MCP by [AgentSdk.serveMcp]). */
        internal fun nativeAgent(): NativeAgent = native

        /**
         * A tool that runs this agent (docs/behaviour.md §18): [id] defaults to the agent's
         * id, [parameters] to one string `input`, which is the nested run's input; the nested
         * run's output is the tool's output. When the nested run pauses, the outer run pauses
         * too, listing its calls as `<outerCallId>/<nestedCallId>`; decisions for those ids
         * on the outer continue go to the nested run.
         */
        @JvmOverloads
        fun asTool(id: String? = null, description: String? = null, parameters: Map<String, Any?>? = null): Tool = javaCall {
            val nested = native.asTool(id, description, parameters?.let { toJsonElement(it).toString() })
            Tool(nested.id(), NestedAgentExecutor(nested), nested.description(), parameters, null)
        }

        /**
         * Runs and waits for the result. The run is driven by this thread: it works here
         * while this waits, and a turn's only tool call runs here too.
         */
        fun run(options: RunOptions): RunResult = javaCall { RunResult(sdk { JvmDispatch.drive(native.runDriven(nativeRunOptions(options))) }) }

        /** Runs [input] with [client] and waits for the result. */
        fun run(input: Any?, client: ModelClient): RunResult = run(RunOptions(input, client))

        /** Runs; the future completes with the result or an [AgentException]. */
        @OptIn(DelicateCoroutinesApi::class)
        fun runAsync(options: RunOptions): CompletableFuture<RunResult> = GlobalScope.future { javaCall { runNow(options) } }

        /** Continues a paused run and waits for the result (driven by this thread, as [run]). */
        fun continueRun(options: ContinueOptions): RunResult = javaCall {
            val state = options.run
            val id = options.runId
            val native = nativeContinueOptions(options, store = if (state == null) options.store else null)
            RunResult(
                sdk {
                    JvmDispatch.drive(
                        when {
                            state != null -> this.native.continueDriven(state.native, native)
                            id != null -> this.native.continueByIdDriven(id, native)
                            else -> throw KotlinAgentException("continue_invalid", "A run or a runId is required to continue")
                        },
                    )
                },
            )
        }

        /** Continues a paused run; the future completes with the result or an [AgentException]. */
        @OptIn(DelicateCoroutinesApi::class)
        fun continueRunAsync(options: ContinueOptions): CompletableFuture<RunResult> =
            GlobalScope.future { javaCall { continueNow(options) } }

        /** Recovers the stored run [runId] whose worker died, from its last checkpoint. */
        @JvmOverloads
        fun recover(runId: String, client: ModelClient, store: RunStore? = null): RunResult = javaCall {
            val options = continueOptions(nativeClient(client), emptyList(), emptyList(), emptyMap(), null, null, null, null, null, store)
            RunResult(sdk { JvmDispatch.drive(native.recoverDriven(runId, options)) })
        }

        /** Starts a streamed run. */
        fun stream(options: RunOptions): StreamResult = javaCall {
            StreamResult(
                native.stream(
                    runValue("input", options.input), nativeClient(options.client), options.context?.let { runValue("context", it) },
                    messages = options.messages?.let(::runMessages),
                    overrides = overrides(options.model, options.preset, options.maxSteps, options.modelRetry, options.toolExecution, options.overrides),
                    onEvent = listener(options.onEvent), cancel = options.cancel,
                ),
            )
        }

        /** Continues a paused run as a stream. */
        fun continueStream(options: ContinueOptions): StreamResult = javaCall {
            val state = options.run ?: throw KotlinAgentException("continue_invalid", "continueStream needs the paused run")
            StreamResult(
                native.continueStream(
                    state.native, nativeClient(options.client), decisions(options.approvals), decisions(options.rejections),
                    outputs(options.toolOutputs), options.humanInput, options.context?.let { runValue("context", it) },
                    overrides(options.model, options.preset, options.maxSteps, options.modelRetry, options.toolExecution, options.overrides),
                    listener(options.onEvent), options.cancel, responses = responses(options.responses),
                ),
            )
        }

        /** Stops the agent's MCP servers. */
        override fun close() = native.close()

        /** The native options of a run of [o], for the driven run. */
        private fun nativeRunOptions(o: RunOptions): app.phaseo.agent.RunOptions = app.phaseo.agent.RunOptions(
            runValue("input", o.input).toString(), nativeClient(o.client), o.context?.let { runValue("context", it).toString() },
            o.messages?.let(::runMessages)?.toString(),
            overrides(o.model, o.preset, o.maxSteps, o.modelRetry, o.toolExecution, o.overrides),
            listener(o.onEvent)?.let { KotlinListener(it, o.cancel) }, o.cancel, o.store, hostTraceparent(),
        )

        /** The native options of a continue of [o], for the driven run. */
        private fun nativeContinueOptions(o: ContinueOptions, store: RunStore?) = continueOptions(
            nativeClient(o.client), decisions(o.approvals), decisions(o.rejections), outputs(o.toolOutputs), o.humanInput,
            o.context?.let { runValue("context", it) },
            overrides(o.model, o.preset, o.maxSteps, o.modelRetry, o.toolExecution, o.overrides),
            listener(o.onEvent), o.cancel, store, responses = responses(o.responses),
        )

        private suspend fun runNow(o: RunOptions) = RunResult(
            native.run(
                runValue("input", o.input), nativeClient(o.client), o.context?.let { runValue("context", it) },
                messages = o.messages?.let(::runMessages),
                overrides = overrides(o.model, o.preset, o.maxSteps, o.modelRetry, o.toolExecution, o.overrides),
                onEvent = listener(o.onEvent), cancel = o.cancel, store = o.store,
            ),
        )

        private suspend fun continueNow(o: ContinueOptions): RunResult {
            val client = nativeClient(o.client)
            val over = overrides(o.model, o.preset, o.maxSteps, o.modelRetry, o.toolExecution, o.overrides)
            val context = o.context?.let { runValue("context", it) }
            val id = o.runId
            val state = o.run
            return RunResult(
                when {
                    state != null -> native.continueRun(
                        state.native, client, decisions(o.approvals), decisions(o.rejections), outputs(o.toolOutputs),
                        o.humanInput, context, over, listener(o.onEvent), o.cancel, responses = responses(o.responses),
                    )
                    id != null -> native.continueRun(
                        id, client, decisions(o.approvals), decisions(o.rejections), outputs(o.toolOutputs),
                        o.humanInput, context, over, listener(o.onEvent), o.cancel, store = o.store,
                        responses = responses(o.responses),
                    )
                    else -> throw KotlinAgentException("continue_invalid", "A run or a runId is required to continue")
                },
            )
        }
    }

    /**
     * A run's result (its whole state): [status] (`"completed"`, `"waiting_for_human"`, …),
     * [output], [messages], [usage], the [pause] and its [pendingToolCalls]; [toJson] /
     * [fromJson] move a paused run between processes.
     */
    @JvmSuppressWildcards
    class RunResult internal constructor(
        internal val native: NativeRunResult,
        /** The status, when the run that made this result handed it over at its end. */
        private val knownStatus: RunStatus? = null,
        /** The output's JSON, likewise (null: read it from [native]). */
        private val knownOutputJson: String? = null,
    ) {
        /** The result of a run this thread drove, with the status and output it ended with. */
        internal constructor(driven: JvmDispatch.Driven) : this(driven.result, driven.status, driven.outputJson)

        private val state: Map<String, Any?> by lazy { javaMap(native.state) }

        /** The run id. */
        fun id(): String = native.runId()

        /** The agent id. */
        fun agentId(): String = native.agentId()

        /** The status, snake_case (`completed`, `waiting_for_human`, `stopped`, `failed`, …). */
        fun status(): String = (knownStatus ?: native.status()).name.lowercase()

        /** The final output (`null` unless completed or stopped). */
        fun output(): Any? {
            val json = knownOutputJson ?: return javaValue(native.output)
            // A text output (the usual final answer) with nothing escaped is its own content:
            // in the core's JSON a quote or a control character inside a string is escaped.
            if (json.length >= 2 && json[0] == '"' && json[json.length - 1] == '"' && json.indexOf('\\') < 0) {
                return json.substring(1, json.length - 1)
            }
            return javaValue(parseJson(json))
        }

        /** The final output as text. */
        fun outputText(): String = native.outputText()

        /** The conversation. */
        @Suppress("UNCHECKED_CAST")
        fun messages(): List<Map<String, Any?>> = javaValue(native.messages) as List<Map<String, Any?>>

        /** Cumulative usage `{inputTokens, outputTokens, cachedTokens, totalTokens, cost}`. */
        fun usage(): Map<String, Any?> = javaMap(native.usage)

        /** The run record `{id, agentId, status, input, …}`. */
        @Suppress("UNCHECKED_CAST")
        fun run(): Map<String, Any?> = state["run"] as Map<String, Any?>

        /** What the run recorded of each step's model call. */
        @Suppress("UNCHECKED_CAST")
        fun steps(): List<Map<String, Any?>> = (state["steps"] as? List<Map<String, Any?>>).orEmpty()

        /** The pause `{id, reason, payload, requestedAt, kind, pendingToolCalls}`, or `null`. */
        fun pause(): Map<String, Any?>? = native.pause?.let(::javaMap)

        /** The pending calls `[{call: {id, name, input}, kind, reason}]` (empty unless paused). */
        @Suppress("UNCHECKED_CAST")
        fun pendingToolCalls(): List<Map<String, Any?>> = javaValue(native.pending) as List<Map<String, Any?>>

        /** The application context. */
        fun context(): Any? = javaValue(native.context)

        /** Why the run stopped (`step_count:3`, …), or `null`. */
        fun stopReason(): String? = native.stopReason()

        /** The number of steps. */
        fun stepCount(): Int = native.stepCount().toInt()

        /** The whole state as canonical JSON text (store it, continue it anywhere). */
        fun toJson(): String = native.toJson()

        /** The state as a plain Java map. */
        fun toMap(): Map<String, Any?> = state

        override fun toString() = "RunResult[id=${id()}, status=${status()}]"

        companion object {
            /** A state from JSON text (`state_invalid` when malformed or unsupported). */
            @JvmStatic
            fun fromJson(json: String): RunResult = javaCall { RunResult(parseState(json)) }
        }
    }

    /**
     * A streamed run. [events] iterates the events live (each iteration replays from the
     * start); [fullStream] and [textStream] wait for the run's end and return every event /
     * text delta; [getResult] waits for the result (a failed run throws); [cancel] ends the
     * run `cancelled`.
     */
    @JvmSuppressWildcards
    class StreamResult internal constructor(private val native: RunStream) {
        /** The events as they happen (without the final result item). */
        fun events(): Iterable<AgentEvent> = Iterable { EventIterator(native.native.cursor()) }

        /** Every event, once the run has ended (a failed run ends the list early). */
        fun fullStream(): List<AgentEvent> {
            val all = ArrayList<AgentEvent>()
            try {
                events().forEach(all::add)
            } catch (_: AgentException) {
                // The failure is the result's: getResult() throws it.
            }
            return all
        }

        /** Every text delta, once the run has ended. */
        fun textStream(): List<String> =
            fullStream().filter { it.type == "response.output_text.delta" }.mapNotNull { it.details["delta"] as? String }

        /** Waits for the result. */
        fun getResult(): RunResult = javaCall { runBlocking { RunResult(native.result()) } }

        /** The result as a future. */
        @OptIn(DelicateCoroutinesApi::class)
        fun resultAsync(): CompletableFuture<RunResult> = GlobalScope.future { javaCall { RunResult(native.result()) } }

        /** Cancels the run. */
        fun cancel() = native.cancel(null)
    }

    private class EventIterator(private val cursor: EventCursor) : Iterator<AgentEvent> {
        private var next: AgentEvent? = null
        private var done = false

        override fun hasNext(): Boolean {
            if (next != null) return true
            if (done) return false
            val item = javaCall { runBlocking { cursor.next() } }?.let { javaMap(parseJson(it)) }
            if (item == null || item["type"] == "result") {
                done = true
                cursor.close()
                return false
            }
            next = AgentEvent.of(item)
            return true
        }

        override fun next(): AgentEvent {
            if (!hasNext()) throw NoSuchElementException()
            return next!!.also { next = null }
        }
    }

    /**
     * The error of every SDK operation (docs/behaviour.md §9), unchecked: [code] is the stable code
     * (`tool_failed`, `tool_timeout`, `continue_invalid`, …); an error of a failed run carries
     * its final [state]; a refused continue carries none and the paused state stays usable.
     */
    @JvmSuppressWildcards
    class AgentException internal constructor(
        private val code: String,
        message: String,
        private val state: RunResult?,
        cause: Throwable?,
    ) : RuntimeException(message, cause) {
        /** The error code (docs/behaviour.md §9). */
        fun code(): String = code

        /** The failed run's final state, or `null`. */
        fun state(): RunResult? = state
    }

    /**
     * An MCP server whose tools the agent offers (docs/behaviour.md §11): [stdio] starts a child
     * process, [http] reaches a Streamable HTTP endpoint. The `with…` methods narrow and
     * configure it.
     */
    @JvmSuppressWildcards
    class McpServer private constructor(
        private val name: String,
        private val stdioCommand: List<String>?,
        private val url: String?,
        private val env: Map<String, String>,
        private val headers: Map<String, String>,
        private val allowTools: List<String>?,
        private val denyTools: List<String>,
        private val toolPrefix: String?,
        private val approval: String?,
        private val timeout: Duration?,
        private val onError: String?,
        private val optional: Boolean,
        private val deferLoading: Boolean,
    ) {
        internal val config: McpServerConfig
            get() = javaCall {
                val policy = approval?.let(::mcpApproval)
                val errors = onError?.let(::onErrorPolicy)
                if (stdioCommand != null) {
                    mcpStdio(
                        name, stdioCommand.first(), stdioCommand.drop(1), env, null, allowTools, denyTools, null, toolPrefix,
                        policy, timeout?.toMillis(), emptyMap(), errors, null, optional, deferLoading = deferLoading,
                    )
                } else {
                    mcpHttp(
                        name, url!!, headers, null, allowTools, denyTools, null, toolPrefix, policy, timeout?.toMillis(),
                        emptyMap(), errors, null, optional, deferLoading = deferLoading,
                    )
                }
            }

        private fun copy(
            env: Map<String, String> = this.env,
            headers: Map<String, String> = this.headers,
            allowTools: List<String>? = this.allowTools,
            denyTools: List<String> = this.denyTools,
            toolPrefix: String? = this.toolPrefix,
            approval: String? = this.approval,
            timeout: Duration? = this.timeout,
            onError: String? = this.onError,
            optional: Boolean = this.optional,
            deferLoading: Boolean = this.deferLoading,
        ) = McpServer(
            name, stdioCommand, url, env, headers, allowTools, denyTools, toolPrefix, approval, timeout, onError, optional,
            deferLoading,
        )

        /** This server with [env] added to the child's inherited environment. */
        fun withEnv(env: Map<String, String>) = copy(env = env)

        /** This server with HTTP headers. */
        fun withHeaders(headers: Map<String, String>) = copy(headers = headers)

        /** Only these tools are offered. */
        fun withAllowTools(tools: List<String>) = copy(allowTools = tools)

        /** These tools are not offered. */
        fun withDenyTools(tools: List<String>) = copy(denyTools = tools)

        /** Tools are offered as `<prefix>_<name>`. */
        fun withToolPrefix(prefix: String) = copy(toolPrefix = prefix)

        /** Which calls pause for approval: `"never"`, `"always"` or `"destructive"`. */
        fun withRequireApproval(policy: String) = copy(approval = policy)

        /** Each call's time limit (the call is then cancelled on the server). */
        fun withTimeout(timeout: Duration) = copy(timeout = timeout)

        /** `"fail-run"` (`mcp_failed`) or `"return-to-model"` for a failed call. */
        fun withOnError(policy: String) = copy(onError = policy)

        /** A server that cannot start is skipped instead of failing the run. */
        fun withOptional(optional: Boolean) = copy(optional = optional)

        /**
         * Every tool of this server kept out of the model's offer until the built-in
         * `tool_search` finds it (docs/behaviour.md §17).
         */
        fun withDeferLoading(deferLoading: Boolean) = copy(deferLoading = deferLoading)

        companion object {
            /** A server started as the child process [command] with [args], over stdio. */
            @JvmStatic
            fun stdio(name: String, command: String, args: List<String>): McpServer =
                McpServer(name, listOf(command) + args, null, emptyMap(), emptyMap(), null, emptyList(), null, null, null, null, false, false)

            /** A server reached over Streamable HTTP at [url]. */
            @JvmStatic
            fun http(name: String, url: String): McpServer =
                McpServer(name, null, url, emptyMap(), emptyMap(), null, emptyList(), null, null, null, null, false, false)
        }
    }

    /**
     * How [serveMcp] serves tools (docs/behaviour.md §19), made with [builder]: the server's
     * name and version, stdio (the default) or Streamable HTTP, the calls served at once and
     * the tool call budget over the server's lifetime, and a listener of every call's events.
     */
    @JvmSuppressWildcards
    class McpServeOptions private constructor(
        /** The server's name, as clients show it. */
        val name: String,
        /** The server's version. */
        val version: String,
        /** Whether the server listens on Streamable HTTP instead of stdio. */
        val http: Boolean,
        /** The HTTP interface (`null`: `127.0.0.1`). */
        val host: String?,
        /** The HTTP port (`null` or 0: a free one). */
        val port: Int?,
        /** The HTTP endpoint's path (`null`: `/mcp`). */
        val path: String?,
        /** The bearer token every HTTP request must carry, or `null`. */
        val authToken: String?,
        /** Browser origins allowed to call over HTTP (empty: loopback origins). */
        val allowedOrigins: List<String>,
        /** `Host` names accepted besides loopback names and [host]. */
        val allowedHosts: List<String>,
        /** Calls served at once (`concurrency`, default 1) and `maxToolCalls` over the server's lifetime. */
        val toolExecution: ToolExecutionConfig?,
        /** Receives the `tool.*` events of every served call. */
        val onEvent: Consumer<AgentEvent>?,
        /** What clients are told a served agent does (`serveMcp(agent, client, options)`). */
        val description: String?,
    ) {
        internal fun native(client: ModelClient? = null): ServeOptions = ServeOptions(
            name,
            version,
            if (http) mcpServeHttp(host, port, path, authToken, allowedOrigins, allowedHosts) else McpServeTransport.Stdio,
            toolExecution?.native(),
            listener(onEvent)?.let { KotlinListener(it) },
            client?.let(::nativeClient),
            description,
        )

        /** Builds [McpServeOptions]; every setter returns the builder. */
        @JvmSuppressWildcards
        class Builder internal constructor(private val name: String) {
            private var version = "0.0.0"
            private var http = false
            private var host: String? = null
            private var port: Int? = null
            private var path: String? = null
            private var authToken: String? = null
            private var allowedOrigins: List<String> = emptyList()
            private var allowedHosts: List<String> = emptyList()
            private var toolExecution: ToolExecutionConfig? = null
            private var onEvent: Consumer<AgentEvent>? = null
            private var description: String? = null

            /** The server's version (default `0.0.0`). */
            fun version(version: String) = apply { this.version = version }

            /** Serve over the process's standard input and output (the default). */
            fun stdio() = apply { http = false }

            /** Serve over Streamable HTTP on `127.0.0.1`, a free port and `/mcp` unless set. */
            fun http() = apply { http = true }

            /** Serve over Streamable HTTP on [port] (0: a free one). */
            fun http(port: Int) = apply { http = true; this.port = port }

            /** The HTTP interface to bind. */
            fun host(host: String) = apply { http = true; this.host = host }

            /** The HTTP endpoint's path. */
            fun path(path: String) = apply { http = true; this.path = path }

            /** Every HTTP request must carry `Authorization: Bearer <token>` (else 401). */
            fun authToken(token: String) = apply { http = true; authToken = token }

            /** Browser origins allowed to call over HTTP. */
            fun allowedOrigins(origins: List<String>) = apply { allowedOrigins = origins.toList() }

            /** `Host` names accepted besides loopback names and the bound host. */
            fun allowedHosts(hosts: List<String>) = apply { allowedHosts = hosts.toList() }

            /** Calls served at once and the tool call budget over the server's lifetime. */
            fun toolExecution(config: ToolExecutionConfig) = apply { toolExecution = config }

            /** Receives the `tool.*` events of every served call (its failures are ignored). */
            fun onEvent(listener: Consumer<AgentEvent>) = apply { onEvent = listener }

            /** What clients are told a served agent does (serving tools, it is refused). */
            fun description(description: String) = apply { this.description = description }

            /** The options. */
            fun build() = McpServeOptions(
                name, version, http, host, port, path, authToken, allowedOrigins, allowedHosts, toolExecution, onEvent,
                description,
            )
        }

        companion object {
            /** A builder of options for a server named [name] (stdio unless told otherwise). */
            @JvmStatic
            fun builder(name: String) = Builder(name)
        }
    }

    /**
     * A running MCP server from [serveMcp]. It stops at the end of its input (stdio), on
     * [close] (calls in flight are cancelled) and with its process; use it in
     * try-with-resources, and [closed] to wait until a client is done.
     */
    class McpToolServer internal constructor(private val native: app.phaseo.agent.McpToolServer) : AutoCloseable {
        /** `http://host:port/path` of a Streamable HTTP server; `null` on stdio. */
        fun url(): String? = native.url

        /** Whether the server has stopped. */
        fun isClosed(): Boolean = native.isClosed

        /** Completes when the server stops (the client closed its input, or [close]). */
        @OptIn(DelicateCoroutinesApi::class)
        fun closed(): CompletableFuture<Void> {
            val done = CompletableFuture<Void>()
            GlobalScope.future { native.wait() }.whenComplete { _, _ -> done.complete(null) }
            return done
        }

        /** Stops the server (calls in flight are cancelled) and returns once it has stopped. */
        override fun close() {
            runBlocking { native.shutdown() }
            native.close()
        }

        override fun toString() = "McpToolServer[url=${url()}, closed=${isClosed()}]"
    }

    /** A client the core implements itself (scripted, gateway, OpenAI-compatible). */
    internal class BuiltinClient(val native: Client) : ModelClient {
        override fun generate(request: Map<String, Any?>): Any? =
            throw UnsupportedOperationException("a built-in client is called by the agent")
    }

    /** A stop condition the core implements itself. */
    internal class BuiltinStop(val native: StopWhen) : StopCondition {
        override fun shouldStop(state: Map<String, Any?>): String? =
            throw UnsupportedOperationException("a built-in stop condition is checked by the agent")
    }

    /** A validator the core implements itself (a compiled JSON Schema). */
    internal class CoreValidator(val native: NativeValidator) : Validator {
        override fun validate(value: Any?): Any? = javaCall { javaValue(native.parse(toJsonElement(value))) }
    }

    companion object {
        /**
         * Turns tracing on with the `OTEL_*` environment's settings: each run records an
         * OpenTelemetry GenAI span tree (`invoke_agent`, `chat`, `execute_tool`), exported
         * over OTLP HTTP/protobuf; a run becomes a child of the current span of the
         * OpenTelemetry Java API when that API is on the classpath. What is left is exported
         * at JVM shutdown.
         */
        @JvmStatic
        fun enableTracing() = enableTracing(TracingOptions())

        /** Turns tracing on with [options] (`definition_invalid` names a bad endpoint or header). */
        @JvmStatic
        fun enableTracing(options: TracingOptions) = javaCall {
            app.phaseo.agent.enableTracing(options.endpoint, options.headers.orEmpty(), options.serviceName, options.captureContent)
        }

        /** Exports every span ended so far (blocks until sent). */
        @JvmStatic
        fun flushTracing() = javaCall { app.phaseo.agent.flushTracing() }

        /** Exports what is left and turns tracing off. */
        @JvmStatic
        fun shutdownTracing() = javaCall { app.phaseo.agent.shutdownTracing() }

        /** Checks [tool]'s definition (`definition_invalid`) and returns it. */
        @JvmStatic
        fun defineTool(tool: Tool): Tool = tool.also { it.native() }

        /**
         * Serves [tools] as an MCP server (docs/behaviour.md §19): any MCP client lists and
         * calls them, each call keeping its validation, approval (asked through the client's
         * elicitation), timeout, retries, progress and budgets. Throws `definition_invalid`
         * for an empty list, a tool without an executor, duplicate ids or an address that
         * cannot be bound. On stdio nothing else may write to standard output.
         */
        @JvmStatic
        fun serveMcp(tools: List<Tool>, options: McpServeOptions): McpToolServer = javaCall {
            val native = tools.map { it.native() }
            val serveOptions = options.native()
            McpToolServer(runBlocking { sdk { app.phaseo.agent.McpToolServer(app.phaseo.agent.serveMcp(native, serveOptions)) } })
        }

        /**
         * Serves [agent] as one tool (docs/behaviour.md §19): its id, one string `input` and
         * the options' `description`; a call runs the agent on [client] and returns its
         * output. Its approvals are asked of the MCP client through elicitation (a declined
         * call is the agent's rejection and the run goes on); a client without elicitation,
         * or a pause for a client tool or human input, gets an error result.
         */
        @JvmStatic
        fun serveMcp(agent: Agent, client: ModelClient, options: McpServeOptions): McpToolServer = javaCall {
            val native = agent.nativeAgent()
            val serveOptions = options.native(client)
            McpToolServer(runBlocking { sdk { app.phaseo.agent.McpToolServer(app.phaseo.agent.serveMcpAgent(native, serveOptions)) } })
        }

        /** Creates an agent (`definition_invalid` when the definition is wrong). */
        @JvmStatic
        fun createAgent(definition: AgentDefinition): Agent = Agent(definition.native())

        /** A validator of the JSON Schema [schema], compiled by the core (messages `<pointer>: <reason>`). */
        @JvmStatic
        fun jsonSchema(schema: Map<String, Any?>): Validator = CoreValidator(javaCall { jsonSchemaValidator(toJsonElement(schema)) })

        /** The built-in scripted client: [responses] in order, each `{text?, toolCalls?, usage?, finishReason?}` or `{fail: message}`. */
        @JvmStatic
        fun scriptedClient(responses: List<Any?>): ModelClient =
            BuiltinClient(javaCall { app.phaseo.agent.scriptedClient(responses.map(::toJsonElement)) })

        /** The built-in offline test client: calls each tool once (inputs from the schemas' `examples`), then summarizes. */
        @JvmStatic
        fun testClient(): ModelClient = BuiltinClient(app.phaseo.agent.testClient())

        /** The Phaseo gateway client from `PHASEO_API_KEY` (and `PHASEO_BASE_URL`). */
        @JvmStatic
        fun createGatewayAgentClient(): ModelClient = createGatewayAgentClient(GatewayOptions(null, null, null, null, null))

        /** The Phaseo gateway client; `requestOptions` are body defaults (snake_case keys). */
        @JvmStatic
        fun createGatewayAgentClient(options: GatewayOptions): ModelClient = BuiltinClient(
            javaCall {
                app.phaseo.agent.createGatewayAgentClient(
                    apiKey = options.apiKey, baseUrl = options.baseUrl, model = options.model, preset = options.preset,
                    timeoutMs = options.timeout?.toMillis(), headers = options.headers.orEmpty(),
                    requestOptions = options.requestOptions?.let { toJsonElement(it).jsonObject },
                )
            },
        )

        /** An OpenAI-compatible chat-completions client (`OPENAI_API_KEY`, `OPENAI_BASE_URL` when `null`). */
        @JvmStatic
        fun openAICompatibleClient(apiKey: String?, baseUrl: String?, model: String?): ModelClient =
            BuiltinClient(javaCall { app.phaseo.agent.openAICompatibleClient(apiKey, baseUrl, model) })

        /** Stop after at least [n] steps (`step_count:<n>`). */
        @JvmStatic
        fun stepCountIs(n: Int): StopCondition = BuiltinStop(app.phaseo.agent.stepCountIs(n))

        /** Stop when total tokens reach [n]. */
        @JvmStatic
        fun maxTokensUsed(n: Int): StopCondition = BuiltinStop(app.phaseo.agent.maxTokensUsed(n.toLong()))

        /** Stop when the cumulative cost reaches [cost]. */
        @JvmStatic
        fun maxCost(cost: Double): StopCondition = BuiltinStop(app.phaseo.agent.maxCost(cost))

        /** Stop when the run is [duration] old. */
        @JvmStatic
        fun maxDuration(duration: Duration): StopCondition = BuiltinStop(app.phaseo.agent.maxDuration(duration.toMillis()))

        /** Stop once any step called the tool [name]. */
        @JvmStatic
        fun hasToolCall(name: String): StopCondition = BuiltinStop(app.phaseo.agent.hasToolCall(name))

        /** Stop once any step finished with [reason]. */
        @JvmStatic
        fun finishReasonIs(reason: String): StopCondition = BuiltinStop(app.phaseo.agent.finishReasonIs(reason))

        /** Runs kept in the SQLite file at [path] (created and migrated when needed). */
        @JvmStatic
        fun sqliteStore(path: String): RunStore = javaCall { app.phaseo.agent.sqliteStore(path) }

        /** Runs kept in PostgreSQL at [url] (`postgres://user:pass@host:port/db`). */
        @JvmStatic
        fun postgresStore(url: String): RunStore = javaCall { runBlocking { app.phaseo.agent.postgresStore(url) } }

        /** Runs kept in this process's memory. */
        @JvmStatic
        fun inMemoryStore(): RunStore = app.phaseo.agent.inMemoryStore()

        /** A store over the application's own [StateAccessor] (no claims, no listing). */
        @JvmStatic
        fun accessorStore(accessor: StateAccessor): RunStore = app.phaseo.agent.accessorStore(
            object : app.phaseo.agent.StateAccessor {
                override suspend fun load(runId: String) = JvmThreads.call { accessor.load(runId) }?.native
                override suspend fun save(state: NativeRunResult) = JvmThreads.call { accessor.save(RunResult(state)) }
            },
        )

        /** The stored runs of [statuses] (empty: any), oldest update first: `listOf("waiting_for_human")` is the approval inbox. */
        @JvmStatic
        fun listRuns(store: RunStore, statuses: List<String>): List<RunResult> = javaCall {
            runBlocking {
                val all = ArrayList<RunResult>()
                var cursor: String? = null
                do {
                    val page = store.listRuns(statuses, cursor = cursor)
                    page.runs.mapTo(all) { RunResult(it.state) }
                    cursor = page.nextCursor
                } while (cursor != null)
                all
            }
        }

        /** The stored run [runId], or `null`. */
        @JvmStatic
        fun loadRun(store: RunStore, runId: String): RunResult? = javaCall { runBlocking { store.loadRun(runId)?.state?.let(::RunResult) } }

        /**
         * Deletes the stored runs of [statuses] (e.g. `completed`, `cancelled`) last updated
         * more than [olderThan] ago; how many. An unknown status is refused, naming it.
         */
        @JvmStatic
        fun pruneRuns(store: RunStore, statuses: List<String>, olderThan: java.time.Duration): Long = javaCall {
            runBlocking { store.pruneOlderThan(statuses, olderThan.toMillis()) }
        }

        /** Deletes the stored run [runId]; whether it was stored. */
        @JvmStatic
        fun deleteRun(store: RunStore, runId: String): Boolean = javaCall { runBlocking { store.deleteRun(runId) } }
    }
}

// Conversions of the Java API's values to the Kotlin layer's.

internal fun onErrorPolicy(text: String): OnError = when (text.replace('_', '-')) {
    "fail-run" -> OnError.FAIL_RUN
    "return-to-model" -> OnError.RETURN_TO_MODEL
    else -> throw KotlinAgentException("definition_invalid", "Invalid onError '$text': expected \"fail-run\" or \"return-to-model\"")
}

private fun mcpApproval(text: String): McpApprovalPolicy = when (text) {
    "never" -> McpApprovalPolicy.Never
    "always" -> McpApprovalPolicy.Always
    "destructive" -> McpApprovalPolicy.Destructive
    else -> throw KotlinAgentException("definition_invalid", "Invalid MCP requireApproval '$text': expected never, always or destructive")
}

private fun nativeValidator(v: AgentSdk.Validator): NativeValidator =
    if (v is AgentSdk.CoreValidator) v.native else validator { value -> toJsonElement(v.validate(javaValue(value))) }

private fun nativeStop(s: AgentSdk.StopCondition): StopWhen =
    if (s is AgentSdk.BuiltinStop) s.native else stopWhenReason { state -> JvmThreads.call { s.shouldStop(javaMap(state)) } }

internal fun nativeClient(c: AgentSdk.ModelClient): Client =
    if (c is AgentSdk.BuiltinClient) {
        c.native
    } else {
        modelClient { request -> toJsonElement(JvmThreads.call { c.generate(javaMap(request)) }) }
    }

private fun overrides(
    model: String?,
    preset: String?,
    maxSteps: Int?,
    retry: AgentSdk.ModelRetryConfig?,
    execution: AgentSdk.ToolExecutionConfig?,
    more: AgentSdk.Overrides?,
): RunOverrides? {
    val resolved = model ?: presetModel(preset)
    if (resolved == null && maxSteps == null && retry == null && execution == null && more == null) return null
    return RunOverrides(
        model = resolved,
        maxSteps = maxSteps?.toLong(),
        stopWhen = more?.stopWhen?.map(::nativeStop),
        modelRetry = retry?.native(),
        toolExecution = execution?.native(),
        temperature = more?.temperature,
        maxOutputTokens = more?.maxOutputTokens?.toLong(),
        topP = more?.topP,
        toolChoice = more?.toolChoice?.let(::toolChoiceOf),
        parallelToolCalls = more?.parallelToolCalls,
        activeTools = more?.activeTools,
    )
}

/** A Java tool choice: `"auto"`, `"required"`, `"none"` or `Map.of("toolId", id)`. */
private fun toolChoiceOf(value: Any): ToolChoice = when {
    value == "auto" -> ToolChoice.Auto
    value == "required" -> ToolChoice.Required
    value == "none" -> ToolChoice.None
    value is Map<*, *> && value.size == 1 && value["toolId"] is String -> ToolChoice.Tool(value["toolId"] as String)
    else -> throw KotlinAgentException(
        "definition_invalid",
        "Invalid toolChoice $value: expected \"auto\", \"required\", \"none\" or {toolId: <id>}",
    )
}

private fun listener(fn: Consumer<AgentSdk.AgentEvent>?): ((JsonObject) -> Unit)? =
    fn?.let { { event -> it.accept(AgentSdk.AgentEvent.of(javaMap(event))) } }

/** A Java per-turn function as the Kotlin layer's (it replaces the fixed value; a `null` answer is unset). */
private fun <T : Any> perTurn(fn: Function<AgentSdk.TurnContext, T?>?, encode: (T) -> JsonElement): (suspend (JsonObject) -> JsonElement?)? =
    fn?.let { { turn -> JvmThreads.call { fn.apply(turnContext(turn)) }?.let(encode) ?: JsonNull } }

/** The core's turn `{numberOfTurns, stepIndex, messages, context}`, with the last call the model made. */
@Suppress("UNCHECKED_CAST")
private fun turnContext(turn: JsonObject): AgentSdk.TurnContext {
    val map = javaMap(turn)
    val messages = (map["messages"] as? List<Map<String, Any?>>).orEmpty()
    val last = messages.lastOrNull { (it["toolCalls"] as? List<*>).orEmpty().isNotEmpty() }
        ?.let { (it["toolCalls"] as List<Map<String, Any?>>).last() }
        ?.let { AgentSdk.ToolCall(it["id"] as String, it["name"] as String, it["input"] ?: it["arguments"]) }
    return AgentSdk.TurnContext(
        (map["numberOfTurns"] as Number).toInt(), (map["stepIndex"] as Number).toInt(), messages, map["context"], last,
    )
}

private fun decisions(list: List<AgentSdk.ToolDecision>?): List<Decision> = list.orEmpty().map {
    decision(it.toolCallId, it.reason, it.editedInput?.let { input -> runValue("edited input for ${it.toolCallId}", input) })
}

private fun outputs(list: List<AgentSdk.ToolOutput>?): Map<String, JsonElement> =
    list.orEmpty().associate { it.toolCallId to runValue("tool output for ${it.toolCallId}", it.output) }

private fun responses(list: List<AgentSdk.ToolOutput>?): Map<String, JsonElement> =
    list.orEmpty().associate { it.toolCallId to runValue("response for ${it.toolCallId}", it.output) }

/**
 * A value a caller hands to a run as JSON; one with no JSON form is refused before the run
 * starts, as the core refuses one beyond its limits (`state_invalid`, `Invalid run <what>:`).
 */
private fun runValue(what: String, value: Any?): JsonElement =
    try {
        toJsonElement(value)
    } catch (e: NotJsonValueException) {
        throw KotlinAgentException("state_invalid", "Invalid run $what: ${e.message}")
    }

/** An earlier conversation: a list of messages. */
private fun runMessages(messages: List<Map<String, Any?>>): JsonArray = runValue("messages", messages) as JsonArray

/**
 * A tool handing a value to the SDK while it runs: the core's refusal (an integer past 64
 * bits) is the same error as a value with no JSON form, not the binding's own exception type.
 */
private inline fun <T> hostArgument(block: () -> T): T =
    try {
        block()
    } catch (e: ToolException) {
        throw IllegalArgumentException(
            when (e) {
                is ToolException.Failed -> e.reason
                is ToolException.InvalidValue -> e.reason
            },
        )
    }

/**
 * A value a tool hands to the SDK while it runs (progress, a new context): one with no JSON
 * form is an error thrown in the tool, with the same message as everywhere.
 */
private fun hostValue(value: Any?): JsonElement =
    try {
        toJsonElement(value)
    } catch (e: NotJsonValueException) {
        throw IllegalArgumentException(e.message, e)
    }
