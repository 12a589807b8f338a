// Two tools served over MCP on this process's stdin and stdout: an MCP client (an IDE, a
// desktop assistant, another agent) starts this program and calls them.
package docs.examples

import app.phaseo.agent.*
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.*

fun main() = runBlocking {
    val order = parseJson("""{"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]}""")
    val lookup = defineTool("lookup-order", description = "Look up an order", parameters = order) { input, _ ->
        buildJsonObject {
            put("order", input.jsonObject["order"]!!)
            put("status", "shipped")
        }
    }
    val cancel = defineTool("cancel-order", description = "Cancel an order", parameters = order) { input, _ ->
        buildJsonObject {
            put("order", input.jsonObject["order"]!!)
            put("cancelled", true)
        }
    }
    // stdout now speaks MCP: log to System.err, never println. Serves until the client closes stdin.
    serveMcp(listOf(lookup, cancel), name = "orders").use { it.wait() }
}
