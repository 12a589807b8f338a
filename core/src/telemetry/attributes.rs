//! Attribute names: the GenAI semantic conventions' and ours (`phaseo.*`) for what they
//! lack.

pub(crate) const OPERATION: &str = "gen_ai.operation.name";
pub(crate) const PROVIDER: &str = "gen_ai.provider.name";
pub(crate) const AGENT_ID: &str = "gen_ai.agent.id";
pub(crate) const AGENT_NAME: &str = "gen_ai.agent.name";
pub(crate) const CONVERSATION_ID: &str = "gen_ai.conversation.id";
pub(crate) const REQUEST_MODEL: &str = "gen_ai.request.model";
pub(crate) const RESPONSE_MODEL: &str = "gen_ai.response.model";
pub(crate) const RESPONSE_ID: &str = "gen_ai.response.id";
pub(crate) const FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
pub(crate) const INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
pub(crate) const OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
pub(crate) const INPUT_MESSAGES: &str = "gen_ai.input.messages";
pub(crate) const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
pub(crate) const TOOL_NAME: &str = "gen_ai.tool.name";
pub(crate) const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
pub(crate) const TOOL_TYPE: &str = "gen_ai.tool.type";
pub(crate) const TOOL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
pub(crate) const TOOL_RESULT: &str = "gen_ai.tool.call.result";
pub(crate) const ERROR_TYPE: &str = "error.type";
/// The MCP semantic conventions' method of a tool call (`tools/call`).
pub(crate) const MCP_METHOD: &str = "mcp.method.name";
/// `pipe` (stdio) or `tcp` (Streamable HTTP), as the MCP conventions use it.
pub(crate) const NETWORK_TRANSPORT: &str = "network.transport";

pub(crate) const RUN_ID: &str = "phaseo.run.id";
pub(crate) const RUN_STATUS: &str = "phaseo.run.status";
pub(crate) const RUN_RESUMED: &str = "phaseo.run.resumed";
pub(crate) const STOP_REASON: &str = "phaseo.run.stop_reason";
pub(crate) const CANCELLED: &str = "phaseo.run.cancelled";
pub(crate) const PAUSE_KIND: &str = "phaseo.pause.kind";
pub(crate) const PAUSE_ID: &str = "phaseo.pause.id";
pub(crate) const PENDING_CALLS: &str = "phaseo.pause.pending_tool_calls";
pub(crate) const STEP_INDEX: &str = "phaseo.step.index";
pub(crate) const ATTEMPT: &str = "phaseo.model.attempt";
pub(crate) const APPROVAL: &str = "phaseo.tool.approval";
pub(crate) const TIMEOUT_MS: &str = "phaseo.tool.timeout_ms";
pub(crate) const TIMED_OUT: &str = "phaseo.tool.timed_out";
pub(crate) const MCP_SERVER: &str = "phaseo.mcp.server.name";
pub(crate) const MCP_TOOL: &str = "phaseo.mcp.tool.name";
pub(crate) const STORE_CLAIM: &str = "phaseo.store.claim";
