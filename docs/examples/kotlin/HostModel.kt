package docs.examples

import app.phaseo.agent.*
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.*

fun main() = runBlocking {
    // A model client of your own: a suspend function from the request to a response (here,
    // without a real model); `modelClient(stream = …)` gives one that streams.
    val echoModel = modelClient { request ->
        val question = request["messages"]!!.jsonArray.last().jsonObject["content"]!!.jsonPrimitive.content
        val agentId = request["agentId"]!!.jsonPrimitive.content
        buildJsonObject { put("text", "$agentId heard: $question") }
    }
    val agent = createAgent("support")
    println(agent.run("where is order A-7?", echoModel).output.jsonPrimitive.content)
}
