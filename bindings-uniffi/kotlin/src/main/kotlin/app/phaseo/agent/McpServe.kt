// Serving the application's tools (or one agent) as an MCP server (docs/behaviour.md §19):
// the core runs the server; this file only gives it Kotlin's shapes (named arguments,
// suspend, `use {}`).
package app.phaseo.agent

import kotlinx.serialization.json.JsonObject

/**
 * Where a served MCP server listens: [McpServeTransport.Stdio] (the process's standard input
 * and output, the default) or Streamable HTTP, e.g. `mcpServeHttp(port = 0)`.
 */
fun mcpServeHttp(
    host: String? = null,
    port: Int? = null,
    path: String? = null,
    authToken: String? = null,
    allowedOrigins: List<String> = emptyList(),
    allowedHosts: List<String> = emptyList(),
): McpServeTransport {
    require(port == null || port in 0..65535) { "Invalid MCP server options: transport.port must be 0..65535, got $port" }
    return McpServeTransport.Http(host, port?.toUShort(), path, authToken, allowedOrigins, allowedHosts)
}

/**
 * A running MCP server serving tools, from [serveMcp]. It stops at the end of its input
 * (stdio), on [shutdown] or [close] (calls in flight are cancelled), and with its process.
 * `serveMcp(...).use { it.wait() }` serves until the client goes away.
 */
class McpToolServer internal constructor(private val native: McpServeHandle) : AutoCloseable {
    @Volatile
    private var released = false

    /** `http://host:port/path` of a Streamable HTTP server; `null` on stdio. */
    val url: String? = native.url()

    /** Whether the server has stopped. */
    val isClosed: Boolean get() = released || native.isClosed()

    /** Suspends until the server stops (the client closed its input, or [shutdown]/[close]). */
    suspend fun wait() {
        if (!released) native.wait()
    }

    /** Stops the server, cancelling calls in flight, and suspends until it has stopped. */
    suspend fun shutdown() {
        if (!released) native.shutdown()
    }

    /**
     * Stops the server (calls in flight are cancelled, a pending [wait] returns) and releases
     * it; does not wait for it to finish stopping (use [shutdown] for that). Idempotent.
     */
    @Synchronized
    override fun close() {
        if (released) return
        native.closeNow()
        released = true
        native.close()
    }

    override fun toString() = "McpToolServer(url=$url, closed=$isClosed)"
}

/**
 * Serves [tools] as an MCP server named [name] (docs/behaviour.md §19): any MCP client lists
 * and calls them, and every call keeps its validation, approval (asked through the client's
 * elicitation), timeout, retries, progress and budgets. [transport] is stdio (nothing else
 * may then write to standard output) or [mcpServeHttp]; [toolExecution] sets how many calls
 * run at once (`toolConcurrency`, default 1) and `maxToolCalls` over the server's lifetime;
 * [onEvent] receives the `tool.*` events of every call. An empty list, a tool without an
 * executor or duplicate ids throw `definition_invalid`, as does an address that cannot be bound.
 */
suspend fun serveMcp(
    tools: List<Tool>,
    name: String,
    version: String = "0.0.0",
    transport: McpServeTransport = McpServeTransport.Stdio,
    toolExecution: ToolExecution? = null,
    onEvent: ((event: JsonObject) -> Unit)? = null,
): McpToolServer = sdk {
    McpToolServer(
        serveMcp(tools, McpServeOptions(name, version, transport, toolExecution, onEvent?.let { KotlinListener(it) })),
    )
}

/**
 * Serves [agent] as one tool of an MCP server named [name] (docs/behaviour.md §19): the tool
 * has the agent's id, one string `input` and [description]; a call runs the agent on
 * [client] and returns its output. When the run pauses for approvals, each is asked of the
 * MCP client through elicitation (a declined call is the agent's rejection and the run goes
 * on); a client without elicitation, or a pause for a client tool or human input, gets an
 * error result. [transport], [toolExecution] and [onEvent] as for tools.
 */
suspend fun serveMcp(
    agent: Agent,
    client: Client,
    name: String,
    version: String = "0.0.0",
    transport: McpServeTransport = McpServeTransport.Stdio,
    toolExecution: ToolExecution? = null,
    description: String? = null,
    onEvent: ((event: JsonObject) -> Unit)? = null,
): McpToolServer = sdk {
    McpToolServer(
        serveMcpAgent(
            agent,
            McpServeOptions(name, version, transport, toolExecution, onEvent?.let { KotlinListener(it) }, client, description),
        ),
    )
}
