package app.phaseo.agent

import java.util.concurrent.atomic.AtomicReference
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.put
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

class ToolsTest {
    @Test
    fun `a caller's value beyond the limits is state_invalid, as the core refuses it`() = runBlocking {
        // The JSON text is well formed, only too deep: not a broken argument (definition_invalid).
        val deep = json("[".repeat(65) + "]".repeat(65))
        val agent = createAgent("deep")
        for ((what, run) in listOf<Pair<String, suspend () -> Unit>>(
            "input" to { agent.run(deep, scriptedClient(textResponse("ok"))) },
            "context" to { agent.run("go", scriptedClient(textResponse("ok")), context = deep) },
        )) {
            val e = assertThrows<AgentException> { run() }
            assertEquals("state_invalid", e.code, what)
            assertEquals("Invalid run $what: value is nested more than 64 levels deep", e.message, what)
        }
        val big = json("[18446744073709551616]")
        val e = assertThrows<AgentException> { agent.run(big, scriptedClient(textResponse("ok"))) }
        assertEquals("state_invalid", e.code)
        assertEquals("Invalid run input: integer 18446744073709551616 does not fit in 64 bits", e.message)
    }

    @Test
    fun `suspend executors run with the validated input and the runtime`() = runBlocking {
        val seen = AtomicReference<ToolContext>()
        val add = defineTool("add", "Adds two numbers", json("""{"type":"object","required":["a","b"]}""")) { input, runtime ->
            delay(20) // a real suspension, not a blocked thread
            seen.set(runtime)
            runtime.emitProgress(json("""{"percent":50}"""))
            JsonPrimitive(input.jsonObject["a"]!!.jsonPrimitive.int + input.jsonObject["b"]!!.jsonPrimitive.int)
        }
        val agent = createAgent("calculator", tools = listOf(add), instructions = "Add.")
        val model = RecordingModel(listOf(callsResponse(call("c1", "add", """{"a":2,"b":3}""")), textResponse("5")))
        val events = mutableListOf<String>()
        val result = agent.run("2+3?", model.client, context = json("""{"user":"ana"}"""), onEvent = { events.add(it.type!!) })

        assertEquals(RunStatus.COMPLETED, result.status())
        assertEquals(JsonPrimitive("5"), result.output)
        assertEquals("5", model.toolMessages(1).single().content)
        assertEquals("Add.", model.requests[0].str("instructions"))
        val runtime = seen.get()
        assertEquals(result.runId(), runtime.runId)
        assertEquals("calculator", runtime.agentId)
        assertEquals(0, runtime.stepIndex)
        assertEquals(ToolCallInfo("c1", "add", json("""{"a":2,"b":3}""")), runtime.toolCall)
        assertEquals(json("""{"user":"ana"}"""), runtime.context)
        assertEquals(
            listOf("run.started", "step.started", "model.requested", "model.completed", "tool.started",
                "tool.preliminary_result", "tool.completed", "step.completed", "checkpoint.saved", "step.started",
                "model.requested", "model.completed", "step.completed", "checkpoint.saved", "run.completed"),
            events,
        )
    }

    @Test
    fun `a timeout cancels the tool's coroutine`() = runBlocking {
        val sawCancellation = CompletableDeferred<Throwable>()
        // The deadline is 1 s away so that the coroutine has begun (and sees the cancellation)
        // even when a loaded machine is slow to start it.
        val slow = defineTool("slow", "Sleeps", timeoutMs = 1_000, onError = OnError.RETURN_TO_MODEL) { _, _ ->
            try {
                delay(10_000)
                JsonPrimitive("late")
            } catch (e: CancellationException) {
                sawCancellation.complete(e)
                throw e
            }
        }
        val model = RecordingModel(listOf(callsResponse(call("c1", "slow")), textResponse("gave up")))
        val started = System.nanoTime()
        val result = createAgent("a", tools = listOf(slow)).run("go", model.client)
        val elapsedMs = (System.nanoTime() - started) / 1_000_000

        assertEquals(RunStatus.COMPLETED, result.status())
        assertTrue(elapsedMs < 3_000, "the run did not wait for the tool ($elapsedMs ms)")
        val error = withTimeout(10_000) { sawCancellation.await() }
        assertTrue(error is CancellationException)
        val message = model.toolMessages(1).single()
        assertEquals(json("""{"error":"Tool slow timed out after 1000ms"}"""), json(message.content))
        assertEquals(JsonPrimitive(true), message["isError"])
    }

