package app.phaseo.agent

import java.util.Collections
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Host model clients whose `stream(request)` is a Flow: live deltas and items, in order. */
class StreamingClientTest {
    private val streamed = setOf("response.output_text.delta", "response.reasoning.delta", "response.item", "model.requested", "model.completed", "model.failed")

    private fun brief(e: kotlinx.serialization.json.JsonObject): String = when {
        e.type == "response.item" -> "item:${e["item"]!!.jsonObject["type"]!!.jsonPrimitive.content}"
        e["delta"] != null -> "${e.type!!.split(".")[1]}:${e["delta"]!!.jsonPrimitive.content}"
        else -> e.type!!
    }

    @Test
    fun `a client Flow shows its deltas and items live, in order`() = runBlocking {
        val firstDeltaSeen = CompletableDeferred<Unit>()
        val requests = Collections.synchronizedList(mutableListOf<kotlinx.serialization.json.JsonObject>())
        val client = modelClient(stream = { request ->
            requests += request
            flow {
                emit(ModelStreamEvent.ReasoningDelta("thinking"))
                emit(ModelStreamEvent.TextDelta("Hel"))
                // The run's listener sees 'Hel' before the client goes on: the deltas are live.
                withTimeout(5_000) { firstDeltaSeen.await() }
                emit(ModelStreamEvent.TextDelta("lo"))
                emit(ModelStreamEvent.Item(json("""{"type":"message","role":"assistant","content":"Hello"}""").jsonObject))
                emit(ModelStreamEvent.Response(json("""{"message":{"content":"Hello","reasoning":"thinking"},"usage":{"inputTokens":3,"outputTokens":2}}""")))
            }
        })
        val events = Collections.synchronizedList(mutableListOf<kotlinx.serialization.json.JsonObject>())
        val stream = createAgent("a").stream("hi", client, onEvent = { e ->
            events += e
            if (e.type == "response.output_text.delta" && e["delta"]!!.jsonPrimitive.content == "Hel") firstDeltaSeen.complete(Unit)
        })
        assertEquals(listOf("Hel", "lo"), stream.textStream.toList())
        val result = stream.result()
        assertEquals(JsonPrimitive("Hello"), result.output)
        assertEquals("Hello", stream.text())
        assertEquals(5, result.usage["totalTokens"]!!.jsonPrimitive.content.toInt())
        assertEquals("true", requests[0]["stream"]!!.jsonPrimitive.content)
        assertEquals(
            listOf("model.requested", "reasoning:thinking", "output_text:Hel", "output_text:lo", "item:message", "model.completed", "item:output"),
            events.filter { it.type in streamed }.map(::brief),
        )
    }

    @Test
    fun `a client failing mid-stream is retried - its deltas stay in the history, the output is the retry`() = runBlocking {
        var attempt = 0
        val client = modelClient(stream = {
            flow {
                attempt += 1
                if (attempt == 1) {
                    emit(ModelStreamEvent.TextDelta("Broken "))
                    throw IllegalStateException("connection reset")
                }
                emit(ModelStreamEvent.TextDelta("Fine "))
                emit(ModelStreamEvent.TextDelta("answer"))
                emit(ModelStreamEvent.Response(textResponse("Fine answer")))
            }
        })
        val stream = createAgent("a", modelRetry = ModelRetry(1, 1.0)).stream("hi", client)
        val events = stream.toList()
        assertEquals(
            listOf("model.requested", "output_text:Broken ", "model.requested", "output_text:Fine ", "output_text:answer", "model.completed", "item:message", "item:output"),
            events.filter { it.type in streamed }.map(::brief),
        )
        assertEquals("Fine answer", stream.text())
        val result = stream.result()
        assertEquals(JsonPrimitive("Fine answer"), result.output)
        assertEquals(listOf("hi", "Fine answer"), result.messages.map { it.jsonObject["content"]!!.jsonPrimitive.content })
        assertEquals(2, result.steps[0].jsonObject["modelAttempts"]!!.jsonPrimitive.content.toInt())
    }

    @Test
    fun `a stream that breaks its contract fails the attempt with a clear error`() = runBlocking {
        val noResponse = modelClient(stream = { flow { emit(ModelStreamEvent.TextDelta("x")) } })
        val error = assertThrows<AgentException> { runBlocking { createAgent("a").stream("hi", noResponse).result() } }
        assertEquals("model_failed", error.code)
        assertTrue(error.message!!.contains("without a final"), error.message)
        val badItem = modelClient(stream = { flow { emit(ModelStreamEvent.Item(json("""{"type":"nope"}""").jsonObject)) } })
        val itemError = assertThrows<AgentException> { runBlocking { createAgent("a").stream("hi", badItem).result() } }
        assertTrue(itemError.message!!.contains("invalid item"), itemError.message)
        assertEquals(RunStatus.FAILED, itemError.result!!.status())
    }

    @Test
    fun `generate serves runs that are not streamed, and a stream-only client is drained for them`() = runBlocking {
        val both = modelClient(
            stream = { flow { emit(ModelStreamEvent.Response(textResponse("from stream"))) } },
            generate = { textResponse("from generate") },
        )
        assertEquals(JsonPrimitive("from generate"), createAgent("a").run("x", both).output)
        assertEquals(JsonPrimitive("from stream"), createAgent("a").stream("x", both).result().output)
        val events = mutableListOf<String>()
        val streamOnly = modelClient(stream = {
            flow {
                emit(ModelStreamEvent.TextDelta("unseen"))
                emit(ModelStreamEvent.Response(textResponse("drained")))
            }
        })
        val result = createAgent("a").run("x", streamOnly, onEvent = { events += it.type!! })
        assertEquals(JsonPrimitive("drained"), result.output)
        assertFalse("response.output_text.delta" in events)
    }

    @Test
    fun `a streamed tool call with a parsed input reaches the tool`() = runBlocking {
        val seen = mutableListOf<String>()
        val lookup = defineTool("lookup") { input, _ -> seen += input.toString(); JsonPrimitive("ok") }
        var turn = 0
        val client = modelClient(stream = {
            flow {
                if (turn++ == 0) {
                    emit(ModelStreamEvent.Response(json("""{"message":{"content":"","toolCalls":[{"id":"c1","name":"lookup","input":{"ticket":7}}]}}""")))
                } else {
                    emit(ModelStreamEvent.Response(textResponse("done")))
                }
            }
        })
        val result = createAgent("a", tools = listOf(lookup)).stream("x", client).result()
        assertEquals(JsonPrimitive("done"), result.output)
        assertEquals(listOf("""{"ticket":7}"""), seen)
        assertEquals(1, result.state["stepResults"]!!.jsonArray[0].jsonObject["toolCalls"]!!.jsonArray.size)
    }

    @Test
    fun `cancelling a streamed run stops collecting the client Flow`() = runBlocking {
        val emitted = java.util.concurrent.atomic.AtomicInteger()
        val closed = CompletableDeferred<Unit>()
        val client = modelClient(stream = {
            flow {
                try {
                    while (true) {
                        emitted.incrementAndGet()
                        emit(ModelStreamEvent.TextDelta("x"))
                        kotlinx.coroutines.delay(5)
                    }
                } finally {
                    closed.complete(Unit)
                }
            }
        })
        val stream = createAgent("a").stream("hi", client)
        assertEquals("x", stream.textStream.first())
        stream.cancel("enough")
        assertEquals(RunStatus.CANCELLED, stream.result().status())
        withTimeout(5_000) { closed.await() }
        val after = emitted.get()
        kotlinx.coroutines.delay(50)
        assertEquals(after, emitted.get())
    }
}
