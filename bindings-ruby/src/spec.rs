//! Definitions and options reach Rust in the core's canonical format
//! ([`phaseo_agent::spec`]: camelCase JSON, `{"$callback": id}` for Ruby callables), written
//! by the Ruby layer from the user's snake_case keywords; this file makes the adapter of
//! each registered callable and speaks the core's definition errors in Ruby's names.

use std::sync::Arc;

use phaseo_agent::mcp::{McpElicitationHandler, McpToolFilter};
use phaseo_agent::spec::{respell_keys, snake_case, HostCallbacks};
use phaseo_agent::{
    AgentError, ApprovalPredicate, HumanReview, NextTurnParamsProvider, ResponseReceivedHook,
    StopCondition, ToolCalledHook, ToolExecutor, TurnResolver, Validator, Value,
};
use serde::Deserialize;

use phaseo_agent::json_host::{
    JsonAgentApproval, JsonApproval, JsonExecutor, JsonMcpElicitation, JsonMcpFilter, JsonNextTurn,
    JsonResponseReceived, JsonReview, JsonStop, JsonToolCalled, JsonTurn, JsonValidator,
};

use crate::adapters::HostFn;

/// The registry's callables (`Internal::REGISTRY` ids), each behind the core's `json_host`
/// adapter of its place. As `phaseo_agent::json_host::JsonCallbacks`, except that an MCP
/// server's approval predicate is called like the agent's, `->(tool_call, runtime)`.
pub struct RbCallbacks;

impl HostCallbacks for RbCallbacks {
    fn executor(&self, id: u64) -> Arc<dyn ToolExecutor> {
        Arc::new(JsonExecutor(HostFn(id)))
    }
    fn validator(&self, id: u64, schema: Option<Value>) -> Arc<dyn Validator> {
        Arc::new(JsonValidator {
            func: HostFn(id),
            schema,
        })
    }
    fn tool_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        Arc::new(JsonApproval(HostFn(id)))
    }
    fn agent_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        Arc::new(JsonAgentApproval(HostFn(id)))
    }
    fn tool_called(&self, id: u64) -> Arc<dyn ToolCalledHook> {
        Arc::new(JsonToolCalled(HostFn(id)))
    }
    fn response_received(&self, id: u64) -> Arc<dyn ResponseReceivedHook> {
        Arc::new(JsonResponseReceived(HostFn(id)))
    }
    fn next_turn_params(&self, id: u64) -> Arc<dyn NextTurnParamsProvider> {
        Arc::new(JsonNextTurn(HostFn(id)))
    }
    fn stop_condition(&self, id: u64) -> Arc<dyn StopCondition> {
        Arc::new(JsonStop(HostFn(id)))
    }
    fn human_review(&self, id: u64) -> Arc<dyn HumanReview> {
        Arc::new(JsonReview(HostFn(id)))
    }
    fn turn_value(&self, id: u64) -> Arc<dyn TurnResolver> {
        Arc::new(JsonTurn(HostFn(id)))
    }
    fn mcp_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        Arc::new(JsonAgentApproval(HostFn(id)))
    }
    fn mcp_filter(&self, id: u64) -> Option<Arc<dyn McpToolFilter>> {
        Some(Arc::new(JsonMcpFilter(HostFn(id))))
    }
    fn mcp_elicitation(&self, id: u64) -> Option<Arc<dyn McpElicitationHandler>> {
        Some(Arc::new(JsonMcpElicitation(HostFn(id))))
    }
}

/// What `Agent#run`/`continue_run`/`recover`/`stream` pass: the canonical run or continue
/// options, and what only the Ruby binding has (client, listener, run id, streaming; the
/// state to continue is an argument of its own).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallSpec {
    /// Run or continue options (canonical format).
    #[serde(default)]
    pub options: Value,
    pub on_event: Option<u64>,
    /// Continue (or with `recover`, recover) the stored run of this id.
    pub run_id: Option<String>,
    #[serde(default)]
    pub recover: bool,
    /// Stream the run (`Agent#stream`).
    #[serde(default)]
    pub stream: bool,
    /// `[responses, used]` of a scripted client, or `"test"`.
    #[serde(default)]
    pub client: Value,
}

/// Reads a spec from its JSON form; a mismatch is a definition error naming the field.
pub fn parse<T: for<'de> Deserialize<'de>>(v: Value, what: &str) -> Result<T, AgentError> {
    serde_json::from_value(v)
        .map_err(|e| AgentError::definition_invalid(format!("Invalid {what}: {e}")))
}

/// The Ruby keyword of a key of the format (`stopWhen` → `stop_when`).
pub fn ruby_keyword(key: &str) -> String {
    match key {
        "toolTimeoutsMs" => "tool_timeouts".to_owned(),
        "bearer" => "bearer_token".to_owned(),
        key => snake_case(key),
    }
}

/// A definition error of the core's reader with the format's key names spelled as the Ruby
/// keywords the user wrote (`stopWhen stepCountIs` → `stop_when step_count_is`).
pub fn ruby_names(e: AgentError) -> AgentError {
    respell_keys(e, ruby_keyword)
}
