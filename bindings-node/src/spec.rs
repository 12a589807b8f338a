//! Definitions and options reach Rust in the core's canonical format
//! ([`phaseo_agent::spec`]: camelCase JSON, `{"$callback": id}` for JS functions), written
//! by the JS layer; every callback becomes the core's `json_host` adapter of its place over
//! the registered JS function.

use std::sync::Arc;

use phaseo_agent::json_host::{
    JsonAgentApproval, JsonApproval, JsonExecutor, JsonMcpElicitation, JsonMcpFilter, JsonNextTurn,
    JsonResponseReceived, JsonReview, JsonStop, JsonToolCalled, JsonTurn, JsonValidator,
};
use phaseo_agent::mcp::{McpElicitationHandler, McpToolFilter};
use phaseo_agent::spec::HostCallbacks;
use phaseo_agent::{
    ApprovalPredicate, HumanReview, NextTurnParamsProvider, ResponseReceivedHook, StopCondition,
    ToolCalledHook, ToolExecutor, TurnResolver, Validator, Value,
};

use crate::host::HostFn;

/// The JS registry's functions: ids are the registry's (32-bit) keys. As
/// [`phaseo_agent::json_host::JsonCallbacks`], except that an MCP server's approval predicate is called like the
/// agent's, `(toolCall, context)`.
pub struct JsCallbacks;

fn func(id: u64) -> HostFn {
    // The JS layer writes registry keys, which are below 2^32.
    HostFn { id: id as u32 }
}

impl HostCallbacks for JsCallbacks {
    fn executor(&self, id: u64) -> Arc<dyn ToolExecutor> {
        Arc::new(JsonExecutor(func(id)))
    }
    fn validator(&self, id: u64, schema: Option<Value>) -> Arc<dyn Validator> {
        Arc::new(JsonValidator {
            func: func(id),
            schema,
        })
    }
    fn tool_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        Arc::new(JsonApproval(func(id)))
    }
    fn agent_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        Arc::new(JsonAgentApproval(func(id)))
    }
    fn tool_called(&self, id: u64) -> Arc<dyn ToolCalledHook> {
        Arc::new(JsonToolCalled(func(id)))
    }
    fn response_received(&self, id: u64) -> Arc<dyn ResponseReceivedHook> {
        Arc::new(JsonResponseReceived(func(id)))
    }
    fn next_turn_params(&self, id: u64) -> Arc<dyn NextTurnParamsProvider> {
        Arc::new(JsonNextTurn(func(id)))
    }
    fn stop_condition(&self, id: u64) -> Arc<dyn StopCondition> {
        Arc::new(JsonStop(func(id)))
    }
    fn human_review(&self, id: u64) -> Arc<dyn HumanReview> {
        Arc::new(JsonReview(func(id)))
    }
    fn turn_value(&self, id: u64) -> Arc<dyn TurnResolver> {
        Arc::new(JsonTurn(func(id)))
    }
    fn mcp_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        Arc::new(JsonAgentApproval(func(id)))
    }
    fn mcp_filter(&self, id: u64) -> Option<Arc<dyn McpToolFilter>> {
        Some(Arc::new(JsonMcpFilter(func(id))))
    }
    fn mcp_elicitation(&self, id: u64) -> Option<Arc<dyn McpElicitationHandler>> {
        Some(Arc::new(JsonMcpElicitation(func(id))))
    }
}
