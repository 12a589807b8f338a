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
/// becomes the adapter of its place over the host function `self.0(id)`.
pub struct JsonCallbacks<F>(pub F);

impl<F, H> HostCallbacks for JsonCallbacks<F>
where
    F: Fn(u64) -> H,
    H: JsonHostFn + 'static,
{
    fn executor(&self, id: u64) -> Arc<dyn ToolExecutor> {
        Arc::new(JsonExecutor((self.0)(id)))
    }
    fn validator(&self, id: u64, schema: Option<Value>) -> Arc<dyn Validator> {
        Arc::new(JsonValidator {
            func: (self.0)(id),
            schema,
        })
    }
    fn tool_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        Arc::new(JsonApproval((self.0)(id)))
    }
    fn agent_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        Arc::new(JsonAgentApproval((self.0)(id)))
    }
    fn tool_called(&self, id: u64) -> Arc<dyn ToolCalledHook> {
        Arc::new(JsonToolCalled((self.0)(id)))
    }
    fn response_received(&self, id: u64) -> Arc<dyn ResponseReceivedHook> {
        Arc::new(JsonResponseReceived((self.0)(id)))
    }
    fn next_turn_params(&self, id: u64) -> Arc<dyn NextTurnParamsProvider> {
        Arc::new(JsonNextTurn((self.0)(id)))
    }
    fn stop_condition(&self, id: u64) -> Arc<dyn StopCondition> {
        Arc::new(JsonStop((self.0)(id)))
    }
    fn human_review(&self, id: u64) -> Arc<dyn HumanReview> {
        Arc::new(JsonReview((self.0)(id)))
    }
    fn turn_value(&self, id: u64) -> Arc<dyn TurnResolver> {
        Arc::new(JsonTurn((self.0)(id)))
    }
    // Called like a tool's predicate: `[input, runtime]` (the runtime carries the tool's
    // annotations).
    #[cfg(feature = "mcp")]
    fn mcp_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        Arc::new(JsonApproval((self.0)(id)))
    }
    #[cfg(feature = "mcp")]
    fn mcp_filter(&self, id: u64) -> Option<Arc<dyn crate::mcp::McpToolFilter>> {
        Some(Arc::new(super::JsonMcpFilter((self.0)(id))))
    }
    #[cfg(feature = "mcp")]
    fn mcp_elicitation(&self, id: u64) -> Option<Arc<dyn crate::mcp::McpElicitationHandler>> {
        Some(Arc::new(super::JsonMcpElicitation((self.0)(id))))
    }
}
