package app.phaseo.agent.mcp

import app.phaseo.agent.RecordingModel
import app.phaseo.agent.RunStatus
import app.phaseo.agent.call
import app.phaseo.agent.callsResponse
import app.phaseo.agent.content
import app.phaseo.agent.createAgent
import app.phaseo.agent.parseJson
import app.phaseo.agent.run
import app.phaseo.agent.textResponse
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

/** An MCP server whose tools are deferred (docs/behaviour.md §17), against our Python test server. */
class McpToolSearchTest {
    private fun RecordingModel.offered(i: Int): List<String> =
        requests[i]["tools"]!!.jsonArray.map { it.jsonObject["id"]!!.jsonPrimitive.content }

    @Test
    fun `a deferred server's tools are offered only once tool_search finds them`() = runBlocking {
        val server = testServer("t", markers(), allowTools = listOf("echo", "add"), deferLoading = true)
        createAgent("searcher", mcpServers = listOf(server)).use { agent ->
            val model = RecordingModel(
                listOf(
                    callsResponse(call("c1", "tool_search", """{"query":"echo"}""")),
                    callsResponse(call("c2", "echo", """{"text":"found me"}""")),
                    textResponse("done"),
                ),
            )
            val result = agent.run("go", model.client)
            assertEquals(RunStatus.COMPLETED, result.status())
            assertEquals(listOf("tool_search"), model.offered(0))
            assertEquals(listOf("tool_search", "echo"), model.offered(1))
            assertEquals("found me", model.toolMessages(2).single().content)
            val state = parseJson(result.toJson()).jsonObject
            assertEquals(JsonArray(listOf(JsonPrimitive("echo"))), state["run"]!!.jsonObject["loadedTools"])
        }
    }
}