    @Test
    fun `a timeout under fail-run fails the run with tool_timeout`() = runBlocking {
        val slow = defineTool("slow", timeoutMs = 50) { _, _ -> delay(5_000); JsonNull }
        val e = assertThrows<AgentException> {
            runBlocking { createAgent("a", tools = listOf(slow)).run("go", scriptedClient(callsResponse(call("c1", "slow")))) }
        }
        assertEquals("tool_timeout", e.code)
        assertEquals("Tool slow timed out after 50ms", e.message)
        assertEquals(RunStatus.FAILED, e.result!!.status())
    }

    @Test
    fun `an exception thrown by a tool fails the run under fail-run, carrying the failed state`() = runBlocking {
        val boom = defineTool("boom") { _, _ -> throw IllegalStateException("disk full") }
        val agent = createAgent("a", tools = listOf(boom))
        val e = assertThrows<AgentException> {
            runBlocking { agent.run("go", scriptedClient(callsResponse(call("c1", "boom")))) }
        }
        assertEquals("tool_failed", e.code)
        assertEquals("disk full", e.message)
        val failed = e.result!!
        assertEquals(RunStatus.FAILED, failed.status())
        assertEquals("tool_failed", json(failed.errorJson()!!).jsonObject.str("code"))
    }

    @Test
    fun `an exception thrown by a tool goes back to the model under return-to-model`() = runBlocking {
        val boom = defineTool("boom", onError = OnError.RETURN_TO_MODEL) { _, _ -> error("mail server down") }
        val model = RecordingModel(listOf(callsResponse(call("c1", "boom")), textResponse("sorry")))
        val result = createAgent("a", tools = listOf(boom)).run("go", model.client)
        assertEquals(RunStatus.COMPLETED, result.status())
        val message = model.toolMessages(1).single()
        assertEquals(json("""{"error":"mail server down"}"""), json(message.content))
        assertEquals(JsonPrimitive(true), message["isError"])
    }

    @Test
    fun `the agent-level onError applies to tools without their own`() = runBlocking {
        val boom = defineTool("boom") { _, _ -> throw ToolException.Failed("nope") }
        val model = RecordingModel(listOf(callsResponse(call("c1", "boom")), textResponse("ok")))
        val agent = createAgent("a", tools = listOf(boom), toolExecution = toolExecution(onError = OnError.RETURN_TO_MODEL))
        agent.run("go", model.client)
        assertEquals(json("""{"error":"nope"}"""), json(model.toolMessages(1).single().content))
    }

    @Test
    fun `validators written in Kotlin and JSON Schema validators check input, output and progress`() = runBlocking {
        val positive = validator { value ->
            require(value.jsonObject["n"]!!.jsonPrimitive.int > 0) { "n must be positive" }
            value
        }
        val tool = defineTool(
            "double",
            parameters = json("""{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"""),
            inputSchema = positive,
            outputSchema = jsonSchemaValidator(json("""{"type":"integer"}""")),
        ) { input, _ -> JsonPrimitive(input.jsonObject["n"]!!.jsonPrimitive.int * 2) }
        val agent = createAgent("a", tools = listOf(tool))

        val e1 = assertThrows<AgentException> {
            runBlocking { agent.run("x", scriptedClient(callsResponse(call("c1", "double", """{"n":-1}""")))) }
        }
        assertEquals("tool_input_invalid", e1.code)
        assertEquals("Invalid tool input: n must be positive", e1.message)

        val e2 = assertThrows<AgentException> {
            runBlocking { agent.run("x", scriptedClient(callsResponse(call("c1", "double", """{"n":"two"}""")))) }
        }
        assertEquals("tool_input_invalid", e2.code)
        assertTrue(e2.message!!.startsWith("Invalid tool input: /n: "), e2.message)

        val helper = jsonSchemaValidator(json("""{"type":"string"}"""))
        assertEquals(JsonPrimitive("ok"), helper.parse(JsonPrimitive("ok")))
        val refused = assertThrows<ToolException> { helper.parse(JsonPrimitive(3)) }
        assertTrue(refused.message!!.contains("/: "), refused.message)
        assertEquals(json("""{"type":"string"}"""), json(helper.jsonSchema()!!))
    }

    @Test
    fun `invalid definitions are refused with definition_invalid`() {
        val e = assertThrows<AgentException> { defineTool("bad", parameters = json("""{"type":5}""")) }
        assertEquals("definition_invalid", e.code)
        assertNull(e.result)
        val tool = defineTool("t") { _, _ -> JsonNull }
        val dup = assertThrows<AgentException> { createAgent("a", tools = listOf(tool, tool)) }
        assertEquals("definition_invalid", dup.code)
        assertEquals("definition_invalid", assertThrows<AgentException> { defineTool("t", timeoutMs = -1) }.code)
        assertEquals("definition_invalid", assertThrows<AgentException> { jsonSchemaValidator(json("""{"type":5}""")) }.code)
        for ((duration, renew) in listOf(100L to 200L, 100L to 100L, 100L to 0L, -5L to -10L)) {
            val lease = assertThrows<AgentException> { createAgent("a", lease = lease(durationMs = duration, renewEveryMs = renew)) }
            assertEquals("definition_invalid", lease.code)
            assertEquals(
                "Invalid agent definition: lease needs 0 < renewEveryMs < durationMs (got durationMs=$duration, renewEveryMs=$renew)",
                lease.message,
            )
        }
        createAgent("a", lease = lease(durationMs = Long.MAX_VALUE, renewEveryMs = 1_000)).close()
    }

