//! Definitions and options reach Rust in the core's canonical format
//! ([`phaseo_agent::spec`]: camelCase JSON, `{"$callback": id}` for JS functions), written
//! by the JS layer; this file only makes the adapter of each registered JS function.

use std::sync::Arc;

use phaseo_agent::mcp::{McpElicitationHandler, McpToolFilter};
use phaseo_agent::spec::HostCallbacks;
use phaseo_agent::{
    ApprovalPredicate, HumanReview, NextTurnParamsProvider, ResponseReceivedHook, StopCondition,
    ToolCalledHook, ToolExecutor, TurnResolver, Validator, Value,
};

use crate::adapters::*;
use crate::host::HostFn;

/// The JS registry's functions: ids are the registry's (32-bit) keys.
pub struct JsCallbacks;

fn func(id: u64) -> HostFn {
    // The JS layer writes registry keys, which are below 2^32.
    HostFn { id: id as u32 }
}

impl HostCallbacks for JsCallbacks {
    fn executor(&self, id: u64) -> Arc<dyn ToolExecutor> {
        Arc::new(JsExecutor(func(id)))
    }
    fn validator(&self, id: u64, schema: Option<Value>) -> Arc<dyn Validator> {
        Arc::new(JsValidator {
            func: func(id),
            schema,
        })
    }
    fn tool_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        Arc::new(JsApproval(func(id)))
    }
    fn agent_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        Arc::new(JsAgentApproval(func(id)))
    }
    fn tool_called(&self, id: u64) -> Arc<dyn ToolCalledHook> {
        Arc::new(JsToolCalled(func(id)))
    }
    fn response_received(&self, id: u64) -> Arc<dyn ResponseReceivedHook> {
        Arc::new(JsResponseReceived(func(id)))
    }
    fn next_turn_params(&self, id: u64) -> Arc<dyn NextTurnParamsProvider> {
        Arc::new(JsNextTurn(func(id)))
    }
    fn stop_condition(&self, id: u64) -> Arc<dyn StopCondition> {
        Arc::new(JsStop(func(id)))
    }
    fn human_review(&self, id: u64) -> Arc<dyn HumanReview> {
        Arc::new(JsReview(func(id)))
    }
    fn turn_value(&self, id: u64) -> Arc<dyn TurnResolver> {
        Arc::new(JsTurn(func(id)))
    }
    // A JS MCP predicate is called as `(toolCall, context)`, like the agent's.
    fn mcp_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        Arc::new(JsAgentApproval(func(id)))
    }
    fn mcp_filter(&self, id: u64) -> Option<Arc<dyn McpToolFilter>> {
        Some(Arc::new(JsMcpFilter(func(id))))
    }
    fn mcp_elicitation(&self, id: u64) -> Option<Arc<dyn McpElicitationHandler>> {
        Some(Arc::new(JsElicitation(func(id))))
    }
}
