package app.phaseo.agent

import com.sun.net.httpserver.HttpServer
import java.net.InetSocketAddress
import java.util.Collections
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import kotlinx.serialization.json.put
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** The HTTP model clients through the Kotlin API, against local servers on 127.0.0.1. */
class HttpClientsTest {
    /** A scripted reply: [status] 0 means "never answer" (the handler sleeps [sleepMs]). */
    data class Reply(val status: Int, val headers: Map<String, String>, val body: String, val sleepMs: Long = 0)

    data class Recorded(val path: String, val headers: Map<String, String>, val body: JsonObject)

    /** Answers each POST with the next scripted reply and records the requests. */
    class Server(script: List<Reply>) : AutoCloseable {
        private val replies: MutableList<Reply> = Collections.synchronizedList(script.toMutableList())
        val requests: MutableList<Recorded> = Collections.synchronizedList(mutableListOf())
        private val executor: ExecutorService = Executors.newCachedThreadPool { r -> Thread(r).apply { isDaemon = true } }
        private val http: HttpServer = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0)
        val url: String

        init {
            http.createContext("/") { exchange ->
                exchange.use { ex ->
                    val body = ex.requestBody.readBytes().decodeToString()
                    val headers = ex.requestHeaders.entries.associate { e -> e.key.lowercase() to e.value.joinToString(",") }
                    requests.add(Recorded(ex.requestURI.path, headers, parseJson(body).jsonObject))
                    val reply = replies.removeAt(0)
                    if (reply.status == 0) {
                        try { Thread.sleep(reply.sleepMs) } catch (_: InterruptedException) {}
                        return@use
                    }
                    reply.headers.forEach { (k, v) -> ex.responseHeaders.add(k, v) }
                    val bytes = reply.body.encodeToByteArray()
                    ex.sendResponseHeaders(reply.status, if (bytes.isEmpty()) -1 else bytes.size.toLong())
                    ex.responseBody.write(bytes)
                }
            }
            http.executor = executor
            http.start()
            url = "http://127.0.0.1:${http.address.port}/v1"
        }

