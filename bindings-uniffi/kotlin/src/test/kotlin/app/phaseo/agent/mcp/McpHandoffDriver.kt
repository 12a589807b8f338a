// The Kotlin driver of tests/mcp-handoff (an MCP approval paused in one language and
// continued in another; the contract is in tests/mcp-handoff/run.sh): agent `mcp-handoff`
// with one stdio MCP server `files` (our test server, tool prefix `files`, destructive
// calls need approval); the scripted model calls `files_delete_file` {"path":
// "report.txt"} and then answers "Deleted report.txt.".
//
//   java -cp … app.phaseo.agent.mcp.McpHandoffDriverKt pause STATE_FILE
//   java -cp … app.phaseo.agent.mcp.McpHandoffDriverKt continue STATE_FILE
//
// `pause` writes the paused state JSON to STATE_FILE; `continue` reads it, approves "c1",
// continues. Each prints one JSON line `{"pid", "status"}` (+ `"output"` for continue);
// pid is this JVM, which the test server records in $PHASEO_MCP_MARKERS/deleted-report.txt
// as the process that started it. Environment: PHASEO_REPO (the repository root),
// PHASEO_PYTHON (a Python with the `mcp` package), PHASEO_MCP_MARKERS.
package app.phaseo.agent.mcp

import app.phaseo.agent.AgentException
import app.phaseo.agent.McpApprovalPolicy
import app.phaseo.agent.call
import app.phaseo.agent.callsResponse
import app.phaseo.agent.continueRun
import app.phaseo.agent.createAgent
import app.phaseo.agent.decision
import app.phaseo.agent.mcpStdio
import app.phaseo.agent.parseJson
import app.phaseo.agent.parseState
import app.phaseo.agent.run
import app.phaseo.agent.scriptedClient
import app.phaseo.agent.textResponse
import java.io.File
import kotlin.system.exitProcess
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put

private const val ANSWER = "Deleted report.txt."

private fun env(name: String): String = System.getenv(name) ?: run {
    System.err.println("mcp-handoff driver: $name is not set")
    exitProcess(2)
}

fun main(args: Array<String>) {
    if (args.size != 2 || args[0] !in setOf("pause", "continue")) {
        System.err.println("usage: McpHandoffDriverKt pause|continue STATE_FILE")
        exitProcess(2)
    }
    val (mode, stateFile) = args
    val repo = env("PHASEO_REPO")
    val markers = env("PHASEO_MCP_MARKERS")
    val files = mcpStdio(
        "files", env("PHASEO_PYTHON"), listOf(File(repo, "tests/mcp/test_server.py").path),
        env = mapOf("PHASEO_MCP_MARKERS" to markers),
        toolPrefix = "files",
        requireApproval = McpApprovalPolicy.Destructive,
    )
    val code = runBlocking {
        createAgent("mcp-handoff", mcpServers = listOf(files)).use { agent ->
            try {
                if (mode == "pause") {
                    val client = scriptedClient(callsResponse(call("c1", "files_delete_file", """{"path":"report.txt"}""")), textResponse(ANSWER))
                    val paused = agent.run("Delete report.txt", client)
                    File(stateFile).writeText(paused.toJson())
                    println(buildJsonObject {
                        put("pid", ProcessHandle.current().pid())
                        put("status", paused.status().name.lowercase())
                    })
                } else {
                    val state = parseState(File(stateFile).readText())
                    val done = agent.continueRun(state, scriptedClient(textResponse(ANSWER)), approvals = listOf(decision("c1")))
                    println(buildJsonObject {
                        put("pid", ProcessHandle.current().pid())
                        put("status", done.status().name.lowercase())
                        put("output", parseJson(done.outputJson()))
                    })
                }
                0
            } catch (e: AgentException) {
                println(buildJsonObject {
                    put("pid", ProcessHandle.current().pid())
                    put("error", e.code)
                    put("message", e.message)
                })
                1
            } finally {
                agent.closeServers()
            }
        }
    }
    System.out.flush()
    // The native library's threads would keep the JVM alive.
    exitProcess(code)
}
