//! The run result, which is also the whole resumable state (docs/behaviour.md §7), and its canonical,
//! versioned JSON form.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{AgentError, ErrorCode, GatewayErrorInfo};
use crate::json::to_canonical_string;
use crate::limits::{check_state_depth, check_state_text};
use crate::next_turn::NextTurnParams;

/// The length of the last state text written (`RunResult::to_json`): the capacity the next
/// one starts with.
static STATE_TEXT_HINT: AtomicUsize = AtomicUsize::new(0);

/// The largest capacity a state text starts with.
const MAX_STATE_TEXT_HINT: usize = 8 << 20;

/// The state format version this core writes. It reads every version up to this one.
pub const STATE_VERSION: u64 = 1;

/// Status of a run (docs/behaviour.md §3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Created, the loop has not started.
    Queued,
    /// The loop is working.
    Running,
    /// Paused: a person or another system must act (`pause` is set).
    WaitingForHuman,
    /// Finished with a final answer.
    Completed,
    /// Ended by a stop condition.
    Stopped,
    /// Ended by an error.
    Failed,
    /// Cancelled by the application.
    Cancelled,
}

impl RunStatus {
    /// The snake_case status string.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::WaitingForHuman => "waiting_for_human",
            RunStatus::Completed => "completed",
            RunStatus::Stopped => "stopped",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }

    /// The status of a snake_case status string (`None` for an unknown one).
    pub fn parse(status: &str) -> Option<Self> {
        [
            RunStatus::Queued,
            RunStatus::Running,
            RunStatus::WaitingForHuman,
            RunStatus::Completed,
            RunStatus::Stopped,
            RunStatus::Failed,
            RunStatus::Cancelled,
        ]
        .into_iter()
        .find(|s| s.as_str() == status)
    }
}

/// Role of a conversation message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// System text.
    System,
    /// The user (or the human input given on continue).
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A tool call requested by the model, with its parsed input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Call id, unique in the run (the idempotency key for side-effecting tools).
    pub id: Arc<str>,
    /// The tool id the model called.
    pub name: Arc<str>,
    /// The arguments (validated input for pending calls; the raw string when the model
    /// sent arguments that are not JSON). Shared: a call is recorded in its assistant
    /// message, in its step's results and in the runtime of its execution, and a clone of
    /// the call shares one input rather than copying it.
    pub input: Arc<Value>,
    /// The canonical JSON text of `input`, when it came with it (the model's own argument
    /// text was already canonical): writers copy it rather than write the value again.
    #[serde(skip)]
    pub(crate) input_text: InputText,
}

impl ToolCall {
    /// A call of tool `name` with id `id` and input `input`.
    pub fn new(id: impl Into<Arc<str>>, name: impl Into<Arc<str>>, input: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            input: Arc::new(input),
            input_text: InputText::default(),
        }
    }

    /// A call whose input is the value of `text`, which is its canonical JSON text
    /// (see [`crate::limits::parse_json_text_canonical`]).
    pub(crate) fn with_input_text(
        id: Arc<str>,
        name: Arc<str>,
        input: Value,
        text: String,
    ) -> Self {
        let input = Arc::new(input);
        Self {
            id,
            name,
            input_text: InputText(Some(Arc::new((Arc::clone(&input), text)))),
            input,
        }
    }

    /// The canonical JSON text of the call's input, when it is known without writing it.
    pub fn input_text(&self) -> Option<&str> {
        self.input_text.of(&self.input)
    }
}

/// The canonical JSON text of a call's input, with the input it is the text of: a call
/// whose `input` was replaced (`ToolCall { input, ..call }`) keeps a text that is no
/// longer its input's, which [`InputText::of`] then does not give. Holding that input
/// keeps its address from being reused by another. Equal to any other: it is the input's
/// text, not a part of the call.
/// (One allocation, one pointer: a call is moved often, and moving it copies its size.)
#[derive(Clone, Default)]
pub(crate) struct InputText(Option<Arc<(Arc<Value>, String)>>);

impl InputText {
    /// The text, when it is the text of `input`.
    fn of(&self, input: &Arc<Value>) -> Option<&str> {
        match self.0.as_deref() {
            Some((value, text)) if Arc::ptr_eq(value, input) => Some(text),
            _ => None,
        }
    }
}

