//! Definitions and options as uniffi records, turned into core values.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use phaseo_agent as pa;
use phaseo_agent::Value;

use crate::api::{CancelToken, HttpModelClient, ScriptedClient, TestClient, Tool};
use crate::errors::PhaseoError;
use crate::traits::*;

/// A caller's value (a run's input or context, an output supplied on continue). Text that
/// is not JSON is a broken argument (`definition_invalid`); a value beyond the limits of
/// docs/behaviour.md §7 is refused as the core refuses the values it is handed, `state_invalid`
/// (`Invalid run input: value is nested more than 64 levels deep`), whatever the host's
/// own conversion let through.
fn parse_value_option(text: &str, what: &str) -> Result<Value, PhaseoError> {
    pa::parse_json_text(text).map_err(|e| {
        if is_limit_error(&e) {
            PhaseoError::new(
                pa::ErrorCode::StateInvalid,
                format!("Invalid run {what}: {e}"),
            )
        } else {
            PhaseoError::definition(format!("{what} is not valid JSON: {e}"))
        }
    })
}

/// Whether `message` is a [`pa::ValueLimitError`]'s (the reader reports them as text).
fn is_limit_error(message: &str) -> bool {
    let integer = pa::ValueLimitError::IntegerTooLarge("\0".to_owned()).to_string();
    let (before, after) = integer.split_once('\0').unwrap_or((&integer, ""));
    message == pa::ValueLimitError::TooDeep.to_string()
        || (message.starts_with(before) && message.ends_with(after))
}

fn count(n: i64) -> usize {
    usize::try_from(n.max(0)).unwrap_or(usize::MAX)
}

/// What happens when a call fails (docs/behaviour.md §2.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum OnError {
    /// The run fails and the error is raised (default).
    FailRun,
    /// The model receives `{"error": "<message>"}` as the tool message; the run goes on.
    ReturnToModel,
}

impl From<OnError> for pa::OnError {
    fn from(e: OnError) -> Self {
        match e {
            OnError::FailRun => pa::OnError::FailRun,
            OnError::ReturnToModel => pa::OnError::ReturnToModel,
        }
    }
}

/// A tool definition (docs/behaviour.md §2). JSON fields are JSON text.
#[derive(uniffi::Record)]
pub struct ToolDefinition {
    /// The id the model calls it by.
    pub id: String,
    /// Text sent to the model.
    #[uniffi(default)]
    pub description: String,
    /// JSON Schema of the arguments (validated by the core); null = any object.
    #[uniffi(default)]
    pub parameters_json: Option<String>,
    /// The executor; null (and no `execute_blocking`) = a manual tool.
    #[uniffi(default)]
    pub execute: Option<Arc<dyn ToolExecutor>>,
    /// Instead of `execute`, a blocking body of the JVM host: the key it was registered
    /// under on the host side (Kotlin `JvmDispatch`); its calls are queued for the host's
    /// threads (`jvm_dispatch.rs`). At most one of the two.
    #[uniffi(default)]
    pub blocking_tool: Option<i64>,
    /// Per-call time limit in milliseconds.
    #[uniffi(default)]
    pub timeout_ms: Option<f64>,
    /// Every call needs approval.
    #[uniffi(default)]
    pub require_approval: bool,
    /// Approval decided per call (wins over `require_approval`).
    #[uniffi(default)]
    pub approval: Option<Arc<dyn ApprovalPredicate>>,
    /// Error policy (wins over the agent's `toolExecution.onError`).
    #[uniffi(default)]
    pub on_error: Option<OnError>,
    /// Host validator of the arguments, after `parameters`.
    #[uniffi(default)]
    pub input_schema: Option<Arc<dyn Validator>>,
    /// Validator of results (and supplied outputs).
    #[uniffi(default)]
    pub output_schema: Option<Arc<dyn Validator>>,
    /// Validator of progress values.
    #[uniffi(default)]
    pub event_schema: Option<Arc<dyn Validator>>,
    /// Interactive hook.
    #[uniffi(default)]
    pub on_tool_called: Option<Arc<dyn ToolCalledHook>>,
    /// Transforms outputs supplied on continue.
    #[uniffi(default)]
    pub on_response_received: Option<Arc<dyn ResponseReceivedHook>>,
    /// Fixed next-turn overrides (a JSON object).
    #[uniffi(default)]
    pub next_turn_params_json: Option<String>,
    /// Per-call next-turn overrides (wins over `next_turn_params_json`).
    #[uniffi(default)]
    pub next_turn_params: Option<Arc<dyn NextTurnParamsProvider>>,
    /// Ask the model for schema-exact arguments (docs/behaviour.md §12); `parameters` must then be
    /// strict-compatible, checked at definition.
    #[uniffi(default)]
    pub strict: bool,
    /// Example argument objects (a JSON array of objects), sent with the tool where the
    /// client supports them.
    #[uniffi(default)]
    pub input_examples_json: Option<String>,
    /// At most this many calls of the tool in a run (a whole number ≥ 1); a call beyond is
    /// refused with an error the model sees (docs/behaviour.md §15).
    #[uniffi(default)]
    pub max_calls: Option<i64>,
    /// Runs a call again when an attempt throws or times out (docs/behaviour.md §15).
    #[uniffi(default)]
    pub retry: Option<ToolRetry>,
    /// Not offered to the model until the built-in `tool_search` finds it; from then on it
    /// is offered to the end of the run (docs/behaviour.md §17).
    #[uniffi(default)]
    pub defer_loading: bool,
    /// Hints listed when the tool is served over MCP (docs/behaviour.md §19), a JSON object
    /// of `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`, `title`.
    #[uniffi(default)]
    pub annotations_json: Option<String>,
}

