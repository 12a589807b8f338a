//! Run and continue options: `{"input", "messages"?, "context"?, …overrides}` and
//! `{"approvals"?, "rejections"?, "toolOutputs"?, "humanInput"?, "context"?, …overrides}`,
//! where the overrides are docs/behaviour.md §3's (`model`, `maxSteps`, `stopWhen`, `modelRetry`,
//! `toolExecution`, `temperature`, `maxOutputTokens`, `topP`, `toolChoice`,
//! `parallelToolCalls`, `activeTools`), plus `traceparent`.

use std::sync::Arc;

use serde::Deserialize;

use super::forms::StepCount;
use super::settings::{ModelRetrySpec, ToolExecutionSpec};
use super::stop::{self, StopWhen};
use super::{invalid, read, read_at, HostCallbacks};
use crate::{
    AgentError, ContinueOptions, Message, ModelClient, RunOptions, RunOverrides, ToolDecision,
    ToolOutput, Value,
};

/// The run overrides of docs/behaviour.md §3 (shared by run and continue options).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OverridesSpec {
    model: Option<String>,
    models: Option<Vec<String>>,
    preset: Option<String>,
    max_steps: Option<StepCount>,
    stop_when: Option<StopWhen>,
    model_retry: Option<ModelRetrySpec>,
    tool_execution: Option<ToolExecutionSpec>,
    temperature: Option<f64>,
    max_output_tokens: Option<f64>,
    top_p: Option<f64>,
    tool_choice: Option<Value>,
    parallel_tool_calls: Option<bool>,
    active_tools: Option<Vec<String>>,
}

const OVERRIDE_KEYS: [&str; 13] = [
    "model",
    "models",
    "preset",
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

/// A decision: a call id, or `{toolCallId, reason?, editedInput?}`.
#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "a tool call id or {\"toolCallId\", \"reason\"?, \"editedInput\"?}"
)]
enum DecisionSpec {
    Id(String),
    Full(FullDecision),
}

/// `{toolCallId, reason?, editedInput?}`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FullDecision {
    tool_call_id: String,
    reason: Option<String>,
    edited_input: Option<Value>,
}

/// `{toolCallId, output}`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OutputSpec {
    tool_call_id: String,
    #[serde(default)]
    output: Value,
}

/// Reads an object of only the overrides (`{"model"?, "maxSteps"?, …}`; null: none).
pub fn overrides(host: &dyn HostCallbacks, value: Value) -> Result<RunOverrides, AgentError> {
    if value.is_null() {
        return Ok(RunOverrides::default());
    }
    build_overrides(host, read(value, "options")?, "options")
}

