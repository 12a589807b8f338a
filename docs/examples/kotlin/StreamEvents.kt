package docs.examples

import app.phaseo.agent.*
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.*

fun main() = runBlocking {
    val lookup = defineTool(
        "lookup-order",
        description = "Look up an order",
        parameters = parseJson("""{"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]}"""),
    ) { input, _ ->
        buildJsonObject {
            put("order", input.jsonObject["order"]!!)
            put("status", "shipped")
        }
    }
    val agent = createAgent("support", tools = listOf(lookup))
    // A scripted model: the first answer calls the tool, the second is the final text.
    val client = scriptedClient(
        parseJson("""{"toolCalls": [{"id": "c1", "name": "lookup-order", "arguments": "{\"order\": \"A-7\"}"}]}"""),
        parseJson("""{"text": "Order A-7 has shipped."}"""),
    )
    val stream = agent.stream("where is order A-7?", client) // a Flow of the run's events
    stream.collect { event ->
        val type = event["type"]!!.jsonPrimitive.content
        // Text, and the tool's arguments as the model writes them, arrive as deltas.
        val delta = event["delta"]?.jsonPrimitive?.content
        println(if (delta != null) "$type [$delta]" else type)
    }
    println(stream.result().output.jsonPrimitive.content) // replayed: every consumer sees the whole run
}
