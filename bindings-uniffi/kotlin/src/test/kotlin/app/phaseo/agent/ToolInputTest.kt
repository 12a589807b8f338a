package app.phaseo.agent

import java.util.Collections
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** Tool input as the model writes it (docs/behaviour.md §16): `tool.input_started` and
 * `tool.input_delta` in a streamed run's Flow, from a Kotlin client and the scripted one. */
class ToolInputTest {
    private val pieces = listOf("{\"a\":", "2,\"b\"", ":3}")
    private val add = defineTool("add") { input, _ ->
        val o = input.jsonObject
        JsonPrimitive(o["a"]!!.jsonPrimitive.long + o["b"]!!.jsonPrimitive.long)
    }

    private fun deltas(events: List<JsonObject>, id: String) = events
        .filter { it.type == "tool.input_delta" && it["toolCallId"]!!.jsonPrimitive.content == id }
        .map { it["delta"]!!.jsonPrimitive.content }

    @Test
    fun `a client's tool input arrives live before model completed, and a failed attempt's input stays`() = runBlocking {
        val firstSeen = CompletableDeferred<Unit>()
        var attempt = 0
        val client = modelClient(stream = {
            flow {
                attempt += 1
                when (attempt) {
                    1 -> {
                        emit(ModelStreamEvent.ToolInputStart("lost", "add"))
                        emit(ModelStreamEvent.ToolInputDelta("lost", "{\"a\":"))
                        throw IllegalStateException("connection reset")
                    }
                    2 -> {
                        emit(ModelStreamEvent.ToolInputStart("c2", "add"))
                        emit(ModelStreamEvent.ToolInputDelta("c2", pieces[0]))
                        // The listener sees the first fragment before the client writes on.
                        withTimeout(60_000) { firstSeen.await() }
                        for (p in pieces.drop(1)) emit(ModelStreamEvent.ToolInputDelta("c2", p))
                        emit(ModelStreamEvent.Response(callsResponse(call("c2", "add", pieces.joinToString("")))))
                    }
                    else -> emit(ModelStreamEvent.Response(textResponse("5")))
                }
            }
        })
        val events = Collections.synchronizedList(mutableListOf<JsonObject>())
        var completedBeforeInput = false
        val stream = createAgent("calc", tools = listOf(add), modelRetry = ModelRetry(1, 1.0)).stream("2+3?", client, onEvent = { e ->
            if (e.type == "tool.input_delta" && e["toolCallId"]!!.jsonPrimitive.content == "c2" && !firstSeen.isCompleted) {
                completedBeforeInput = events.any { it.type == "model.completed" }
                firstSeen.complete(Unit)
            }
            events += e
        })
        val flowEvents = stream.events.toList()
        assertEquals(JsonPrimitive("5"), stream.result().output)
        assertTrue(firstSeen.isCompleted)
        assertFalse(completedBeforeInput)
        assertEquals(listOf("{\"a\":"), deltas(flowEvents, "lost"))
        assertEquals(pieces, deltas(flowEvents, "c2"))
        val types = flowEvents.map { it.type }
        assertTrue(types.lastIndexOf("tool.input_delta") < types.indexOf("model.completed"))
        assertEquals(listOf("c2"), flowEvents.filter { it.type == "tool.started" }.map { it["toolCallId"]!!.jsonPrimitive.content })
        val started = flowEvents.first { it.type == "tool.input_started" && it["toolCallId"]!!.jsonPrimitive.content == "c2" }
        assertEquals("add", started["toolName"]!!.jsonPrimitive.content)
        assertEquals(0, started["stepIndex"]!!.jsonPrimitive.long.toInt())
        // The tool events flow has them too.
        assertEquals("tool.input_started", stream.toolEvents.toList().first().type)
    }

    @Test
    fun `the scripted client streams input in pieces and a plain run reports none`() = runBlocking {
        val args = pieces.joinToString("")
        val agent = createAgent("calc", tools = listOf(add))
        val stream = agent.stream("2+3?", scriptedClient(callsResponse(call("c1", "add", args)), textResponse("5")))
        val events = stream.events.toList()
        assertTrue(deltas(events, "c1").size > 1)
        assertEquals(args, deltas(events, "c1").joinToString(""))
        val seen = Collections.synchronizedList(mutableListOf<String>())
        agent.run("2+3?", scriptedClient(callsResponse(call("c1", "add", args)), textResponse("5")), onEvent = { seen += it.type!! })
        assertTrue("tool.completed" in seen)
        assertFalse(seen.any { it.startsWith("tool.input_") })
    }
}