/// A tool's retries (docs/behaviour.md §15): `max_attempts` attempts in all (1: no retry),
/// waiting `backoff_ms × n` ms before the n-th retry.
#[derive(Clone, Copy, Debug, uniffi::Record)]
pub struct ToolRetry {
    /// Every attempt counts, the first too (a whole number ≥ 1).
    pub max_attempts: i64,
    /// The base delay between attempts in milliseconds (default 0).
    #[uniffi(default = 0)]
    pub backoff_ms: i64,
}

/// Which tool the model must call (docs/behaviour.md §12).
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// The model must call a tool.
    Required,
    /// The model must not call a tool.
    None,
    /// The model must call this tool.
    Tool {
        /// The tool id.
        tool_id: String,
    },
}

impl From<ToolChoice> for pa::ToolChoice {
    fn from(c: ToolChoice) -> Self {
        match c {
            ToolChoice::Auto => pa::ToolChoice::Auto,
            ToolChoice::Required => pa::ToolChoice::Required,
            ToolChoice::None => pa::ToolChoice::None,
            ToolChoice::Tool { tool_id } => pa::ToolChoice::Tool(tool_id),
        }
    }
}

pub(crate) fn core_tool(def: ToolDefinition) -> Result<pa::Tool, PhaseoError> {
    let id = def.id;
    let invalid =
        |e: String| PhaseoError::definition(format!("Invalid definition of tool '{id}': {e}"));
    let parameters = match &def.parameters_json {
        Some(text) => {
            serde_json::from_str(text).map_err(|e| invalid(format!("parameters: {e}")))?
        }
        None => Value::Null,
    };
    let executor: Option<Arc<dyn pa::ToolExecutor>> = match (def.execute, def.blocking_tool) {
        (Some(_), Some(_)) => {
            return Err(invalid("give execute or blockingTool, not both".to_owned()))
        }
        (Some(exec), None) => Some(Arc::new(HostExecutor(exec))),
        (None, Some(tool)) => Some(Arc::new(crate::jvm_dispatch::JvmBlockingExecutor { tool })),
        (None, None) => None,
    };
    let mut tool = match executor {
        Some(exec) => pa::Tool::with_executor(id.clone(), def.description, parameters, exec),
        None => pa::Tool::external(id.clone(), def.description, parameters),
    };
    if let Some(ms) = def.timeout_ms {
        tool = tool.timeout_ms(ms);
    }
    if let Some(p) = def.approval {
        tool = tool.approval_rule(pa::Approval::Predicate(Arc::new(HostApproval(p))));
    } else if def.require_approval {
        tool = tool.require_approval();
    }
    if let Some(policy) = def.on_error {
        tool = tool.on_error(policy.into());
    }
    if let Some(v) = def.input_schema {
        tool = tool.input_schema(Arc::new(HostValidator(v)));
    }
    if let Some(v) = def.output_schema {
        tool = tool.output_schema(Arc::new(HostValidator(v)));
    }
    if let Some(v) = def.event_schema {
        tool = tool.event_schema(Arc::new(HostValidator(v)));
    }
    if let Some(h) = def.on_tool_called {
        tool = tool.on_tool_called_hook(Arc::new(HostToolCalled(h)));
    }
    if let Some(h) = def.on_response_received {
        tool = tool.on_response_received_hook(Arc::new(HostResponseReceived(h)));
    }
    if let Some(p) = def.next_turn_params {
        tool = tool.next_turn_params_provider(Arc::new(HostNextTurn(p)));
    } else if let Some(text) = def.next_turn_params_json {
        let value =
            serde_json::from_str(&text).map_err(|e| invalid(format!("nextTurnParams: {e}")))?;
        tool = tool.next_turn_params(pa::NextTurnParams::from_value(value).map_err(invalid)?);
    }
    tool = tool.strict(def.strict);
    if let Some(text) = def.input_examples_json {
        // Read with the core's limits (depth, 64-bit integers), as host values are.
        let examples =
            match pa::parse_json_text(&text).map_err(|e| invalid(format!("inputExamples: {e}")))? {
                Value::Array(list) => list,
                other => {
                    return Err(invalid(format!(
                        "inputExamples must be a JSON array of objects, got {other}"
                    )))
                }
            };
        tool = tool.input_examples(examples);
    }
    if let Some(n) = def.max_calls {
        let n = pa::spec::at_least_one(n as f64, "maxCalls")
            .map_err(|e| invalid(e.message().to_owned()))?;
        tool = tool.max_calls(n);
    }
    if let Some(r) = def.retry {
        let retry = pa::spec::tool_retry(r.max_attempts as f64, Some(r.backoff_ms as f64))
            .map_err(|e| invalid(e.message().to_owned()))?;
        tool = tool.retry(retry);
    }
    tool = tool.defer_loading(def.defer_loading);
    if let Some(text) = def.annotations_json {
        let value = pa::parse_json_text(&text).map_err(|e| invalid(format!("annotations: {e}")))?;
        pa::check_annotations(&value).map_err(invalid)?;
        tool = tool.annotations(value);
    }
    tool.check()?;
    Ok(tool)
}

