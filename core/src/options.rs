//! Options of runs and continues, and the execution settings shared by agents and runs.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::controls::ToolChoice;
use crate::error::AgentError;
use crate::events::EventListener;
use crate::model::ModelClient;
use crate::state::Message;
use crate::stop::StopCondition;
use crate::store::RunStore;
use crate::tool::OnError;

/// How automatic calls of a turn run (docs/behaviour.md §2.8, §2.9). Unset fields fall back to the
/// agent's setting, then to the defaults (concurrency 1, `fail-run`, no output limit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ToolExecutionConfig {
    /// Calls of one turn running at once (values below 1 are raised to 1).
    pub tool_concurrency: Option<usize>,
    /// Error policy for tools without their own.
    pub on_error: Option<OnError>,
    /// Tool message content limit, in characters.
    pub max_output_chars: Option<usize>,
    /// How many tool calls a run admits in all (docs/behaviour.md §15).
    pub max_tool_calls: Option<usize>,
}

impl ToolExecutionConfig {
    /// Sets the concurrency.
    pub fn tool_concurrency(mut self, n: usize) -> Self {
        self.tool_concurrency = Some(n);
        self
    }

    /// Sets the default error policy.
    pub fn on_error(mut self, policy: OnError) -> Self {
        self.on_error = Some(policy);
        self
    }

    /// Sets the output limit.
    pub fn max_output_chars(mut self, n: usize) -> Self {
        self.max_output_chars = Some(n);
        self
    }

    /// Sets how many tool calls a run admits in all.
    pub fn max_tool_calls(mut self, n: usize) -> Self {
        self.max_tool_calls = Some(n);
        self
    }

    /// `self` with unset fields taken from `fallback`.
    pub fn or(self, fallback: ToolExecutionConfig) -> Self {
        Self {
            tool_concurrency: self.tool_concurrency.or(fallback.tool_concurrency),
            on_error: self.on_error.or(fallback.on_error),
            max_output_chars: self.max_output_chars.or(fallback.max_output_chars),
            max_tool_calls: self.max_tool_calls.or(fallback.max_tool_calls),
        }
    }

    /// The rule the definition format's reader applies (docs/behaviour.md §15): a run's call
    /// budget admits at least one call. `where_` names the settings (`Invalid agent
    /// definition`, `Invalid run options`).
    pub(crate) fn check(&self, where_: &str) -> Result<(), AgentError> {
        // The definition reader's rule and message, with where the settings stand.
        match self.max_tool_calls {
            Some(n) => crate::spec::at_least_one(n as f64, "toolExecution.maxToolCalls")
                .map(drop)
                .map_err(|e| AgentError::definition_invalid(format!("{where_}: {}", e.message()))),
            None => Ok(()),
        }
    }

    pub(crate) fn concurrency(&self) -> usize {
        self.tool_concurrency.unwrap_or(1).max(1)
    }
}

/// Model retries: `max_retries` extra attempts, sleeping `backoff * attempt` between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelRetry {
    /// Extra attempts after the first (default 0).
    pub max_retries: u32,
    /// Base backoff (default 250 ms).
    pub backoff: Duration,
}

impl Default for ModelRetry {
    fn default() -> Self {
        Self {
            max_retries: 0,
            backoff: Duration::from_millis(250),
        }
    }
}

impl ModelRetry {
    /// `max_retries` extra attempts with a base backoff.
    pub fn new(max_retries: u32, backoff: Duration) -> Self {
        Self {
            max_retries,
            backoff,
        }
    }

    /// A policy from a host's numbers: a field left out takes its default; `max_retries` is
    /// cut to a whole number in `0..=u32::MAX`, `backoff_ms` read by
    /// [`crate::duration::from_ms`] (negative or NaN is none, too long for a clock the
    /// longest).
    pub fn from_numbers(max_retries: Option<f64>, backoff_ms: Option<f64>) -> Self {
        let default = Self::default();
        Self {
            // `as` saturates: NaN and negatives are 0, past u32::MAX is u32::MAX.
            max_retries: max_retries.map_or(default.max_retries, |n| n as u32),
            backoff: backoff_ms.map_or(default.backoff, crate::duration::from_ms),
        }
    }
}

