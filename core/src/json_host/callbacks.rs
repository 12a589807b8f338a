//! The definition reader's callbacks over host functions called with JSON.

use std::sync::Arc;

use super::adapters::*;
use super::JsonHostFn;
use crate::spec::HostCallbacks;
use crate::{
    ApprovalPredicate, HumanReview, NextTurnParamsProvider, ResponseReceivedHook, StopCondition,
    ToolCalledHook, ToolExecutor, TurnResolver, Validator, Value,
};

/// [`HostCallbacks`] from "id → host function": every `{"$callback": id}` of a definition
/// becomes the adapter of its place over the host function `func(id)`.
pub struct JsonCallbacks<F> {
    func: F,
    mcp_approval_as_agent: bool,
}

impl<F> JsonCallbacks<F> {
    /// The callbacks over `func`; an MCP server's approval predicate is called like a
    /// tool's, `[input, runtime]` (the runtime carries the tool's annotations).
    pub const fn new(func: F) -> Self {
        Self {
            func,
            mcp_approval_as_agent: false,
        }
    }

    /// As [`new`](Self::new), except that an MCP server's approval predicate is called like
    /// the agent's, `[toolCall, runtime]` (the product's Node and Ruby shape).
    pub const fn with_agent_shaped_mcp_approval(func: F) -> Self {
        Self {
            func,
            mcp_approval_as_agent: true,
        }
    }
}

impl<F, H> HostCallbacks for JsonCallbacks<F>
where
    F: Fn(u64) -> H,
    H: JsonHostFn + 'static,
{
    fn executor(&self, id: u64) -> Arc<dyn ToolExecutor> {
        Arc::new(JsonExecutor((self.func)(id)))
    }
    fn validator(&self, id: u64, schema: Option<Value>) -> Arc<dyn Validator> {
        Arc::new(JsonValidator {
            func: (self.func)(id),
            schema,
        })
    }
    fn tool_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        Arc::new(JsonApproval((self.func)(id)))
    }
    fn agent_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        Arc::new(JsonAgentApproval((self.func)(id)))
    }
    fn tool_called(&self, id: u64) -> Arc<dyn ToolCalledHook> {
        Arc::new(JsonToolCalled((self.func)(id)))
    }
    fn response_received(&self, id: u64) -> Arc<dyn ResponseReceivedHook> {
        Arc::new(JsonResponseReceived((self.func)(id)))
    }
    fn next_turn_params(&self, id: u64) -> Arc<dyn NextTurnParamsProvider> {
        Arc::new(JsonNextTurn((self.func)(id)))
    }
    fn stop_condition(&self, id: u64) -> Arc<dyn StopCondition> {
        Arc::new(JsonStop((self.func)(id)))
    }
    fn human_review(&self, id: u64) -> Arc<dyn HumanReview> {
        Arc::new(JsonReview((self.func)(id)))
    }
    fn turn_value(&self, id: u64) -> Arc<dyn TurnResolver> {
        Arc::new(JsonTurn((self.func)(id)))
    }
    #[cfg(feature = "mcp")]
    fn mcp_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        if self.mcp_approval_as_agent {
            Arc::new(JsonAgentApproval((self.func)(id)))
        } else {
            Arc::new(JsonApproval((self.func)(id)))
        }
    }
    #[cfg(feature = "mcp")]
    fn mcp_filter(&self, id: u64) -> Option<Arc<dyn crate::mcp::McpToolFilter>> {
        Some(Arc::new(super::JsonMcpFilter((self.func)(id))))
    }
    #[cfg(feature = "mcp")]
    fn mcp_elicitation(&self, id: u64) -> Option<Arc<dyn crate::mcp::McpElicitationHandler>> {
        Some(Arc::new(super::JsonMcpElicitation((self.func)(id))))
    }
}
