//! Definitions and options as the Ruby layer passes them (plain Hashes with snake_case
//! String keys; callables replaced by their registry ids), turned into core values.

use std::sync::Arc;
use std::time::Duration;

use phaseo_agent::{
    finish_reason_is, has_tool_call, max_cost, max_duration, max_tokens_used, step_count_is,
    AgentDefinition, AgentError, Approval, JsonSchema, ModelRetry, NextTurnParams, OnError,
    RunOverrides, StopCondition, Tool, ToolDecision, ToolExecutionConfig, ToolOutput, TurnValue,
    Validator, Value,
};
use serde::Deserialize;

use crate::adapters::*;

/// A validator: a JSON Schema compiled in the core, or a Ruby callable.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ValidatorSpec {
    pub schema: Option<Value>,
    pub func: Option<u64>,
}

/// A value, or a Ruby callable of the turn.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DynamicSpec {
    pub value: Option<Value>,
    pub func: Option<u64>,
}

/// A tool (the fields of `PhaseoAgentSdk::Tool`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    pub id: String,
    pub description: Option<String>,
    pub parameters: Option<Value>,
    pub execute: Option<u64>,
    pub timeout_ms: Option<f64>,
    pub require_approval: Option<bool>,
    pub require_approval_fn: Option<u64>,
    pub on_error: Option<String>,
    pub input_schema: Option<ValidatorSpec>,
    pub output_schema: Option<ValidatorSpec>,
    pub event_schema: Option<ValidatorSpec>,
    pub on_tool_called: Option<u64>,
    pub on_response_received: Option<u64>,
    pub next_turn_params: Option<Value>,
    pub next_turn_params_fn: Option<u64>,
    pub strict: Option<bool>,
    pub input_examples: Option<Vec<Value>>,
}

/// A built-in stop condition.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StopSpec {
    pub kind: String,
    pub value: Option<Value>,
    /// `kind` "custom": a Ruby callable `->(state) { reason | nil }`.
    pub func: Option<u64>,
}

/// `tool_execution: { tool_concurrency:, on_error:, max_output_chars: }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolExecutionSpec {
    pub tool_concurrency: Option<f64>,
    pub on_error: Option<String>,
    pub max_output_chars: Option<f64>,
}

/// `model_retry: { max_retries:, backoff_ms: }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelRetrySpec {
    pub max_retries: Option<f64>,
    pub backoff_ms: Option<f64>,
}

/// An agent definition.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    pub id: String,
    #[serde(default)]
    pub tools: Vec<ToolSpec>,
    pub model: Option<DynamicSpec>,
    pub instructions: Option<DynamicSpec>,
    pub temperature: Option<DynamicSpec>,
    pub max_output_tokens: Option<DynamicSpec>,
    pub top_p: Option<DynamicSpec>,
    pub max_steps: Option<f64>,
    pub stop_when: Option<Vec<StopSpec>>,
    pub model_retry: Option<ModelRetrySpec>,
    pub tool_execution: Option<ToolExecutionSpec>,
    pub output_schema: Option<ValidatorSpec>,
    pub require_approval: Option<u64>,
    pub human_review: Option<u64>,
    pub state_secrets: Option<Vec<String>>,
    pub tool_choice: Option<DynamicSpec>,
    pub parallel_tool_calls: Option<bool>,
    pub active_tools: Option<DynamicSpec>,
    /// The run-store lease (SPEC §10): `{duration_ms:, renew_every_ms:}`.
    pub lease: Option<LeaseSpec>,
    /// MCP servers (SPEC §11).
    #[serde(default)]
    pub mcp_servers: Vec<McpServerSpec>,
}

/// How long a worker's claim on a stored run lasts, and how often it is renewed.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseSpec {
    pub duration_ms: Option<f64>,
    pub renew_every_ms: Option<f64>,
}

