package docs.examples

import app.phaseo.agent.*
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.*

fun main() = runBlocking {
    // Every run from now on records spans. The collector's address comes from
    // OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318) unless `endpoint` is given.
    enableTracing(serviceName = "orders-bot")

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
    val client = scriptedClient(
        parseJson("""{"toolCalls": [{"id": "c1", "name": "lookup-order", "arguments": "{\"order\": \"A-7\"}"}]}"""),
        parseJson("""{"text": "Order A-7 has shipped."}"""),
    )
    val agent = createAgent("support", tools = listOf(lookup))
    println(agent.run("where is order A-7?", client).output.jsonPrimitive.content)
    flushTracing() // export now (what is left is also exported by a JVM shutdown hook)
}
