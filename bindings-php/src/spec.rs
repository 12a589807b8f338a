//! Definitions and options as JSON text, read by the core's canonical reader
//! ([`phaseo_agent::spec`]); this file only parses the text and makes the adapter of each
//! `{"$callback": id}`: a call the PHP thread serves (see [`crate::host`]).

use std::sync::Arc;

use phaseo_agent::spec::{self as core_spec, ContinueSpec, HostCallbacks, RunSpec};
use phaseo_agent::{
    AgentDefinition, ApprovalPredicate, HumanReview, NextTurnParamsProvider, ResponseReceivedHook,
    StopCondition, ToolCalledHook, ToolExecutor, TurnResolver, Validator, Value,
};

use crate::adapters::*;
use crate::error::NativeError as CError;
use crate::host::{Host, HostFn};

/// The callbacks of the PHP layer: every id names a PHP callable of its registry.
struct Callbacks<'a>(&'a Arc<Host>);

impl Callbacks<'_> {
    fn func(&self, id: u64) -> HostFn {
        HostFn {
            host: self.0.clone(),
            id,
        }
    }
}

impl HostCallbacks for Callbacks<'_> {
    fn executor(&self, id: u64) -> Arc<dyn ToolExecutor> {
        Arc::new(HostExecutor(self.func(id)))
    }
    fn validator(&self, id: u64, schema: Option<Value>) -> Arc<dyn Validator> {
        Arc::new(HostValidator {
            func: self.func(id),
            schema,
        })
    }
    fn tool_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        Arc::new(HostApproval(self.func(id)))
    }
    fn agent_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        Arc::new(HostAgentApproval(self.func(id)))
    }
    fn tool_called(&self, id: u64) -> Arc<dyn ToolCalledHook> {
        Arc::new(HostToolCalled(self.func(id)))
    }
    fn response_received(&self, id: u64) -> Arc<dyn ResponseReceivedHook> {
        Arc::new(HostResponseReceived(self.func(id)))
    }
    fn next_turn_params(&self, id: u64) -> Arc<dyn NextTurnParamsProvider> {
        Arc::new(HostNextTurn(self.func(id)))
    }
    fn stop_condition(&self, id: u64) -> Arc<dyn StopCondition> {
        Arc::new(HostStop(self.func(id)))
    }
    fn human_review(&self, id: u64) -> Arc<dyn HumanReview> {
        Arc::new(HostReview(self.func(id)))
    }
    fn turn_value(&self, id: u64) -> Arc<dyn TurnResolver> {
        Arc::new(HostTurn(self.func(id)))
    }
    // Called like a tool's predicate: `($input, $runtime)` (the runtime carries the tool's
    // annotations).
    fn mcp_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        Arc::new(HostApproval(self.func(id)))
    }
    fn mcp_filter(&self, id: u64) -> Option<Arc<dyn phaseo_agent::mcp::McpToolFilter>> {
        Some(Arc::new(crate::mcp_hooks::HostMcpFilter(self.func(id))))
    }
    fn mcp_elicitation(
        &self,
        id: u64,
    ) -> Option<Arc<dyn phaseo_agent::mcp::McpElicitationHandler>> {
        Some(Arc::new(crate::mcp_hooks::HostMcpElicitation(
            self.func(id),
        )))
    }
}

/// Parses a JSON text argument (`{what} is not valid JSON` / `{what} are not valid JSON`).
fn parse(text: &str, what: &str, verb: &str) -> Result<Value, CError> {
    phaseo_agent::parse_json_text(text)
        .map_err(|e| CError::definition(format!("{what} {verb} not valid JSON: {e}")))
}

/// The core definition of an agent definition's JSON text; its callbacks are served by
/// `host`.
pub fn agent(host: &Arc<Host>, text: &str) -> Result<AgentDefinition, CError> {
    let value = parse(text, "agent definition", "is")?;
    Ok(core_spec::agent_definition(&Callbacks(host), value)?)
}

/// Reads run options (`None`: all defaults).
pub fn run_options(host: &Arc<Host>, text: Option<&str>) -> Result<RunSpec, CError> {
    let value = text
        .map(|t| parse(t, "run options", "are"))
        .transpose()?
        .unwrap_or(Value::Null);
    Ok(core_spec::run_options(&Callbacks(host), value)?)
}

/// Reads continue options (`None`: all defaults).
pub fn continue_options(host: &Arc<Host>, text: Option<&str>) -> Result<ContinueSpec, CError> {
    let value = text
        .map(|t| parse(t, "continue options", "are"))
        .transpose()?
        .unwrap_or(Value::Null);
    Ok(core_spec::continue_options(&Callbacks(host), value)?)
}
