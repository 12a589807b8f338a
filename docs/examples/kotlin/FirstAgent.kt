package docs.examples

import app.phaseo.agent.*
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.*

fun main() = runBlocking {
    val deploy = defineTool(
        "deploy",
        description = "Deploy a release",
        requireApproval = true,
        timeoutMs = 5_000,
        parameters = parseJson("""{"type": "object", "properties": {"env": {"type": "string"}}, "required": ["env"]}"""),
    ) { input, runtime ->
        runtime.emitProgress(buildJsonObject { put("phase", "rolling out") })
        buildJsonObject {
            put("deployed", input.jsonObject["env"]!!)
            put("key", runtime.toolCall.id)
        }
    }
    val agent = createAgent("ops", tools = listOf(deploy))
    // A scripted model: the first answer calls the tool, the second is the final text.
    val client = scriptedClient(
        parseJson("""{"toolCalls": [{"id": "c1", "name": "deploy", "arguments": "{\"env\": \"prod\"}"}]}"""),
        parseJson("""{"text": "Deployed."}"""),
    )
    val paused = agent.run("deploy to prod", client)
    val stored = paused.toJson() // persist anywhere; any language continues it
    val done = agent.continueRun(parseState(stored), client, approvals = listOf(decision("c1")))
    println(done.output.jsonPrimitive.content) // Deployed.
}
