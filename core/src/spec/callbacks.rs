//! The host side of the format: one factory per kind of host function.

use std::sync::Arc;

use crate::{
    ApprovalPredicate, HumanReview, NextTurnParamsProvider, ResponseReceivedHook, StopCondition,
    ToolCalledHook, ToolExecutor, TurnResolver, Validator, Value,
};

/// Turns the `{"$callback": id}` of a definition into the core trait object that calls the
/// host function `id`. A binding implements it once (its adapters); the reader calls the
/// method of the place where the id appears, so the adapter knows what the host function
/// receives and what its answer means.
pub trait HostCallbacks {
    /// A tool's `execute(input, runtime)`.
    fn executor(&self, id: u64) -> Arc<dyn ToolExecutor>;

    /// A validator `(value) -> value` (`inputSchema`, `outputSchema`, `eventSchema`), with
    /// the JSON Schema it describes itself with, if the definition gave one.
    fn validator(&self, id: u64, schema: Option<Value>) -> Arc<dyn Validator>;

    /// A tool's `requireApproval(input, runtime)`.
    fn tool_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate>;

    /// The agent's `requireApproval(toolCall, runtime)`.
    fn agent_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate>;

    /// A tool's `onToolCalled(input, runtime)`: null pauses, a value is the result.
    fn tool_called(&self, id: u64) -> Arc<dyn ToolCalledHook>;

    /// A tool's `onResponseReceived(output, runtime)`.
    fn response_received(&self, id: u64) -> Arc<dyn ResponseReceivedHook>;

    /// A tool's `nextTurnParams(input, runtime)`.
    fn next_turn_params(&self, id: u64) -> Arc<dyn NextTurnParamsProvider>;

    /// A `stopWhen` function `(state) -> bool | reason`.
    fn stop_condition(&self, id: u64) -> Arc<dyn StopCondition>;

    /// The agent's `humanReview(context)`.
    fn human_review(&self, id: u64) -> Arc<dyn HumanReview>;

    /// A per-turn value's function `(turn) -> value`.
    fn turn_value(&self, id: u64) -> Arc<dyn TurnResolver>;

    /// An MCP server's `requireApproval` function (its runtime carries the tool's
    /// annotations).
    #[cfg(feature = "mcp")]
    fn mcp_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate>;

    /// An MCP server's `filter(tool)`; `None` when the binding has no such callbacks
    /// (the definition is then refused).
    #[cfg(feature = "mcp")]
    fn mcp_filter(&self, _id: u64) -> Option<Arc<dyn crate::mcp::McpToolFilter>> {
        None
    }

    /// An MCP server's `onElicitation(server, request)`; `None` when the binding has no
    /// such callbacks (the definition is then refused).
    #[cfg(feature = "mcp")]
    fn mcp_elicitation(&self, _id: u64) -> Option<Arc<dyn crate::mcp::McpElicitationHandler>> {
        None
    }
}

/// The host functions an MCP server declaration names (`requireApproval`, `filter`,
/// `onElicitation`): what [`super::mcp_server`] needs of a host. Every [`HostCallbacks`]
/// is one; a binding that reads only MCP declarations with the core (Python, whose other
/// definitions are objects) implements just this.
#[cfg(feature = "mcp")]
pub trait McpCallbacks {
    /// An MCP server's `requireApproval` function (its runtime carries the tool's
    /// annotations).
    fn mcp_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate>;

    /// An MCP server's `filter(tool)`; `None` refuses the declaration.
    fn mcp_filter(&self, id: u64) -> Option<Arc<dyn crate::mcp::McpToolFilter>>;

    /// An MCP server's `onElicitation(server, request)`; `None` refuses the declaration.
    fn mcp_elicitation(&self, id: u64) -> Option<Arc<dyn crate::mcp::McpElicitationHandler>>;
}

#[cfg(feature = "mcp")]
impl<T: HostCallbacks + ?Sized> McpCallbacks for T {
    fn mcp_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        HostCallbacks::mcp_approval(self, id)
    }

    fn mcp_filter(&self, id: u64) -> Option<Arc<dyn crate::mcp::McpToolFilter>> {
        HostCallbacks::mcp_filter(self, id)
    }

    fn mcp_elicitation(&self, id: u64) -> Option<Arc<dyn crate::mcp::McpElicitationHandler>> {
        HostCallbacks::mcp_elicitation(self, id)
    }
}