/// A stop condition (docs/behaviour.md §3.2): a built-in or a host condition.
#[derive(uniffi::Enum)]
pub enum StopWhen {
    /// At least `steps` steps completed: `step_count:<n>`.
    StepCountIs {
        /// Steps.
        steps: i64,
    },
    /// Total tokens ≥ `tokens`: `max_tokens:<n>`.
    MaxTokensUsed {
        /// Tokens.
        tokens: i64,
    },
    /// Cumulative cost ≥ `cost`: `max_cost:<x>`.
    MaxCost {
        /// Cost.
        cost: f64,
    },
    /// The run is at least `ms` milliseconds old: `max_duration:<ms>`.
    MaxDuration {
        /// Milliseconds.
        ms: i64,
    },
    /// Any step called `name`: `tool_call:<name>`.
    HasToolCall {
        /// Tool id.
        name: String,
    },
    /// Any step finished with `reason`: `finish_reason:<reason>`.
    FinishReasonIs {
        /// Finish reason.
        reason: String,
    },
    /// A host condition.
    Custom {
        /// The condition.
        condition: Arc<dyn StopCondition>,
    },
}

fn stop_conditions(items: Vec<StopWhen>) -> Vec<Arc<dyn pa::StopCondition>> {
    items
        .into_iter()
        .map(|s| match s {
            StopWhen::StepCountIs { steps } => pa::step_count_is(count(steps)),
            StopWhen::MaxTokensUsed { tokens } => pa::max_tokens_used(tokens.max(0) as u64),
            StopWhen::MaxCost { cost } => pa::max_cost(cost),
            StopWhen::MaxDuration { ms } => pa::max_duration(ms.max(0) as u64),
            StopWhen::HasToolCall { name } => pa::has_tool_call(name),
            StopWhen::FinishReasonIs { reason } => pa::finish_reason_is(reason),
            StopWhen::Custom { condition } => {
                Arc::new(HostStop(condition)) as Arc<dyn pa::StopCondition>
            }
        })
        .collect()
}

