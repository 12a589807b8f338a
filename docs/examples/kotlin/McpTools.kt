package docs.examples

import app.phaseo.agent.*
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.*

fun main() = runBlocking {
    // An MCP server started as a child process and spoken to over stdio: here the protocol's
    // reference server, installed under tests/mcp; any server's command works the same way.
    val everything = mcpStdio(
        "everything",
        "node",
        listOf("tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"),
        allowTools = listOf("echo"), // offer only these of the server's tools
    )
    // A scripted model: the first answer calls the server's tool, the second is the final text.
    val client = scriptedClient(
        parseJson("""{"toolCalls": [{"id": "c1", "name": "echo", "arguments": "{\"message\": \"hello\"}"}]}"""),
        parseJson("""{"text": "The server said hello."}"""),
    )
    // The server starts when a run first needs its tools and stops with the agent.
    createAgent("assistant", mcpServers = listOf(everything)).use { agent ->
        val result = agent.run("say hello through the server", client, onEvent = { event ->
            if (event["type"]?.jsonPrimitive?.content == "tool.completed") {
                println("${event["toolName"]!!.jsonPrimitive.content} -> ${event["output"]!!.jsonPrimitive.content}")
            }
        })
        println(result.output.jsonPrimitive.content)
    }
}
