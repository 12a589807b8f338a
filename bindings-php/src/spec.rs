//! Definitions and options as JSON text, turned into core values. Host functions are
//! written `{"$callback": <id>}` wherever the SPEC allows a function; the id is passed back
//! to the host's `invoke` with the call.
// moves to phaseo_agent::spec: a copy of the C ABI's reader (bindings-c/src/spec.rs),
// reading the same canonical JSON definitions, until the core holds it.

use std::sync::Arc;
use std::time::Duration;

use phaseo_agent::store::LeaseConfig;
use phaseo_agent::{
    finish_reason_is, has_tool_call, max_cost, max_duration, max_tokens_used, step_count_is,
    AgentDefinition, Approval, JsonSchema, Message, ModelRetry, NextTurnParams, OnError,
    RunOverrides, StopCondition, Tool, ToolDecision, ToolExecutionConfig, ToolOutput, TurnValue,
    Validator, Value,
};
use serde::Deserialize;

use crate::adapters::*;
use crate::error::NativeError as CError;
use crate::host::{Host, HostFn};

/// `{"$callback": id}`.
#[derive(Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
pub struct Callback {
    #[serde(rename = "$callback")]
    id: u64,
}

/// A host validator `{"$callback": id, "schema"?: {...}}` (the schema describes it to the
/// model) or a JSON Schema compiled in the core.
#[derive(Deserialize)]
#[serde(untagged)]
enum ValidatorSpec {
    Host {
        #[serde(rename = "$callback")]
        id: u64,
        schema: Option<Value>,
    },
    Schema(Value),
}

/// A value, or a function of the turn.
#[derive(Deserialize)]
#[serde(untagged)]
enum Dynamic {
    Callback(Callback),
    Value(Value),
}

/// `true`/`false` or a predicate.
#[derive(Deserialize)]
#[serde(untagged)]
enum ApprovalSpec {
    Flag(bool),
    Callback(Callback),
}

