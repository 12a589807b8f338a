// Host model clients that stream (docs/behaviour.md §8): a Flow of deltas, tool input, items and the final response,
// handed to the run as it comes, so a streamed run shows them live.
@file:Suppress("unused")

package app.phaseo.agent

import kotlinx.coroutines.flow.Flow
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive

/** What a streaming client's `stream(request)` emits: deltas and items as they come, then
 * the final [Response] (in the form `generate` returns; the last one is the answer). */
sealed class ModelStreamEvent {
    /** A piece of the answer's text (`response.output_text.delta`). */
    data class TextDelta(val delta: String) : ModelStreamEvent()

    /** A piece of the reasoning (`response.reasoning.delta`). */
    data class ReasoningDelta(val delta: String) : ModelStreamEvent()

    /** The model began writing call [toolCallId]'s arguments to tool [toolName]
     * (`tool.input_started`, docs/behaviour.md §16). */
    data class ToolInputStart(val toolCallId: String, val toolName: String) : ModelStreamEvent()

    /** The next fragment of call [toolCallId]'s arguments text (`tool.input_delta`); a
     * call's fragments, in order, make its final arguments. */
    data class ToolInputDelta(val toolCallId: String, val delta: String) : ModelStreamEvent()

    /** An output item (`response.item`): `{type: "message" | "reasoning" | "tool_call", …}`.
     * A client that streams items owns the step's items (the run adds none of its own). */
    data class Item(val item: JsonObject) : ModelStreamEvent()

    /** The final response (short form `{text?, toolCalls?, usage?, …}` or full form). */
    data class Response(val response: JsonElement) : ModelStreamEvent()

    /** The event as the core reads it. */
    fun toJson(): JsonObject = when (this) {
        is TextDelta -> JsonObject(mapOf("type" to JsonPrimitive("text-delta"), "delta" to JsonPrimitive(delta)))
        is ReasoningDelta -> JsonObject(mapOf("type" to JsonPrimitive("reasoning-delta"), "delta" to JsonPrimitive(delta)))
        is ToolInputStart -> JsonObject(
            mapOf(
                "type" to JsonPrimitive("tool-input-start"),
                "toolCallId" to JsonPrimitive(toolCallId),
                "toolName" to JsonPrimitive(toolName),
            ),
        )
        is ToolInputDelta -> JsonObject(
            mapOf(
                "type" to JsonPrimitive("tool-input-delta"),
                "toolCallId" to JsonPrimitive(toolCallId),
                "delta" to JsonPrimitive(delta),
            ),
        )
        is Item -> JsonObject(mapOf("type" to JsonPrimitive("item"), "item" to item))
        is Response -> JsonObject(mapOf("type" to JsonPrimitive("response"), "response" to response))
    }
}

private class KotlinStreamingModel(
    val generateFn: (suspend (JsonObject) -> JsonElement)?,
    val streamFn: (JsonObject) -> Flow<ModelStreamEvent>,
) : StreamingModelClient {
    override fun canGenerate(): Boolean = generateFn != null

    override suspend fun generate(requestJson: String): String = hostCall {
        val generate = generateFn ?: throw ToolException.Failed("this client has no generate")
        generate(parseJson(requestJson) as JsonObject).toString()
    }

    // A sink that refuses an event (malformed, or the attempt is over) throws: that ends the
    // collection and the attempt fails with the sink's message.
    override suspend fun stream(requestJson: String, sink: ModelStreamSink) = hostCall {
        streamFn(parseJson(requestJson) as JsonObject).collect { event -> sink.send(event.toJson().toString()) }
    }
}

/**
 * A model client written in Kotlin that streams: [stream] returns a cold [Flow] of
 * [ModelStreamEvent]s ending with a [ModelStreamEvent.Response]; a streamed run shows its
 * deltas and items live, in order. [generate] serves runs that are not streamed (without
 * it, the flow is collected for them too). Throwing from either is a model failure
 * (retried per `modelRetry`; deltas already emitted stay in the run's history).
 */
fun modelClient(
    stream: (request: JsonObject) -> Flow<ModelStreamEvent>,
    generate: (suspend (request: JsonObject) -> JsonElement)? = null,
): Client = Client.HostStreaming(KotlinStreamingModel(generate, stream))

/** A [StreamingModelClient] implementation as a [Client]. */
fun StreamingModelClient.asClient(): Client = Client.HostStreaming(this)