impl PartialEq for InputText {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for InputText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "InputText(known)"
        } else {
            "InputText(none)"
        })
    }
}

/// One conversation message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its text (tool results as canonical JSON unless they are strings).
    pub content: String,
    /// Calls requested by an assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// For tool messages: the call answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<Arc<str>>,
    /// For tool messages: the tool id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<Arc<str>>,
    /// For tool messages: whether the content is an error (`{"error": …}`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_error: bool,
    /// Reasoning text of an assistant message, when the model gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
}

impl Message {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::plain(Role::User, content.into())
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::plain(Role::System, content.into())
    }

    /// An assistant message without tool calls.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::plain(Role::Assistant, content.into())
    }

    /// A tool result message (the call's id and tool name shared, not copied).
    pub fn tool(call_id: &Arc<str>, tool_name: &Arc<str>, content: String, is_error: bool) -> Self {
        Self {
            role: Role::Tool,
            content,
            tool_calls: None,
            tool_call_id: Some(Arc::clone(call_id)),
            name: Some(Arc::clone(tool_name)),
            is_error,
            reasoning: None,
        }
    }

    fn plain(role: Role, content: String) -> Self {
        Self {
            role,
            content,
            tool_calls: None,
            tool_call_id: None,
            name: None,
            is_error: false,
            reasoning: None,
        }
    }
}

/// Token and cost usage (docs/behaviour.md §7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens served from a cache.
    pub cached_tokens: u64,
    /// Total tokens (defaults to input + output for a step).
    pub total_tokens: u64,
    /// Cost, as reported by the model endpoint.
    #[serde(deserialize_with = "finite_or_zero")]
    pub cost: f64,
}

/// A cost of `null` (how JSON writes a non-finite number) reads as 0.
fn finite_or_zero<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?
        .filter(|c| c.is_finite())
        .unwrap_or(0.0))
}

impl Usage {
    /// Adds another usage to this one.
    pub fn add(&mut self, other: &Usage) {
        // Stored states are untrusted input: counters saturate instead of overflowing.
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(other.cached_tokens);
        self.total_tokens = self.total_tokens.saturating_add(other.total_tokens);
        self.cost += other.cost;
    }
}

/// Kind of a pending tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PendingKind {
    /// Needs an approval (and, for a manual tool, also an output).
    Approval,
    /// A manual tool: needs an output.
    Manual,
    /// An interactive tool whose hook asked for human input: needs an output.
    Hitl,
}

impl PendingKind {
    /// The snake_case kind string.
    pub fn as_str(self) -> &'static str {
        match self {
            PendingKind::Approval => "approval",
            PendingKind::Manual => "manual",
            PendingKind::Hitl => "hitl",
        }
    }

    /// The reason text of a pending call of this kind.
    pub fn reason(self) -> &'static str {
        match self {
            PendingKind::Approval => "Tool requires approval",
            PendingKind::Manual => "Tool requires manual execution",
            PendingKind::Hitl => "Tool requires human input",
        }
    }
}

/// Kind of a pause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PauseKind {
    /// At least one pending call needs approval.
    ToolApproval,
    /// Pending interactive calls (and no approvals).
    Hitl,
    /// Only manual calls pending.
    ManualTool,
    /// The human-review hook paused the run.
    HumanReview,
}

/// A call waiting for a decision or an output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingToolCall {
    /// The call, with its validated input.
    pub call: ToolCall,
    /// What it waits for.
    pub kind: PendingKind,
    /// Human-readable reason.
    pub reason: String,
}

/// Why and where a run is paused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pause {
    /// Unique per pause: a store can compare-and-set on it to continue a pause only once.
    pub id: String,
    /// Why the run paused.
    pub reason: String,
    /// Application payload (human review) or null.
    #[serde(default)]
    pub payload: Value,
    /// ISO-8601 UTC time of the pause.
    pub requested_at: String,
    /// The pause kind.
    pub kind: PauseKind,
    /// Calls waiting for a decision or output, in call order. A call of a nested agent
    /// (docs/behaviour.md §18) is listed with the id `<outerCallId>/<nestedCallId>`.
    #[serde(default)]
    pub pending_tool_calls: Vec<PendingToolCall>,
    /// The paused runs of agent tools, by the outer call's id: each nested run's
    /// canonical state, continued when the decisions for its calls arrive.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub nested_runs: std::collections::BTreeMap<String, Value>,
}

