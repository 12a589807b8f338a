// Two tools served over MCP from Kotlin (`serveMcp`): any MCP client (Claude Desktop, an
// IDE, the MCP Inspector) lists and calls them. `refund_order` needs approval, which the
// server asks the client for through elicitation. Serves stdio until the client closes it:
//
//     make kotlin && examples/kotlin/run.sh ServeTools
//
// Standard output carries the protocol: write nothing else to it.
package examples

import app.phaseo.agent.defineTool
import app.phaseo.agent.parseJson
import app.phaseo.agent.serveMcp
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.put

fun main() = runBlocking {
    val lookup = defineTool(
        "lookup_order", "Look up an order by id.",
        parameters = parseJson("""{"type":"object","properties":{"orderId":{"type":"string"}},"required":["orderId"]}"""),
    ) { input, _ ->
        buildJsonObject {
            put("order_id", input.jsonObject["orderId"]!!)
            put("status", "shipped")
            put("total", 42)
        }
    }
    val refund = defineTool(
        "refund_order", "Refund an order. A person approves every refund.",
        parameters = parseJson(
            """{"type":"object","properties":{"orderId":{"type":"string"},"amount":{"type":"number","minimum":0}},"required":["orderId","amount"]}""",
        ),
        requireApproval = true,
    ) { input, _ ->
        val order = input.jsonObject
        JsonPrimitive("Refunded ${order["amount"]!!.jsonPrimitive.content} on ${order["orderId"]!!.jsonPrimitive.content}")
    }
    serveMcp(listOf(lookup, refund), "orders", "1.0.0").use { it.wait() }
}
