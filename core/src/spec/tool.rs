//! A tool definition: `{"id", "description"?, "parameters"?, "execute"?, …}`.

use serde::Deserialize;

use super::forms::{Callback, ValidatorSpec, ValueOrCallback};
use super::settings::{at_least_one, tool_retry};
use super::{invalid, read, HostCallbacks};
use crate::{AgentError, Approval, NextTurnParams, OnError, Tool, Value};

/// `requireApproval` of a tool: `true`/`false` or a predicate.
#[derive(Deserialize)]
#[serde(untagged, expecting = "true, false or {\"$callback\": id}")]
enum ApprovalSpec {
    Flag(bool),
    Callback(Callback),
}

/// The JSON form of a tool. Without `execute` the tool is external (its output is supplied
/// on continue); with `agent` (an agent definition) it runs that agent (docs/behaviour.md
/// §18), its `parameters` defaulting to one string `input`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ToolSpec {
    id: String,
    #[serde(default)]
    description: Option<String>,
    parameters: Option<Value>,
    execute: Option<Callback>,
    timeout_ms: Option<f64>,
    require_approval: Option<ApprovalSpec>,
    on_error: Option<String>,
    input_schema: Option<ValidatorSpec>,
    output_schema: Option<ValidatorSpec>,
    event_schema: Option<ValidatorSpec>,
    on_tool_called: Option<Callback>,
    on_response_received: Option<Callback>,
    next_turn_params: Option<ValueOrCallback>,
    strict: Option<bool>,
    input_examples: Option<Vec<Value>>,
    max_calls: Option<f64>,
    retry: Option<RetrySpec>,
    defer_loading: Option<bool>,
    agent: Option<Box<Value>>,
    /// MCP annotations when the tool is served (docs/behaviour.md §19).
    annotations: Option<Value>,
}

/// `retry: {"maxAttempts", "backoffMs"?}` of a tool.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RetrySpec {
    max_attempts: f64,
    backoff_ms: Option<f64>,
}

/// Reads one tool definition (checked with [`Tool::check`]).
pub fn tool(host: &dyn HostCallbacks, value: Value) -> Result<Tool, AgentError> {
    build(host, read(value, "tool definition")?)
}

/// The core tool of `spec`.
pub(crate) fn build(host: &dyn HostCallbacks, spec: ToolSpec) -> Result<Tool, AgentError> {
    let id = spec.id;
    let bad = |e: String| invalid(format!("Invalid definition of tool '{id}': {e}"));
    let mut tool = match (spec.agent, spec.execute) {
        (Some(_), Some(_)) => {
            return Err(bad(
                "a tool has either `execute` or `agent` (an agent tool), not both".to_owned(),
            ))
        }
        (Some(agent), None) => {
            let nested = crate::create_agent(super::agent_definition(host, *agent)?)?;
            let mut options = crate::AsToolOptions::new().id(id.clone());
            options.description = spec.description;
            options.parameters = spec.parameters;
            nested.as_tool(options)?
        }
        (None, execute) => {
            let parameters = spec.parameters.unwrap_or(Value::Null);
            let description = spec.description.unwrap_or_default();
            match execute {
                Some(cb) => {
                    Tool::with_executor(id.clone(), description, parameters, host.executor(cb.id))
                }
                None => Tool::external(id.clone(), description, parameters),
            }
        }
    };
    if let Some(ms) = spec.timeout_ms {
        tool = tool.timeout_ms(ms);
    }
    if let Some(a) = spec.annotations {
        crate::tool::check_annotations(&a).map_err(bad)?;
        tool = tool.annotations(a);
    }
    match spec.require_approval {
        Some(ApprovalSpec::Callback(cb)) => {
            tool = tool.approval_rule(Approval::Predicate(host.tool_approval(cb.id)));
        }
        Some(ApprovalSpec::Flag(true)) => tool = tool.require_approval(),
        Some(ApprovalSpec::Flag(false)) | None => {}
    }
    if let Some(p) = spec.on_error {
        tool = tool.on_error(OnError::parse(&p).map_err(bad)?);
    }
    if let Some(n) = spec.max_calls {
        let n = at_least_one(n, "maxCalls").map_err(|e| bad(e.message().to_owned()))?;
        tool = tool.max_calls(n);
    }
    if let Some(deferred) = spec.defer_loading {
        tool = tool.defer_loading(deferred);
    }
    if let Some(r) = spec.retry {
        let retry =
            tool_retry(r.max_attempts, r.backoff_ms).map_err(|e| bad(e.message().to_owned()))?;
        tool = tool.retry(retry);
    }
    if let Some(v) = spec.input_schema {
        tool = tool.input_schema(v.build(host, "inputSchema")?);
    }
    if let Some(v) = spec.output_schema {
        tool = tool.output_schema(v.build(host, "outputSchema")?);
    }
    if let Some(v) = spec.event_schema {
        tool = tool.event_schema(v.build(host, "eventSchema")?);
    }
    if let Some(cb) = spec.on_tool_called {
        tool = tool.on_tool_called_hook(host.tool_called(cb.id));
    }
    if let Some(cb) = spec.on_response_received {
        tool = tool.on_response_received_hook(host.response_received(cb.id));
    }
    match spec.next_turn_params {
        Some(ValueOrCallback::Callback(cb)) => {
            tool = tool.next_turn_params_provider(host.next_turn_params(cb.id));
        }
        Some(ValueOrCallback::Value(Value::Null)) | None => {}
        Some(ValueOrCallback::Value(v)) => {
            tool = tool.next_turn_params(NextTurnParams::from_value(v).map_err(bad)?);
        }
    }
    if let Some(strict) = spec.strict {
        tool = tool.strict(strict);
    }
    if let Some(examples) = spec.input_examples {
        tool = tool.input_examples(examples);
    }
    tool.check()?;
    Ok(tool)
}
