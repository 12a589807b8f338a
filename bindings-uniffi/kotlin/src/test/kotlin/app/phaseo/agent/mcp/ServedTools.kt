// Tools served over MCP by the Kotlin API for McpServeTest: `ServedToolsKt stdio|http`. In
// HTTP mode the endpoint URL is the first line of stdout and the server stops when stdin
// closes. `CANCEL_MARK` names the file a cancelled `slow` call writes.
package app.phaseo.agent.mcp

import app.phaseo.agent.Tool
import app.phaseo.agent.defineTool
import app.phaseo.agent.jsonSchemaValidator
import app.phaseo.agent.mcpServeHttp
import app.phaseo.agent.parseJson
import app.phaseo.agent.serveMcp
import app.phaseo.agent.toolExecution
import java.io.File
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import kotlinx.serialization.json.put

/** The served tools: add, slow (until cancelled), steps (progress), delete (approval), sleepy (timeout). */
fun servedTools(cancelMark: File): List<Tool> = listOf(
    defineTool(
        "add", "Adds two numbers",
        parameters = parseJson("""{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}"""),
        outputSchema = jsonSchemaValidator(parseJson("""{"type":"object","properties":{"sum":{"type":"number"}}}""")),
        annotations = buildJsonObject { put("readOnlyHint", true); put("title", "Add numbers") },
    ) { input, _ ->
        buildJsonObject { put("sum", input.jsonObject["a"]!!.jsonPrimitive.long + input.jsonObject["b"]!!.jsonPrimitive.long) }
    },
    defineTool("slow", "Waits until cancelled") { _, runtime ->
        runtime.emitProgress(JsonPrimitive("started"))
        try {
            delay(120_000)
            JsonPrimitive("finished")
        } catch (e: CancellationException) {
            cancelMark.writeText("cancelled")
            throw e
        }
    },
    defineTool("steps", "Reports progress") { _, runtime ->
        runtime.emitProgress(buildJsonObject { put("progress", 1); put("total", 2); put("message", "half") })
        runtime.emitProgress(JsonPrimitive("almost"))
        JsonPrimitive(2)
    },
    defineTool("delete", "Deletes a file", requireApproval = true) { input, _ ->
        JsonPrimitive("deleted " + input.jsonObject["path"]!!.jsonPrimitive.content)
    },
    defineTool("sleepy", "Too slow", timeoutMs = 200) { _, _ ->
        delay(5_000)
        JsonPrimitive("late")
    },
)

fun main(args: Array<String>) = runBlocking {
    val tools = servedTools(File(System.getenv("CANCEL_MARK")))
    val execution = toolExecution(toolConcurrency = 4)
    if (args[0] == "stdio") {
        serveMcp(tools, "test-tools", "1.0.0", toolExecution = execution).use { it.wait() }
    } else {
        serveMcp(tools, "test-tools", "1.0.0", mcpServeHttp(port = 0), execution).use { server ->
            println(server.url)
            System.out.flush()
            System.`in`.readAllBytes()
            server.shutdown()
        }
    }
}
