// A runnable quickstart (offline: the built-in scripted client). From the repository root,
// after `make kotlin`:
//   java -Djna.library.path=target/debug \
//     -cp bindings-uniffi/kotlin/target/classes:bindings-uniffi/kotlin/target/test-classes:$(cat bindings-uniffi/kotlin/target/classpath.txt) \
//     app.phaseo.agent.examples.QuickstartKt
package app.phaseo.agent.examples

import app.phaseo.agent.*
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.*

fun main() = runBlocking {
    val weather = defineTool(
        "weather",
        "Current weather for a city",
        parameters = parseJson("""{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}"""),
        timeoutMs = 2_000,
    ) { input, runtime ->
        runtime.emitProgress(buildJsonObject { put("status", "looking up") })
        delay(50) // a real suspension: the tool is a coroutine
        buildJsonObject {
            put("city", input.jsonObject["city"]!!)
            put("celsius", 21)
        }
    }
    val agent = createAgent("assistant", tools = listOf(weather), instructions = "Answer briefly.")
    val client = scriptedClient(
        parseJson("""{"toolCalls":[{"id":"c1","name":"weather","arguments":"{\"city\":\"Lisbon\"}"}]}"""),
        parseJson("""{"text":"It is 21°C in Lisbon."}"""),
    )
    val result = agent.run("Weather in Lisbon?", client, onEvent = { println("event: ${it.type}") })
    println("${result.status()}: ${result.outputText()}")
}