/// Model retries: `max_retries` extra attempts, sleeping `backoff_ms * attempt` between them.
#[derive(Clone, Copy, Debug, uniffi::Record)]
pub struct ModelRetry {
    /// Extra attempts after the first.
    #[uniffi(default = 0)]
    pub max_retries: i64,
    /// Base backoff in milliseconds.
    #[uniffi(default = 250.0)]
    pub backoff_ms: f64,
}

impl From<ModelRetry> for pa::ModelRetry {
    fn from(r: ModelRetry) -> Self {
        let backoff = if r.backoff_ms.is_finite() && r.backoff_ms > 0.0 {
            Duration::from_secs_f64(r.backoff_ms / 1000.0)
        } else {
            Duration::ZERO
        };
        pa::ModelRetry::new(
            u32::try_from(r.max_retries.max(0)).unwrap_or(u32::MAX),
            backoff,
        )
    }
}

/// How automatic calls of a turn run (docs/behaviour.md §2.8, §2.9); unset fields fall back.
#[derive(Clone, Copy, Debug, uniffi::Record)]
pub struct ToolExecution {
    /// Calls of one turn running at once (below 1 is raised to 1).
    #[uniffi(default)]
    pub tool_concurrency: Option<i64>,
    /// Error policy for tools without their own.
    #[uniffi(default)]
    pub on_error: Option<OnError>,
    /// Tool message content limit, in characters.
    #[uniffi(default)]
    pub max_output_chars: Option<i64>,
    /// How many tool calls a run admits in all (a whole number ≥ 1; docs/behaviour.md §15).
    #[uniffi(default)]
    pub max_tool_calls: Option<i64>,
}

impl TryFrom<ToolExecution> for pa::ToolExecutionConfig {
    type Error = PhaseoError;

    fn try_from(t: ToolExecution) -> Result<Self, PhaseoError> {
        let max_tool_calls = t
            .max_tool_calls
            .map(|n| pa::spec::at_least_one(n as f64, "toolExecution.maxToolCalls"))
            .transpose()?
            .map(|n| n as usize);
        Ok(pa::ToolExecutionConfig {
            tool_concurrency: t.tool_concurrency.map(count),
            on_error: t.on_error.map(Into::into),
            max_output_chars: t.max_output_chars.map(count),
            max_tool_calls,
        })
    }
}

/// An agent definition (docs/behaviour.md §3).
#[derive(uniffi::Record)]
pub struct AgentDefinition {
    /// The agent id.
    pub id: String,
    /// Its tools.
    #[uniffi(default)]
    pub tools: Vec<Arc<Tool>>,
    /// Model id.
    #[uniffi(default)]
    pub model: Option<String>,
    /// Instructions, sent once per request.
    #[uniffi(default)]
    pub instructions: Option<String>,
    /// Step limit (default 12).
    #[uniffi(default)]
    pub max_steps: Option<i64>,
    /// Stop conditions, checked in order.
    #[uniffi(default)]
    pub stop_when: Vec<StopWhen>,
    /// Model retries.
    #[uniffi(default)]
    pub model_retry: Option<ModelRetry>,
    /// Tool execution settings.
    #[uniffi(default)]
    pub tool_execution: Option<ToolExecution>,
    /// Sampling temperature.
    #[uniffi(default)]
    pub temperature: Option<f64>,
    /// Output token limit.
    #[uniffi(default)]
    pub max_output_tokens: Option<i64>,
    /// Nucleus sampling.
    #[uniffi(default)]
    pub top_p: Option<f64>,
    /// Validator of the final output.
    #[uniffi(default)]
    pub output_schema: Option<Arc<dyn Validator>>,
    /// Agent-level approval predicate `(call, runtime)`: decides for every tool.
    #[uniffi(default)]
    pub require_approval: Option<Arc<dyn ApprovalPredicate>>,
    /// Human-review hook.
    #[uniffi(default)]
    pub human_review: Option<Arc<dyn HumanReview>>,
    /// Model id per turn (wins over `model`).
    #[uniffi(default)]
    pub model_fn: Option<Arc<dyn TurnResolver>>,
    /// Instructions per turn (wins over `instructions`).
    #[uniffi(default)]
    pub instructions_fn: Option<Arc<dyn TurnResolver>>,
    /// Temperature per turn (wins over `temperature`).
    #[uniffi(default)]
    pub temperature_fn: Option<Arc<dyn TurnResolver>>,
    /// Output token limit per turn (wins over `max_output_tokens`).
    #[uniffi(default)]
    pub max_output_tokens_fn: Option<Arc<dyn TurnResolver>>,
    /// Nucleus sampling per turn (wins over `top_p`).
    #[uniffi(default)]
    pub top_p_fn: Option<Arc<dyn TurnResolver>>,
    /// Signed state (docs/behaviour.md §7): the first secret signs every state, any verifies.
    #[uniffi(default)]
    pub state_secrets: Vec<String>,
    /// Which tool the model must call (docs/behaviour.md §12).
    #[uniffi(default)]
    pub tool_choice: Option<ToolChoice>,
    /// Tool choice per turn, as JSON (`"auto"`, `"required"`, `"none"`, `{"toolId": id}`,
    /// null = unset); wins over `tool_choice`.
    #[uniffi(default)]
    pub tool_choice_fn: Option<Arc<dyn TurnResolver>>,
    /// Whether the model may request several calls in one turn.
    #[uniffi(default)]
    pub parallel_tool_calls: Option<bool>,
    /// The tool ids offered (calls to tools not offered are `unknown_tool`).
    #[uniffi(default)]
    pub active_tools: Option<Vec<String>>,
    /// The tool ids offered per turn, as a JSON array (null = every tool); wins over
    /// `active_tools`.
    #[uniffi(default)]
    pub active_tools_fn: Option<Arc<dyn TurnResolver>>,
    /// Run store (docs/behaviour.md §10): every run is saved there; continue by id, recover.
    #[uniffi(default)]
    pub store: Option<Arc<crate::store::RunStore>>,
    /// Lease of store-backed runs (default 30 s held, renewed every 10 s).
    #[uniffi(default)]
    pub lease: Option<Lease>,
    /// MCP servers whose tools the agent offers (docs/behaviour.md §11).
    #[uniffi(default)]
    pub mcp_servers: Vec<crate::mcp::McpServerConfig>,
}