/// The error of a failed (or cancelled) run, as stored in the state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunError {
    /// The error code (docs/behaviour.md §9).
    pub code: ErrorCode,
    /// The message.
    pub message: String,
    /// HTTP details for gateway errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<GatewayErrorInfo>,
}

impl RunError {
    /// The stored error as an [`AgentError`].
    pub fn to_agent_error(&self) -> AgentError {
        AgentError::new(self.code, self.message.clone()).with_gateway(self.gateway.clone())
    }
}

/// The run record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    /// Run id (a UUID).
    pub id: String,
    /// The owning agent's id.
    pub agent_id: String,
    /// Current status.
    pub status: RunStatus,
    /// The run's input.
    #[serde(default)]
    pub input: Value,
    /// The application context (replaced by tools' `setContext`).
    #[serde(default)]
    pub context: Value,
    /// The conversation.
    #[serde(default)]
    pub messages: Vec<Message>,
    /// The final output (completed or stopped runs).
    #[serde(default)]
    pub result: Value,
    /// The error of a failed or cancelled run.
    #[serde(default)]
    pub error: Option<RunError>,
    /// The pause, while waiting for a human.
    #[serde(default)]
    pub pause: Option<Pause>,
    /// Why a stop condition ended the run.
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// Cumulative usage.
    #[serde(default)]
    pub usage: Usage,
    /// ISO-8601 UTC creation time.
    pub created_at: String,
    /// ISO-8601 UTC time of the last change.
    pub updated_at: String,
    /// Model responses so far (the paused step is counted).
    #[serde(default)]
    pub step_count: usize,
    /// Overrides waiting for the next model request.
    #[serde(default)]
    pub next_turn_params: Option<NextTurnParams>,
    /// Run-level model override, kept for continuations.
    #[serde(default)]
    pub model: Option<String>,
    /// Run-level step limit override, kept for continuations.
    #[serde(default)]
    pub max_steps: Option<usize>,
    /// The W3C `traceparent` of the run span of the call that produced this state (set
    /// while tracing is on): a continue in any process or language starts its run span in
    /// this trace. Absent (not `null`) when tracing was never on, so untraced states are
    /// unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
    /// The tool calls the run admitted, for its budgets (docs/behaviour.md §15). Absent
    /// until a call is admitted, so states of runs without tool calls are unchanged.
    #[serde(default, skip_serializing_if = "ToolCallCounts::is_empty")]
    pub tool_call_counts: ToolCallCounts,
    /// The deferred tools `tool_search` loaded, in load order: offered from then on
    /// (docs/behaviour.md §17). Absent until a tool is loaded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loaded_tools: Vec<String>,
}

/// How many tool calls a run admitted: in all, and per tool id.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCallCounts {
    /// Every admitted call.
    pub total: usize,
    /// Admitted calls per tool id.
    pub by_tool: std::collections::BTreeMap<String, usize>,
}

impl ToolCallCounts {
    /// No call admitted yet.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Counts one admitted call of `tool`. The counts come from a stored state, which may
    /// hold any number: a count at the maximum stays there (a budget it exceeds stays
    /// exceeded) rather than wrapping to 0.
    pub fn admit(&mut self, tool: &str) {
        self.total = self.total.saturating_add(1);
        // Looked up first: the tool's id is copied only for its first call.
        match self.by_tool.get_mut(tool) {
            Some(count) => *count = count.saturating_add(1),
            None => {
                self.by_tool.insert(tool.to_owned(), 1);
            }
        }
    }

    /// The admitted calls of `tool`.
    pub fn of(&self, tool: &str) -> usize {
        self.by_tool.get(tool).copied().unwrap_or(0)
    }
}

/// Status of a step record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// The step finished and was checkpointed.
    Checkpointed,
    /// The step paused the run.
    Paused,
    /// The step failed.
    Failed,
}

/// Bookkeeping of one model request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepRecord {
    /// Step index (from 0).
    pub index: usize,
    /// Step status.
    pub status: StepStatus,
    /// Model attempts used (retries included).
    pub model_attempts: u32,
    /// The model that answered.
    #[serde(default)]
    pub model: Option<String>,
    /// The endpoint's request id.
    #[serde(default)]
    pub request_id: Option<String>,
    /// The provider that answered.
    #[serde(default)]
    pub provider: Option<String>,
}