/// Next-turn overrides: an object or a function of `(input, runtime)`.
#[derive(Deserialize)]
#[serde(untagged)]
enum NextTurnSpec {
    Callback(Callback),
    Value(Value),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ToolSpec {
    id: String,
    #[serde(default)]
    description: String,
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
    next_turn_params: Option<NextTurnSpec>,
    strict: Option<bool>,
    input_examples: Option<Vec<Value>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ToolExecutionSpec {
    tool_concurrency: Option<f64>,
    on_error: Option<String>,
    max_output_chars: Option<f64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ModelRetrySpec {
    max_retries: Option<f64>,
    backoff_ms: Option<f64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LeaseSpec {
    duration_ms: Option<f64>,
    renew_every_ms: Option<f64>,
}

/// A stop condition: `{"stepCountIs": n}`, `{"maxTokensUsed": n}`, `{"maxCost": x}`,
/// `{"maxDuration": ms}`, `{"hasToolCall": "name"}`, `{"finishReasonIs": "r"}` or a callback.
#[derive(Deserialize)]
#[serde(untagged)]
enum StopSpec {
    Callback(Callback),
    Builtin(serde_json::Map<String, Value>),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany<T> {
    Many(Vec<T>),
    One(T),
}

impl<T> OneOrMany<T> {
    fn into_vec(self) -> Vec<T> {
        match self {
            OneOrMany::Many(v) => v,
            OneOrMany::One(x) => vec![x],
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AgentSpec {
    id: String,
    #[serde(default)]
    tools: Vec<ToolSpec>,
    model: Option<Dynamic>,
    instructions: Option<Dynamic>,
    temperature: Option<Dynamic>,
    max_output_tokens: Option<Dynamic>,
    top_p: Option<Dynamic>,
    max_steps: Option<f64>,
    stop_when: Option<OneOrMany<StopSpec>>,
    model_retry: Option<ModelRetrySpec>,
    tool_execution: Option<ToolExecutionSpec>,
    output_schema: Option<ValidatorSpec>,
    require_approval: Option<Callback>,
    human_review: Option<Callback>,
    state_secret: Option<String>,
    state_secrets: Option<Vec<String>>,
    tool_choice: Option<Dynamic>,
    parallel_tool_calls: Option<bool>,
    active_tools: Option<Dynamic>,
    lease: Option<LeaseSpec>,
    mcp_servers: Option<Vec<Value>>,
}

/// The run overrides of SPEC §3 (shared by run and continue options).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct OverridesSpec {
    model: Option<String>,
    max_steps: Option<f64>,
    stop_when: Option<OneOrMany<StopSpec>>,
    model_retry: Option<ModelRetrySpec>,
    tool_execution: Option<ToolExecutionSpec>,
    temperature: Option<f64>,
    max_output_tokens: Option<f64>,
    top_p: Option<f64>,
    tool_choice: Option<Value>,
    parallel_tool_calls: Option<bool>,
    active_tools: Option<Vec<String>>,
}

const OVERRIDE_KEYS: [&str; 11] = [
    "model",
    "maxSteps",
    "stopWhen",
    "modelRetry",
    "toolExecution",
    "temperature",
    "maxOutputTokens",
    "topP",
    "toolChoice",
    "parallelToolCalls",
    "activeTools",
];

/// A decision: a call id, or `{toolCallId, reason?}`.
#[derive(Deserialize)]
#[serde(untagged)]
enum DecisionSpec {
    Id(String),
    Full {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        reason: Option<String>,
    },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OutputSpec {
    tool_call_id: String,
    #[serde(default)]
    output: Value,
}

fn definition_error(message: impl Into<String>) -> CError {
    CError::definition(message)
}

fn parse<T: for<'de> Deserialize<'de>>(text: &str, what: &str) -> Result<T, CError> {
    let value = phaseo_agent::parse_json_text(text)
        .map_err(|e| definition_error(format!("{what} is not valid JSON: {e}")))?;
    serde_json::from_value(value).map_err(|e| definition_error(format!("Invalid {what}: {e}")))
}

fn host_fn(host: &Arc<Host>, cb: Callback) -> HostFn {
    HostFn {
        host: host.clone(),
        id: cb.id,
    }
}

fn validator(
    host: &Arc<Host>,
    spec: ValidatorSpec,
    what: &str,
) -> Result<Arc<dyn Validator>, CError> {
    match spec {
        ValidatorSpec::Host { id, schema } => Ok(Arc::new(HostValidator {
            func: HostFn {
                host: host.clone(),
                id,
            },
            schema,
        })),
        ValidatorSpec::Schema(schema) => JsonSchema::compile(&schema)
            .map(|s| Arc::new(s) as Arc<dyn Validator>)
            .map_err(|e| definition_error(format!("Invalid {what}: {e}"))),
    }
}

fn tool(host: &Arc<Host>, spec: ToolSpec) -> Result<Tool, CError> {
    let id = spec.id.clone();
    let invalid = |e: String| definition_error(format!("Invalid definition of tool '{id}': {e}"));
    let parameters = spec.parameters.unwrap_or(Value::Null);
    let mut tool = match spec.execute {
        Some(cb) => Tool::with_executor(
            id.clone(),
            spec.description,
            parameters,
            Arc::new(HostExecutor(host_fn(host, cb))),
        ),
        None => Tool::external(id.clone(), spec.description, parameters),
    };
    if let Some(ms) = spec.timeout_ms {
        tool = tool.timeout_ms(ms);
    }
    match spec.require_approval {
        Some(ApprovalSpec::Callback(cb)) => {
            tool = tool.approval_rule(Approval::Predicate(Arc::new(HostApproval(host_fn(
                host, cb,
            )))));
        }
        Some(ApprovalSpec::Flag(true)) => tool = tool.require_approval(),
        _ => {}
    }
    if let Some(p) = spec.on_error {
        tool = tool.on_error(OnError::parse(&p).map_err(invalid)?);
    }
    if let Some(v) = spec.input_schema {
        tool = tool.input_schema(validator(host, v, "inputSchema")?);
    }
    if let Some(v) = spec.output_schema {
        tool = tool.output_schema(validator(host, v, "outputSchema")?);
    }
    if let Some(v) = spec.event_schema {
        tool = tool.event_schema(validator(host, v, "eventSchema")?);
    }
    if let Some(cb) = spec.on_tool_called {
        tool = tool.on_tool_called_hook(Arc::new(HostToolCalled(host_fn(host, cb))));
    }
    if let Some(cb) = spec.on_response_received {
        tool = tool.on_response_received_hook(Arc::new(HostResponseReceived(host_fn(host, cb))));
    }
    match spec.next_turn_params {
        Some(NextTurnSpec::Callback(cb)) => {
            tool = tool.next_turn_params_provider(Arc::new(HostNextTurn(host_fn(host, cb))));
        }
        Some(NextTurnSpec::Value(Value::Null)) | None => {}
        Some(NextTurnSpec::Value(v)) => {
            tool = tool.next_turn_params(NextTurnParams::from_value(v).map_err(invalid)?);
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

fn dynamic(host: &Arc<Host>, spec: Option<Dynamic>) -> Option<TurnValue> {
    match spec? {
        Dynamic::Callback(cb) => Some(TurnValue::Dynamic(Arc::new(HostTurn(host_fn(host, cb))))),
        Dynamic::Value(Value::Null) => None,
        Dynamic::Value(v) => Some(TurnValue::Fixed(v)),
    }
}

fn stop_conditions(
    host: &Arc<Host>,
    specs: OneOrMany<StopSpec>,
) -> Result<Vec<Arc<dyn StopCondition>>, CError> {
    specs
        .into_vec()
        .into_iter()
        .map(|s| {
            let fields = match s {
                StopSpec::Callback(cb) => {
                    return Ok(Arc::new(HostStop(host_fn(host, cb))) as Arc<dyn StopCondition>)
                }
                StopSpec::Builtin(fields) => fields,
            };
            let mut entries = fields.into_iter();
            let (Some((kind, v)), None) = (entries.next(), entries.next()) else {
                return Err(definition_error(
                    "stopWhen: each condition is an object with one key, e.g. {\"stepCountIs\": 3}",
                ));
            };
            let num = || {
                v.as_f64().filter(|n| *n >= 0.0).ok_or_else(|| {
                    definition_error(format!(
                        "stopWhen {kind}: a non-negative number is required"
                    ))
                })
            };
            let text = || {
                v.as_str().map(str::to_owned).ok_or_else(|| {
                    definition_error(format!("stopWhen {kind}: a string is required"))
                })
            };
            Ok(match kind.as_str() {
                "stepCountIs" => step_count_is(num()? as usize),
                "maxTokensUsed" => max_tokens_used(num()? as u64),
                "maxCost" => max_cost(num()?),
                "maxDuration" => max_duration(num()? as u64),
                "hasToolCall" => has_tool_call(text()?),
                "finishReasonIs" => finish_reason_is(text()?),
                other => {
                    return Err(definition_error(format!(
                        "stopWhen: unknown condition {other:?}"
                    )))
                }
            })
        })
        .collect()
}

fn tool_execution(spec: ToolExecutionSpec) -> Result<ToolExecutionConfig, CError> {
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

fn lease(spec: LeaseSpec) -> Result<LeaseConfig, CError> {
    let duration = spec.duration_ms.unwrap_or(30_000.0);
    let renew_every = spec.renew_every_ms.unwrap_or(10_000.0);
    if !(duration > 0.0 && renew_every > 0.0 && renew_every < duration) {
        return Err(definition_error(format!(
            "Invalid agent definition: lease needs 0 < renewEveryMs < durationMs (got durationMs={duration}, renewEveryMs={renew_every})"
        )));
    }
    Ok(LeaseConfig::new(
        Duration::from_secs_f64(duration / 1000.0),
        Duration::from_secs_f64(renew_every / 1000.0),
    ))
}

/// The core definition of an agent definition's JSON text; its callbacks are served by
/// `host`.
pub fn agent(host: &Arc<Host>, text: &str) -> Result<AgentDefinition, CError> {
    let spec: AgentSpec = parse(text, "agent definition")?;
    let mut def = AgentDefinition::new(spec.id);
    for t in spec.tools {
        def = def.tool(tool(host, t)?);
    }
    if let Some(v) = dynamic(host, spec.model) {
        def = def.model(v);
    }
    if let Some(v) = dynamic(host, spec.instructions) {
        def = def.instructions(v);
    }
    if let Some(v) = dynamic(host, spec.temperature) {
        def = def.temperature(v);
    }
    if let Some(v) = dynamic(host, spec.max_output_tokens) {
        def = def.max_output_tokens(v);
    }
    if let Some(v) = dynamic(host, spec.top_p) {
        def = def.top_p(v);
    }
    if let Some(n) = spec.max_steps {
        def = def.max_steps(n.max(0.0) as usize);
    }
    if let Some(s) = spec.stop_when {
        for c in stop_conditions(host, s)? {
            def = def.stop_when(c);
        }
    }
    if let Some(r) = spec.model_retry {
        def = def.model_retry(model_retry(r));
    }
    if let Some(t) = spec.tool_execution {
        def = def.tool_execution(tool_execution(t)?);
    }
    if let Some(v) = spec.output_schema {
        def = def.output_schema(validator(host, v, "outputSchema")?);
    }
    if let Some(cb) = spec.require_approval {
        def = def.require_approval(Arc::new(HostAgentApproval(host_fn(host, cb))));
    }
    if let Some(cb) = spec.human_review {
        def = def.human_review(Arc::new(HostReview(host_fn(host, cb))));
    }
    let mut secrets = spec.state_secret.into_iter().collect::<Vec<_>>();
    secrets.extend(spec.state_secrets.unwrap_or_default());
    if !secrets.is_empty() {
        def = def.state_secrets(secrets);
    }
    if let Some(v) = dynamic(host, spec.tool_choice) {
        def = def.tool_choice(v);
    }
    if let Some(p) = spec.parallel_tool_calls {
        def = def.parallel_tool_calls(p);
    }
    if let Some(v) = dynamic(host, spec.active_tools) {
        def = def.active_tools(v);
    }
    if let Some(l) = spec.lease {
        def = def.lease(lease(l)?);
    }
    for server in spec.mcp_servers.unwrap_or_default() {
        def = def.mcp_server(crate::spec_mcp::server(host, server)?);
    }
    Ok(def)
}

fn overrides(host: &Arc<Host>, s: OverridesSpec) -> Result<RunOverrides, CError> {
    let mut o = RunOverrides {
        model: s.model,
        max_steps: s.max_steps.map(|n| n.max(0.0) as usize),
        stop_when: s.stop_when.map(|w| stop_conditions(host, w)).transpose()?,
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

fn options_object(
    text: Option<&str>,
    what: &str,
    own_keys: &[&str],
) -> Result<serde_json::Map<String, Value>, CError> {
    let Some(text) = text else {
        return Ok(serde_json::Map::new());
    };
    let value = phaseo_agent::parse_json_text(text)
        .map_err(|e| definition_error(format!("{what} are not valid JSON: {e}")))?;
    let Value::Object(obj) = value else {
        return Err(definition_error(format!("{what} must be a JSON object")));
    };
    if let Some(key) = obj
        .keys()
        .find(|k| !own_keys.contains(&k.as_str()) && !OVERRIDE_KEYS.contains(&k.as_str()))
    {
        return Err(definition_error(format!(
            "Invalid {what}: unknown field `{key}`"
        )));
    }
    Ok(obj)
}

fn field<T: for<'de> Deserialize<'de>>(
    obj: &mut serde_json::Map<String, Value>,
    key: &str,
    what: &str,
) -> Result<Option<T>, CError> {
    match obj.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v)
            .map(Some)
            .map_err(|e| definition_error(format!("Invalid {what}: {key}: {e}"))),
    }
}

fn take_overrides(
    host: &Arc<Host>,
    obj: serde_json::Map<String, Value>,
    what: &str,
) -> Result<RunOverrides, CError> {
    let spec: OverridesSpec = serde_json::from_value(Value::Object(obj))
        .map_err(|e| definition_error(format!("Invalid {what}: {e}")))?;
    overrides(host, spec)
}

/// What a run's options JSON holds (`{input, messages?, context?, …overrides}`).
pub struct RunSpec {
    /// The input.
    pub input: Value,
    /// An earlier conversation.
    pub messages: Option<Vec<Message>>,
    /// The application context.
    pub context: Value,
    /// The overrides.
    pub overrides: RunOverrides,
}

/// Reads run options.
pub fn run_options(host: &Arc<Host>, text: Option<&str>) -> Result<RunSpec, CError> {
    const WHAT: &str = "run options";
    let mut obj = options_object(text, WHAT, &["input", "messages", "context"])?;
    let input = obj.remove("input").unwrap_or(Value::Null);
    let messages = field(&mut obj, "messages", WHAT)?;
    let context = obj.remove("context").unwrap_or(Value::Null);
    Ok(RunSpec {
        input,
        messages,
        context,
        overrides: take_overrides(host, obj, WHAT)?,
    })
}

/// What a continue's options JSON holds.
pub struct ContinueSpec {
    /// Approved calls.
    pub approvals: Vec<ToolDecision>,
    /// Rejected calls.
    pub rejections: Vec<ToolDecision>,
    /// Supplied outputs.
    pub tool_outputs: Vec<ToolOutput>,
    /// Text appended as a user message.
    pub human_input: Option<String>,
    /// A replacement context.
    pub context: Option<Value>,
    /// The overrides.
    pub overrides: RunOverrides,
}

fn decisions(list: Option<Vec<DecisionSpec>>) -> Vec<ToolDecision> {
    list.unwrap_or_default()
        .into_iter()
        .map(|d| match d {
            DecisionSpec::Id(id) => ToolDecision::new(id),
            DecisionSpec::Full {
                tool_call_id,
                reason,
            } => ToolDecision {
                tool_call_id,
                reason,
            },
        })
        .collect()
}

/// Reads continue options.
pub fn continue_options(host: &Arc<Host>, text: Option<&str>) -> Result<ContinueSpec, CError> {
    const WHAT: &str = "continue options";
    let mut obj = options_object(
        text,
        WHAT,
        &[
            "approvals",
            "rejections",
            "toolOutputs",
            "humanInput",
            "context",
        ],
    )?;
    let approvals = decisions(field(&mut obj, "approvals", WHAT)?);
    let rejections = decisions(field(&mut obj, "rejections", WHAT)?);
    let outputs: Option<Vec<OutputSpec>> = field(&mut obj, "toolOutputs", WHAT)?;
    let human_input = field(&mut obj, "humanInput", WHAT)?;
    let context = obj.remove("context").filter(|v| !v.is_null());
    Ok(ContinueSpec {
        approvals,
        rejections,
        tool_outputs: outputs
            .unwrap_or_default()
            .into_iter()
            .map(|o| ToolOutput::new(o.tool_call_id, o.output))
            .collect(),
        human_input,
        context,
        overrides: take_overrides(host, obj, WHAT)?,
    })
}
