// Java entry points. Java cannot call suspend functions or implement the generated suspend
// interfaces comfortably, so this object offers the same API with JSON text values,
// blocking tool functions (run on JvmDispatch's threads) and CompletableFuture results.
package app.phaseo.agent

import java.util.concurrent.CompletableFuture
import kotlinx.coroutines.GlobalScope
import kotlinx.coroutines.future.future
import kotlinx.coroutines.runBlocking

/** A tool body for Java: the input as JSON text, the call's runtime; returns JSON text. */
fun interface JsonToolFunction {
    @Throws(Exception::class)
    fun apply(inputJson: String, runtime: ToolContext): String
}

/** The SDK from Java: `PhaseoJava.tool(...)`, `PhaseoJava.agent(...)`, `PhaseoJava.run(...)`. */
object PhaseoJava {
    /**
     * A tool whose body is a blocking Java function (JSON text in and out). [maxCalls] bounds
     * how many of its calls a run admits and [retry] (`new ToolRetry(maxAttempts, backoffMs)`)
     * runs a call again when an attempt throws or times out (docs/behaviour.md §15; the body
     * reads `runtime.getAttempt()` and `runtime.getIdempotencyKey()`). With [deferLoading]
     * the tool is not offered until the built-in `tool_search` finds it (docs/behaviour.md
     * §17).
     */
    @JvmStatic
    @JvmOverloads
    fun tool(
        id: String,
        description: String,
        parametersJson: String?,
        execute: JsonToolFunction,
        timeoutMs: Long? = null,
        requireApproval: Boolean = false,
        maxCalls: Int? = null,
        retry: ToolRetry? = null,
        deferLoading: Boolean = false,
    ): Tool = newTool(
        id,
        description,
        parametersJson?.let(::parseJson),
        timeoutMs = timeoutMs,
        requireApproval = requireApproval,
        maxCalls = maxCalls,
        retry = retry,
        deferLoading = deferLoading,
        // Run on a thread of JvmDispatch; a timeout does not interrupt it (it keeps its
        // thread; the core drops its late result).
        blockingExecute = { input, runtime -> parseJson(execute.apply(input.toString(), runtime)) },
        interruptible = false,
    )

    /** A manual tool (no executor: each call pauses until its output is supplied). */
    @JvmStatic
    fun manualTool(id: String, description: String, parametersJson: String?): Tool =
        defineTool(id, description, parametersJson?.let(::parseJson))

    /** An agent with tools, optional instructions and an optional state secret (signed state). */
    @JvmStatic
    @JvmOverloads
    fun agent(id: String, tools: List<Tool>, instructions: String? = null, stateSecret: String? = null): Agent =
        createAgent(id, tools, instructions = instructions, stateSecret = stateSecret)

    /** An agent whose states are signed with the first of [stateSecrets] and verified with any. */
    @JvmStatic
    fun agent(id: String, tools: List<Tool>, instructions: String?, stateSecrets: List<String>): Agent =
        createAgent(id, tools, instructions = instructions, stateSecrets = stateSecrets)

    /** The built-in scripted client (a JSON array of short-form responses). */
    @JvmStatic
    fun scriptedClient(responsesJson: String): Client = scriptedClient((parseJson(responsesJson) as kotlinx.serialization.json.JsonArray).toList())

    /** Runs and waits (blocks the calling thread). */
    @JvmStatic
    @Throws(AgentException::class)
    fun run(agent: Agent, input: String, client: Client): RunResult = runBlocking { agent.run(input, client) }

    /** Runs; the future completes with the result or an [AgentException]. */
    @OptIn(kotlinx.coroutines.DelicateCoroutinesApi::class)
    @JvmStatic
    fun runAsync(agent: Agent, input: String, client: Client): CompletableFuture<RunResult> =
        GlobalScope.future { agent.run(input, client) }

    /**
     * Continues a paused run, approving [approvals] and supplying [toolOutputsJson] (call id →
     * output JSON text); blocks the calling thread. [editedInputsJson] (call id → input JSON
     * text) approves those calls with the person's corrected arguments, and [responsesJson]
     * (call id → output JSON text) answers approval-gated calls in the tool's place, which
     * then never runs (docs/behaviour.md §14).
     */
    @JvmStatic
    @JvmOverloads
    @Throws(AgentException::class)
    fun continueRun(
        agent: Agent,
        state: RunResult,
        client: Client,
        approvals: List<String> = emptyList(),
        toolOutputsJson: Map<String, String> = emptyMap(),
        editedInputsJson: Map<String, String> = emptyMap(),
        responsesJson: Map<String, String> = emptyMap(),
    ): RunResult = runBlocking {
        agent.continueRun(
            state,
            client,
            approvals = approvals.map { decision(it) } +
                editedInputsJson.map { (id, input) -> decision(id, editedInput = parseJson(input)) },
            toolOutputs = toolOutputsJson.mapValues { parseJson(it.value) },
            responses = responsesJson.mapValues { parseJson(it.value) },
        )
    }

    /** The state as a [RunResult] (`state_invalid` when malformed). */
    @JvmStatic
    @Throws(AgentException::class)
    fun parseState(json: String): RunResult = app.phaseo.agent.parseState(json)
}
