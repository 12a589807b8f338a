package app.phaseo.agent.mcp

import app.phaseo.agent.AgentException
import app.phaseo.agent.AgentSdk
import app.phaseo.agent.OnError
import app.phaseo.agent.RecordingModel
import app.phaseo.agent.call
import app.phaseo.agent.callsResponse
import app.phaseo.agent.createAgent
import app.phaseo.agent.defineTool
import app.phaseo.agent.mcpStdio
import app.phaseo.agent.parseJson
import app.phaseo.agent.run
import app.phaseo.agent.textResponse
import app.phaseo.agent.javaapi.ServedToolsJava
import app.phaseo.agent.mcpServeHttp
import app.phaseo.agent.scriptedClient
import app.phaseo.agent.serveMcp
import app.phaseo.agent.store.Jvm
import java.io.File
import java.net.ServerSocket
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.put
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * Tools served by `serveMcp` (Kotlin) and `AgentSdk.serveMcp` (Java), driven by the official
 * MCP Python client over stdio and Streamable HTTP (tests/mcp/served_client.py, scenario
 * `check`): list, call, structured output, validation error, timeout, progress, approval
 * through elicitation accepted and declined, a client without elicitation refused,
 * cancellation reaching the executor. Without the Python `mcp` package these tests fail.
 */
class McpServeTest {
    private val driver = File(repo, "tests/mcp/served_client.py").path

    /** Runs the driver's `check` scenario against [target] (`--url URL` or `-- command...`):
     * every check, with add's annotations and output schema. */
    private fun drive(mark: File, target: List<String>) {
        val command = listOf(python, driver, "check", "none", "--mark", mark.path, "--output-schema", "--annotated") + target
        val process = ProcessBuilder(command).redirectErrorStream(true).start()
        val out = process.inputStream.bufferedReader().readText()
        assertTrue(process.waitFor(400, TimeUnit.SECONDS), "the MCP client did not finish")
        assertEquals(0, process.exitValue(), out)
        val seen = parseJson(out.trim().lines().last()).jsonObject
        assertEquals(0, seen["failed"]!!.jsonArray.size, out)
        assertEquals(20, seen["passed"]!!.jsonArray.size, out)
    }

    /** What the driver's `agent` scenario saw calling the agent served at [url] once, answering
     * elicitations with [approve] (`yes`, `no`, or `none`: no elicitation capability). */
    private fun driveAgent(url: String, approve: String): JsonObject {
        val command = listOf(python, driver, "agent", approve, "--url", url)
        val process = ProcessBuilder(command).redirectErrorStream(true).start()
        val out = process.inputStream.bufferedReader().readText()
        assertTrue(process.waitFor(400, TimeUnit.SECONDS), "the MCP client did not finish")
        assertEquals(0, process.exitValue(), out)
        return parseJson(out.trim().lines().last()).jsonObject
    }

    /** The four calls of one served researcher: approved, declined, asked of a client without
     * elicitation, then paused for the client tool `ask` (its model's fourth answer). */
    private fun checkResearcher(url: String) {
        val approved = driveAgent(url, "yes")
        assertEquals(setOf("researcher"), approved["tools"]!!.jsonObject.keys)
        val listed = approved["tools"]!!.jsonObject["researcher"]!!.jsonObject
        assertEquals("Researches", listed["description"]!!.jsonPrimitive.content)
        assertEquals(
            parseJson("""{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}"""),
            listed["inputSchema"],
        )
        assertEquals(parseJson("""{"isError":false,"text":"researched","structured":null}"""), approved["call"])
        val asked = approved["asked"]!!.jsonArray.map { it.jsonPrimitive.content }
        assertEquals(1, asked.size, asked.toString())
        assertTrue("delete" in asked[0] && """{"path":"/tmp/x"}""" in asked[0], asked[0])
        val declined = driveAgent(url, "no")
        assertEquals(parseJson("""{"isError":false,"text":"researched","structured":null}"""), declined["call"])
        assertEquals(1, declined["asked"]!!.jsonArray.size)
        val unasked = driveAgent(url, "none")
        assertEquals(
            parseJson("""{"isError":true,"text":"Tool delete requires approval and this client cannot be asked","structured":null}"""),
            unasked["call"],
        )
        val paused = driveAgent(url, "yes")
        assertEquals(
            parseJson("""{"isError":true,"text":"Tool ask asks a person for its result and cannot be served","structured":null}"""),
            paused["call"],
        )
        assertEquals(0, paused["asked"]!!.jsonArray.size)
    }

