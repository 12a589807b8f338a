//! Definitions and options as uniffi records: plain data crossing the FFI. Their
//! conversions to core values are in `conversions.rs`, which reads these and nothing
//! here reads back. (A record's module path is part of uniffi's API checksums: these
//! records stay in `defs`, so the generated Kotlin and Swift do not change.)

use std::collections::HashMap;
use std::sync::Arc;

use crate::api::{CancelToken, HttpModelClient, ScriptedClient, TestClient, Tool};
use crate::traits::*;

/// What happens when a call fails (docs/behaviour.md §2.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum OnError {
    /// The run fails and the error is raised (default).
    FailRun,
    /// The model receives `{"error": "<message>"}` as the tool message; the run goes on.
    ReturnToModel,
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
