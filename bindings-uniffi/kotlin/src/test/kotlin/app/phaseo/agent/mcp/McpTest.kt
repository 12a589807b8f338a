package app.phaseo.agent.mcp

import app.phaseo.agent.AgentException
import app.phaseo.agent.McpApprovalPolicy
import app.phaseo.agent.OnError
import app.phaseo.agent.RecordingModel
import app.phaseo.agent.RunResult
import app.phaseo.agent.RunStatus
import app.phaseo.agent.call
import app.phaseo.agent.callsResponse
import app.phaseo.agent.continueRun
import app.phaseo.agent.createAgent
import app.phaseo.agent.decision
import app.phaseo.agent.mcpHttp
import app.phaseo.agent.mcpStdio
import app.phaseo.agent.parseJson
import app.phaseo.agent.parseState
import app.phaseo.agent.run
import app.phaseo.agent.textResponse
import java.io.File
import java.net.ServerSocket
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.put
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/**
 * MCP servers' tools from Kotlin (docs/behaviour.md §11), against real servers: our Python test server
 * (official `mcp` package) over stdio and `@modelcontextprotocol/server-everything` over
 * stdio and Streamable HTTP.
 */
class McpTest {
    private fun offeredIds(model: RecordingModel, i: Int = 0): List<String> =
        model.requests[i]["tools"]!!.jsonArray.map { it.jsonObject["id"]!!.jsonPrimitive.content }.sorted()

    @Test
    fun `tools are listed, filtered and prefixed`() = runBlocking {
        val dir = markers()
        val server = testServer(
            "files", dir, toolPrefix = "fs", denyTools = listOf("crash", "noisy"),
            filter = { it.annotations["readOnlyHint"] == JsonPrimitive(true) || it.name == "delete_file" },
        )
        createAgent("lister", mcpServers = listOf(server)).use { agent ->
            val model = RecordingModel(listOf(textResponse("ok")))
            assertEquals(RunStatus.COMPLETED, agent.run("hi", model.client).status())
            assertEquals(listOf("fs_add", "fs_count_up", "fs_delete_file", "fs_echo", "fs_fail", "fs_slow"), offeredIds(model))
        }
        createAgent("lister", mcpServers = listOf(testServer("only", dir, allowTools = listOf("echo", "add")))).use { agent ->
            val model = RecordingModel(listOf(textResponse("ok")))
            agent.run("hi", model.client)
            assertEquals(listOf("add", "echo"), offeredIds(model))
        }
    }

    @Test
    fun `a call round trip maps text, structured and error results`() = runBlocking {
        val dir = markers()
        createAgent("caller", mcpServers = listOf(testServer("t", dir, onError = OnError.RETURN_TO_MODEL))).use { agent ->
            val model = RecordingModel(
                listOf(
                    callsResponse(call("c1", "echo", """{"text":"hello"}"""), call("c2", "add", """{"numbers":[1,2,3]}"""), call("c3", "fail", """{"reason":"nope"}""")),
                    textResponse("done"),
                ),
            )
            val result = agent.run("go", model.client)
            assertEquals(RunStatus.COMPLETED, result.status())
            val results = toolResults(result)
            assertEquals(JsonPrimitive("hello"), results[0]["result"])
            assertEquals(parseJson("""{"total":6,"count":3}"""), results[1]["result"])
            assertEquals("Error executing tool fail: failed: nope", results[2]["error"]!!.jsonPrimitive.content)
            // The model saw the tool messages of the round trip.
            assertEquals(listOf(JsonPrimitive("hello"), parseJson("""{"total":6,"count":3}""")), model.toolMessages(1).take(2).map { m -> m["content"]!!.jsonPrimitive.content.let { if (it.startsWith("{")) parseJson(it) else JsonPrimitive(it) } })
        }
    }

