package app.phaseo.agent

import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.flow.toList
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

/** The names of the product's Java SDK, as a Kotlin user porting from it types them. */
class ProductNamesTest {
    @Test
    fun `RuntimeContext, ToolCall, ToolDecision, HumanReviewRequest and the config factories work`() = runBlocking {
        val seen = mutableListOf<String>()
        val risky = defineTool("risky", requireApproval = true) { input, ctx: RuntimeContext ->
            val call: ToolCall = ctx.toolCall
            seen += "${call.id}:${call.name}:${ctx.stepIndex}"
            input
        }
        val agent = createAgent(
            "ported",
            tools = listOf(risky),
            toolExecution = ToolExecutionConfig(4),
            modelRetry = ModelRetryConfig(2, java.time.Duration.ofMillis(5)),
            stopWhen = listOf(maxDuration(java.time.Duration.ofSeconds(30)), maxDuration(30.seconds), maxTokensUsed(100_000)),
            humanReview = { ctx -> if (ctx["isFinal"]?.jsonPrimitive?.content == "true") HumanReviewRequest("check the answer") else null },
        )
        val model = RecordingModel(listOf(callsResponse(call("c1", "risky", """{"a":1}"""), call("c2", "risky")), textResponse("done")))
        val paused = agent.run("go", model.client)
        assertEquals(RunStatus.WAITING_FOR_HUMAN, paused.status())
        assertEquals("waiting_for_human", paused.run["status"]!!.jsonPrimitive.content)
        assertEquals(1, paused.steps.size)
        val reviewed = agent.continueRun(paused, model.client, approvals = listOf(ToolDecision("c1")), rejections = listOf(ToolDecision("c2", "not now")))
        assertEquals(listOf("c1:risky:0"), seen)
        assertEquals("check the answer", reviewed.pause!!["reason"]!!.jsonPrimitive.content)
        val tools = model.toolMessages(1)
        assertEquals(listOf("""{"a":1}""", """{"error":"not now"}"""), tools.map { it.content })
        assertEquals(ModelRetry(2, 5.0), ModelRetryConfig(2, 5.seconds / 1000))
        assertEquals(toolExecution(toolConcurrency = 4), ToolExecutionConfig(4))
    }

    @Test
    fun `preset names the model and parseOutput makes the output`() = runBlocking {
        val model = RecordingModel(listOf(textResponse("a b c")))
        val agent = createAgent("p", preset = "support", parseOutput = { text -> JsonArray(text.split(" ").map(::JsonPrimitive)) })
        val result = agent.run("x", model.client)
        assertEquals("@support", model.requests[0]["model"]!!.jsonPrimitive.content)
        assertEquals(json("""["a","b","c"]"""), result.output)

        val explicit = RecordingModel(listOf(textResponse("ok")))
        createAgent("p", model = "base", preset = "support").run("x", explicit.client)
        assertEquals("base", explicit.requests[0]["model"]!!.jsonPrimitive.content)

        val checked = createAgent(
            "p",
            parseOutput = { text -> JsonPrimitive(text.length) },
            outputSchema = jsonSchemaValidator(json("""{"type":"integer","maximum":3}""")),
        )
        assertEquals(JsonPrimitive(2), checked.run("x", scriptedClient(textResponse("ab"))).output)
        val tooLong = assertThrows<AgentException> { runBlocking { checked.run("x", scriptedClient(textResponse("abcd"))) } }
        assertEquals("agent_output_invalid", tooLong.code)
        val blank = assertThrows<AgentException> { createAgent("p", preset = " ") }
        assertEquals("definition_invalid", blank.code)
        assertTrue(blank.message!!.contains("preset"))
    }

    @Test
    fun `emitProgress and setContext take plain Kotlin values`() = runBlocking {
        val tool = defineTool("t") { _, ctx: RuntimeContext ->
            ctx.emitProgress(mapOf("percent" to 50, "steps" to listOf("a", "b")))
            ctx.setContext(mapOf("user" to "ana", "seen" to true))
            JsonPrimitive("ok")
        }
        val stream = createAgent("c", tools = listOf(tool)).stream("x", scriptedClient(callsResponse(call("c1", "t")), textResponse("done")))
        val progress = stream.toolEvents.toList().filter { it.type == "tool.preliminary_result" }.map { it["result"] }
        assertEquals(listOf(json("""{"percent":50,"steps":["a","b"]}""")), progress)
        assertEquals(json("""{"user":"ana","seen":true}"""), stream.result().context)
    }

    @Test
    fun `result run and steps read the state`() = runBlocking {
        val result = createAgent("r").run("hi", scriptedClient(textResponse("hello")))
        assertEquals(result.runId(), result.run["id"]!!.jsonPrimitive.content)
        assertEquals(listOf("user", "assistant"), result.run["messages"]!!.jsonArray.map { it.jsonObject["role"]!!.jsonPrimitive.content })
        assertEquals(1, result.steps.size)
        val streamed = createAgent("r").stream("hi", scriptedClient(textResponse("hello"))).getResult()
        assertEquals(JsonPrimitive("hello"), streamed.output)
    }
}

class GatewayProductOptionsTest {
    @Test
    fun `createGatewayAgentClient takes the product's options and the agent's fields win`() = runBlocking {
        val reply = HttpClientsTest.Reply(
            200, mapOf("content-type" to "application/json"),
            """{"id":"r","status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}]}""",
        )
        HttpClientsTest.Server(listOf(reply, reply)).use { server ->
            val client = createGatewayAgentClient(
                apiKey = "sk-test",
                baseUrl = server.url,
                preset = "support",
                headers = mapOf("x-team" to "desk"),
                temperature = 0.2,
                maxOutputTokens = 99,
                parallelToolCalls = false,
                metadata = mapOf("app" to "desk"),
                user = "u-1",
                responseFormat = json("""{"type":"json_object"}"""),
                toolChoice = JsonPrimitive("auto"),
                requestOptions = json("""{"store":true,"service_tier":"flex","user":"lost"}""").jsonObject,
            )
            assertEquals(JsonPrimitive("ok"), createAgent("a").run("x", client).output)
            val body = server.requests[0].body
            assertEquals("Bearer sk-test", server.requests[0].headers["authorization"])
            assertEquals("desk", server.requests[0].headers["x-team"])
            assertEquals("@support", body["model"]!!.jsonPrimitive.content)
            assertEquals(
                listOf("0.2", "99", "false", "u-1", "auto", "true", "flex"),
                listOf("temperature", "max_output_tokens", "parallel_tool_calls", "user", "tool_choice", "store", "service_tier").map { body[it]!!.jsonPrimitive.content },
            )
            assertEquals(json("""{"type":"json_object"}"""), body["response_format"])
            assertEquals("desk", body["metadata"]!!.jsonObject["app"]!!.jsonPrimitive.content)
            createAgent("a", model = "phaseo/own", temperature = 0.5).run("x", client)
            val own = server.requests[1].body
            assertEquals(listOf("phaseo/own", "0.5"), listOf(own["model"]!!.jsonPrimitive.content, own["temperature"]!!.jsonPrimitive.content))
        }
        val blank = assertThrows<AgentException> { createGatewayAgentClient(preset = "") }
        assertEquals("definition_invalid", blank.code)
        val raw = assertThrows<AgentException> {
            Client.Http(sdk { HttpModelClient.gateway(HttpClientOptions(bodyDefaultsJson = "[1]")) })
        }
        assertTrue(raw.message!!.contains("must be a JSON object"), raw.message)
    }
}
