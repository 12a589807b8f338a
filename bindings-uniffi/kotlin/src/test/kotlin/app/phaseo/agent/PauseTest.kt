package app.phaseo.agent

import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.put
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

class PauseTest {
    private val deploys = AtomicInteger()
    private val deploy = defineTool(
        "deploy",
        "Deploy a release",
        json("""{"type":"object","properties":{"environment":{"type":"string"}},"required":["environment"]}"""),
        requireApproval = true,
    ) { input, _ ->
        deploys.incrementAndGet()
        buildJsonObject { put("deployed", input.jsonObject["environment"]!!) }
    }
    private val fetch = defineTool("fetch", "Fetched by the application") // manual: no executor

    @Test
    fun `an approval pause continues once approved, from a state stored as JSON`() = runBlocking {
        val agent = createAgent("ops", tools = listOf(deploy))
        val script = listOf(callsResponse(call("c1", "deploy", """{"environment":"production"}""")), textResponse("Deployed."))
        val paused = agent.run("deploy", scriptedClient(script))
        assertEquals(RunStatus.WAITING_FOR_HUMAN, paused.status())
        assertEquals("tool_approval", paused.pause!!.str("kind"))
        assertEquals(listOf("c1"), ids(paused.pending))
        assertEquals(0, deploys.get())

        // The application stores the state as JSON text and continues later.
        val stored = paused.toJson()
        val restored = parseState(stored)
        assertEquals(paused, restored)
        assertEquals(stored, restored.toJson())

        val done = agent.continueRun(restored, scriptedClient(script, used = 1), approvals = listOf(decision("c1")))
        assertEquals(RunStatus.COMPLETED, done.status())
        assertEquals(JsonPrimitive("Deployed."), done.output)
        assertEquals(1, deploys.get())
        assertEquals(done, parseState(done.toJson()))
        assertNotEquals(paused, done)
    }

    @Test
    fun `a rejection is sent to the model and the tool never runs`() = runBlocking {
        val agent = createAgent("ops", tools = listOf(deploy))
        val model = RecordingModel(listOf(callsResponse(call("c1", "deploy", """{"environment":"prod"}""")), textResponse("Not deployed.")))
        val paused = agent.run("deploy", model.client)
        val done = agent.continueRun(paused, model.client, rejections = listOf(decision("c1", "not today")))
        assertEquals(RunStatus.COMPLETED, done.status())
        assertEquals(0, deploys.get())
        assertEquals(json("""{"error":"not today"}"""), json(model.toolMessages(1).single().content))
    }

    @Test
    fun `a manual tool pauses until its output is supplied`() = runBlocking {
        val agent = createAgent("m", tools = listOf(fetch))
        val model = RecordingModel(listOf(callsResponse(call("c1", "fetch")), textResponse("Got it.")))
        val paused = agent.run("fetch it", model.client)
        assertEquals("manual_tool", paused.pause!!.str("kind"))
        val done = agent.continueRun(parseState(paused.toJson()), model.client, toolOutputs = mapOf("c1" to json("""{"rows":3}""")))
        assertEquals(RunStatus.COMPLETED, done.status())
        assertEquals("""{"rows":3}""", model.toolMessages(1).single().content)
    }

    @Test
    fun `a refused continue carries no result and leaves the state usable`() = runBlocking {
        val agent = createAgent("ops", tools = listOf(deploy))
        val script = listOf(callsResponse(call("c1", "deploy", """{"environment":"qa"}""")), textResponse("ok"))
        val paused = agent.run("deploy", scriptedClient(script))
        val refused = assertThrows<AgentException> { runBlocking { agent.continueRun(paused, scriptedClient(script, used = 1)) } }
        assertEquals("continue_invalid", refused.code)
        assertEquals("Missing approval decision for tool call c1", refused.message)
        assertNull(refused.result)
        val unknown = assertThrows<AgentException> {
            runBlocking { agent.continueRun(paused, scriptedClient(script, used = 1), approvals = listOf(decision("zz"))) }
        }
        assertEquals("Unknown tool call zz", unknown.message)
        val done = agent.continueRun(paused, scriptedClient(script, used = 1), approvals = listOf(decision("c1")))
        assertEquals(RunStatus.COMPLETED, done.status())
    }

    @Test
    fun `invalid state is refused with state_invalid`() {
        assertEquals("state_invalid", assertThrows<AgentException> { parseState("{}") }.code)
        assertEquals("state_invalid", assertThrows<AgentException> { parseState("""{"version":99,"run":{}}""") }.code)
    }

    @Test
    fun `human review pauses and continues with human input`() = runBlocking {
        val agent = createAgent(
            "r",
            humanReview = { ctx -> if (ctx["isFinal"] == JsonPrimitive(true)) ReviewRequest("check", json("""{"draft":true}""")) else null },
        )
        val model = RecordingModel(listOf(textResponse("draft"), textResponse("final")))
        val paused = agent.run("write", model.client)
        assertEquals("human_review", paused.pause!!.str("kind"))
        assertEquals(json("""{"draft":true}"""), paused.pause!!["payload"])
        val continued = createAgent("r").continueRun(paused, model.client, humanInput = "shorter please")
        assertEquals(RunStatus.COMPLETED, continued.status())
        val last = model.requests[1]["messages"]!!.jsonArray.last().jsonObject
        assertEquals("shorter please", last.content)
    }

    @Test
    fun `a cancel token ends the run cancelled and still returns it`() = runBlocking {
        val started = CompletableDeferred<Unit>()
        val sawCancellation = CompletableDeferred<Unit>()
        val sleepy = defineTool("sleepy") { _, _ ->
            started.complete(Unit)
            try {
                delay(10_000)
            } catch (e: CancellationException) {
                sawCancellation.complete(Unit)
                throw e
            }
            JsonNull
        }
        val token = CancelToken()
        // Cancel once the tool's coroutine is running (a loaded machine may take a while to
        // start it), so that it has a cancellation to see.
        launch { withTimeout(10_000) { started.await() }; token.cancel() }
        val result = createAgent("c", tools = listOf(sleepy)).run("wait", scriptedClient(callsResponse(call("c1", "sleepy"))), cancel = token)
        assertEquals(RunStatus.CANCELLED, result.status())
        withTimeout(10_000) { sawCancellation.await() }
    }

    @Test
    fun `cancelling the coroutine that awaits run cancels the run and its tools`() = runBlocking {
        val started = CompletableDeferred<Unit>()
        val sawCancellation = CompletableDeferred<Unit>()
        val sleepy = defineTool("sleepy") { _, _ ->
            started.complete(Unit)
            try {
                delay(10_000)
            } catch (e: CancellationException) {
                sawCancellation.complete(Unit)
                throw e
            }
            JsonNull
        }
        val agent = createAgent("c", tools = listOf(sleepy))
        val job = launch { agent.run("wait", scriptedClient(callsResponse(call("c1", "sleepy")))) }
        withTimeout(5_000) { started.await() }
        job.cancel()
        withTimeout(10_000) { sawCancellation.await() }
        assertTrue(job.isCancelled)
    }
}