fn lease(spec: LeaseSpec) -> Result<phaseo_agent::store::LeaseConfig, AgentError> {
    let duration = spec.duration_ms.unwrap_or(30_000.0);
    let renew_every = spec.renew_every_ms.unwrap_or(10_000.0);
    if !(duration > 0.0 && renew_every > 0.0 && renew_every < duration) {
        return Err(definition_error(format!(
            "Invalid agent definition: lease needs 0 < renew_every_ms < duration_ms (got duration_ms={duration}, renew_every_ms={renew_every})"
        )));
    }
    Ok(phaseo_agent::store::LeaseConfig::new(
        Duration::from_secs_f64(duration / 1000.0),
        Duration::from_secs_f64(renew_every / 1000.0),
    ))
}

/// An MCP server as `mcp_stdio_server` / `mcp_http_server` write it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerSpec {
    pub name: String,
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    pub env: Option<std::collections::BTreeMap<String, String>>,
    pub cwd: Option<String>,
    pub url: Option<String>,
    pub headers: Option<std::collections::BTreeMap<String, String>>,
    pub bearer_token: Option<String>,
    pub allow_tools: Option<Vec<String>>,
    pub deny_tools: Option<Vec<String>>,
    pub filter: Option<u64>,
    pub tool_prefix: Option<String>,
    /// `true`/`false` or `"destructive"`.
    pub require_approval: Option<Value>,
    pub require_approval_fn: Option<u64>,
    pub timeout_ms: Option<f64>,
    pub tool_timeouts: Option<std::collections::BTreeMap<String, f64>>,
    pub on_error: Option<String>,
    pub cache_ttl_ms: Option<f64>,
    pub optional: Option<bool>,
    pub on_elicitation: Option<u64>,
}

fn positive_ms(name: &str, what: &str, v: f64) -> Result<u64, AgentError> {
    if v.is_finite() && v > 0.0 {
        Ok(v.ceil() as u64)
    } else {
        Err(definition_error(format!(
            "Invalid MCP server '{name}': {what} must be a positive number of milliseconds, got {v}"
        )))
    }
}

/// The core declaration of an MCP server.
pub fn mcp_server(spec: McpServerSpec) -> Result<phaseo_agent::mcp::McpServer, AgentError> {
    use phaseo_agent::mcp::{McpApproval, McpServer};
    let name = spec.name;
    let invalid = |m: String| definition_error(format!("Invalid MCP server '{name}': {m}"));
    let mut server = match (spec.command, spec.url) {
        (Some(command), None) => {
            let mut s = McpServer::stdio(&name, command).args(spec.args.unwrap_or_default());
            for (k, v) in spec.env.unwrap_or_default() {
                s = s.env(k, v);
            }
            if let Some(dir) = spec.cwd {
                s = s.cwd(dir);
            }
            s
        }
        (None, Some(url)) => {
            let mut s = McpServer::http(&name, url);
            for (k, v) in spec.headers.unwrap_or_default() {
                s = s.header(k, v);
            }
            if let Some(token) = spec.bearer_token {
                s = s.bearer(token);
            }
            s
        }
        _ => {
            return Err(invalid(
                "give either a command (stdio) or a url (Streamable HTTP)".into(),
            ))
        }
    };
    if let Some(names) = spec.allow_tools {
        server = server.allow_tools(names);
    }
    if let Some(names) = spec.deny_tools {
        server = server.deny_tools(names);
    }
    if let Some(id) = spec.filter {
        server = server.filter(Arc::new(RbMcpFilter(HostFn(id))));
    }
    if let Some(prefix) = spec.tool_prefix {
        server = server.tool_prefix(prefix);
    }
    if let Some(id) = spec.require_approval_fn {
        server = server.require_approval(McpApproval::Predicate(Arc::new(RbAgentApproval(
            HostFn(id),
        ))));
    } else {
        match spec.require_approval {
            None | Some(Value::Null) | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => server = server.require_approval(McpApproval::Always),
            Some(Value::String(s)) => {
                server = server.require_approval(McpApproval::parse(&s).map_err(invalid)?)
            }
            Some(other) => {
                return Err(invalid(format!(
                "require_approval must be true, false, a callable or \"destructive\", got {other}"
            )))
            }
        }
    }
    if let Some(t) = spec.timeout_ms {
        server = server.timeout_ms(positive_ms(&name, "timeout_ms", t)?);
    }
    for (tool, t) in spec.tool_timeouts.unwrap_or_default() {
        let ms = positive_ms(&name, &format!("tool_timeouts[{tool:?}]"), t)?;
        server = server.tool_timeout_ms(tool, ms);
    }
    if let Some(p) = spec.on_error {
        server =
            server.on_error(OnError::parse(&p).map_err(|e| invalid(format!("on_error: {e}")))?);
    }
    if let Some(t) = spec.cache_ttl_ms {
        server = server.cache_ttl_ms(positive_ms(&name, "cache_ttl_ms", t)?);
    }
    server = server.optional(spec.optional.unwrap_or(false));
    if let Some(id) = spec.on_elicitation {
        server = server.on_elicitation(Arc::new(RbElicitation(HostFn(id))));
    }
    Ok(server)
}