/// How long a worker holds a store-backed run and how often it renews the hold.
#[derive(uniffi::Record)]
pub struct Lease {
    /// How long a claim or renewal holds the run (ms).
    pub duration_ms: i64,
    /// How often a working run renews its lease (ms).
    pub renew_every_ms: i64,
}

fn turn_value(
    fixed: Option<Value>,
    resolver: Option<Arc<dyn TurnResolver>>,
) -> Option<pa::TurnValue> {
    match (resolver, fixed) {
        (Some(r), _) => Some(pa::TurnValue::Dynamic(Arc::new(HostTurn(r)))),
        (None, Some(v)) => Some(pa::TurnValue::Fixed(v)),
        (None, None) => None,
    }
}

pub(crate) fn core_agent(def: AgentDefinition) -> Result<pa::AgentDefinition, PhaseoError> {
    let mut out = pa::AgentDefinition::new(def.id);
    for tool in def.tools {
        out = out.tool(tool.tool.clone());
    }
    if let Some(v) = turn_value(def.model.map(Value::from), def.model_fn) {
        out = out.model(v);
    }
    if let Some(v) = turn_value(def.instructions.map(Value::from), def.instructions_fn) {
        out = out.instructions(v);
    }
    if let Some(v) = turn_value(def.temperature.map(Value::from), def.temperature_fn) {
        out = out.temperature(v);
    }
    if let Some(v) = turn_value(
        def.max_output_tokens.map(|n| Value::from(n.max(0))),
        def.max_output_tokens_fn,
    ) {
        out = out.max_output_tokens(v);
    }
    if let Some(v) = turn_value(def.top_p.map(Value::from), def.top_p_fn) {
        out = out.top_p(v);
    }
    if let Some(n) = def.max_steps {
        out = out.max_steps(count(n));
    }
    for c in stop_conditions(def.stop_when) {
        out = out.stop_when(c);
    }
    if let Some(r) = def.model_retry {
        out = out.model_retry(r.into());
    }
    if let Some(t) = def.tool_execution {
        out = out.tool_execution(t.try_into()?);
    }
    if let Some(v) = def.output_schema {
        out = out.output_schema(Arc::new(HostValidator(v)));
    }
    if let Some(p) = def.require_approval {
        out = out.require_approval(Arc::new(HostAgentApproval(p)));
    }
    if let Some(h) = def.human_review {
        out = out.human_review(Arc::new(HostReview(h)));
    }
    if !def.state_secrets.is_empty() {
        out = out.state_secrets(def.state_secrets);
    }
    let choice = def.tool_choice.map(|c| pa::ToolChoice::from(c).to_value());
    if let Some(v) = turn_value(choice, def.tool_choice_fn) {
        out = out.tool_choice(v);
    }
    if let Some(p) = def.parallel_tool_calls {
        out = out.parallel_tool_calls(p);
    }
    if let Some(v) = turn_value(def.active_tools.map(Value::from), def.active_tools_fn) {
        out = out.active_tools(v);
    }
    if let Some(s) = def.store {
        out = out.store(s.store.clone());
    }
    for server in def.mcp_servers {
        out = out.mcp_server(crate::mcp::core_server(server));
    }
    if let Some(l) = def.lease {
        if !(l.duration_ms > 0 && l.renew_every_ms > 0 && l.renew_every_ms < l.duration_ms) {
            return Err(PhaseoError::definition(format!(
                "Invalid agent definition: lease needs 0 < renewEveryMs < durationMs (got durationMs={}, renewEveryMs={})",
                l.duration_ms, l.renew_every_ms
            )));
        }
        out = out.lease(pa::store::LeaseConfig::new(
            std::time::Duration::from_millis(l.duration_ms as u64),
            std::time::Duration::from_millis(l.renew_every_ms as u64),
        ));
    }
    Ok(out)
}

