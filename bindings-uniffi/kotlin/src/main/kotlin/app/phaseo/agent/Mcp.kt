// MCP servers on an agent (docs/behaviour.md §11) in Kotlin: `mcpStdio(…)` / `mcpHttp(…)` build the
// generated `McpServerConfig` for `createAgent(mcpServers = …)`; the core connects, lists,
// filters, calls, times out and restarts.
package app.phaseo.agent

import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonObject

/** Which calls of an MCP server's tools need approval. */
sealed interface McpApprovalPolicy {
    /** None (the default). */
    object Never : McpApprovalPolicy

    /** Every call. */
    object Always : McpApprovalPolicy

    /** Tools whose `destructiveHint` is true or whose `readOnlyHint` is not true. */
    object Destructive : McpApprovalPolicy

    /** Decided per call from the input; `runtime.toolAnnotations` holds the tool's annotations. */
    class Predicate(val check: suspend (input: JsonElement, runtime: ToolContext) -> Boolean) : McpApprovalPolicy
}

/** A listed MCP tool as a filter sees it: MCP name (before any prefix), description, annotations. */
data class McpToolInfo(val name: String, val description: String, val annotations: JsonObject)

private class KotlinMcpApproval(val fn: suspend (JsonElement, ToolContext) -> Boolean) : ApprovalPredicate {
    override suspend fun requiresApproval(inputJson: String, runtime: ToolRuntime): Boolean =
        hostCall { fn(parseJson(inputJson), ToolContext(runtime)) }
}

private class KotlinMcpFilter(val fn: (McpToolInfo) -> Boolean) : McpToolFilter {
    // A filter that throws drops the tool (it cannot fail a listing).
    override fun keep(name: String, description: String, annotationsJson: String): Boolean =
        try {
            fn(McpToolInfo(name, description, parseJson(annotationsJson).jsonObject))
        } catch (_: Throwable) {
            false
        }
}

private class KotlinElicitation(val fn: suspend (String, JsonObject) -> JsonObject) : McpElicitation {
    override suspend fun onElicitation(server: String, requestJson: String): String =
        hostCall { fn(server, parseJson(requestJson).jsonObject).toString() }
}

private fun McpApprovalPolicy.native(): McpApproval = when (this) {
    McpApprovalPolicy.Never -> McpApproval.Never
    McpApprovalPolicy.Always -> McpApproval.Always
    McpApprovalPolicy.Destructive -> McpApproval.Destructive
    is McpApprovalPolicy.Predicate -> McpApproval.Predicate(KotlinMcpApproval(check))
}

private fun config(
    name: String,
    transport: McpTransport,
    allowTools: List<String>?,
    denyTools: List<String>,
    filter: ((McpToolInfo) -> Boolean)?,
    toolPrefix: String?,
    requireApproval: McpApprovalPolicy?,
    timeoutMs: Long?,
    toolTimeoutsMs: Map<String, Long>,
    onError: OnError?,
    cacheTtlMs: Long?,
    optional: Boolean,
    onElicitation: (suspend (server: String, request: JsonObject) -> JsonObject)?,
    deferLoading: Boolean,
) = McpServerConfig(
    name = name,
    transport = transport,
    allowTools = allowTools,
    denyTools = denyTools,
    filter = filter?.let(::KotlinMcpFilter),
    toolPrefix = toolPrefix,
    requireApproval = requireApproval?.native(),
    timeoutMs = timeoutMs?.toULong(),
    toolTimeoutsMs = toolTimeoutsMs.mapValues { it.value.toULong() },
    onError = onError,
    cacheTtlMs = cacheTtlMs?.toULong(),
    optional = optional,
    onElicitation = onElicitation?.let(::KotlinElicitation),
    deferLoading = deferLoading,
)

/**
 * An MCP server the agent starts as a child process ([command] [args], with [env] added to
 * the inherited environment, in [cwd]) and talks to over stdio. Its tools are offered
 * under their MCP names ([toolPrefix]: `<prefix>_<name>`), narrowed by [allowTools],
 * [denyTools] and [filter]. [requireApproval] pauses the calls it selects; [timeoutMs]
 * (and [toolTimeoutsMs] per tool) bounds each call, which is then cancelled on the server;
 * [onError] decides whether a failed call fails the run (`mcp_failed`) or goes back to the
 * model; [cacheTtlMs] keeps the tool list; an [optional] server that cannot start is skipped.
 * [onElicitation] answers the server's `elicitation/create` requests (the MCP params
 * `{message, requestedSchema}` → `{"action": "accept"|"decline"|"cancel", "content": {…}}`;
 * throwing declines); without it elicitation is not offered to the server. With
 * [deferLoading] none of its tools is offered until the built-in `tool_search` finds it
 * (docs/behaviour.md §17).
 */
fun mcpStdio(
    name: String,
    command: String,
    args: List<String> = emptyList(),
    env: Map<String, String> = emptyMap(),
    cwd: String? = null,
    allowTools: List<String>? = null,
    denyTools: List<String> = emptyList(),
    filter: ((McpToolInfo) -> Boolean)? = null,
    toolPrefix: String? = null,
    requireApproval: McpApprovalPolicy? = null,
    timeoutMs: Long? = null,
    toolTimeoutsMs: Map<String, Long> = emptyMap(),
    onError: OnError? = null,
    cacheTtlMs: Long? = null,
    optional: Boolean = false,
    onElicitation: (suspend (server: String, request: JsonObject) -> JsonObject)? = null,
    deferLoading: Boolean = false,
): McpServerConfig = config(
    name, McpTransport.Stdio(command, args, env, cwd), allowTools, denyTools, filter, toolPrefix,
    requireApproval, timeoutMs, toolTimeoutsMs, onError, cacheTtlMs, optional, onElicitation, deferLoading,
)

/**
 * An MCP server reached over Streamable HTTP at [url] (with [headers], and [bearer] as
 * `Authorization: Bearer …`); the other options are those of [mcpStdio].
 */
fun mcpHttp(
    name: String,
    url: String,
    headers: Map<String, String> = emptyMap(),
    bearer: String? = null,
    allowTools: List<String>? = null,
    denyTools: List<String> = emptyList(),
    filter: ((McpToolInfo) -> Boolean)? = null,
    toolPrefix: String? = null,
    requireApproval: McpApprovalPolicy? = null,
    timeoutMs: Long? = null,
    toolTimeoutsMs: Map<String, Long> = emptyMap(),
    onError: OnError? = null,
    cacheTtlMs: Long? = null,
    optional: Boolean = false,
    onElicitation: (suspend (server: String, request: JsonObject) -> JsonObject)? = null,
    deferLoading: Boolean = false,
): McpServerConfig = config(
    name, McpTransport.Http(url, headers, bearer), allowTools, denyTools, filter, toolPrefix,
    requireApproval, timeoutMs, toolTimeoutsMs, onError, cacheTtlMs, optional, onElicitation, deferLoading,
)
