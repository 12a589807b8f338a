package docs.examples

import app.phaseo.agent.*
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.*

fun main() = runBlocking {
    val deploy = defineTool(
        "deploy",
        description = "Deploy a release",
        requireApproval = true,
        retry = toolRetry(maxAttempts = 3, backoffMs = 10),
        maxCalls = 1, // at most one deploy per run
        parameters = parseJson("""{"type": "object", "properties": {"env": {"enum": ["staging", "production"]}}, "required": ["env"]}"""),
    ) { input, runtime ->
        val env = input.jsonObject["env"]!!.jsonPrimitive.content
        if (runtime.attempt == 1) { // the first attempt fails; the SDK retries it
            println("attempt 1 to deploy to $env: registry busy")
            error("registry busy")
        }
        // The same key on every attempt and after any continue: hand it to the service.
        check(runtime.idempotencyKey.endsWith(":c1"))
        println("attempt ${runtime.attempt} deployed to $env")
        buildJsonObject { put("deployed", env) }
    }
    val agent = createAgent("ops", tools = listOf(deploy))
    val client = scriptedClient(
        parseJson("""{"toolCalls": [{"id": "c1", "name": "deploy", "arguments": "{\"env\": \"production\"}"}]}"""),
        parseJson("""{"text": "Deployed to staging."}"""),
    )
    val paused = agent.run("deploy", client)
    // The person approves, but to staging: the edited input is validated before anything runs.
    val done = agent.continueRun(
        parseState(paused.toJson()),
        client,
        approvals = listOf(decision("c1", editedInput = buildJsonObject { put("env", "staging") })),
    )
    println(done.output.jsonPrimitive.content)
}
