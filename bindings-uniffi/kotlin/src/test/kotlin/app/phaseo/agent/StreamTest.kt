package app.phaseo.agent

import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

class StreamTest {
    @Test
    fun `a stream is a Flow of events that every collector replays from the start`() = runBlocking {
        val progress = defineTool("deploy", execute = generator { _, _ ->
            emit(json("""{"percent":50}"""))
            delay(10)
            emit(json("""{"percent":100}"""))
            json("""{"deployed":true}""")
        })
        val agent = createAgent("s", tools = listOf(progress))
        val stream = agent.stream("deploy", scriptedClient(callsResponse(call("c1", "deploy")), textResponse("Deployed to production.")))
        val first = async { stream.toList() }
        val second = async { stream.toolEvents.toList() }
        val result = stream.result()
        assertEquals(RunStatus.COMPLETED, result.status())
        val types = first.await().map { it.type }
        assertEquals("run.started", types.first())
        assertEquals("run.completed", types.last())
        // The call's input as the model wrote it (docs/behaviour.md §16), then its run.
        assertEquals(
            listOf("tool.input_started", "tool.input_delta", "tool.started", "tool.preliminary_result", "tool.preliminary_result", "tool.completed"),
            second.await().map { it.type },
        )
        // A late collector still sees the whole history, and the full stream ends with the result.
        val full = stream.fullStream.toList()
        assertEquals(types, full.dropLast(1).map { it.type })
        assertEquals("result", full.last().type)
        assertEquals(result.toJson(), full.last()["result"].toString())
        assertEquals("Deployed to production.", stream.text())
        assertEquals("Deployed to production.", stream.textStream.toList().joinToString(""))
    }

    @Test
    fun `a failed streamed run throws from the flow and from result`() = runBlocking {
        val boom = defineTool("boom") { _, _ -> error("kaput") }
        val stream = createAgent("s", tools = listOf(boom)).stream("go", scriptedClient(callsResponse(call("c1", "boom"))))
        val fromFlow = assertThrows<AgentException> { runBlocking { stream.collect { } } }
        assertEquals("tool_failed", fromFlow.code)
        val fromResult = assertThrows<AgentException> { runBlocking { stream.result() } }
        assertEquals("kaput", fromResult.message)
        assertEquals(RunStatus.FAILED, fromResult.result!!.status())
    }

    @Test
    fun `cancelling a stream ends the run cancelled`() = runBlocking {
        val sleepy = defineTool("sleepy") { _, _ -> delay(10_000); JsonNull }
        val stream = createAgent("s", tools = listOf(sleepy)).stream("wait", scriptedClient(callsResponse(call("c1", "sleepy"))))
        delay(100)
        stream.cancel("user left")
        val result = stream.result()
        assertEquals(RunStatus.CANCELLED, result.status())
        val events = stream.toList().map { it.type }
        assertTrue(events.contains("run.cancelled"), events.toString())
        assertEquals(JsonPrimitive("cancelled"), result.state["run"]!!.jsonObject["status"])
    }
}
