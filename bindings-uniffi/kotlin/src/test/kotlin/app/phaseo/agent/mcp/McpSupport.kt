package app.phaseo.agent.mcp

import app.phaseo.agent.McpApprovalPolicy
import app.phaseo.agent.McpServerConfig
import app.phaseo.agent.McpToolInfo
import app.phaseo.agent.OnError
import app.phaseo.agent.RunResult
import app.phaseo.agent.mcpStdio
import app.phaseo.agent.parseJson
import java.io.File
import java.nio.file.Files
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import org.junit.jupiter.api.Assertions.fail

/** The repository root (Maven runs the tests in bindings-uniffi/kotlin). */
val repo: File = File("../..").canonicalFile

/** The dev venv's Python with the official `mcp` package; missing, the test FAILS (`make mcp-servers`). */
val python: String by lazy {
    val py = File(repo, ".venvs/py/bin/python")
    if (!py.exists() || !File(repo, ".venvs/py/.mcp").exists()) fail<Unit>("the Python `mcp` package (.venvs/py) is not installed: run `make mcp-servers`")
    py.path
}

/** `@modelcontextprotocol/server-everything`'s CLI; missing, the test FAILS. */
val everything: String by lazy {
    val bin = File(repo, "tests/mcp/node_modules/.bin/mcp-server-everything")
    if (!bin.exists()) fail<Unit>("@modelcontextprotocol/server-everything is not installed: run `make mcp-servers`")
    bin.path
}

/** A fresh folder for the test server's marker files. */
fun markers(): File = Files.createTempDirectory("phaseo-mcp").toFile()

/** Our Python test server (tests/mcp/test_server.py) over stdio, writing markers into [dir]. */
fun testServer(
    name: String,
    dir: File,
    allowTools: List<String>? = null,
    denyTools: List<String> = emptyList(),
    filter: ((McpToolInfo) -> Boolean)? = null,
    toolPrefix: String? = null,
    requireApproval: McpApprovalPolicy? = null,
    timeoutMs: Long? = null,
    toolTimeoutsMs: Map<String, Long> = emptyMap(),
    onError: OnError? = null,
    deferLoading: Boolean = false,
): McpServerConfig = mcpStdio(
    name, python, listOf(File(repo, "tests/mcp/test_server.py").path),
    env = mapOf("PHASEO_MCP_MARKERS" to dir.path, "PHASEO_MCP_NAME" to name),
    allowTools = allowTools, denyTools = denyTools, filter = filter, toolPrefix = toolPrefix,
    requireApproval = requireApproval, timeoutMs = timeoutMs, toolTimeoutsMs = toolTimeoutsMs, onError = onError,
    deferLoading = deferLoading,
)

/** Waits up to [ms] for [file]. */
fun waitFor(file: File, ms: Long): Boolean {
    val end = System.currentTimeMillis() + ms
    while (System.currentTimeMillis() < end) {
        if (file.exists()) return true
        Thread.sleep(20)
    }
    return file.exists()
}

/** The pids the test server recorded in [dir]. */
fun serverPids(dir: File): List<Long> =
    dir.listFiles().orEmpty().mapNotNull { it.name.removePrefix("pid-").takeIf { n -> n != it.name }?.toLongOrNull() }

/** Whether process [pid] exists (and is not a zombie). */
fun alive(pid: Long): Boolean {
    val stat = File("/proc/$pid/stat")
    return stat.exists() && !stat.readText().substringAfterLast(')').trimStart().startsWith("Z")
}

/** Every tool result of a run, in order. */
fun toolResults(result: RunResult): List<JsonObject> =
    parseJson(result.toJson()).jsonObject["stepResults"]!!.jsonArray.flatMap { s -> s.jsonObject["toolResults"]!!.jsonArray.map { it.jsonObject } }

/** The tool ids each model request offered. */
fun offered(request: JsonObject): List<String> =
    request["tools"]!!.jsonArray.map { (it.jsonObject["id"] ?: it.jsonObject["name"])!!.toString().trim('"') }.sorted()