/// Overrides a run or continue may set over the agent definition.
#[derive(Clone, Default)]
pub struct RunOverrides {
    /// Model id (kept in the state for continuations).
    pub model: Option<String>,
    /// Step limit (kept in the state for continuations).
    pub max_steps: Option<usize>,
    /// Replaces the agent's stop conditions.
    pub stop_when: Option<Vec<Arc<dyn StopCondition>>>,
    /// Replaces the agent's retry policy.
    pub model_retry: Option<ModelRetry>,
    /// Overrides the agent's tool execution settings, per field.
    pub tool_execution: Option<ToolExecutionConfig>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Output token limit.
    pub max_output_tokens: Option<u64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Which tool the model must call (over the agent's setting; docs/behaviour.md §12).
    pub tool_choice: Option<ToolChoice>,
    /// Whether the model may request several calls in one turn.
    pub parallel_tool_calls: Option<bool>,
    /// The tool ids offered (over the agent's `activeTools`); each must name a tool of the
    /// agent, or the run is refused with `definition_invalid`.
    pub active_tools: Option<Vec<String>>,
}

impl RunOverrides {
    /// Sets `toolChoice` from its JSON form (what bindings receive): null leaves it unset;
    /// an invalid value is refused with `definition_invalid` naming it.
    pub fn set_tool_choice(&mut self, value: &Value) -> Result<(), crate::AgentError> {
        self.tool_choice = match value {
            Value::Null => None,
            v => Some(ToolChoice::from_value(v).map_err(|e| {
                crate::AgentError::definition_invalid(format!("Invalid run options: {e}"))
            })?),
        };
        Ok(())
    }
}

/// Options of `agent.run`.
#[derive(Clone)]
pub struct RunOptions {
    /// The input (a string or any JSON value).
    pub input: Value,
    /// An earlier conversation to continue (multi-turn chat).
    pub messages: Option<Vec<Message>>,
    /// The model client.
    pub client: Arc<dyn ModelClient>,
    /// The application context.
    pub context: Value,
    /// Per-run overrides.
    pub overrides: RunOverrides,
    /// Event listener.
    pub on_event: Option<Arc<dyn EventListener>>,
    /// Cancels the run (it then ends `cancelled` and returns its result).
    pub cancel: Option<CancellationToken>,
    /// The run store of this run (overrides the agent's `store`).
    pub store: Option<Arc<dyn RunStore>>,
    /// The W3C `traceparent` of the caller's current span: the run span becomes its child
    /// (tracing on; a binding fills it from the host's OpenTelemetry context).
    pub traceparent: Option<String>,
    /// The binding's tag for this run, handed to every tool call of the run (and of its
    /// nested agent runs) by [`crate::ToolRuntime::host_tag`]: how a binding finds the
    /// caller's own per-run values (a Go `context.Context`) from a tool call.
    pub host_tag: Option<u64>,
}

impl RunOptions {
    /// A run of `input` on `client`.
    pub fn new(input: impl Into<Value>, client: Arc<dyn ModelClient>) -> Self {
        Self {
            input: input.into(),
            messages: None,
            client,
            context: Value::Null,
            overrides: RunOverrides::default(),
            on_event: None,
            cancel: None,
            store: None,
            traceparent: None,
            host_tag: None,
        }
    }

    /// Tags the run for the binding (see [`RunOptions::host_tag`]).
    pub fn host_tag(mut self, tag: u64) -> Self {
        self.host_tag = Some(tag);
        self
    }

    /// Makes the run span a child of the span of this W3C `traceparent` (tracing on).
    pub fn traceparent(mut self, traceparent: impl Into<String>) -> Self {
        self.traceparent = Some(traceparent.into());
        self
    }

    /// Saves this run in `store` (instead of the agent's store).
    pub fn store(mut self, store: Arc<dyn RunStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Sets the application context.
    pub fn context(mut self, context: Value) -> Self {
        self.context = context;
        self
    }

    /// Continues an earlier conversation.
    pub fn messages(mut self, messages: Vec<Message>) -> Self {
        self.messages = Some(messages);
        self
    }

    /// Sets the overrides.
    pub fn overrides(mut self, overrides: RunOverrides) -> Self {
        self.overrides = overrides;
        self
    }

    /// Sets the event listener.
    pub fn on_event(mut self, listener: Arc<dyn EventListener>) -> Self {
        self.on_event = Some(listener);
        self
    }

    /// Sets the cancellation token.
    pub fn cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }
}

/// An approval or rejection of a pending call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolDecision {
    /// The pending call's id.
    pub tool_call_id: String,
    /// Reason (a rejection's reason is sent to the model).
    pub reason: Option<String>,
    /// An approval's corrected arguments: the call runs with them, validated as the
    /// model's would be (docs/behaviour.md §14).
    pub edited_input: Option<Value>,
}

impl ToolDecision {
    /// A decision without a reason (`tool_call_id`: a `&str`, a `String`, or a call's
    /// `Arc<str>` id).
    pub fn new(tool_call_id: impl AsRef<str>) -> Self {
        Self {
            tool_call_id: tool_call_id.as_ref().to_owned(),
            reason: None,
            edited_input: None,
        }
    }

    /// An approval that runs the call with `input` instead of the model's arguments.
    pub fn edited(tool_call_id: impl AsRef<str>, input: Value) -> Self {
        Self {
            edited_input: Some(input),
            ..Self::new(tool_call_id)
        }
    }

    /// A decision with a reason.
    pub fn with_reason(tool_call_id: impl AsRef<str>, reason: impl Into<String>) -> Self {
        Self {
            reason: Some(reason.into()),
            ..Self::new(tool_call_id)
        }
    }
}

impl From<&str> for ToolDecision {
    fn from(id: &str) -> Self {
        Self::new(id)
    }
}

impl From<String> for ToolDecision {
    fn from(id: String) -> Self {
        Self::new(id)
    }
}