/// Overrides a run or continue may set over the agent definition (docs/behaviour.md §3).
#[derive(uniffi::Record)]
pub struct RunOverrides {
    /// Model id.
    #[uniffi(default)]
    pub model: Option<String>,
    /// Step limit.
    #[uniffi(default)]
    pub max_steps: Option<i64>,
    /// Replaces the agent's stop conditions.
    #[uniffi(default)]
    pub stop_when: Option<Vec<StopWhen>>,
    /// Replaces the agent's retry policy.
    #[uniffi(default)]
    pub model_retry: Option<ModelRetry>,
    /// Overrides the agent's tool execution settings, per field.
    #[uniffi(default)]
    pub tool_execution: Option<ToolExecution>,
    /// Sampling temperature.
    #[uniffi(default)]
    pub temperature: Option<f64>,
    /// Output token limit.
    #[uniffi(default)]
    pub max_output_tokens: Option<i64>,
    /// Nucleus sampling.
    #[uniffi(default)]
    pub top_p: Option<f64>,
    /// Which tool the model must call.
    #[uniffi(default)]
    pub tool_choice: Option<ToolChoice>,
    /// Whether the model may request several calls in one turn.
    #[uniffi(default)]
    pub parallel_tool_calls: Option<bool>,
    /// The tool ids offered (each must name a tool of the agent).
    #[uniffi(default)]
    pub active_tools: Option<Vec<String>>,
}

fn core_overrides(o: Option<RunOverrides>) -> Result<pa::RunOverrides, PhaseoError> {
    let Some(o) = o else {
        return Ok(pa::RunOverrides::default());
    };
    Ok(pa::RunOverrides {
        model: o.model,
        max_steps: o.max_steps.map(count),
        stop_when: o.stop_when.map(stop_conditions),
        model_retry: o.model_retry.map(Into::into),
        tool_execution: o.tool_execution.map(TryInto::try_into).transpose()?,
        temperature: o.temperature,
        max_output_tokens: o.max_output_tokens.map(|n| n.max(0) as u64),
        top_p: o.top_p,
        tool_choice: o.tool_choice.map(Into::into),
        parallel_tool_calls: o.parallel_tool_calls,
        active_tools: o.active_tools,
    })
}