    @Test
    fun `durations too long for a clock are the longest wait, not a crash`() = runBlocking {
        // 1e300 ms of model backoff and Long.MAX_VALUE ms of tool timeout: accepted, and the
        // call runs (its timeout never fires).
        val quick = defineTool("t", timeoutMs = Long.MAX_VALUE) { _, _ -> JsonPrimitive(1) }
        for (backoff in listOf(1e300, Double.POSITIVE_INFINITY)) {
            val agent = createAgent("a", tools = listOf(quick), modelRetry = ModelRetry(maxRetries = 1, backoffMs = backoff))
            val result = agent.run("go", scriptedClient(callsResponse(call("c1", "t")), textResponse("done")))
            assertEquals(RunStatus.COMPLETED, result.status())
        }
    }

    @Test
    fun `interactive hooks, next-turn params and stop conditions are Kotlin functions`() = runBlocking {
        val lookup = defineTool(
            "lookup",
            onToolCalled = { input, _ -> if (input.jsonObject["ask"] == JsonPrimitive(true)) null else JsonPrimitive("auto") },
            onResponseReceived = { output, _ -> buildJsonObject { put("answer", output) } },
            nextTurnParams = buildJsonObject { put("temperature", 0.25) },
        )
        val model = RecordingModel(
            listOf(callsResponse(call("c1", "lookup", """{"ask":false}"""), call("c2", "lookup", """{"ask":true}""")), textResponse("done")),
        )
        var stopChecks = 0
        val agent = createAgent("a", tools = listOf(lookup), stopWhen = listOf(stopWhen { stopChecks += 1; false }))
        val paused = agent.run("go", model.client)
        assertEquals(RunStatus.WAITING_FOR_HUMAN, paused.status())
        assertEquals("hitl", paused.pause!!.str("kind"))
        assertEquals(listOf("c2"), ids(paused.pending))

        val done = agent.continueRun(paused, model.client, toolOutputs = mapOf("c2" to JsonPrimitive("human")))
        assertEquals(RunStatus.COMPLETED, done.status())
        val messages = model.toolMessages(1)
        assertEquals(listOf("auto", """{"answer":"human"}"""), messages.map { it.content })
        assertEquals(JsonPrimitive(0.25), model.requests[1]["temperature"])
        assertTrue(stopChecks >= 1)

        val stopping = createAgent("b", stopWhen = listOf(stopWhenReason { state -> if (state["stepCount"]!!.jsonPrimitive.int >= 1) "enough" else null }))
        val stopped = stopping.run("hi", scriptedClient(textResponse("hello")))
        assertEquals(RunStatus.STOPPED, stopped.status())
        assertEquals("enough", stopped.stopReason())
    }

    @Test
    fun `the built-in test client calls each tool once`() = runBlocking {
        val echo = defineTool("echo", parameters = json("""{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}""")) { input, _ -> input }
        val result = createAgent("a", tools = listOf(echo)).run("try it", testClient())
        assertEquals(RunStatus.COMPLETED, result.status())
        assertFalse(result.outputText().isEmpty())
    }

    @Test
    fun `per-turn functions and the HTTP clients are wired through`() = runBlocking {
        val model = RecordingModel(listOf(textResponse("hi")))
        val agent = createAgent("t", instructionsFn = { turn -> JsonPrimitive("turn ${turn["numberOfTurns"]}") }, temperature = 0.3)
        agent.run("hello", model.client)
        assertEquals("turn 1", model.requests[0].str("instructions"))
        assertEquals(JsonPrimitive(0.3), model.requests[0]["temperature"])

        // Nothing listens on this port: the gateway client fails the run with model_failed.
        val port = java.net.ServerSocket(0).use { it.localPort }
        val e = assertThrows<AgentException> {
            runBlocking { agent.run("hello", gatewayClient(apiKey = "k", baseUrl = "http://127.0.0.1:$port/v1", timeoutMs = 2_000)) }
        }
        assertEquals("model_failed", e.code)
        assertTrue(e.message!!.contains("connection failed"), e.message)
    }
}