/// Per-run overrides.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct OverridesSpec {
    pub model: Option<String>,
    pub max_steps: Option<f64>,
    pub stop_when: Option<Vec<StopSpec>>,
    pub model_retry: Option<ModelRetrySpec>,
    pub tool_execution: Option<ToolExecutionSpec>,
    pub temperature: Option<f64>,
    pub max_output_tokens: Option<f64>,
    pub top_p: Option<f64>,
    pub tool_choice: Option<Value>,
    pub parallel_tool_calls: Option<bool>,
    pub active_tools: Option<Vec<String>>,
}

/// A decision on a pending call.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionSpec {
    pub tool_call_id: String,
    pub reason: Option<String>,
}

/// An output for a pending call.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    pub tool_call_id: String,
    pub output: Value,
}

/// Options of a run or a continue.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallSpec {
    pub input: Option<Value>,
    pub context: Option<Value>,
    pub messages: Option<Value>,
    #[serde(default)]
    pub overrides: OverridesSpec,
    pub on_event: Option<u64>,
    pub state: Option<String>,
    /// Continue (or with `recover`, recover) the stored run of this id.
    pub run_id: Option<String>,
    #[serde(default)]
    pub recover: bool,
    /// Stream the run (`Agent#stream`).
    #[serde(default)]
    pub stream: bool,
    pub approvals: Option<Vec<DecisionSpec>>,
    pub rejections: Option<Vec<DecisionSpec>>,
    pub tool_outputs: Option<Vec<OutputSpec>>,
    pub human_input: Option<String>,
    /// `[responses, used]` of a scripted client, or `"test"`.
    #[serde(default)]
    pub client: Value,
}

/// A definition error.
pub fn definition_error(message: String) -> AgentError {
    AgentError::definition_invalid(message)
}

/// Reads a spec from its JSON form; a mismatch is a definition error naming the field.
pub fn parse<T: for<'de> Deserialize<'de>>(v: Value, what: &str) -> Result<T, AgentError> {
    serde_json::from_value(v).map_err(|e| definition_error(format!("Invalid {what}: {e}")))
}

fn validator(
    spec: ValidatorSpec,
    what: &str,
    keep_schema: bool,
) -> Result<Option<Arc<dyn Validator>>, AgentError> {
    match (spec.schema, spec.func) {
        (schema, Some(id)) => Ok(Some(Arc::new(RbValidator {
            func: HostFn(id),
            schema: if keep_schema { schema } else { None },
        }))),
        (Some(schema), None) => JsonSchema::compile(&schema)
            .map(|s| Some(Arc::new(s) as Arc<dyn Validator>))
            .map_err(|e| definition_error(format!("Invalid {what}: {e}"))),
        (None, None) => Ok(None),
    }
}