/// Settings of an HTTP model client; unset fields come from the environment (`PHASEO_*`
/// for the gateway, `OPENAI_*` for OpenAI-compatible servers).
#[derive(Clone, uniffi::Record)]
pub struct HttpClientOptions {
    /// API key (never written to state, events, errors or logs).
    #[uniffi(default)]
    pub api_key: Option<String>,
    /// Base URL.
    #[uniffi(default)]
    pub base_url: Option<String>,
    /// Model used when the agent names none.
    #[uniffi(default)]
    pub model: Option<String>,
    /// Request timeout in milliseconds.
    #[uniffi(default)]
    pub timeout_ms: Option<f64>,
    /// Extra headers.
    #[uniffi(default)]
    pub headers: HashMap<String, String>,
    /// Gateway only: a preset, the model `@<preset>` when no model is set.
    #[uniffi(default)]
    pub preset: Option<String>,
    /// Gateway only: request body fields (JSON text of an object) sent unless the request
    /// sets them: the product's client options (`tool_choice`, `parallel_tool_calls`,
    /// `response_format`, `metadata`, …) and its `requestOptions`. What the agent and run
    /// set wins.
    #[uniffi(default)]
    pub body_defaults_json: Option<String>,
}

/// Which model client a run uses.
#[derive(uniffi::Enum)]
pub enum Client {
    /// A host client (Kotlin/Swift object implementing `ModelClient`).
    Host {
        /// The client.
        client: Arc<dyn ModelClient>,
    },
    /// A host client that streams (Kotlin/Swift object implementing
    /// `StreamingModelClient`): a streamed run shows its deltas and items live.
    HostStreaming {
        /// The client.
        client: Arc<dyn StreamingModelClient>,
    },
    /// The built-in scripted client.
    Scripted {
        /// The client.
        client: Arc<ScriptedClient>,
    },
    /// The built-in offline test client.
    Test {
        /// The client.
        client: Arc<TestClient>,
    },
    /// The built-in HTTP clients (Phaseo gateway, OpenAI-compatible).
    Http {
        /// The client.
        client: Arc<HttpModelClient>,
    },
}

/// The core's model client of a host's choice.
pub(crate) fn core_client(c: Client) -> Arc<dyn pa::ModelClient> {
    match c {
        Client::Host { client } => Arc::new(HostModel(client)),
        Client::HostStreaming { client } => Arc::new(pa::HostModel(HostStreamingFunctions(client))),
        Client::Scripted { client } => client.client.clone(),
        Client::Test { client } => client.client.clone(),
        Client::Http { client } => client.client.clone(),
    }
}

/// Options of `Agent.run` / `Agent.stream`.
#[derive(uniffi::Record)]
pub struct RunOptions {
    /// The input: JSON text (a JSON string is the user message verbatim).
    pub input_json: String,
    /// The model client.
    pub client: Client,
    /// The application context (JSON).
    #[uniffi(default)]
    pub context_json: Option<String>,
    /// An earlier conversation to continue (a JSON array of messages).
    #[uniffi(default)]
    pub messages_json: Option<String>,
    /// Per-run overrides.
    #[uniffi(default)]
    pub overrides: Option<RunOverrides>,
    /// Receives every event.
    #[uniffi(default)]
    pub on_event: Option<Arc<dyn EventListener>>,
    /// Cancels the run (it then ends `cancelled` and returns its result).
    #[uniffi(default)]
    pub cancel: Option<Arc<CancelToken>>,
    /// Saves this run there instead of the agent's store.
    #[uniffi(default)]
    pub store: Option<Arc<crate::store::RunStore>>,
    /// The W3C `traceparent` of the caller's current span: the run span becomes its child
    /// (tracing on).
    #[uniffi(default)]
    pub traceparent: Option<String>,
}

/// An approval or rejection of a pending call.
#[derive(uniffi::Record)]
pub struct Decision {
    /// The pending call's id.
    pub tool_call_id: String,
    /// Reason (a rejection's reason is sent to the model).
    #[uniffi(default)]
    pub reason: Option<String>,
    /// An approval only: the person's corrected arguments (JSON), checked like the model's
    /// before the tool runs with them (docs/behaviour.md §14).
    #[uniffi(default)]
    pub edited_input_json: Option<String>,
}

/// An output supplied for a manual or hitl call.
#[derive(uniffi::Record)]
pub struct ToolOutput {
    /// The pending call's id.
    pub tool_call_id: String,
    /// The output (JSON).
    pub output_json: String,
}

