//! An agent definition: `{"id", "tools"?, "model"?, "models"?, "preset"?, "instructions"?,
//! "outputSchema"?, "parseOutput"?, …}`.

use std::sync::Arc;

use serde::Deserialize;

use super::forms::{Callback, StepCount, ValidatorSpec, ValueOrCallback};
use super::model_choice::{model_of, ModelList};
use super::settings::{LeaseSpec, ModelRetrySpec, ToolExecutionSpec};
use super::stop::{self, StopWhen};
use super::tool::{self, ToolSpec};
use super::{read, HostCallbacks};
use crate::parsed_output::ParsedOutput;
use crate::{AgentDefinition, AgentError, Validator, Value};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AgentSpec {
    id: String,
    #[serde(default)]
    tools: Vec<ToolSpec>,
    model: Option<ValueOrCallback>,
    models: Option<ModelList>,
    preset: Option<Value>,
    instructions: Option<ValueOrCallback>,
    temperature: Option<ValueOrCallback>,
    max_output_tokens: Option<ValueOrCallback>,
    top_p: Option<ValueOrCallback>,
    max_steps: Option<StepCount>,
    stop_when: Option<StopWhen>,
    model_retry: Option<ModelRetrySpec>,
    tool_execution: Option<ToolExecutionSpec>,
    output_schema: Option<ValidatorSpec>,
    parse_output: Option<Value>,
    require_approval: Option<Callback>,
    human_review: Option<Callback>,
    state_secret: Option<String>,
    state_secrets: Option<Vec<String>>,
    tool_choice: Option<ValueOrCallback>,
    parallel_tool_calls: Option<bool>,
    active_tools: Option<ValueOrCallback>,
    lease: Option<LeaseSpec>,
    mcp_servers: Option<Vec<Value>>,
}

/// Reads an agent definition; its host functions are made by `host`. Everything that can
/// be checked without running is checked here (`definition_invalid` naming the problem);
/// `create_agent` checks the rest.
pub fn agent_definition(
    host: &dyn HostCallbacks,
    value: Value,
) -> Result<AgentDefinition, AgentError> {
    let spec: AgentSpec = read(value, "agent definition")?;
    let mut def = AgentDefinition::new(spec.id);
    for t in spec.tools {
        def = def.tool(tool::build(host, t)?);
    }
    let turn = |v: Option<ValueOrCallback>| v.and_then(|v| v.turn_value(host));
    if let Some(v) = model_of(host, spec.model, spec.models, spec.preset)? {
        def = def.model(v);
    }
    if let Some(v) = turn(spec.instructions) {
        def = def.instructions(v);
    }
    if let Some(v) = turn(spec.temperature) {
        def = def.temperature(v);
    }
    if let Some(v) = turn(spec.max_output_tokens) {
        def = def.max_output_tokens(v);
    }
    if let Some(v) = turn(spec.top_p) {
        def = def.top_p(v);
    }
    if let Some(n) = spec.max_steps {
        def = def.max_steps(n.0);
    }
    if let Some(s) = spec.stop_when {
        for c in stop::build(host, s)? {
            def = def.stop_when(c);
        }
    }
    if let Some(r) = spec.model_retry {
        def = def.model_retry(r.build());
    }
    if let Some(t) = spec.tool_execution {
        def = def.tool_execution(t.build()?);
    }
    let output_schema = spec
        .output_schema
        .map(|v| v.build(host, "outputSchema"))
        .transpose()?;
    if let Some(v) = output_validator(host, spec.parse_output, output_schema)? {
        def = def.output_schema(v);
    }
    if let Some(cb) = spec.require_approval {
        def = def.require_approval(host.agent_approval(cb.id));
    }
    if let Some(cb) = spec.human_review {
        def = def.human_review(host.human_review(cb.id));
    }
    let mut secrets = spec.state_secret.into_iter().collect::<Vec<_>>();
    secrets.extend(spec.state_secrets.unwrap_or_default());
    if !secrets.is_empty() {
        def = def.state_secrets(secrets);
    }
    if let Some(v) = turn(spec.tool_choice) {
        def = def.tool_choice(v);
    }
    if let Some(p) = spec.parallel_tool_calls {
        def = def.parallel_tool_calls(p);
    }
    if let Some(v) = turn(spec.active_tools) {
        def = def.active_tools(v);
    }
    if let Some(l) = spec.lease {
        def = def.lease(l.build()?);
    }
    for server in spec.mcp_servers.unwrap_or_default() {
        def = mcp_server(host, def, server)?;
    }
    Ok(def)
}

/// The agent's output validator: `parseOutput` (a host function, `{"$callback": id}`) on the
/// final text, then `outputSchema` on what it returns; or `outputSchema` alone.
fn output_validator(
    host: &dyn HostCallbacks,
    parse_output: Option<Value>,
    output_schema: Option<Arc<dyn Validator>>,
) -> Result<Option<Arc<dyn Validator>>, AgentError> {
    let parse = match parse_output {
        None | Some(Value::Null) => return Ok(output_schema),
        Some(v) => serde_json::from_value::<Callback>(v).map_err(|_| {
            super::invalid(
                "Invalid agent definition: parseOutput must be a function (text) => output",
            )
        })?,
    };
    let parse = host.validator(parse.id, None);
    Ok(Some(Arc::new(ParsedOutput::new(parse, output_schema))))
}

#[cfg(feature = "mcp")]
fn mcp_server(
    host: &dyn HostCallbacks,
    def: AgentDefinition,
    server: Value,
) -> Result<AgentDefinition, AgentError> {
    Ok(def.mcp_server(super::mcp_server(host, server)?))
}

#[cfg(not(feature = "mcp"))]
fn mcp_server(
    _host: &dyn HostCallbacks,
    _def: AgentDefinition,
    _server: Value,
) -> Result<AgentDefinition, AgentError> {
    Err(super::invalid(
        "Invalid agent definition: mcpServers needs the `mcp` feature of phaseo-agent",
    ))
}
