package app.phaseo.agent

import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Request controls (docs/behaviour.md §12): toolChoice, parallelToolCalls, activeTools, strict, inputExamples. */
class RequestControlsTest {
    private val strictParams = json("""{"type":"object","additionalProperties":false,"properties":{"city":{"type":"string"}},"required":["city"]}""")

    private fun echo(id: String, strict: Boolean = false, examples: List<kotlinx.serialization.json.JsonObject>? = null) =
        defineTool(id, parameters = if (strict) strictParams else null, strict = strict, inputExamples = examples) { input, _ -> input }

    @Test
    fun `the controls reach Kotlin model clients`() = runBlocking {
        val agent = createAgent(
            "a",
            tools = listOf(echo("weather", strict = true, examples = listOf(json("""{"city":"Paris"}""").jsonObject)), echo("plain")),
            toolChoice = ToolChoice.Tool("weather"),
            parallelToolCalls = false,
        )
        val model = RecordingModel(listOf(textResponse("ok")))
        agent.run("go", model.client)
        val request = model.requests[0]
        assertEquals(json("""{"toolId":"weather"}"""), request["toolChoice"])
        assertEquals(JsonPrimitive(false), request["parallelToolCalls"])
        val tools = request["tools"]!!.jsonArray
        assertEquals(JsonPrimitive(true), tools[0].jsonObject["strict"])
        assertEquals(json("""[{"city":"Paris"}]"""), tools[0].jsonObject["inputExamples"])
        assertFalse(tools[1].jsonObject.containsKey("strict"))
    }

    @Test
    fun `per turn, per run and unset values`() = runBlocking {
        val agent = createAgent(
            "a",
            tools = listOf(echo("a1"), echo("a2")),
            toolChoiceFn = { turn -> if (turn["stepIndex"]!!.jsonPrimitive.content == "0") JsonPrimitive("required") else null },
        )
        var model = RecordingModel(listOf(callsResponse(call("c1", "a1")), textResponse("ok")))
        agent.run("go", model.client)
        assertEquals(listOf(JsonPrimitive("required"), JsonNull), model.requests.map { it["toolChoice"] })
        assertEquals(JsonNull, model.requests[0]["parallelToolCalls"])

        model = RecordingModel(listOf(textResponse("ok")))
        agent.run("go", model.client, overrides = RunOverrides(toolChoice = ToolChoice.None, parallelToolCalls = true, activeTools = listOf("a2")))
        assertEquals(JsonPrimitive("none"), model.requests[0]["toolChoice"])
        assertEquals(JsonPrimitive(true), model.requests[0]["parallelToolCalls"])
        assertEquals(listOf("a2"), model.requests[0]["tools"]!!.jsonArray.map { it.jsonObject["id"]!!.jsonPrimitive.content })
    }

    @Test
    fun `a call to a tool not offered is unknown_tool and bad controls are refused`() {
        val agent = createAgent("a", tools = listOf(echo("a1"), echo("a2")), activeTools = listOf("a1"))
        val e = assertThrows<AgentException> {
            runBlocking { agent.run("go", RecordingModel(listOf(callsResponse(call("c1", "a2")))).client) }
        }
        assertEquals("unknown_tool", e.code)
        assertEquals("Unknown tool 'a2' (not offered in this turn)", e.message)

        val strict = assertThrows<AgentException> {
            defineTool("w", parameters = json("""{"type":"object","properties":{"a":{}},"required":["a"]}"""), strict = true) { i, _ -> i }
        }
        assertEquals("definition_invalid", strict.code)
        assertTrue(strict.message!!.contains("strict: parameters are not strict-compatible: the object schema at / must set"))
        val active = assertThrows<AgentException> { createAgent("a", tools = listOf(echo("a1")), activeTools = listOf("nope")) }
        assertTrue(active.message!!.contains("names no tool of the agent: 'nope'"))
    }
}