    /** The responses of the served researcher's model (see [checkResearcher]). */
    private val researcherScript = listOf(
        callsResponse(call("n1", "delete", """{"path":"/tmp/x"}""")), textResponse("researched"),
        callsResponse(call("n1", "delete", """{"path":"/tmp/x"}""")), textResponse("researched"),
        callsResponse(call("n1", "delete", """{"path":"/tmp/x"}""")),
        callsResponse(call("n1", "ask")),
    )

    @Test
    fun `Kotlin serveMcp serves an agent as one tool`() = runBlocking {
        val deleted = AtomicInteger()
        val researcher = createAgent(
            "researcher",
            tools = listOf(
                defineTool("delete", "Deletes a file", requireApproval = true) { input, _ ->
                    deleted.incrementAndGet()
                    JsonPrimitive("deleted " + input.jsonObject["path"]!!.jsonPrimitive.content)
                },
                defineTool("ask", "Asks a person"),
            ),
        )
        serveMcp(researcher, scriptedClient(researcherScript), "kotlin-agent", transport = mcpServeHttp(), description = "Researches").use {
            // The client runs while this test's coroutine thread stays free.
            withContext(Dispatchers.IO) { checkResearcher(it.url!!) }
        }
        // Approved once; declined and unasked calls never ran.
        assertEquals(1, deleted.get())
    }

    @Test
    fun `Java AgentSdk serveMcp serves an agent as one tool`() {
        val deleted = AtomicInteger()
        val delete = AgentSdk.Tool(
            "delete",
            AgentSdk.ToolExecutor { input, _ ->
                deleted.incrementAndGet()
                "deleted " + (input as Map<*, *>)["path"]
            },
            "Deletes a file",
            null, null, null, null, null, true, null, null, null, null, null,
        )
        val ask = AgentSdk.Tool("ask", null, "Asks a person", null, null, null, null, null, false, null, null, null, null, null)
        val researcher = AgentSdk.createAgent(AgentSdk.AgentDefinition("researcher", listOf(delete, ask)))
        val client = AgentSdk.scriptedClient(researcherScript)
        val options = AgentSdk.McpServeOptions.builder("java-agent").http().description("Researches").build()
        AgentSdk.serveMcp(researcher, client, options).use {
            checkResearcher(it.url()!!)
        }
        assertEquals(1, deleted.get())
    }

    private fun stdio(main: String) {
        val mark = File(markers(), "cancelled")
        drive(mark, listOf("--") + Jvm.command(main, listOf("stdio")))
    }

    private fun http(main: String) {
        val mark = File(markers(), "cancelled")
        val server = Jvm.start(main, listOf("http"), mapOf("CANCEL_MARK" to mark.path))
        try {
            val url = server.inputStream.bufferedReader().readLine()
            assertTrue(url != null && url.matches(Regex("http://127\\.0\\.0\\.1:\\d+/mcp")), "url: $url")
            drive(mark, listOf("--url", url!!))
            server.outputStream.close()
            assertTrue(server.waitFor(120, TimeUnit.SECONDS), "the server did not stop at the end of its input")
            assertEquals(0, server.exitValue())
        } finally {
            server.destroyForcibly()
        }
    }

    @Test
    fun `Kotlin serveMcp over stdio`() = stdio("app.phaseo.agent.mcp.ServedToolsKt")

    @Test
    fun `Kotlin serveMcp over Streamable HTTP`() = http("app.phaseo.agent.mcp.ServedToolsKt")

    @Test
    fun `Java AgentSdk serveMcp over stdio`() = stdio("app.phaseo.agent.javaapi.ServedToolsJava")

    @Test
    fun `Java AgentSdk serveMcp over Streamable HTTP`() = http("app.phaseo.agent.javaapi.ServedToolsJava")