/// Options of `Agent.continue_run` / `Agent.continue_stream`.
#[derive(uniffi::Record)]
pub struct ContinueOptions {
    /// The model client.
    pub client: Client,
    /// Approved calls.
    #[uniffi(default)]
    pub approvals: Vec<Decision>,
    /// Rejected calls.
    #[uniffi(default)]
    pub rejections: Vec<Decision>,
    /// Outputs of manual/hitl calls.
    #[uniffi(default)]
    pub tool_outputs: Vec<ToolOutput>,
    /// Answers given in the place of approval-gated calls: the tool never runs
    /// (docs/behaviour.md §14).
    #[uniffi(default)]
    pub responses: Vec<ToolOutput>,
    /// Human input, appended as a user message after the tool messages.
    #[uniffi(default)]
    pub human_input: Option<String>,
    /// Replaces the stored application context (JSON).
    #[uniffi(default)]
    pub context_json: Option<String>,
    /// Per-continue overrides.
    #[uniffi(default)]
    pub overrides: Option<RunOverrides>,
    /// Receives every event.
    #[uniffi(default)]
    pub on_event: Option<Arc<dyn EventListener>>,
    /// Cancels the run.
    #[uniffi(default)]
    pub cancel: Option<Arc<CancelToken>>,
    /// The store of a continue by run id (instead of the agent's store).
    #[uniffi(default)]
    pub store: Option<Arc<crate::store::RunStore>>,
    /// The W3C `traceparent` of the caller's current span (tracing on): the parent of the
    /// run span when the state carries no trace context, otherwise a link.
    #[uniffi(default)]
    pub traceparent: Option<String>,
}

fn run_token(cancel: Option<Arc<CancelToken>>) -> pa::CancellationToken {
    cancel.map(|c| c.token.child_token()).unwrap_or_default()
}

/// The core options, and the token cancelled when the host stops waiting.
pub(crate) fn core_run_options(
    o: RunOptions,
) -> Result<(pa::RunOptions, pa::CancellationToken), PhaseoError> {
    let token = run_token(o.cancel);
    let mut options = pa::RunOptions::new(
        parse_value_option(&o.input_json, "input")?,
        core_client(o.client),
    )
    .overrides(core_overrides(o.overrides)?)
    .cancel(token.clone());
    options.traceparent = o.traceparent;
    if let Some(text) = o.context_json {
        options = options.context(parse_value_option(&text, "context")?);
    }
    if let Some(text) = o.messages_json {
        let messages: Vec<pa::Message> = serde_json::from_str(&text)
            .map_err(|e| PhaseoError::definition(format!("messages: {e}")))?;
        options = options.messages(messages);
    }
    if let Some(l) = o.on_event {
        options = options.on_event(Arc::new(HostListener(l)));
    }
    if let Some(s) = o.store {
        options = options.store(s.store.clone());
    }
    Ok((options, token))
}

fn decisions(items: Vec<Decision>) -> Result<Vec<pa::ToolDecision>, PhaseoError> {
    items
        .into_iter()
        .map(|d| {
            let edited_input = d
                .edited_input_json
                .map(|text| {
                    parse_value_option(&text, &format!("edited input for {}", d.tool_call_id))
                })
                .transpose()?;
            Ok(pa::ToolDecision {
                tool_call_id: d.tool_call_id,
                reason: d.reason,
                edited_input,
            })
        })
        .collect()
}

pub(crate) fn core_continue_options(
    o: ContinueOptions,
) -> Result<(pa::ContinueOptions, pa::CancellationToken), PhaseoError> {
    let token = run_token(o.cancel);
    let mut options = pa::ContinueOptions::new(core_client(o.client))
        .overrides(core_overrides(o.overrides)?)
        .cancel(token.clone());
    options.approvals = decisions(o.approvals)?;
    options.rejections = decisions(o.rejections)?;
    for out in o.tool_outputs {
        let value = parse_value_option(
            &out.output_json,
            &format!("tool output for {}", out.tool_call_id),
        )?;
        options = options.output(out.tool_call_id, value);
    }
    for answer in o.responses {
        let value = parse_value_option(
            &answer.output_json,
            &format!("response for {}", answer.tool_call_id),
        )?;
        options = options.respond(answer.tool_call_id, value);
    }
    options.human_input = o.human_input;
    options.traceparent = o.traceparent;
    if let Some(text) = o.context_json {
        options.context = Some(parse_value_option(&text, "context")?);
    }
    if let Some(l) = o.on_event {
        options = options.on_event(Arc::new(HostListener(l)));
    }
    if let Some(s) = o.store {
        options = options.store(s.store.clone());
    }
    Ok((options, token))
}