    @Test
    fun `destructive calls pause, the state goes through JSON, another agent continues and the server is called`() = runBlocking {
        val dir = markers()
        val server = testServer("t", dir, requireApproval = McpApprovalPolicy.Destructive)
        val json = createAgent("mcp-agent", mcpServers = listOf(server)).use { first ->
            val paused = first.run(
                "go",
                RecordingModel(listOf(callsResponse(call("c1", "delete_file", """{"path":"a.txt"}"""), call("c2", "echo", """{"text":"read-only runs"}""")), textResponse("done"))).client,
            )
            assertEquals(RunStatus.WAITING_FOR_HUMAN, paused.status())
            val pending = parseJson(paused.pendingJson()).jsonArray.map { it.jsonObject["call"]!!.jsonObject["id"]!!.jsonPrimitive.content }
            assertEquals(listOf("c1"), pending)
            assertFalse(File(dir, "deleted-a.txt").exists())
            paused.toJson()
        }
        // Another agent instance, as another process would build it: its own connection.
        createAgent("mcp-agent", mcpServers = listOf(server)).use { second ->
            val done = second.continueRun(parseState(json), RecordingModel(listOf(textResponse("done"))).client, approvals = listOf(decision("c1")))
            assertEquals(RunStatus.COMPLETED, done.status())
            assertTrue(File(dir, "deleted-a.txt").exists())
            val byId = toolResults(done).associateBy { it["toolCallId"]!!.jsonPrimitive.content }
            assertEquals(JsonPrimitive("deleted a.txt"), byId["c1"]!!["result"])
            assertEquals(JsonPrimitive("read-only runs"), byId["c2"]!!["result"])
        }
        assertEquals(2, serverPids(dir).size)
    }

    @Test
    fun `a predicate decides approval from the annotations`() = runBlocking {
        val dir = markers()
        val seen = mutableListOf<String>()
        val server = testServer(
            "t", dir,
            requireApproval = McpApprovalPolicy.Predicate { input, runtime ->
                seen += runtime.toolCall.name
                runtime.toolAnnotations?.get("destructiveHint") == JsonPrimitive(true) && input.jsonObject["path"]?.jsonPrimitive?.content != "tmp.txt"
            },
        )
        createAgent("mcp-agent", mcpServers = listOf(server)).use { agent ->
            val paused = agent.run(
                "go",
                RecordingModel(listOf(callsResponse(call("c1", "delete_file", """{"path":"a.txt"}"""), call("c2", "delete_file", """{"path":"tmp.txt"}"""), call("c3", "echo", """{"text":"x"}""")))).client,
            )
            assertEquals(RunStatus.WAITING_FOR_HUMAN, paused.status())
            assertEquals(listOf("c1"), parseJson(paused.pendingJson()).jsonArray.map { it.jsonObject["call"]!!.jsonObject["id"]!!.jsonPrimitive.content })
            assertEquals(listOf("delete_file", "delete_file", "echo"), seen.sorted())
        }
    }

    @Test
    fun `a timeout returns on time and the server sees notifications cancelled`() = runBlocking {
        val dir = markers()
        // The deadline is 1.5 s away so that the server has begun the call (a loaded machine
        // may take several hundred ms to hand it over) before the cancellation reaches it.
        val server = testServer("t", dir, timeoutMs = 60_000, toolTimeoutsMs = mapOf("slow" to 1_500L), onError = OnError.RETURN_TO_MODEL)
        createAgent("mcp-agent", mcpServers = listOf(server)).use { agent ->
            // Start the server first so the wall time measures the call only.
            agent.run("warm", RecordingModel(listOf(textResponse("ok"))).client)
            val started = System.nanoTime()
            val result = agent.run("go", RecordingModel(listOf(callsResponse(call("c1", "slow", """{"seconds":20,"tag":"t1"}""")), textResponse("ok"))).client)
            val elapsedMs = (System.nanoTime() - started) / 1_000_000
            assertTrue(elapsedMs < 3_000, "took $elapsedMs ms")
            assertEquals("Tool slow timed out after 1500ms", toolResults(result)[0]["error"]!!.jsonPrimitive.content)
            assertTrue(waitFor(File(dir, "cancelled-t1"), 10_000), "the server did not see notifications/cancelled")
            assertFalse(File(dir, "finished-t1").exists())
        }
    }