/// Outcome of one tool call in a step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// The call answered.
    pub tool_call_id: Arc<str>,
    /// The tool id.
    pub tool_name: Arc<str>,
    /// The result (absent when the call errored; a `null` result stays `Some(Null)`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub result: Option<Value>,
    /// Progress values, in order.
    #[serde(default)]
    pub preliminary_results: Vec<Value>,
    /// The error returned to the model, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The input the call ran with, when a person edited it on approval
    /// (docs/behaviour.md §14).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// The model's arguments, when a person edited them on approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_input: Option<Value>,
    /// The next-turn overrides the call contributed, kept while its step waits for
    /// decisions: the overrides of the calls decided on continue then merge with them in
    /// call order (docs/behaviour.md §2.6). Cleared once the step is done. Boxed: rarely
    /// set, and every tool result would be larger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_turn_params: Option<Box<NextTurnParams>>,
}

/// A key that is present is `Some`, even when its value is `null`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// What one step produced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepResult {
    /// Step index.
    pub step_index: usize,
    /// The assistant text.
    pub text: String,
    /// Reasoning text, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// The calls the model requested.
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    /// Outcomes of the calls, in call order.
    #[serde(default)]
    pub tool_results: Vec<ToolResult>,
    /// The step's usage.
    #[serde(default)]
    pub usage: Usage,
    /// The model's finish reason.
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// An item of the run's output stream (docs/behaviour.md §6), derived from the steps (or streamed by a
/// host model client, which reads items with `Deserialize`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Item {
    /// Assistant text.
    Message {
        /// Always `assistant`.
        role: Role,
        /// The text.
        content: String,
    },
    /// Reasoning text.
    Reasoning {
        /// The text.
        text: String,
    },
    /// A requested call.
    #[serde(rename_all = "camelCase")]
    ToolCall {
        /// Call id.
        tool_call_id: String,
        /// Tool id.
        name: String,
        /// Input.
        input: Value,
    },
    /// A call's result.
    #[serde(rename_all = "camelCase")]
    ToolResult {
        /// Call id.
        tool_call_id: String,
        /// Tool id.
        name: String,
        /// Result.
        output: Value,
    },
    /// A call's error returned to the model.
    #[serde(rename_all = "camelCase")]
    Error {
        /// The message.
        message: String,
        /// Call id.
        tool_call_id: String,
        /// Tool id.
        tool_name: String,
    },
    /// The run's final output.
    Output {
        /// The value.
        value: Value,
    },
}

impl Item {
    /// The items of one step: its response, then its tool outcomes.
    pub fn of_step(step: &StepResult) -> Vec<Item> {
        let mut items = Vec::with_capacity(1 + step.tool_calls.len() + step.tool_results.len());
        if let Some(reasoning) = &step.reasoning {
            items.push(Item::Reasoning {
                text: reasoning.clone(),
            });
        }
        if !step.text.is_empty() {
            items.push(Item::Message {
                role: Role::Assistant,
                content: step.text.clone(),
            });
        }
        for call in &step.tool_calls {
            items.push(Item::ToolCall {
                tool_call_id: call.id.to_string(),
                name: call.name.to_string(),
                input: Value::clone(&call.input),
            });
        }
        for r in &step.tool_results {
            items.push(Item::of_tool_result(r));
        }
        items
    }

    /// The item of one tool outcome.
    pub fn of_tool_result(r: &ToolResult) -> Item {
        match &r.error {
            Some(message) => Item::Error {
                message: message.clone(),
                tool_call_id: r.tool_call_id.to_string(),
                tool_name: r.tool_name.to_string(),
            },
            None => Item::ToolResult {
                tool_call_id: r.tool_call_id.to_string(),
                name: r.tool_name.to_string(),
                output: r.result.clone().unwrap_or(Value::Null),
            },
        }
    }
}