/// The core tool of a spec.
pub fn tool(spec: ToolSpec) -> Result<Tool, AgentError> {
    let id = spec.id.clone();
    let parameters = spec.parameters.unwrap_or(Value::Null);
    let description = spec.description.unwrap_or_default();
    let invalid = |e: String| definition_error(format!("Invalid definition of tool '{id}': {e}"));
    let mut tool = match spec.execute {
        Some(f) => Tool::with_executor(
            id.clone(),
            description,
            parameters,
            Arc::new(RbExecutor(HostFn(f))),
        ),
        None => Tool::external(id.clone(), description, parameters),
    };
    if let Some(ms) = spec.timeout_ms {
        tool = tool.timeout_ms(ms);
    }
    if let Some(f) = spec.require_approval_fn {
        tool = tool.approval_rule(Approval::Predicate(Arc::new(RbApproval(HostFn(f)))));
    } else if spec.require_approval == Some(true) {
        tool = tool.require_approval();
    }
    if let Some(p) = spec.on_error {
        tool = tool.on_error(OnError::parse(&p).map_err(invalid)?);
    }
    if let Some(v) = spec.input_schema {
        if let Some(v) = validator(v, "input_schema", true)? {
            tool = tool.input_schema(v);
        }
    }
    if let Some(v) = spec.output_schema {
        if let Some(v) = validator(v, "output_schema", false)? {
            tool = tool.output_schema(v);
        }
    }
    if let Some(v) = spec.event_schema {
        if let Some(v) = validator(v, "event_schema", false)? {
            tool = tool.event_schema(v);
        }
    }
    if let Some(f) = spec.on_tool_called {
        tool = tool.on_tool_called_hook(Arc::new(RbToolCalled(HostFn(f))));
    }
    if let Some(f) = spec.on_response_received {
        tool = tool.on_response_received_hook(Arc::new(RbResponseReceived(HostFn(f))));
    }
    if let Some(f) = spec.next_turn_params_fn {
        tool = tool.next_turn_params_provider(Arc::new(RbNextTurn(HostFn(f))));
    } else if let Some(p) = spec.next_turn_params {
        tool = tool.next_turn_params(NextTurnParams::from_value(p).map_err(invalid)?);
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

fn dynamic(spec: Option<DynamicSpec>) -> Option<TurnValue> {
    let spec = spec?;
    match (spec.func, spec.value) {
        (Some(id), _) => Some(TurnValue::Dynamic(Arc::new(crate::adapters::RbTurn(
            HostFn(id),
        )))),
        (None, Some(v)) if !v.is_null() => Some(TurnValue::Fixed(v)),
        _ => None,
    }
}

fn stop_conditions(specs: Vec<StopSpec>) -> Result<Vec<Arc<dyn StopCondition>>, AgentError> {
    specs
        .into_iter()
        .map(|s| {
            let v = s.value.clone().unwrap_or(Value::Null);
            let num = || {
                v.as_f64().ok_or_else(|| {
                    definition_error(format!("stop_when {}: a number is required", s.kind))
                })
            };
            let text = || {
                v.as_str().map(str::to_owned).ok_or_else(|| {
                    definition_error(format!("stop_when {}: a string is required", s.kind))
                })
            };
            Ok(match s.kind.as_str() {
                "step_count_is" => step_count_is(num()? as usize),
                "max_tokens_used" => max_tokens_used(num()? as u64),
                "max_cost" => max_cost(num()?),
                "max_duration" => max_duration(num()? as u64),
                "has_tool_call" => has_tool_call(text()?),
                "finish_reason_is" => finish_reason_is(text()?),
                "custom" => Arc::new(RbStop(HostFn(s.func.ok_or_else(|| {
                    definition_error("stop_when: a callable is required".into())
                })?))),
                other => {
                    return Err(definition_error(format!(
                        "stop_when: unknown condition {other:?}"
                    )))
                }
            })
        })
        .collect()
}

fn tool_execution(spec: ToolExecutionSpec) -> Result<ToolExecutionConfig, AgentError> {
    Ok(ToolExecutionConfig {
        tool_concurrency: spec.tool_concurrency.map(|n| n.max(0.0) as usize),
        on_error: spec
            .on_error
            .map(|p| OnError::parse(&p))
            .transpose()
            .map_err(definition_error)?,
        max_output_chars: spec.max_output_chars.map(|n| n.max(0.0) as usize),
    })
}

fn model_retry(spec: ModelRetrySpec) -> ModelRetry {
    ModelRetry::new(
        spec.max_retries.unwrap_or(0.0).max(0.0) as u32,
        Duration::from_secs_f64(spec.backoff_ms.unwrap_or(250.0).max(0.0) / 1000.0),
    )
}

/// The core definition of a spec.
pub fn agent(spec: AgentSpec) -> Result<AgentDefinition, AgentError> {
    let mut def = AgentDefinition::new(spec.id);
    for t in spec.tools {
        def = def.tool(tool(t)?);
    }
    if let Some(v) = dynamic(spec.model) {
        def = def.model(v);
    }
    if let Some(v) = dynamic(spec.instructions) {
        def = def.instructions(v);
    }
    if let Some(v) = dynamic(spec.temperature) {
        def = def.temperature(v);
    }
    if let Some(v) = dynamic(spec.max_output_tokens) {
        def = def.max_output_tokens(v);
    }
    if let Some(v) = dynamic(spec.top_p) {
        def = def.top_p(v);
    }
    if let Some(n) = spec.max_steps {
        def = def.max_steps(n.max(0.0) as usize);
    }
    for c in stop_conditions(spec.stop_when.unwrap_or_default())? {
        def = def.stop_when(c);
    }
    if let Some(r) = spec.model_retry {
        def = def.model_retry(model_retry(r));
    }
    if let Some(t) = spec.tool_execution {
        def = def.tool_execution(tool_execution(t)?);
    }
    if let Some(v) = spec.output_schema {
        if let Some(v) = validator(v, "output_schema", false)? {
            def = def.output_schema(v);
        }
    }
    if let Some(f) = spec.require_approval {
        def = def.require_approval(Arc::new(RbAgentApproval(HostFn(f))));
    }
    if let Some(f) = spec.human_review {
        def = def.human_review(Arc::new(RbReview(HostFn(f))));
    }
    if let Some(secrets) = spec.state_secrets {
        def = def.state_secrets(secrets);
    }
    if let Some(v) = dynamic(spec.tool_choice) {
        def = def.tool_choice(v);
    }
    if let Some(p) = spec.parallel_tool_calls {
        def = def.parallel_tool_calls(p);
    }
    if let Some(v) = dynamic(spec.active_tools) {
        def = def.active_tools(v);
    }
    if let Some(l) = spec.lease {
        def = def.lease(lease(l)?);
    }
    for server in spec.mcp_servers {
        def = def.mcp_server(mcp_server(server)?);
    }
    Ok(def)
}

/// The core overrides of a spec.
pub fn overrides(s: OverridesSpec) -> Result<RunOverrides, AgentError> {
    let mut o = RunOverrides {
        model: s.model,
        max_steps: s.max_steps.map(|n| n.max(0.0) as usize),
        stop_when: s.stop_when.map(stop_conditions).transpose()?,
        model_retry: s.model_retry.map(model_retry),
        tool_execution: s.tool_execution.map(tool_execution).transpose()?,
        temperature: s.temperature,
        max_output_tokens: s.max_output_tokens.map(|n| n.max(0.0) as u64),
        top_p: s.top_p,
        parallel_tool_calls: s.parallel_tool_calls,
        active_tools: s.active_tools,
        tool_choice: None,
    };
    o.set_tool_choice(&s.tool_choice.unwrap_or(Value::Null))?;
    Ok(o)
}

/// Core decisions.
pub fn decisions(specs: Option<Vec<DecisionSpec>>) -> Vec<ToolDecision> {
    specs
        .unwrap_or_default()
        .into_iter()
        .map(|d| ToolDecision {
            tool_call_id: d.tool_call_id,
            reason: d.reason,
        })
        .collect()
}

/// Core tool outputs.
pub fn outputs(specs: Option<Vec<OutputSpec>>) -> Vec<ToolOutput> {
    specs
        .unwrap_or_default()
        .into_iter()
        .map(|o| ToolOutput::new(o.tool_call_id, o.output))
        .collect()
}
