// The names of the product's Java SDK (`app.phaseo.agent.AgentSdk`), which is what a Kotlin
// user ports from, as aliases and small factories over this SDK's own types. Shapes follow
// this SDK where they differ (values are `JsonElement`s, tools are named-argument calls).
@file:Suppress("unused", "FunctionName")

package app.phaseo.agent

import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject

/** The product's name of what a tool call sees of its run ([ToolContext]). */
typealias RuntimeContext = ToolContext

/** The product's name of a tool call `{id, name, input}` ([ToolCallInfo]). */
typealias ToolCall = ToolCallInfo

/** The product's name of a decision on a pending call ([Decision]): `ToolDecision("c1")`
 * approves, `ToolDecision("c1", "reason")` carries the reason sent with a rejection. */
typealias ToolDecision = Decision

/** The product's name of the request to pause for human review ([ReviewRequest]). */
typealias HumanReviewRequest = ReviewRequest

/** The product's name of the retry settings ([ModelRetry]). */
typealias ModelRetryConfig = ModelRetry

/** The product's `new ToolExecutionConfig(concurrency)`: at most [concurrency] calls of a
 * step run at once. */
fun ToolExecutionConfig(concurrency: Int): ToolExecution = toolExecution(toolConcurrency = concurrency)

/** The product's `new ModelRetryConfig(maxRetries, backoff)` with a `java.time.Duration`. */
fun ModelRetryConfig(maxRetries: Int, backoff: java.time.Duration): ModelRetry =
    ModelRetry(maxRetries.toLong(), backoff.toMillis().toDouble())

/** [ModelRetryConfig] with a `kotlin.time.Duration`. */
fun ModelRetryConfig(maxRetries: Int, backoff: kotlin.time.Duration): ModelRetry =
    ModelRetry(maxRetries.toLong(), backoff.inWholeMilliseconds.toDouble())

/** Stop when the run is [duration] old (`max_duration:<ms>`), as the product's
 * `maxDuration(Duration)`. */
fun maxDuration(duration: java.time.Duration): StopWhen = maxDuration(duration.toMillis())

/** [maxDuration] with a `kotlin.time.Duration`. */
fun maxDuration(duration: kotlin.time.Duration): StopWhen = maxDuration(duration.inWholeMilliseconds)

/** Stop when total tokens reach [n], as the product's `maxTokensUsed(int)`. */
fun maxTokensUsed(n: Int): StopWhen = maxTokensUsed(n.toLong())

/** The run record (the product's `result.run()`): `{id, agentId, status, input, context,
 * messages, result, error, pause, stopReason, usage, createdAt, updatedAt, stepCount, …}`. */
val RunResult.run: JsonObject get() = state["run"]!!.jsonObject

/** What the run recorded of each step's model call (the product's `result.steps()`). */
val RunResult.steps: JsonArray get() = state["steps"]!!.jsonArray

/** The result, as the product's `StreamResult.getResult()` spells it. */
suspend fun RunStream.getResult(): RunResult = result()

/** The model a product `preset` names: `@<preset>`. */
internal fun presetModel(preset: String?): String? = when {
    preset == null -> null
    preset.isBlank() -> throw AgentException("definition_invalid", "Invalid agent definition: preset must be a non-empty string")
    preset.startsWith("@") -> preset
    else -> "@$preset"
}

/** The output validator of `parseOutput` (the product's hook of the final text), then
 * [schema] on what it returns. */
internal fun outputParser(parse: (String) -> JsonElement, schema: Validator?): Validator = validator { value ->
    val text = (value as? JsonPrimitive)?.takeIf { it.isString }?.content
        ?: throw IllegalArgumentException("parseOutput takes the final text")
    val parsed = parse(text)
    schema?.parse(parsed) ?: parsed
}

/**
 * The Phaseo gateway client with the product's options (`AgentSdk.createGatewayAgentClient`;
 * the TypeScript SDK's option names): the transport ([apiKey], [baseUrl], [timeoutMs],
 * [headers]; unset ones from `PHASEO_API_KEY` / `PHASEO_BASE_URL`), [model] or [preset] (the
 * model `@<preset>`), and body defaults sent with every request unless the agent or run
 * sets the field: [provider], [reasoning], [temperature], [maxOutputTokens],
 * [parallelToolCalls], [metadata], [user], [responseFormat], [toolChoice] (`"auto"`,
 * `"required"`, `"none"` or an object), and [requestOptions] (any other Responses body
 * field, snake_case keys; the named options win over it).
 */
fun createGatewayAgentClient(
    apiKey: String? = null,
    baseUrl: String? = null,
    model: String? = null,
    preset: String? = null,
    timeoutMs: Long? = null,
    headers: Map<String, String> = emptyMap(),
    provider: JsonElement? = null,
    reasoning: JsonElement? = null,
    temperature: Double? = null,
    maxOutputTokens: Long? = null,
    parallelToolCalls: Boolean? = null,
    metadata: Map<String, String>? = null,
    user: String? = null,
    responseFormat: JsonElement? = null,
    toolChoice: JsonElement? = null,
    requestOptions: JsonObject? = null,
): Client {
    if (preset != null && preset.isBlank()) {
        throw AgentException("definition_invalid", "createGatewayAgentClient: preset must be a non-empty string")
    }
    val named = listOf(
        "provider" to provider,
        "reasoning" to reasoning,
        "temperature" to temperature?.let(::JsonPrimitive),
        "max_output_tokens" to maxOutputTokens?.let(::JsonPrimitive),
        "parallel_tool_calls" to parallelToolCalls?.let(::JsonPrimitive),
        "metadata" to metadata?.let(::toJsonElement),
        "user" to user?.let(::JsonPrimitive),
        "response_format" to responseFormat,
        "tool_choice" to toolChoice,
    ).mapNotNull { (key, value) -> value?.let { key to it } }
    val body = (requestOptions ?: emptyMap()) + named
    val options = HttpClientOptions(
        apiKey = apiKey,
        baseUrl = baseUrl,
        model = model,
        timeoutMs = timeoutMs?.toDouble(),
        headers = headers,
        preset = preset,
        bodyDefaultsJson = if (body.isEmpty()) null else JsonObject(body).toString(),
    )
    return sdk { Client.Http(HttpModelClient.gateway(options)) }
}

/** [createGatewayAgentClient] with `toolChoice` as text (`"auto"`, `"required"`, `"none"`). */
fun createGatewayAgentClient(
    toolChoice: String,
    apiKey: String? = null,
    baseUrl: String? = null,
    model: String? = null,
    preset: String? = null,
    requestOptions: JsonObject? = null,
): Client = createGatewayAgentClient(
    apiKey = apiKey, baseUrl = baseUrl, model = model, preset = preset,
    toolChoice = JsonPrimitive(toolChoice), requestOptions = requestOptions,
)

/** Publishes a progress value given as a Kotlin value (map, list, string, number, boolean,
 * null; see [toJsonElement]), as the product's `emitProgress` takes any object. */
fun ToolContext.emitProgress(value: Any?) = emitProgress(toJsonElement(value))

/** Replaces the application context with a Kotlin value (see [toJsonElement]). */
fun ToolContext.setContext(value: Any?) = setContext(toJsonElement(value))