/// The result of `run`/`continue_run`: the whole resumable state.
///
/// Its canonical JSON (`to_json`) is identical whichever language produced it, and
/// continues in any language (`from_json`).
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    /// The run record.
    pub run: RunRecord,
    /// One record per model request.
    pub steps: Vec<StepRecord>,
    /// What each step produced.
    pub step_results: Vec<StepResult>,
    /// HMAC-SHA256 of the unsigned canonical JSON, set by an agent with a `state_secret`.
    pub(crate) signature: Option<String>,
    /// The signed state as it was read held more than, or other than, what it reads as:
    /// edited derived parts (`usage`, `output`, `items`) or fields the reader does not know.
    /// Its signature, made over the state as given, is then not this state's
    /// (docs/behaviour.md §7).
    pub(crate) signed_content_altered: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StateOut<'a> {
    version: u64,
    run: &'a RunRecord,
    steps: &'a [StepRecord],
    step_results: &'a [StepResult],
    usage: &'a Usage,
    output: &'a Value,
    /// Left out only by [`RunResult::to_json_without_items`].
    #[serde(skip_serializing_if = "Option::is_none")]
    items: Option<ItemsOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signature: Option<&'a str>,
}

/// A state's text (whole, or without its items). A state's text is written at the end of
/// every run (and at each checkpoint) and grows to hundreds of kilobytes in a run of many
/// calls: from a small buffer that is a dozen reallocations, copies and freshly faulted
/// pages. The buffer starts at the size of the last state text written instead; one much
/// larger than its text is shrunk.
fn state_text<T: Serialize + ?Sized>(state: &T) -> String {
    let hint = STATE_TEXT_HINT.load(Ordering::Relaxed);
    let mut text = crate::json::to_canonical_string_with_capacity(state, hint.max(1024));
    STATE_TEXT_HINT.store(text.len().min(MAX_STATE_TEXT_HINT), Ordering::Relaxed);
    if text.len() < text.capacity() / 2 {
        text.shrink_to_fit();
    }
    text
}

/// The items of a state, serialized straight from the steps (no copies).
struct ItemsOut<'a>(&'a RunResult);

impl Serialize for ItemsOut<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        #[derive(Serialize)]
        #[serde(tag = "type", rename_all = "snake_case")]
        enum ItemRef<'a> {
            Message {
                role: Role,
                content: &'a str,
            },
            Reasoning {
                text: &'a str,
            },
            #[serde(rename_all = "camelCase")]
            ToolCall {
                tool_call_id: &'a str,
                name: &'a str,
                input: &'a Value,
            },
            #[serde(rename_all = "camelCase")]
            ToolResult {
                tool_call_id: &'a str,
                name: &'a str,
                output: &'a Value,
            },
            #[serde(rename_all = "camelCase")]
            Error {
                message: &'a str,
                tool_call_id: &'a str,
                tool_name: &'a str,
            },
            Output {
                value: &'a Value,
            },
        }
        let null = Value::Null;
        let mut seq = serializer.serialize_seq(None)?;
        for step in &self.0.step_results {
            if let Some(text) = &step.reasoning {
                seq.serialize_element(&ItemRef::Reasoning { text })?;
            }
            if !step.text.is_empty() {
                seq.serialize_element(&ItemRef::Message {
                    role: Role::Assistant,
                    content: &step.text,
                })?;
            }
            for c in &step.tool_calls {
                seq.serialize_element(&ItemRef::ToolCall {
                    tool_call_id: &c.id,
                    name: &c.name,
                    input: &c.input,
                })?;
            }
            for r in &step.tool_results {
                match &r.error {
                    Some(message) => seq.serialize_element(&ItemRef::Error {
                        message,
                        tool_call_id: &r.tool_call_id,
                        tool_name: &r.tool_name,
                    })?,
                    None => seq.serialize_element(&ItemRef::ToolResult {
                        tool_call_id: &r.tool_call_id,
                        name: &r.tool_name,
                        output: r.result.as_ref().unwrap_or(&null),
                    })?,
                }
            }
        }
        if matches!(self.0.run.status, RunStatus::Completed | RunStatus::Stopped) {
            seq.serialize_element(&ItemRef::Output {
                value: &self.0.run.result,
            })?;
        }
        seq.end()
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StateIn {
    #[serde(default)]
    version: Option<Value>,
    run: RunRecord,
    #[serde(default)]
    steps: Vec<StepRecord>,
    #[serde(default)]
    step_results: Vec<StepResult>,
    #[serde(default)]
    signature: Option<String>,
}

impl Serialize for RunResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.out(true).serialize(serializer)
    }
}

