package app.phaseo.agent

import java.util.Collections
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Deferred tools and the built-in `tool_search` (docs/behaviour.md §17), through the Kotlin API. */
class ToolSearchTest {
    /** The tool ids request [i] offered, in offered order (the order is part of the contract). */
    private fun RecordingModel.offered(i: Int): List<String> =
        requests[i]["tools"]!!.jsonArray.map { it.jsonObject["id"]!!.jsonPrimitive.content }

    private fun tools(ran: MutableList<String>) = listOf(
        defineTool("gate", "Needs approval", requireApproval = true) { _, _ -> JsonPrimitive("opened") },
        defineTool("get_weather", "Current weather of a city", deferLoading = true) { _, _ ->
            ran.add("get_weather")
            JsonPrimitive("sunny")
        },
        defineTool("stock_price", "Price of a share", deferLoading = true) { _, _ ->
            ran.add("stock_price")
            JsonPrimitive(42)
        },
    )

    @Test
    fun `a deferred tool is offered once tool_search finds it, and a continue keeps offering it`() = runBlocking {
        val ran = Collections.synchronizedList(mutableListOf<String>())
        val agent = createAgent("assistant", tools = tools(ran))
        val first = RecordingModel(
            listOf(callsResponse(call("c1", "tool_search", """{"query":"weather"}"""), call("c2", "gate"))),
        )
        val paused = agent.run("weather?", first.client)
        assertEquals(RunStatus.WAITING_FOR_HUMAN, paused.status())
        // Not offered at first; tool_search comes after the always-loaded tools.
        assertEquals(listOf("gate", "tool_search"), first.offered(0))

        val state = parseJson(paused.toJson()).jsonObject
        assertEquals(JsonArray(listOf(JsonPrimitive("get_weather"))), state["run"]!!.jsonObject["loadedTools"])

        // Continued from the state's JSON: the loaded tool is still offered, at the end.
        val second = RecordingModel(listOf(callsResponse(call("c3", "get_weather")), textResponse("Sunny.")))
        val done = agent.continueRun(parseState(paused.toJson()), second.client, approvals = listOf(decision("c2")))
        assertEquals(RunStatus.COMPLETED, done.status())
        assertEquals(listOf("gate", "tool_search", "get_weather"), second.offered(0))
        assertEquals(listOf("get_weather"), ran)
        assertEquals("sunny", second.toolMessages(1).single().content)
        val found = done.messages.map { it.jsonObject }.first { it.str("toolCallId") == "c1" }
        assertEquals(json("""{"tools":[{"id":"get_weather","description":"Current weather of a city"}]}"""), json(found.content))
    }

    @Test
    fun `a deferred tool that was never found is an unknown tool`() {
        val ran = Collections.synchronizedList(mutableListOf<String>())
        val agent = createAgent("assistant", tools = tools(ran))
        val model = RecordingModel(listOf(callsResponse(call("c1", "stock_price")), textResponse("ok")))
        val error = assertThrows<AgentException> { runBlocking { agent.run("price?", model.client) } }
        assertEquals("unknown_tool", error.code)
        assertTrue(error.message!!.contains("Unknown tool 'stock_price' (not offered in this turn)"), error.message)
        assertEquals(emptyList<String>(), ran)
    }
}
