//! What a host function is called for.

/// The kind of a call: tells the host what the arguments are and what its answer means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallKind {
    /// A tool executor: `[input, runtime]`; answers the result.
    Execute,
    /// A validator: `[value]`; answers the (possibly transformed) value.
    Validate,
    /// A tool's (or an MCP server's) approval predicate: `[input, runtime]`.
    Approve,
    /// The agent's approval predicate: `[toolCall, runtime]`.
    AgentApprove,
    /// `onToolCalled`: `[input, runtime]`; null pauses (hitl), a value is the result.
    ToolCalled,
    /// `onResponseReceived`: `[output, runtime]`; answers the output to use.
    ResponseReceived,
    /// `nextTurnParams`: `[input, runtime]`; answers an overrides object.
    NextTurn,
    /// A stop condition: `[stopState]`; answers false/null, true or a reason.
    Stop,
    /// The human-review hook: `[reviewContext]`; answers null or `{reason, payload}`.
    Review,
    /// A per-turn value: `[turn]`; answers the value.
    Turn,
    /// A model client's `generate`: `[request]`; answers a response object.
    Generate,
    /// A model client's `stream`: `[request]`; passes events, then answers null.
    Stream,
    /// An MCP server's tool filter: `[{name, description, annotations}]`; answers a bool.
    McpFilter,
    /// An MCP server's elicitation handler: `[request, {server}]`; answers an
    /// `ElicitResult`.
    McpElicit,
}

impl CallKind {
    /// The kind's camelCase name (`"execute"`, `"agentApprove"`, `"mcpElicit"`…).
    pub fn name(self) -> &'static str {
        match self {
            Self::Execute => "execute",
            Self::Validate => "validate",
            Self::Approve => "approve",
            Self::AgentApprove => "agentApprove",
            Self::ToolCalled => "toolCalled",
            Self::ResponseReceived => "responseReceived",
            Self::NextTurn => "nextTurn",
            Self::Stop => "stop",
            Self::Review => "review",
            Self::Turn => "turn",
            Self::Generate => "generate",
            Self::Stream => "stream",
            Self::McpFilter => "mcpFilter",
            Self::McpElicit => "mcpElicit",
        }
    }
}