impl RunResult {
    fn out(&self, signed: bool) -> StateOut<'_> {
        StateOut {
            version: STATE_VERSION,
            run: &self.run,
            steps: &self.steps,
            step_results: &self.step_results,
            usage: &self.run.usage,
            output: &self.run.result,
            items: Some(ItemsOut(self)),
            signature: self.signature.as_deref().filter(|_| signed),
        }
    }

    /// The run's status.
    pub fn status(&self) -> RunStatus {
        self.run.status
    }

    /// The final output (null while paused or failed).
    pub fn output(&self) -> &Value {
        &self.run.result
    }

    /// The final output as text: a string verbatim, nothing as `""`, any other value as
    /// canonical JSON (what a stream's `getText()` returns in every language).
    pub fn output_text(&self) -> String {
        match &self.run.result {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => to_canonical_string(other),
        }
    }

    /// The pause, while waiting for a human.
    pub fn pause(&self) -> Option<&Pause> {
        self.run.pause.as_ref()
    }

    /// Pending calls of a tool pause (empty otherwise).
    pub fn pending(&self) -> &[PendingToolCall] {
        self.run
            .pause
            .as_ref()
            .map(|p| p.pending_tool_calls.as_slice())
            .unwrap_or(&[])
    }

    /// Cumulative usage.
    pub fn usage(&self) -> &Usage {
        &self.run.usage
    }

    /// The conversation.
    pub fn messages(&self) -> &[Message] {
        &self.run.messages
    }

    /// The items of the run: per step its response and tool outcomes, then the output.
    pub fn items(&self) -> Vec<Item> {
        let mut items: Vec<Item> = self.step_results.iter().flat_map(Item::of_step).collect();
        if matches!(self.run.status, RunStatus::Completed | RunStatus::Stopped) {
            items.push(Item::Output {
                value: self.run.result.clone(),
            });
        }
        items
    }

    /// The state's `signature` (docs/behaviour.md §7): present on states produced by an agent with a
    /// `state_secret`.
    pub fn signature(&self) -> Option<&str> {
        self.signature.as_deref()
    }

    /// The canonical JSON text of the state without its `signature`: what is signed.
    pub fn unsigned_json(&self) -> String {
        to_canonical_string(&self.out(false))
    }

    /// The canonical JSON text of the state.
    pub fn to_json(&self) -> String {
        state_text(self)
    }

    /// The canonical JSON text of the state without its `items` (and so not a state to
    /// continue): every other part as [`to_json`](Self::to_json) writes it. The items repeat
    /// every call's input and output; a host that keeps the state itself and gives its
    /// conversation, steps and step results to the application at once reads them from this
    /// text, and asks for the whole text only when it is wanted (about a third shorter for a
    /// run of many calls).
    pub fn to_json_without_items(&self) -> String {
        state_text(&StateOut {
            items: None,
            ..self.out(true)
        })
    }

    /// The canonical JSON text of the state with the parts that grow with the run empty
    /// (`run.messages`, `steps`, `stepResults`; `items` then holds only the output's entry):
    /// what a host that reads a run's status, output and usage needs, without writing its
    /// history. The state is unchanged afterwards.
    pub fn head_json(&mut self) -> String {
        let messages = std::mem::take(&mut self.run.messages);
        let steps = std::mem::take(&mut self.steps);
        let step_results = std::mem::take(&mut self.step_results);
        // Not `to_json`: its buffer is sized for whole states, and its size hint is theirs.
        let head = to_canonical_string(self);
        self.run.messages = messages;
        self.steps = steps;
        self.step_results = step_results;
        head
    }

    /// A rough size in bytes of the memory the state's growing parts hold (its messages,
    /// steps and step results): what a host holding the state natively tells its garbage
    /// collector, so that dropped states are collected in time.
    pub fn estimated_size(&self) -> usize {
        const NODE: usize = 256;
        fn value(v: &Value) -> usize {
            NODE + match v {
                Value::String(s) => s.len(),
                Value::Array(a) => a.iter().map(value).sum(),
                Value::Object(o) => o.iter().map(|(k, v)| k.len() + value(v)).sum(),
                _ => 0,
            }
        }
        fn call(c: &ToolCall) -> usize {
            NODE + c.id.len() + c.name.len() + value(&c.input)
        }
        let messages: usize = self
            .run
            .messages
            .iter()
            .map(|m| {
                2 * NODE + m.content.len() + m.tool_calls.iter().flatten().map(call).sum::<usize>()
            })
            .sum();
        let results: usize = self
            .step_results
            .iter()
            .map(|r| {
                2 * NODE
                    + r.text.len()
                    + r.tool_calls.iter().map(call).sum::<usize>()
                    + r.tool_results
                        .iter()
                        .map(|t| {
                            2 * NODE
                                + t.result.as_ref().map_or(0, value)
                                + t.preliminary_results.iter().map(value).sum::<usize>()
                        })
                        .sum::<usize>()
            })
            .sum();
        messages + results + self.steps.len() * 2 * NODE
    }

    /// The state as a JSON value (same content as `to_json`).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("the state is JSON-compatible")
    }

    /// Parses state JSON text. Malformed state, or state of an unsupported version, is
    /// refused with a `state_invalid` error naming the problem.
    pub fn from_json(text: &str) -> Result<Self, AgentError> {
        let shallow = check_state_text(text)
            .map_err(|e| AgentError::state_invalid(format!("Invalid state: {e}")))?;
        // Fast path: straight into the typed state, when the text is nested within one
        // state's allowance (a deeper one holds paused agent tools' states, each checked
        // from its own root on the path through a JSON value). Any failure takes that
        // slower path, whose errors name the problem precisely.
        if let Some(parsed) = shallow
            .then(|| serde_json::from_str::<StateIn>(text).ok())
            .flatten()
        {
            if matches!(parsed.version.as_ref().and_then(Value::as_u64), Some(n) if (1..=STATE_VERSION).contains(&n))
            {
                let mut result = RunResult {
                    run: parsed.run,
                    steps: parsed.steps,
                    step_results: parsed.step_results,
                    signature: parsed.signature,
                    signed_content_altered: false,
                };
                result.check_consistency()?;
                if result.signature.is_some() {
                    let given: Value = serde_json::from_str(text).map_err(|e| {
                        AgentError::state_invalid(format!("Invalid state: not JSON ({e})"))
                    })?;
                    result.signed_content_altered = given_differs(given, &result);
                }
                return Ok(result);
            }
        }
        let value: Value = serde_json::from_str(text)
            .map_err(|e| AgentError::state_invalid(format!("Invalid state: not JSON ({e})")))?;
        Self::from_value(value)
    }

    /// Parses a state JSON value (see [`RunResult::from_json`]).
    pub fn from_value(value: Value) -> Result<Self, AgentError> {
        check_state_depth(&value)
            .map_err(|e| AgentError::state_invalid(format!("Invalid state: {e}")))?;
        let Some(obj) = value.as_object() else {
            return Err(AgentError::state_invalid(
                "Invalid state: expected a JSON object",
            ));
        };
        match obj.get("version") {
            None => return Err(AgentError::state_invalid("Invalid state: missing `version`")),
            Some(v) => match v.as_u64() {
                Some(n) if (1..=STATE_VERSION).contains(&n) => {}
                _ => {
                    return Err(AgentError::state_invalid(format!(
                        "Invalid state: unsupported version {v} (this core reads versions 1 to {STATE_VERSION})"
                    )))
                }
            },
        }
        let given = obj.contains_key("signature").then(|| value.clone());
        let parsed: StateIn = serde_json::from_value(value)
            .map_err(|e| AgentError::state_invalid(format!("Invalid state: {e}")))?;
        let mut result = RunResult {
            run: parsed.run,
            steps: parsed.steps,
            step_results: parsed.step_results,
            signature: parsed.signature,
            signed_content_altered: false,
        };
        result.check_consistency()?;
        result.signed_content_altered = given.is_some_and(|given| given_differs(given, &result));
        Ok(result)
    }

    /// Checks the invariants a continuable state must hold.
    pub(crate) fn check_consistency(&self) -> Result<(), AgentError> {
        /// The form `state.schema.json` gives `run.traceparent`.
        fn is_traceparent_form(s: &str) -> bool {
            let parts: Vec<&str> = s.split('-').collect();
            parts.len() == 4
                && [2, 32, 16, 2].iter().zip(&parts).all(|(len, p)| {
                    p.len() == *len && p.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
                })
        }
        let run = &self.run;
        if run.id.is_empty() {
            return Err(AgentError::state_invalid(
                "Invalid state: `run.id` is empty",
            ));
        }
        if let Some(tp) = &run.traceparent {
            if !is_traceparent_form(tp) {
                return Err(AgentError::state_invalid(format!(
                    "Invalid state: `run.traceparent` {tp:?} is not a W3C traceparent \
                     (00-<32 hex>-<16 hex>-<2 hex>, lower case)"
                )));
            }
        }
        if run.status == RunStatus::WaitingForHuman && run.pause.is_none() {
            return Err(AgentError::state_invalid(
                "Invalid state: status is waiting_for_human but `run.pause` is null",
            ));
        }
        if let Some(pause) = &run.pause {
            if pause.kind != PauseKind::HumanReview && pause.pending_tool_calls.is_empty() {
                return Err(AgentError::state_invalid(
                    "Invalid state: a tool pause without pending tool calls",
                ));
            }
            if pause.kind != PauseKind::HumanReview {
                let Some(step) = self.step_results.last() else {
                    return Err(AgentError::state_invalid(
                        "Invalid state: a tool pause without `stepResults`",
                    ));
                };
                if run.step_count == 0 || step.step_index.checked_add(1) != Some(run.step_count) {
                    return Err(AgentError::state_invalid(format!(
                        "Invalid state: the paused step {} is not the last step (stepCount {})",
                        step.step_index, run.step_count
                    )));
                }
                let is_call = |id: &str| step.tool_calls.iter().any(|c| &*c.id == id);
                if let Some(id) = pause.nested_runs.keys().find(|id| !is_call(id)) {
                    return Err(AgentError::state_invalid(format!(
                        "Invalid state: nested run of {id}, which is not a call of the paused step"
                    )));
                }
                let nested_call = |id: &str| {
                    pause.nested_runs.keys().any(|k| {
                        id.strip_prefix(k.as_str())
                            .and_then(|rest| rest.strip_prefix('/'))
                            .is_some_and(|rest| !rest.is_empty())
                    })
                };
                if let Some(p) = pause
                    .pending_tool_calls
                    .iter()
                    .find(|p| !is_call(&p.call.id) && !nested_call(&p.call.id))
                {
                    return Err(AgentError::state_invalid(format!(
                        "Invalid state: pending call {} is not a call of the paused step",
                        p.call.id
                    )));
                }
                let mut ids = std::collections::HashSet::new();
                if let Some(p) = pause
                    .pending_tool_calls
                    .iter()
                    .find(|p| !ids.insert(&*p.call.id))
                {
                    return Err(AgentError::state_invalid(format!(
                        "Invalid state: tool call {} is pending more than once",
                        p.call.id
                    )));
                }
                // Each paused agent tool's state is a state of its own (docs/behaviour.md
                // §18), read as one before anything else is checked.
                for (outer, nested) in &pause.nested_runs {
                    RunResult::from_value(nested.clone())
                        .map_err(|e| nested_state_invalid(outer, e.message()))?;
                }
            }
        }
        if humantime::parse_rfc3339_weak(&run.created_at).is_err() {
            return Err(AgentError::state_invalid(format!(
                "Invalid state: `run.createdAt` is not an ISO-8601 time: {:?}",
                run.created_at
            )));
        }
        Ok(())
    }
}

/// Whether a signed state as given (`given`, its signature included) holds more than, or
/// other than, the state read from it writes. Both are compared as values read from their
/// canonical JSON text, so spacing, the order of the state's own fields and the form of a
/// number (`0.0`, `0`) do not count.
fn given_differs(mut given: Value, read: &RunResult) -> bool {
    if let Some(fields) = given.as_object_mut() {
        fields.remove("signature");
    }
    let as_written = |text: &str| serde_json::from_str::<Value>(text).ok();
    as_written(&to_canonical_string(&given)) != as_written(&read.unsigned_json())
}

/// A paused agent tool's state (of the outer call `outer`) is not one to continue: `m` says
/// why (a reader's message without its own `Invalid state: `).
pub(crate) fn nested_state_invalid(outer: &str, m: impl std::fmt::Display) -> AgentError {
    let m = m.to_string();
    let m = m.strip_prefix("Invalid state: ").unwrap_or(&m);
    AgentError::state_invalid(format!("Invalid state: nested run of call {outer}: {m}"))
}
