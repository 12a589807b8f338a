package app.phaseo.agent

import java.util.Collections
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.put
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Edited approvals and responses (docs/behaviour.md §14); budgets, retries, attempt and
 * idempotency key (docs/behaviour.md §15), through the Kotlin API. */
class DecisionsAndLimitsTest {
    private val amountSchema =
        json("""{"type":"object","properties":{"amount":{"type":"integer","maximum":100}},"required":["amount"]}""")

    /** A `pay` tool needing approval that records the inputs it ran with. */
    private fun payTool(ran: MutableList<JsonElement>) = defineTool(
        "pay", "Pays an amount", amountSchema, requireApproval = true,
    ) { input, _ ->
        ran.add(input)
        buildJsonObject { put("paid", input.jsonObject["amount"]!!) }
    }

    private val payCall = callsResponse(call("c1", "pay", """{"amount":90}"""))

    private fun events(into: MutableList<JsonObject>): (JsonObject) -> Unit = { into.add(it) }

    @Test
    fun `an approval with an edited input runs the tool with it and the history shows it`() = runBlocking {
        val ran = Collections.synchronizedList(mutableListOf<JsonElement>())
        val agent = createAgent("payer", tools = listOf(payTool(ran)))
        val model = RecordingModel(listOf(payCall, textResponse("Paid.")))
        val paused = agent.run("pay 90", model.client)
        assertEquals(RunStatus.WAITING_FOR_HUMAN, paused.status())

        val seen = mutableListOf<JsonObject>()
        val done = agent.continueRun(
            parseState(paused.toJson()), model.client,
            approvals = listOf(decision("c1", editedInput = json("""{"amount":40}"""))),
            onEvent = events(seen),
        )
        assertEquals(RunStatus.COMPLETED, done.status())
        assertEquals(listOf(json("""{"amount":40}""")), ran)
        val started = seen.single { it.type == "tool.started" }
        assertEquals(JsonPrimitive(true), started["inputEdited"])
        // What the model reads next: its call carries the edited arguments, and the result.
        val assistant = model.requests[1]["messages"]!!.jsonArray.last { it.jsonObject["toolCalls"] != null }.jsonObject
        val arguments = assistant["toolCalls"]!!.jsonArray.single().jsonObject["input"]!!
        assertEquals(json("""{"amount":40}"""), argumentsJson(arguments))
        assertEquals("""{"paid":40}""", model.toolMessages(1).single().content)
        // The step result records both inputs.
        val result = done.state["stepResults"]!!.jsonArray.flatMap { it.jsonObject["toolResults"]!!.jsonArray }
            .map { it.jsonObject }.single { it.containsKey("originalInput") }
        assertEquals(json("""{"amount":40}"""), result["input"])
        assertEquals(json("""{"amount":90}"""), result["originalInput"])
    }

    @Test
    fun `an invalid edited input is refused and the paused state stays usable`() = runBlocking {
        val ran = Collections.synchronizedList(mutableListOf<JsonElement>())
        val agent = createAgent("payer", tools = listOf(payTool(ran)))
        val script = listOf(payCall, textResponse("Paid."))
        val paused = agent.run("pay 90", scriptedClient(script))
        val refused = assertThrows<AgentException> {
            runBlocking {
                agent.continueRun(
                    paused, scriptedClient(script, used = 1),
                    approvals = listOf(decision("c1", editedInput = json("""{"amount":500}"""))),
                )
            }
        }
        assertEquals("continue_invalid", refused.code)
        assertTrue(refused.message!!.startsWith("Edited input for tool call c1 is invalid: "), refused.message)
        assertEquals(emptyList<JsonElement>(), ran)

        val done = agent.continueRun(paused, scriptedClient(script, used = 1), approvals = listOf(decision("c1")))
        assertEquals(RunStatus.COMPLETED, done.status())
        assertEquals(listOf(json("""{"amount":90}""")), ran)
    }

    @Test
    fun `a response answers in the tool's place and the tool never runs`() = runBlocking {
        val ran = Collections.synchronizedList(mutableListOf<JsonElement>())
        val agent = createAgent("payer", tools = listOf(payTool(ran)))
        val model = RecordingModel(listOf(payCall, textResponse("Declined.")))
        val paused = agent.run("pay 90", model.client)
        val seen = mutableListOf<JsonObject>()
        val done = agent.continueRun(
            paused, model.client,
            responses = mapOf("c1" to json("""{"paid":0,"note":"paid by hand"}""")),
            onEvent = events(seen),
        )
        assertEquals(RunStatus.COMPLETED, done.status())
        assertEquals(emptyList<JsonElement>(), ran)
        val toolEvents = seen.filter { it.type!!.startsWith("tool.") }
        assertEquals(listOf("tool.completed"), toolEvents.map { it.type })
        assertEquals(JsonPrimitive(true), toolEvents.single()["respondedByHuman"])
        val message = model.toolMessages(1).single()
        assertEquals(json("""{"paid":0,"note":"paid by hand"}"""), json(message.content))
        assertEquals(JsonPrimitive(false), message["isError"] ?: JsonPrimitive(false))
    }

