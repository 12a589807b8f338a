package docs.examples

import app.phaseo.agent.*
import java.util.Collections
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.*

fun main() = runBlocking {
    val checkService = defineTool(
        "check-service",
        description = "Check one service",
        timeoutMs = 3_000,
        parameters = parseJson("""{"type": "object", "properties": {"service": {"type": "string"}}, "required": ["service"]}"""),
    ) { input, runtime ->
        val service = input.jsonObject["service"]!!.jsonPrimitive.content
        runtime.emitProgress(buildJsonObject { put("checking", service) }) // a tool.preliminary_result event
        buildJsonObject {
            put("service", service)
            put("up", service != "db")
        }
    }
    // The three calls of one turn run side by side; results keep the model's call order.
    val agent = createAgent("status", tools = listOf(checkService), toolExecution = toolExecution(toolConcurrency = 3))
    val client = scriptedClient(
        buildJsonObject {
            putJsonArray("toolCalls") {
                listOf("api", "db", "queue").forEachIndexed { i, service ->
                    addJsonObject {
                        put("id", "c${i + 1}")
                        put("name", "check-service")
                        put("arguments", """{"service": "$service"}""")
                    }
                }
            }
        },
        parseJson("""{"text": "api and queue are up; db is down."}"""),
    )
    val progress = Collections.synchronizedList(mutableListOf<String>())
    val result = agent.run("status?", client, onEvent = { event ->
        if (event["type"]?.jsonPrimitive?.content == "tool.preliminary_result") {
            val checking = event["result"]!!.jsonObject["checking"]!!.jsonPrimitive.content
            progress.add("${event["toolCallId"]!!.jsonPrimitive.content} progress: checking $checking")
        }
    })
    println(progress.sorted().joinToString("\n")) // the calls overlap: their progress arrives in any order
    println(result.output.jsonPrimitive.content)
}
