package docs.examples

import app.phaseo.agent.*
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.*

/** One scripted model answer: a call of tool [name]. */
fun call(name: String, arguments: String): JsonObject = buildJsonObject {
    putJsonArray("toolCalls") {
        addJsonObject {
            put("id", "c1")
            put("name", name)
            put("arguments", arguments)
        }
    }
}

fun main() = runBlocking {
    val lookup = defineTool(
        "lookup-order",
        description = "Look up an order",
        parameters = parseJson("""{"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]}"""),
    ) { input, _ ->
        val order = input.jsonObject["order"]!!.jsonPrimitive.content
        if (order == "B-0") throw IllegalStateException("order service down")
        buildJsonObject {
            put("order", order)
            put("status", "shipped")
        }
    }
    val agent = createAgent("support", tools = listOf(lookup), maxSteps = 2)
    val attempts = linkedMapOf(
        "arguments that fail the schema" to listOf(call("lookup-order", """{"order": 7}""")),
        "a tool the agent does not have" to listOf(call("delete-everything", "{}")),
        "a tool that raises" to listOf(call("lookup-order", """{"order": "B-0"}""")),
        "a model that never answers" to List(2) { call("lookup-order", """{"order": "A-7"}""") },
    )
    for ((what, answers) in attempts) {
        try {
            agent.run("where is my order?", scriptedClient(*answers.toTypedArray()))
        } catch (error: AgentException) { // one family; `code` is the same in every language
            println("$what\n  ${error.code}: ${error.message}")
            check(error.result?.status() == RunStatus.FAILED) { "the error carries the run's final state" }
        }
    }
}