    @Test
    fun `a tool's maxCalls refuses the calls beyond it and the run goes on`() = runBlocking {
        val lookup = defineTool("lookup", maxCalls = 1) { _, _ -> JsonPrimitive("found") }
        val agent = createAgent("a", tools = listOf(lookup))
        val model = RecordingModel(
            listOf(callsResponse(call("c1", "lookup"), call("c2", "lookup")), textResponse("Done.")),
        )
        val seen = mutableListOf<JsonObject>()
        val done = agent.run("look twice", model.client, onEvent = events(seen))
        assertEquals(RunStatus.COMPLETED, done.status())
        val messages = model.toolMessages(1)
        assertEquals("found", messages[0].content)
        assertEquals("""{"error":"Tool lookup may be called at most 1 times in a run"}""", messages[1].content)
        assertEquals(JsonPrimitive(true), messages[1]["isError"])
        val c2 = seen.filter { it["toolCallId"] == JsonPrimitive("c2") }.map { it.type }
        assertEquals(listOf("tool.failed"), c2)
    }

    @Test
    fun `maxCalls 0 and maxToolCalls 0 are definition errors`() {
        val tool = assertThrows<AgentException> { defineTool("t", maxCalls = 0) { _, _ -> JsonPrimitive(1) } }
        assertEquals("definition_invalid", tool.code)
        assertTrue(tool.message!!.contains("maxCalls must be a whole number of at least 1, got 0"), tool.message)
        val retry = assertThrows<AgentException> { defineTool("t", retry = toolRetry(0)) { _, _ -> JsonPrimitive(1) } }
        assertTrue(retry.message!!.contains("retry.maxAttempts must be a whole number of at least 1, got 0"), retry.message)
        val agent = assertThrows<AgentException> { createAgent("a", toolExecution = toolExecution(maxToolCalls = 0)) }
        assertEquals("definition_invalid", agent.code)
        assertTrue(agent.message!!.contains("toolExecution.maxToolCalls must be a whole number of at least 1, got 0"), agent.message)
    }

    @Test
    fun `a retried tool sees attempts 1, 2, 3 with one idempotency key and tool retrying events`() = runBlocking {
        val attempts = Collections.synchronizedList(mutableListOf<Int>())
        val keys = Collections.synchronizedList(mutableListOf<String>())
        var runId = ""
        val flaky = defineTool("flaky", retry = ToolRetry(maxAttempts = 3, backoffMs = 1)) { _, rt ->
            attempts.add(rt.attempt)
            keys.add(rt.idempotencyKey)
            runId = rt.runId
            if (rt.attempt < 3) toolError("busy ${rt.attempt}")
            JsonPrimitive(rt.attempt)
        }
        val agent = createAgent("a", tools = listOf(flaky))
        val seen = mutableListOf<JsonObject>()
        val script = listOf(callsResponse(call("c1", "flaky")), textResponse("ok"))
        val done = agent.run("go", scriptedClient(script), onEvent = events(seen))
        assertEquals(RunStatus.COMPLETED, done.status())
        assertEquals(listOf(1, 2, 3), attempts)
        assertEquals(listOf("$runId:c1", "$runId:c1", "$runId:c1"), keys)
        val toolEvents = seen.filter { it.type!!.startsWith("tool.") }
        assertEquals(listOf("tool.started", "tool.retrying", "tool.retrying", "tool.completed"), toolEvents.map { it.type })
        val retrying = toolEvents.filter { it.type == "tool.retrying" }
        assertEquals(listOf(2, 3), retrying.map { it["attempt"]!!.jsonPrimitive.int })
        assertEquals(listOf("busy 1", "busy 2"), retrying.map { it["error"]!!.jsonPrimitive.content })
        assertEquals("flaky", retrying.first()["toolName"]!!.jsonPrimitive.content)
        assertEquals("c1", retrying.first()["toolCallId"]!!.jsonPrimitive.content)
    }

    @Test
    fun `a run-level maxToolCalls override bounds every tool of the run`() = runBlocking {
        val ping = defineTool("ping") { _, _ -> JsonPrimitive("pong") }
        val agent = createAgent("a", tools = listOf(ping), toolExecution = toolExecution(maxToolCalls = 5))
        val model = RecordingModel(
            listOf(callsResponse(call("c1", "ping"), call("c2", "ping"), call("c3", "ping")), textResponse("Done.")),
        )
        val done = agent.run(
            "ping thrice", model.client,
            overrides = RunOverrides(toolExecution = toolExecution(maxToolCalls = 2)),
        )
        assertEquals(RunStatus.COMPLETED, done.status())
        val contents = model.toolMessages(1).map { it.content }
        assertEquals("pong", contents[0])
        assertEquals("pong", contents[1])
        assertEquals("""{"error":"A run may make at most 2 tool calls"}""", contents[2])
    }
}

/** A tool call's arguments as JSON: a text holding JSON parsed, or the value itself. */
private fun argumentsJson(value: JsonElement): JsonElement =
    if (value is JsonPrimitive && value.isString) json(value.content) else value