        override fun close() {
            http.stop(0)
            executor.shutdownNow()
        }
    }

    private val jsonHeaders = mapOf("content-type" to "application/json")
    private val key = "sk-test-secret-123"

    private fun responsesReply(output: String) = Reply(
        200, jsonHeaders,
        """{"id":"resp_1","status":"completed","output":$output,"usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5}}""",
    )

    private fun messageReply(text: String) =
        responsesReply("""[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"$text"}]}]""")

    @Test
    fun `gateway round trip keeps the key out of state and the context off the wire`() = runBlocking {
        Server(listOf(
            responsesReply("""[{"type":"function_call","call_id":"c1","name":"lookup","arguments":"{\"id\": 7}"}]"""),
            messageReply("Found 7."),
        )).use { server ->
            val lookup = defineTool("lookup", parameters = objectSchema()) { input, _ ->
                buildJsonObject { put("found", input.jsonObject["id"]!!.jsonPrimitive.int) }
            }
            val agent = createAgent("desk", tools = listOf(lookup), instructions = "Be brief.")
            val client = gatewayClient(apiKey = key, baseUrl = server.url, model = "phaseo/test")
            val result = agent.run("find 7", client, context = json("""{"secret_context":"do-not-send"}"""))

            assertEquals(RunStatus.COMPLETED, result.status())
            assertEquals(JsonPrimitive("Found 7."), result.output)
            assertEquals(10L, result.usage["totalTokens"]!!.jsonPrimitive.long)
            assertEquals(listOf("/v1/responses", "/v1/responses"), server.requests.map { it.path })
            assertEquals("Bearer $key", server.requests[0].headers["authorization"])
            val (first, second) = server.requests.map { it.body }
            assertEquals("phaseo/test", first.str("model"))
            assertEquals("Be brief.", first.str("instructions"))
            assertFalse(first.toString().contains("do-not-send"), first.toString())
            val outputItem = second["input"]!!.jsonArray.map { it.jsonObject }.single { it.str("type") == "function_call_output" }
            assertEquals("c1", outputItem.str("call_id"))
            assertEquals(json("""{"found":7}"""), parseJson(outputItem.str("output")!!))
            assertFalse(result.toJson().contains(key))
        }
    }

    @Test
    fun `OpenAI-compatible streaming delivers the deltas in order`() = runBlocking {
        val chunks = listOf("Hel", "lo ", "there")
        val sse = buildString {
            for (c in chunks) append("data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"$c\"}}]}\n\n")
            append("data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
        }
        Server(listOf(Reply(200, mapOf("content-type" to "text/event-stream"), sse))).use { server ->
            val client = openAICompatibleClient(baseUrl = server.url, model = "local-model")
            val stream = createAgent("a").stream("hi", client)
            assertEquals(chunks, stream.textStream.toList())
            assertEquals(JsonPrimitive("Hello there"), stream.result().output)
            val request = server.requests.single()
            assertEquals("/v1/chat/completions", request.path)
            assertEquals(JsonPrimitive(true), request.body["stream"])
            assertEquals("local-model", request.body.str("model"))
            assertNull(request.headers["authorization"])
        }
    }

    @Test
    fun `a 429 with retry-after 0 is retried then succeeds`() = runBlocking {
        Server(listOf(
            Reply(429, jsonHeaders + ("retry-after" to "0"), """{"error":{"message":"slow down"}}"""),
            messageReply("ok"),
        )).use { server ->
            val client = gatewayClient(apiKey = key, baseUrl = server.url)
            val started = System.nanoTime()
            // A 30 s backoff would time the test out: retry-after: 0 must win.
            val result = createAgent("a", modelRetry = ModelRetry(maxRetries = 1, backoffMs = 30_000.0)).run("x", client)
            assertEquals(JsonPrimitive("ok"), result.output)
            assertEquals(2, server.requests.size)
            assertTrue(System.nanoTime() - started < 10_000_000_000L)
        }
    }

    @Test
    fun `a 500 on every attempt fails with the gateway details after the retries`() = runBlocking {
        val reply = Reply(500, jsonHeaders + ("x-request-id" to "req_9"), """{"error":{"message":"boom"}}""")
        Server(List(3) { reply }).use { server ->
            val client = gatewayClient(apiKey = key, baseUrl = server.url)
            val agent = createAgent("a", modelRetry = ModelRetry(maxRetries = 2, backoffMs = 1.0))
            val e = assertThrows<AgentException> { runBlocking { agent.run("x", client) } }
            assertEquals("gateway", e.code)
            assertEquals("Gateway request failed: 500 Internal Server Error - boom", e.message)
            assertNotNull(e.gateway)
            val gateway = e.gateway!!
            assertEquals(500, gateway.status.toInt())
            assertEquals("Internal Server Error", gateway.statusText)
            assertEquals("req_9", gateway.requestId)
            assertEquals(3, server.requests.size)
            assertFalse(e.message!!.contains(key))
            assertNotNull(e.result)
            assertEquals(RunStatus.FAILED, e.result!!.status())
            assertFalse(e.result!!.toJson().contains(key))
        }
    }

    @Test
    fun `a 400 is not retried`() = runBlocking {
        val reply = Reply(400, jsonHeaders, """{"error":{"message":"bad request"}}""")
        Server(List(3) { reply }).use { server ->
            val client = openAICompatibleClient(baseUrl = server.url, apiKey = key)
            val agent = createAgent("a", modelRetry = ModelRetry(maxRetries = 2, backoffMs = 1.0))
            val e = assertThrows<AgentException> { runBlocking { agent.run("x", client) } }
            assertEquals("gateway", e.code)
            assertEquals(400, e.gateway!!.status.toInt())
            assertEquals(1, server.requests.size)
            assertEquals("Bearer $key", server.requests[0].headers["authorization"])
        }
    }

    @Test
    fun `a malformed body fails the run`() = runBlocking {
        Server(listOf(Reply(200, jsonHeaders, "{not json"))).use { server ->
            val client = openAICompatibleClient(baseUrl = server.url)
            val e = assertThrows<AgentException> { runBlocking { createAgent("a").run("x", client) } }
            assertEquals("model_failed", e.code)
            assertTrue(e.message!!.contains("malformed response body"), e.message)
        }
    }

    @Test
    fun `a server that never answers times out`() = runBlocking {
        Server(listOf(Reply(0, emptyMap(), "", sleepMs = 3_000))).use { server ->
            val client = gatewayClient(apiKey = key, baseUrl = server.url, timeoutMs = 200)
            val started = System.nanoTime()
            val e = assertThrows<AgentException> { runBlocking { createAgent("a").run("x", client) } }
            val elapsedMs = (System.nanoTime() - started) / 1_000_000
            assertEquals("model_failed", e.code)
            assertTrue(e.message!!.contains("timed out"), e.message)
            assertTrue(elapsedMs < 2_000, "took $elapsedMs ms")
            assertFalse(e.message!!.contains(key))
        }
    }
}