    private suspend fun crash(server: app.phaseo.agent.McpServerConfig): RunResult =
        createAgent("mcp-agent", mcpServers = listOf(server)).use { agent ->
            agent.run("go", RecordingModel(listOf(callsResponse(call("c1", "crash")), callsResponse(call("c2", "echo", """{"text":"again"}""")), textResponse("ok"))).client)
        }

    @Test
    fun `a crashed server is mcp_failed under both policies`() = runBlocking {
        val dir = markers()
        val failed = assertThrows<AgentException> { runBlocking { crash(testServer("t", dir)) } }
        assertEquals("mcp_failed", failed.code)
        assertTrue(failed.message!!.startsWith("MCP server 't' exited"), failed.message)
        assertTrue(failed.message!!.contains("crashing on purpose"), failed.message)
        assertEquals(RunStatus.FAILED, failed.result!!.status())

        val result = crash(testServer("t", dir, onError = OnError.RETURN_TO_MODEL))
        assertEquals(RunStatus.COMPLETED, result.status())
        val results = toolResults(result)
        assertTrue(results[0]["error"]!!.jsonPrimitive.content.startsWith("MCP server 't' exited"), results[0].toString())
        // The next call started the server again.
        assertEquals(JsonPrimitive("again"), results[1]["result"])
        assertEquals(3, serverPids(dir).size)
    }

    @Test
    fun `use closes the agent and no stdio server outlives it`() = runBlocking {
        val dir = markers()
        createAgent("mcp-agent", mcpServers = listOf(testServer("t", dir))).use { agent ->
            agent.run("go", RecordingModel(listOf(callsResponse(call("c1", "echo", """{"text":"x"}""")), textResponse("ok"))).client)
            assertTrue(serverPids(dir).single().let(::alive))
        }
        val pid = serverPids(dir).single()
        val end = System.currentTimeMillis() + 5_000
        while (alive(pid) && System.currentTimeMillis() < end) Thread.sleep(20)
        assertFalse(alive(pid), "server $pid outlived the agent")
        // closeServers() stops them too, and a later run starts them again.
        val again = markers()
        val agent = createAgent("mcp-agent", mcpServers = listOf(testServer("t", again)))
        agent.run("go", RecordingModel(listOf(callsResponse(call("c1", "echo", """{"text":"x"}""")), textResponse("ok"))).client)
        val first = serverPids(again).single()
        agent.closeServers()
        assertFalse(alive(first), "server $first outlived closeServers()")
        agent.run("go", RecordingModel(listOf(callsResponse(call("c1", "echo", """{"text":"y"}""")), textResponse("ok"))).client)
        assertEquals(2, serverPids(again).size)
        agent.close()
    }

    private suspend fun echoRoundTrip(server: app.phaseo.agent.McpServerConfig) {
        createAgent("everything", mcpServers = listOf(server)).use { agent ->
            val model = RecordingModel(listOf(callsResponse(call("c1", "ev_echo", """{"message":"hi"}"""), call("c2", "ev_get-sum", """{"a":2,"b":3}""")), textResponse("done")))
            val result = agent.run("go", model.client)
            assertEquals(RunStatus.COMPLETED, result.status())
            assertTrue("ev_echo" in offeredIds(model), offeredIds(model).toString())
            val results = toolResults(result)
            assertEquals(JsonPrimitive("Echo: hi"), results[0]["result"])
            assertEquals(JsonPrimitive("The sum of 2 and 3 is 5."), results[1]["result"])
        }
    }

    @Test
    fun `server-everything round trip over stdio`() = runBlocking {
        echoRoundTrip(mcpStdio("everything", everything, listOf("stdio"), toolPrefix = "ev"))
    }

