package app.phaseo.agent

import io.opentelemetry.api.trace.Span
import io.opentelemetry.api.trace.SpanContext
import io.opentelemetry.api.trace.TraceFlags
import io.opentelemetry.api.trace.TraceState
import java.io.File
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.assertThrows

/**
 * Tracing from Kotlin against a real OTLP/HTTP receiver on 127.0.0.1
 * (tests/otlp/receiver.py, decoding with opentelemetry-proto).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TracingTest {
    private lateinit var receiver: Process
    private lateinit var base: String
    private val http = HttpClient.newHttpClient()

    @BeforeAll
    fun start() {
        val root = File("../..").canonicalFile
        val python = System.getenv("PHASEO_PYTHON") ?: File(root, ".venvs/py/bin/python").path
        receiver = ProcessBuilder(python, File(root, "tests/otlp/receiver.py").path)
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start()
        val line = receiver.inputStream.bufferedReader().readLine()
            ?: error("the OTLP receiver did not start: is opentelemetry-proto installed (make .venvs/py/.otel)?")
        base = "http://127.0.0.1:${line.removePrefix("PORT ")}"
    }

    @AfterAll
    fun stop() {
        shutdownTracing()
        receiver.outputStream.close()
        receiver.waitFor()
    }

    private fun enable(captureContent: Boolean = false) =
        enableTracing(base, mapOf("x-collector-token" to "kotlin-token"), "kotlin-tests", captureContent)

    private fun ids(result: RunResult): List<String> {
        val tp = parseJson(result.toJson()).jsonObject["run"]!!.jsonObject["traceparent"]!!.jsonPrimitive.content
        val parts = tp.split("-")
        assertEquals(listOf("00", "01"), listOf(parts[0], parts[3]))
        return listOf(parts[1], parts[2])
    }

    private suspend fun spansOf(result: RunResult, count: Int): List<JsonObject> {
        flushTracing()
        val traceId = ids(result)[0]
        repeat(500) {
            val body = http.send(HttpRequest.newBuilder(URI("$base/spans")).build(), HttpResponse.BodyHandlers.ofString()).body()
            val found = (parseJson(body) as JsonArray).map { it.jsonObject }.filter { it.str("traceId") == traceId }
            if (found.size >= count) return found
            delay(20)
        }
        error("fewer than $count spans in trace $traceId")
    }

    private fun one(spans: List<JsonObject>, name: String): JsonObject {
        val found = spans.filter { it.str("name") == name }
        assertEquals(1, found.size, "$name: $spans")
        return found[0]
    }

    private fun JsonObject.attr(key: String): String? = (this["attributes"]!!.jsonObject[key] as? JsonPrimitive)?.content

    private val calculator = createAgent(
        "calculator",
        tools = listOf(defineTool("add") { input, _ ->
            JsonPrimitive(input.jsonObject["a"]!!.jsonPrimitive.content.toInt() + input.jsonObject["b"]!!.jsonPrimitive.content.toInt())
        }),
    )

    private suspend fun runCalculator(traceparent: String? = null) = calculator.run(
        "what is 2+3?",
        scriptedClient(callsResponse(call("c1", "add", """{"a":2,"b":3}""")), textResponse("the sum is 5")),
        traceparent = traceparent,
    )

    @Test
    fun `a run with a tool step is one tree of GenAI spans, content off`() = runBlocking {
        enable()
        val result = runCalculator()
        val spans = spansOf(result, 4)
        val run = one(spans, "invoke_agent calculator")
        assertEquals(ids(result)[1], run.str("spanId"))
        assertEquals("", run.str("parentSpanId"))
        assertEquals("invoke_agent", run.attr("gen_ai.operation.name"))
        assertEquals("kotlin-tests", run.str("service"))
        assertEquals("kotlin-token", run["headers"]!!.jsonObject.str("x-collector-token"))
        val tool = one(spans, "execute_tool add")
        assertEquals(run.str("spanId"), tool.str("parentSpanId"))
        assertEquals("c1", tool.attr("gen_ai.tool.call.id"))
        assertEquals(2, spans.count { it.str("name") == "chat" && it.str("parentSpanId") == run.str("spanId") })
        for (s in spans) {
            val text = s["attributes"].toString()
            assertFalse(text.contains("what is 2+3?") || text.contains("kotlin-token"), text)
        }
    }

    @Test
    fun `content is recorded when opted in`() = runBlocking {
        enable(captureContent = true)
        try {
            val tool = one(spansOf(runCalculator(), 4), "execute_tool add")
            assertEquals("""{"a":2,"b":3}""", tool.attr("gen_ai.tool.call.arguments"))
            assertEquals("5", tool.attr("gen_ai.tool.call.result"))
        } finally {
            enable()
        }
    }

    @Test
    fun `a timeout sets error type on the tool and the run`() = runBlocking {
        enable()
        val slow = defineTool("slow", timeoutMs = 30) { _, _ -> delay(5_000); JsonPrimitive("late") }
        val agent = createAgent("sleeper", tools = listOf(slow))
        val error = assertThrows<AgentException> { runBlocking { agent.run("go", scriptedClient(callsResponse(call("c1", "slow")))) } }
        assertEquals("tool_timeout", error.code)
        val spans = spansOf(error.result!!, 3)
        assertEquals("tool_timeout", one(spans, "execute_tool slow").attr("error.type"))
        assertEquals("tool_timeout", one(spans, "invoke_agent sleeper").attr("error.type"))
    }

    @Test
    fun `a continue from the JSON state lands in the same trace, linked`() = runBlocking {
        enable()
        val send = defineTool("send", requireApproval = true) { _, _ -> JsonPrimitive("sent") }
        val agent = createAgent("mailer", tools = listOf(send))
        val paused = agent.run("mail", scriptedClient(callsResponse(call("c1", "send"))))
        assertEquals(RunStatus.WAITING_FOR_HUMAN, paused.status())
        val done = agent.continueRun(parseState(paused.toJson()), scriptedClient(textResponse("ok")), approvals = listOf(decision("c1")))
        val (traceId, first) = ids(paused)
        val (same, second) = ids(done)
        assertEquals(traceId, same)
        val spans = spansOf(done, 5)
        val resumed = spans.first { it.str("spanId") == second }
        assertEquals(first, resumed.str("parentSpanId"))
        assertEquals(first, resumed["links"]!!.jsonArray[0].jsonObject.str("spanId"))
        assertEquals("approved", one(spans, "execute_tool send").attr("phaseo.tool.approval"))
    }

    @Test
    fun `the explicit traceparent and the current OpenTelemetry Java span are parents`() = runBlocking {
        enable()
        val explicit = runCalculator("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        assertEquals("4bf92f3577b34da6a3ce929d0e0e4736", ids(explicit)[0])
        assertEquals("00f067aa0ba902b7", one(spansOf(explicit, 4), "invoke_agent calculator").str("parentSpanId"))

        val host = SpanContext.create("11111111111111111111111111111111", "2222222222222222", TraceFlags.getSampled(), TraceState.getDefault())
        val scope = Span.wrap(host).makeCurrent()
        val inside = try { runCalculator() } finally { scope.close() }
        assertEquals("11111111111111111111111111111111", ids(inside)[0])
        assertEquals("2222222222222222", one(spansOf(inside, 4), "invoke_agent calculator").str("parentSpanId"))
    }

    @Test
    fun `bad options are refused by name`() {
        val e = assertThrows<AgentException> { enableTracing(endpoint = "not a url") }
        assertEquals("definition_invalid", e.code)
        assertTrue(e.message!!.contains("endpoint 'not a url'"), e.message)
    }
}