/// A call's id as the state holds it (`ToolCall::id`).
impl From<Arc<str>> for ToolDecision {
    fn from(id: Arc<str>) -> Self {
        Self::new(id)
    }
}

/// A call's id as the state holds it (`ToolCall::id`).
impl From<&Arc<str>> for ToolDecision {
    fn from(id: &Arc<str>) -> Self {
        Self::new(id)
    }
}

/// An output supplied for a manual or hitl call (or a manual tool that also needed
/// approval).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutput {
    /// The pending call's id.
    pub tool_call_id: String,
    /// The output.
    pub output: Value,
}

impl ToolOutput {
    /// An output for a call (`tool_call_id`: a `&str`, a `String`, or a call's `Arc<str>`
    /// id).
    pub fn new(tool_call_id: impl AsRef<str>, output: Value) -> Self {
        Self {
            tool_call_id: tool_call_id.as_ref().to_owned(),
            output,
        }
    }
}

/// Options of `agent.continue_run`.
#[derive(Clone)]
pub struct ContinueOptions {
    /// The model client.
    pub client: Arc<dyn ModelClient>,
    /// Approved calls.
    pub approvals: Vec<ToolDecision>,
    /// Rejected calls.
    pub rejections: Vec<ToolDecision>,
    /// Outputs of manual/hitl calls.
    pub tool_outputs: Vec<ToolOutput>,
    /// Answers given in the place of approval-gated calls, which then never run
    /// (docs/behaviour.md §14).
    pub responses: Vec<ToolOutput>,
    /// Human input, appended as a user message after the tool messages.
    pub human_input: Option<String>,
    /// Replaces the stored application context.
    pub context: Option<Value>,
    /// Per-continue overrides.
    pub overrides: RunOverrides,
    /// Event listener.
    pub on_event: Option<Arc<dyn EventListener>>,
    /// Cancels the run.
    pub cancel: Option<CancellationToken>,
    /// The run to continue, loaded from the store (then no state is needed; given both,
    /// they must agree).
    pub run_id: Option<String>,
    /// The run store (overrides the agent's `store`).
    pub store: Option<Arc<dyn RunStore>>,
    /// The W3C `traceparent` of the caller's current span (tracing on): the parent of the
    /// continue's run span when the state carries no trace context, otherwise a link.
    pub traceparent: Option<String>,
    /// The binding's tag for this continue, as [`RunOptions::host_tag`].
    pub host_tag: Option<u64>,
}

impl ContinueOptions {
    /// A continue on `client` with no decisions yet.
    pub fn new(client: Arc<dyn ModelClient>) -> Self {
        Self {
            client,
            approvals: Vec::new(),
            rejections: Vec::new(),
            tool_outputs: Vec::new(),
            responses: Vec::new(),
            human_input: None,
            context: None,
            overrides: RunOverrides::default(),
            on_event: None,
            cancel: None,
            run_id: None,
            store: None,
            traceparent: None,
            host_tag: None,
        }
    }

    /// Tags the continue for the binding (see [`RunOptions::host_tag`]).
    pub fn host_tag(mut self, tag: u64) -> Self {
        self.host_tag = Some(tag);
        self
    }

    /// Relates the continue's run span to the span of this W3C `traceparent`.
    pub fn traceparent(mut self, traceparent: impl Into<String>) -> Self {
        self.traceparent = Some(traceparent.into());
        self
    }

    /// Continues the stored run `run_id`.
    pub fn run_id(mut self, run_id: impl Into<String>) -> Self {
        self.run_id = Some(run_id.into());
        self
    }

    /// Uses `store` (instead of the agent's store).
    pub fn store(mut self, store: Arc<dyn RunStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Approves a call.
    pub fn approve(mut self, decision: impl Into<ToolDecision>) -> Self {
        self.approvals.push(decision.into());
        self
    }

    /// Rejects a call.
    pub fn reject(mut self, decision: impl Into<ToolDecision>) -> Self {
        self.rejections.push(decision.into());
        self
    }

    /// Answers an approval-gated call in its tool's place: the tool never runs.
    pub fn respond(mut self, tool_call_id: impl AsRef<str>, output: Value) -> Self {
        self.responses.push(ToolOutput::new(tool_call_id, output));
        self
    }

    /// Supplies an output.
    pub fn output(mut self, tool_call_id: impl AsRef<str>, output: Value) -> Self {
        self.tool_outputs
            .push(ToolOutput::new(tool_call_id, output));
        self
    }

    /// Sets the human input.
    pub fn human_input(mut self, text: impl Into<String>) -> Self {
        self.human_input = Some(text.into());
        self
    }

    /// Sets the overrides.
    pub fn overrides(mut self, overrides: RunOverrides) -> Self {
        self.overrides = overrides;
        self
    }

    /// Sets the event listener.
    pub fn on_event(mut self, listener: Arc<dyn EventListener>) -> Self {
        self.on_event = Some(listener);
        self
    }

    /// Sets the cancellation token.
    pub fn cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }
}