    @Test
    fun `server-everything round trip over Streamable HTTP`() = runBlocking {
        val port = ServerSocket(0).use { it.localPort }
        val process = ProcessBuilder(everything, "streamableHttp").also { it.environment()["PORT"] = port.toString() }
            .redirectOutput(ProcessBuilder.Redirect.DISCARD).start()
        try {
            val stderr = process.errorStream.bufferedReader()
            val deadline = System.currentTimeMillis() + 30_000
            var listening = false
            while (!listening && System.currentTimeMillis() < deadline) {
                val line = stderr.readLine() ?: break
                listening = "listening on port" in line
            }
            assertTrue(listening, "server-everything did not start listening")
            Thread { stderr.readText() }.apply { isDaemon = true }.start() // keep its pipe drained
            echoRoundTrip(mcpHttp("everything", "http://127.0.0.1:$port/mcp", headers = mapOf("X-Test" to "1"), bearer = "not-checked", toolPrefix = "ev"))
        } finally {
            process.destroyForcibly()
            process.waitFor(10, TimeUnit.SECONDS)
        }
    }

    @Test
    fun `elicitation requests go to the hook`() = runBlocking {
        val seen = java.util.Collections.synchronizedList(mutableListOf<Pair<String, kotlinx.serialization.json.JsonObject>>())
        val server = mcpStdio("everything", everything, listOf("stdio"), onElicitation = { name, request ->
            seen += name to request
            buildJsonObject {
                put("action", "accept")
                put("content", buildJsonObject { put("name", "Ada Lovelace") })
            }
        })
        createAgent("eli", mcpServers = listOf(server)).use { agent ->
            val result = agent.run("go", RecordingModel(listOf(callsResponse(call("c1", "trigger-elicitation-request")), textResponse("ok"))).client)
            assertEquals(1, seen.size)
            assertEquals("everything", seen[0].first)
            assertEquals(JsonPrimitive("Please provide inputs for the following fields:"), seen[0].second["message"])
            val out = toolResults(result)[0]["result"].toString()
            assertTrue("Ada Lovelace" in out, out)
        }
    }

    @Test
    fun `an optional server that cannot start is skipped - a required one fails the run`() = runBlocking {
        val dir = markers()
        val good = testServer("good", dir, allowTools = listOf("echo"))
        createAgent("opt", mcpServers = listOf(good, mcpStdio("broken", "/nonexistent/mcp-server", optional = true))).use { agent ->
            val model = RecordingModel(listOf(textResponse("ok")))
            assertEquals(RunStatus.COMPLETED, agent.run("go", model.client).status())
            assertEquals(listOf("echo"), offeredIds(model))
        }
        createAgent("req", mcpServers = listOf(mcpStdio("broken", "/nonexistent/mcp-server"))).use { agent ->
            val e = assertThrows<AgentException> { runBlocking { agent.run("go", RecordingModel(listOf(textResponse("ok"))).client) } }
            assertEquals("mcp_failed", e.code)
            assertTrue(e.message!!.startsWith("MCP server 'broken' could not start: "), e.message)
            assertEquals(RunStatus.FAILED, e.result!!.status())
        }
    }

    @Test
    fun `the tool list is cached until cacheTtlMs passes`() = runBlocking {
        val dir = markers()
        createAgent("ttl", mcpServers = listOf(mcpStdio("t", python, listOf(File(repo, "tests/mcp/test_server.py").path), env = mapOf("PHASEO_MCP_MARKERS" to dir.path), cacheTtlMs = 1_500))).use { agent ->
            agent.run("go", RecordingModel(listOf(callsResponse(call("c1", "grow_quietly")), textResponse("done"))).client)
            // No notification: the cached list holds until the TTL passes.
            val second = RecordingModel(listOf(textResponse("done")))
            agent.run("go", second.client)
            assertFalse("quiet" in offeredIds(second))
            Thread.sleep(1_600)
            val third = RecordingModel(listOf(textResponse("done")))
            agent.run("go", third.client)
            assertTrue("quiet" in offeredIds(third))
        }
    }

    @Test
    fun `an invalid server declaration is definition_invalid`() {
        val e = assertThrows<AgentException> { createAgent("bad", mcpServers = listOf(mcpStdio("", "python3"))) }
        assertEquals("definition_invalid", e.code)
        assertTrue(e.message!!.contains("name must not be empty"), e.message)
    }
}