    @Test
    fun `bad servers are refused with definition_invalid`() = runBlocking {
        val empty = assertThrows(AgentException::class.java) { runBlocking { serveMcp(emptyList(), "none") } }
        assertEquals("definition_invalid", empty.code)
        val manual = assertThrows(AgentException::class.java) { runBlocking { serveMcp(listOf(defineTool("ask", "Asks")), "manual") } }
        assertEquals("definition_invalid", manual.code)
        assertEquals("Tool ask has no execute and cannot be served over MCP", manual.message)
        val bad = assertThrows(AgentException::class.java) {
            defineTool("t", annotations = buildJsonObject { put("readOnlyHint", "yes") }) { _, _ -> JsonPrimitive(1) }
        }
        assertTrue(bad.message!!.contains("annotations.readOnlyHint must be a boolean"), bad.message)
        val badJava = assertThrows(AgentSdk.AgentException::class.java) {
            AgentSdk.defineTool(AgentSdk.Tool("t") { _, _ -> 1 }.withAnnotations(mapOf("readOnlyHint" to "yes")))
        }
        assertTrue(badJava.message!!.contains("annotations.readOnlyHint must be a boolean"), badJava.message)
        val taken = ServerSocket(0)
        taken.use {
            val busy = assertThrows(AgentException::class.java) {
                runBlocking { serveMcp(servedTools(File("unused")), "busy", transport = mcpServeHttp(port = it.localPort)) }
            }
            assertEquals("definition_invalid", busy.code)
        }
        val javaEmpty = assertThrows(AgentSdk.AgentException::class.java) {
            AgentSdk.serveMcp(emptyList(), AgentSdk.McpServeOptions.builder("none").build())
        }
        assertEquals("definition_invalid", javaEmpty.code())
        val described = assertThrows(AgentSdk.AgentException::class.java) {
            AgentSdk.serveMcp(ServedToolsJava.tools(java.nio.file.Path.of("unused")), AgentSdk.McpServeOptions.builder("tools").description("Tools").build())
        }
        assertEquals("Invalid MCP server options: description describes a served agent; give agent", described.message)
    }

    @Test
    fun `an HTTP server reports its url and stops on close`() = runBlocking {
        val server = serveMcp(servedTools(File("unused")), "closing", transport = mcpServeHttp())
        server.use {
            assertTrue(it.url!!.startsWith("http://127.0.0.1:"), it.url)
            assertTrue(!it.isClosed)
        }
        val java = AgentSdk.serveMcp(ServedToolsJava.tools(java.nio.file.Path.of("unused")), AgentSdk.McpServeOptions.builder("java").http().build())
        val closed = java.closed()
        assertTrue(!closed.isDone)
        java.close()
        closed.get(60, TimeUnit.SECONDS)
        assertTrue(java.isClosed())
    }

    @Test
    fun `the Java example serves its two tools over stdio`() = servedExample("examples/java/run.sh")

    @Test
    fun `the Kotlin example serves its two tools over stdio`() = servedExample("examples/kotlin/run.sh")

    /** An agent uses the example `run.sh ServeTools` serves as its MCP server. */
    private fun servedExample(script: String) = runBlocking {
        val example = mcpStdio(
            "orders", "bash", listOf(File(repo, script).path, "ServeTools"),
            onError = OnError.RETURN_TO_MODEL, timeoutMs = 120_000,
        )
        createAgent("orders-agent", mcpServers = listOf(example)).use { agent ->
            val model = RecordingModel(
                listOf(
                    callsResponse(call("c1", "lookup_order", """{"orderId":"A-1"}"""), call("c2", "refund_order", """{"orderId":"A-1","amount":5}""")),
                    textResponse("done"),
                ),
            )
            val results = toolResults(agent.run("go", model.client))
            assertEquals(parseJson("""{"order_id":"A-1","status":"shipped","total":42}"""), results[0]["result"])
            // The agent's MCP client answers no elicitation, so the approval-gated refund is refused.
            assertEquals(
                "Tool refund_order requires approval and this client cannot be asked",
                results[1]["error"]!!.jsonPrimitive.content.substringAfter(": "),
            )
        }
    }
}