fn build_overrides(
    host: &dyn HostCallbacks,
    s: OverridesSpec,
    what: &str,
) -> Result<RunOverrides, AgentError> {
    let model = match (s.model, s.models.and_then(|m| m.into_iter().next())) {
        (Some(model), _) | (None, Some(model)) => Some(model),
        (None, None) => override_preset(s.preset, what)?,
    };
    let mut o = RunOverrides {
        model,
        max_steps: s.max_steps.map(|n| n.0),
        stop_when: s.stop_when.map(|w| stop::build(host, w)).transpose()?,
        model_retry: s.model_retry.map(ModelRetrySpec::build),
        tool_execution: s.tool_execution.map(ToolExecutionSpec::build).transpose()?,
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

/// `preset` as the model `@<preset>` (the product's spelling, used when neither `model`
/// nor `models` names one).
fn override_preset(preset: Option<String>, what: &str) -> Result<Option<String>, AgentError> {
    match preset {
        None => Ok(None),
        Some(p) if p.is_empty() || p == "@" => Err(invalid(format!(
            "Invalid {what}: preset must be a non-empty string"
        ))),
        Some(p) if p.starts_with('@') => Ok(Some(p)),
        Some(p) => Ok(Some(format!("@{p}"))),
    }
}

/// Reads decisions (`approvals`, `rejections`): a list of call ids or
/// `{toolCallId, reason?}` objects; null is none.
pub fn decisions(value: Value) -> Result<Vec<ToolDecision>, AgentError> {
    if value.is_null() {
        return Ok(Vec::new());
    }
    Ok(from_decisions(read(value, "decisions")?))
}

fn from_decisions(list: Vec<DecisionSpec>) -> Vec<ToolDecision> {
    list.into_iter()
        .map(|d| match d {
            DecisionSpec::Id(id) => ToolDecision::new(id),
            DecisionSpec::Full(FullDecision {
                tool_call_id,
                reason,
                edited_input,
            }) => ToolDecision {
                tool_call_id,
                reason,
                edited_input,
            },
        })
        .collect()
}

/// Reads supplied outputs: a list of `{toolCallId, output}`; null is none.
pub fn tool_outputs(value: Value) -> Result<Vec<ToolOutput>, AgentError> {
    if value.is_null() {
        return Ok(Vec::new());
    }
    Ok(from_outputs(read(value, "toolOutputs")?))
}

fn from_outputs(list: Vec<OutputSpec>) -> Vec<ToolOutput> {
    list.into_iter()
        .map(|o| ToolOutput::new(o.tool_call_id, o.output))
        .collect()
}

/// The object of `value` (null: empty), refusing keys that are neither `own_keys` nor
/// overrides.
fn options_object(
    value: Value,
    what: &str,
    own_keys: &[&str],
) -> Result<serde_json::Map<String, Value>, AgentError> {
    let obj = match value {
        Value::Null => return Ok(serde_json::Map::new()),
        Value::Object(obj) => obj,
        _ => return Err(invalid(format!("{what} must be a JSON object"))),
    };
    if let Some(key) = obj
        .keys()
        .find(|k| !own_keys.contains(&k.as_str()) && !OVERRIDE_KEYS.contains(&k.as_str()))
    {
        return Err(invalid(format!("Invalid {what}: unknown field `{key}`")));
    }
    Ok(obj)
}

/// Removes `key` and reads it (absent or null: `None`).
fn field<T: serde::de::DeserializeOwned>(
    obj: &mut serde_json::Map<String, Value>,
    key: &str,
    what: &str,
) -> Result<Option<T>, AgentError> {
    match obj.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => read_at(v, what, key).map(Some),
    }
}

/// What run options hold (`{input, messages?, context?, traceparent?, …overrides}`).
pub struct RunSpec {
    /// The input (null when absent).
    pub input: Value,
    /// An earlier conversation.
    pub messages: Option<Vec<Message>>,
    /// The application context (null when absent).
    pub context: Value,
    /// The W3C `traceparent` of the caller's span.
    pub traceparent: Option<String>,
    /// The overrides.
    pub overrides: RunOverrides,
}

impl RunSpec {
    /// The core options of a run on `client` (listener, cancellation and store are the
    /// binding's to add).
    pub fn into_run_options(self, client: Arc<dyn ModelClient>) -> RunOptions {
        let mut options = RunOptions::new(self.input, client)
            .context(self.context)
            .overrides(self.overrides);
        if let Some(m) = self.messages {
            options = options.messages(m);
        }
        options.traceparent = self.traceparent;
        options
    }
}

/// Reads run options (null: all defaults).
pub fn run_options(host: &dyn HostCallbacks, value: Value) -> Result<RunSpec, AgentError> {
    const WHAT: &str = "run options";
    let mut obj = options_object(
        value,
        WHAT,
        &["input", "messages", "context", "traceparent"],
    )?;
    let input = obj.remove("input").unwrap_or(Value::Null);
    let messages = field(&mut obj, "messages", WHAT)?;
    let context = obj.remove("context").unwrap_or(Value::Null);
    let traceparent = field(&mut obj, "traceparent", WHAT)?;
    Ok(RunSpec {
        input,
        messages,
        context,
        traceparent,
        overrides: take_overrides(host, obj, WHAT)?,
    })
}

/// What continue options hold.
pub struct ContinueSpec {
    /// Approved calls.
    pub approvals: Vec<ToolDecision>,
    /// Rejected calls.
    pub rejections: Vec<ToolDecision>,
    /// Supplied outputs.
    pub tool_outputs: Vec<ToolOutput>,
    /// Answers in the place of approval-gated calls.
    pub responses: Vec<ToolOutput>,
    /// Text appended as a user message.
    pub human_input: Option<String>,
    /// A replacement context.
    pub context: Option<Value>,
    /// The W3C `traceparent` of the caller's span.
    pub traceparent: Option<String>,
    /// The overrides.
    pub overrides: RunOverrides,
}

impl ContinueSpec {
    /// The core options of a continue on `client` (listener, cancellation, run id and store
    /// are the binding's to add).
    pub fn into_continue_options(self, client: Arc<dyn ModelClient>) -> ContinueOptions {
        let mut options = ContinueOptions::new(client).overrides(self.overrides);
        options.approvals = self.approvals;
        options.rejections = self.rejections;
        options.tool_outputs = self.tool_outputs;
        options.responses = self.responses;
        options.human_input = self.human_input;
        options.context = self.context;
        options.traceparent = self.traceparent;
        options
    }
}

/// Reads continue options (null: all defaults).
pub fn continue_options(
    host: &dyn HostCallbacks,
    value: Value,
) -> Result<ContinueSpec, AgentError> {
    const WHAT: &str = "continue options";
    let mut obj = options_object(
        value,
        WHAT,
        &[
            "approvals",
            "rejections",
            "toolOutputs",
            "responses",
            "humanInput",
            "context",
            "traceparent",
        ],
    )?;
    let approvals = field(&mut obj, "approvals", WHAT)?.map(from_decisions);
    let rejections = field(&mut obj, "rejections", WHAT)?.map(from_decisions);
    let outputs = field(&mut obj, "toolOutputs", WHAT)?.map(from_outputs);
    let responses = field(&mut obj, "responses", WHAT)?.map(from_outputs);
    let human_input = field(&mut obj, "humanInput", WHAT)?;
    let context = obj.remove("context").filter(|v| !v.is_null());
    let traceparent = field(&mut obj, "traceparent", WHAT)?;
    Ok(ContinueSpec {
        approvals: approvals.unwrap_or_default(),
        rejections: rejections.unwrap_or_default(),
        tool_outputs: outputs.unwrap_or_default(),
        responses: responses.unwrap_or_default(),
        human_input,
        context,
        traceparent,
        overrides: take_overrides(host, obj, WHAT)?,
    })
}

/// The overrides left in `obj` (only override keys remain), each read on its own so that
/// a wrong value is refused naming its key.
fn take_overrides(
    host: &dyn HostCallbacks,
    mut obj: serde_json::Map<String, Value>,
    what: &str,
) -> Result<RunOverrides, AgentError> {
    let o = &mut obj;
    let spec = OverridesSpec {
        model: field(o, "model", what)?,
        models: field(o, "models", what)?,
        preset: field(o, "preset", what)?,
        max_steps: field(o, "maxSteps", what)?,
        stop_when: field(o, "stopWhen", what)?,
        model_retry: field(o, "modelRetry", what)?,
        tool_execution: field(o, "toolExecution", what)?,
        temperature: field(o, "temperature", what)?,
        max_output_tokens: field(o, "maxOutputTokens", what)?,
        top_p: field(o, "topP", what)?,
        tool_choice: field(o, "toolChoice", what)?,
        parallel_tool_calls: field(o, "parallelToolCalls", what)?,
        active_tools: field(o, "activeTools", what)?,
    };
    build_overrides(host, spec, what)
}
