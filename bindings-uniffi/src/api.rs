//! The objects: tools, agents, results, streams, clients, cancellation and the runtime a
//! tool call sees.

use std::future::Future;
use std::sync::Arc;

use phaseo_agent as pa;
use phaseo_agent::Value;

use crate::conversions::*;
use crate::defs::*;
use crate::errors::{PhaseoError, ToolError};
use crate::traits::{to_json, SchemaValidator, Validator};

/// Runs a future on the core's runtime and waits for it; dropping the wait (the Kotlin
/// coroutine was cancelled) cancels `token` and aborts the task, which drops every tool
/// call in flight (and so cancels their coroutines).
pub(crate) async fn on_core<T, F>(token: pa::CancellationToken, fut: F) -> Result<T, PhaseoError>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    struct Guard {
        token: pa::CancellationToken,
        task: tokio::task::AbortHandle,
        armed: bool,
    }
    impl Drop for Guard {
        fn drop(&mut self) {
            if self.armed {
                self.token.cancel();
                self.task.abort();
            }
        }
    }
    let handle = pa::exec::runtime().spawn(fut);
    let mut guard = Guard {
        token,
        task: handle.abort_handle(),
        armed: true,
    };
    let out = handle.await;
    guard.armed = false;
    out.map_err(|e| {
        if e.is_panic() {
            PhaseoError::internal(pa::panic_message(e.into_panic().as_ref()))
        } else {
            PhaseoError::new(pa::ErrorCode::Cancelled, "The run was cancelled")
        }
    })
}

/// Status of a run (docs/behaviour.md §3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum RunStatus {
    /// Created, the loop has not started.
    Queued,
    /// The loop is working.
    Running,
    /// Paused: a person or another system must act.
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

impl From<pa::RunStatus> for RunStatus {
    fn from(s: pa::RunStatus) -> Self {
        match s {
            pa::RunStatus::Queued => RunStatus::Queued,
            pa::RunStatus::Running => RunStatus::Running,
            pa::RunStatus::WaitingForHuman => RunStatus::WaitingForHuman,
            pa::RunStatus::Completed => RunStatus::Completed,
            pa::RunStatus::Stopped => RunStatus::Stopped,
            pa::RunStatus::Failed => RunStatus::Failed,
            pa::RunStatus::Cancelled => RunStatus::Cancelled,
        }
    }
}

/// What a tool call sees of its run (docs/behaviour.md §2.1): ids, the application context as it was
/// when the tool phase began, the call, and `emit_progress` / `set_context`.
#[derive(uniffi::Object)]
pub struct ToolRuntime {
    inner: pa::ToolRuntime,
    /// Fired when an executor begins (calls start in call order; see `start_order`).
    started: Option<crate::start_order::StartSignal>,
}

impl ToolRuntime {
    pub(crate) fn new(inner: pa::ToolRuntime) -> Self {
        Self {
            inner,
            started: None,
        }
    }

    pub(crate) fn with_start_signal(mut self, started: crate::start_order::StartSignal) -> Self {
        self.started = Some(started);
        self
    }
}

/// Host values arrive as JSON text: parsed with the core's limits (docs/behaviour.md §7), so a value
/// too deep or with a huge integer is refused with the core's message.
fn parse_value(text: &str, what: &str) -> Result<Value, ToolError> {
    pa::parse_json_text(text).map_err(|e| ToolError::new(format!("{what} is not valid JSON: {e}")))
}

#[uniffi::export]
impl ToolRuntime {
    /// Marks the executor as begun, so the next call of the turn may be handed over (calls
    /// start in call order). The Kotlin layer calls it as the tool body starts; a Swift
    /// executor should call it first thing (one that never does hands each next call over
    /// up to half a second later). Harmless anywhere else and when called twice.
    pub fn mark_started(&self) {
        crate::start_order::host_marks();
        if let Some(started) = &self.started {
            started.fire();
        }
    }

    /// The run id.
    pub fn run_id(&self) -> String {
        self.inner.run_id().to_owned()
    }

    /// The agent id.
    pub fn agent_id(&self) -> String {
        self.inner.agent_id().to_owned()
    }

    /// Index of the step that requested the call.
    pub fn step_index(&self) -> i64 {
        self.inner.step_index() as i64
    }

    /// The application context (JSON) as it was when the tool phase began.
    pub fn context_json(&self) -> String {
        to_json(self.inner.context())
    }

    /// The call `{id, name, input}` (JSON).
    pub fn tool_call_json(&self) -> String {
        pa::json::to_canonical_string(self.inner.tool_call())
    }

    /// The call id (unique in the run).
    pub fn tool_call_id(&self) -> String {
        self.inner.tool_call().id.to_string()
    }

    /// The executor's attempt: 1, then 2, 3… when the tool's `retry` runs the call again
    /// (docs/behaviour.md §15).
    pub fn attempt(&self) -> i64 {
        i64::from(self.inner.attempt())
    }

    /// `"<runId>:<toolCallId>"`: the same for every attempt of the call, for a call approved
    /// on continue elsewhere and for a call run again by `recover`; hand it to a service so
    /// that a side effect happens at most once (docs/behaviour.md §15).
    pub fn idempotency_key(&self) -> String {
        self.inner.idempotency_key()
    }

    /// The tool id.
    pub fn tool_name(&self) -> String {
        self.inner.tool_call().name.to_string()
    }

    /// The annotations of the tool (an MCP tool's `readOnlyHint`, `destructiveHint`, …) as
    /// JSON, or null when it has none.
    pub fn tool_annotations_json(&self) -> Option<String> {
        self.inner.tool_annotations().map(crate::traits::to_json)
    }

    /// Whether the call was cancelled (timeout or run cancellation).
    pub fn is_cancelled(&self) -> bool {
        self.inner.is_cancelled()
    }

    /// Publishes a progress value (JSON): checked by `eventSchema`, emitted as
    /// `tool.preliminary_result`.
    pub fn emit_progress(&self, value_json: String) -> Result<(), ToolError> {
        // A value beyond the limits fails the call as an invalid event, as in every binding.
        match pa::parse_json_text(&value_json) {
            Ok(value) => self.inner.emit_progress(value),
            Err(message) => self.inner.reject_progress(message),
        }
        Ok(())
    }

    /// Replaces the whole application context (JSON) for later turns.
    pub fn set_context(&self, value_json: String) -> Result<(), ToolError> {
        self.inner
            .set_context(parse_value(&value_json, "the context")?)
            .map_err(|e| ToolError::new(e.to_string()))
    }
}

/// The strict form of a JSON Schema (JSON text in and out; the core's `make_strict`,
/// docs/behaviour.md §20): every object closed, every property required, optional ones
/// nullable. Text that is not JSON is refused (`definition_invalid`).
#[uniffi::export]
pub fn schema_strict(schema_json: String) -> Result<String, PhaseoError> {
    let schema: Value = serde_json::from_str(&schema_json)
        .map_err(|e| PhaseoError::definition(format!("Invalid JSON Schema: not JSON ({e})")))?;
    Ok(pa::make_strict(&schema).to_string())
}

/// A JSON Schema (JSON text) compiled by the core, as a [`Validator`]: its messages are
/// `<JSON pointer>: <reason>`. An invalid schema is refused (`definition_invalid`).
#[uniffi::export]
pub fn json_schema_validator(schema_json: String) -> Result<Arc<dyn Validator>, PhaseoError> {
    let schema: Value = serde_json::from_str(&schema_json)
        .map_err(|e| PhaseoError::definition(format!("Invalid JSON Schema: not JSON ({e})")))?;
    let compiled = pa::JsonSchema::compile(&schema)
        .map_err(|e| PhaseoError::definition(format!("Invalid JSON Schema: {e}")))?;
    Ok(Arc::new(SchemaValidator(compiled)))
}

/// A checked tool definition. An invalid one (a bad schema, a negative timeout, an empty
/// id) is refused here with `definition_invalid`.
#[derive(uniffi::Object)]
pub struct Tool {
    pub(crate) tool: pa::Tool,
}

#[uniffi::export]
impl Tool {
    /// Defines a tool.
    #[uniffi::constructor]
    pub fn new(definition: ToolDefinition) -> Result<Arc<Self>, PhaseoError> {
        Ok(Arc::new(Self {
            tool: core_tool(definition)?,
        }))
    }

    /// The tool id.
    pub fn id(&self) -> String {
        self.tool.id().to_owned()
    }

    /// The description.
    pub fn description(&self) -> String {
        self.tool.description().to_owned()
    }

    /// The JSON Schema sent to the model.
    pub fn parameters_json(&self) -> String {
        to_json(self.tool.parameters_schema())
    }

    /// Whether the tool is manual (no executor).
    pub fn is_manual(&self) -> bool {
        self.tool.is_manual()
    }
}

/// Cancels the runs it is given to (they end `cancelled` and return their result).
#[derive(uniffi::Object, Default)]
pub struct CancelToken {
    pub(crate) token: pa::CancellationToken,
}

#[uniffi::export]
impl CancelToken {
    /// A new token.
    #[uniffi::constructor]
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Cancels.
    pub fn cancel(&self) {
        self.token.cancel();
    }

    /// Whether it was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }
}

/// The built-in scripted client: the given responses, in order (tests and demos).
#[derive(uniffi::Object)]
pub struct ScriptedClient {
    pub(crate) client: Arc<pa::ScriptedClient>,
}

#[uniffi::export]
impl ScriptedClient {
    /// `responses_json`: a JSON array of entries in the short scripted form (`{text?,
    /// toolCalls?, usage?, cost?, finishReason?}` or `{fail: message}`); `used` of them
    /// count as consumed already.
    #[uniffi::constructor(default(used = 0))]
    pub fn new(responses_json: String, used: i64) -> Result<Arc<Self>, PhaseoError> {
        let entries: Vec<Value> = serde_json::from_str(&responses_json).map_err(|e| {
            PhaseoError::definition(format!(
                "ScriptedClient: responses must be a JSON array ({e})"
            ))
        })?;
        let client = pa::ScriptedClient::from_script(&entries)
            .map_err(|e| PhaseoError::definition(format!("ScriptedClient: {e}")))?;
        let client = Arc::new(client.skipping(usize::try_from(used.max(0)).unwrap_or(0)));
        Ok(Arc::new(Self { client }))
    }

    /// Responses consumed so far.
    pub fn cursor(&self) -> i64 {
        self.client.cursor() as i64
    }
}

/// The built-in offline test client: calls every offered tool once with arguments made
/// from its schema, then answers with a summary.
#[derive(uniffi::Object)]
pub struct TestClient {
    pub(crate) client: Arc<dyn pa::ModelClient>,
}

#[uniffi::export]
impl TestClient {
    /// The client.
    #[uniffi::constructor]
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            client: Arc::new(pa::TestClient::new()),
        })
    }
}

/// The built-in HTTP model clients (docs/behaviour.md §8).
#[derive(uniffi::Object)]
pub struct HttpModelClient {
    pub(crate) client: Arc<dyn pa::ModelClient>,
}

fn http_options(o: HttpClientOptions) -> Result<pa::HttpClientOptions, PhaseoError> {
    let mut headers: Vec<(String, String)> = o.headers.into_iter().collect();
    headers.sort();
    headers.push(("X-Phaseo-Client".into(), "phaseo-agent-uniffi".into()));
    let body_defaults =
        match o.body_defaults_json.as_deref().map(pa::parse_json_text) {
            None => Default::default(),
            Some(Ok(Value::Object(fields))) => fields,
            Some(Ok(_)) => return Err(PhaseoError::definition(
                "HttpClientOptions: bodyDefaultsJson must be a JSON object of request body fields",
            )),
            Some(Err(e)) => {
                return Err(PhaseoError::definition(format!(
                    "HttpClientOptions: bodyDefaultsJson is not valid JSON: {e}"
                )))
            }
        };
    Ok(pa::HttpClientOptions {
        api_key: o.api_key,
        base_url: o.base_url,
        model: o.model,
        timeout_ms: o.timeout_ms,
        headers,
        preset: o.preset.map(|p| p.trim_start_matches('@').to_owned()),
        body_defaults,
    })
}

#[uniffi::export]
impl HttpModelClient {
    /// The Phaseo gateway (`POST {base}/responses`; `PHASEO_API_KEY`, `PHASEO_BASE_URL`).
    /// Throws `definition_invalid` for `bodyDefaultsJson` that is not a JSON object.
    #[uniffi::constructor]
    pub fn gateway(options: HttpClientOptions) -> Result<Arc<Self>, PhaseoError> {
        Ok(Arc::new(Self {
            client: Arc::new(pa::GatewayClient::from_options(&http_options(options)?)),
        }))
    }

    /// An OpenAI-compatible server (`POST {base}/chat/completions`; `OPENAI_BASE_URL`,
    /// `OPENAI_API_KEY`). `preset` and `bodyDefaultsJson` are refused (gateway only).
    #[uniffi::constructor]
    pub fn openai_compatible(options: HttpClientOptions) -> Result<Arc<Self>, PhaseoError> {
        if options.preset.is_some() || options.body_defaults_json.is_some() {
            return Err(PhaseoError::definition(
                "HttpClientOptions: preset and bodyDefaultsJson are gateway options",
            ));
        }
        Ok(Arc::new(Self {
            client: Arc::new(pa::OpenAICompatibleClient::from_options(&http_options(
                options,
            )?)),
        }))
    }
}

/// The result of a run or continue, which is the whole resumable state (docs/behaviour.md §7). Its
/// canonical JSON (`to_json`) is identical whichever language produced it.
#[derive(uniffi::Object, PartialEq)]
#[uniffi::export(Eq)]
pub struct RunResult {
    pub(crate) result: pa::RunResult,
}

impl RunResult {
    pub(crate) fn wrap(result: pa::RunResult) -> Arc<Self> {
        Arc::new(Self { result })
    }
}

#[uniffi::export]
impl RunResult {
    /// Parses state JSON (refused with `state_invalid` when malformed or of an unsupported
    /// version).
    #[uniffi::constructor]
    pub fn from_json(json: String) -> Result<Arc<Self>, PhaseoError> {
        Ok(Self::wrap(pa::RunResult::from_json(&json)?))
    }

    /// The canonical state JSON.
    pub fn to_json(&self) -> String {
        self.result.to_json()
    }

    /// The run's status.
    pub fn status(&self) -> RunStatus {
        self.result.status().into()
    }

    /// The run id.
    pub fn run_id(&self) -> String {
        self.result.run.id.clone()
    }

    /// The agent id.
    pub fn agent_id(&self) -> String {
        self.result.run.agent_id.clone()
    }

    /// The final output (JSON; null unless completed or stopped).
    pub fn output_json(&self) -> String {
        to_json(self.result.output())
    }

    /// The final output as text: a string verbatim, `""` for null, else its JSON.
    pub fn output_text(&self) -> String {
        self.result.output_text()
    }

    /// The pause `{id, reason, payload, requestedAt, kind, pendingToolCalls}` (JSON), while
    /// waiting for a human.
    pub fn pause_json(&self) -> Option<String> {
        self.result.pause().map(pa::json::to_canonical_string)
    }

    /// The pending calls `[{call: {id, name, input}, kind, reason}]` (JSON).
    pub fn pending_json(&self) -> String {
        pa::json::to_canonical_string(self.result.pending())
    }

    /// Cumulative usage (JSON).
    pub fn usage_json(&self) -> String {
        pa::json::to_canonical_string(self.result.usage())
    }

    /// The conversation (JSON array).
    pub fn messages_json(&self) -> String {
        pa::json::to_canonical_string(self.result.messages())
    }

    /// The application context (JSON).
    pub fn context_json(&self) -> String {
        to_json(&self.result.run.context)
    }

    /// Why a stop condition ended the run.
    pub fn stop_reason(&self) -> Option<String> {
        self.result.run.stop_reason.clone()
    }

    /// The error `{code, message}` of a failed or cancelled run (JSON).
    pub fn error_json(&self) -> Option<String> {
        self.result
            .run
            .error
            .as_ref()
            .map(pa::json::to_canonical_string)
    }

    /// Model responses so far.
    pub fn step_count(&self) -> i64 {
        self.result.run.step_count as i64
    }
}

/// An agent. Cheap to share; runs share nothing but the definition.
#[derive(uniffi::Object)]
pub struct Agent {
    agent: pa::Agent,
}

impl Agent {
    /// The core agent (for serving it over MCP).
    pub(crate) fn core(&self) -> &pa::Agent {
        &self.agent
    }
}

#[uniffi::export(async_runtime = "tokio")]
impl Agent {
    /// Checks a definition and creates the agent (`definition_invalid` when invalid).
    #[uniffi::constructor]
    pub fn new(definition: AgentDefinition) -> Result<Arc<Self>, PhaseoError> {
        Ok(Arc::new(Self {
            agent: pa::create_agent(core_agent(definition)?)?,
        }))
    }

    /// The agent id.
    pub fn id(&self) -> String {
        self.agent.id().to_owned()
    }

    /// A tool that runs this agent (docs/behaviour.md §18): `id` defaults to the agent's
    /// id, `parameters_json` to one string `input`, which is the nested run's input; the
    /// nested run's output is the tool's output. When the nested run pauses, the outer run
    /// pauses too, listing its calls as `<outerCallId>/<nestedCallId>`.
    #[uniffi::method(default(id = None, description = None, parameters_json = None))]
    pub fn as_tool(
        &self,
        id: Option<String>,
        description: Option<String>,
        parameters_json: Option<String>,
    ) -> Result<Arc<Tool>, PhaseoError> {
        let mut options = pa::AsToolOptions::new();
        options.id = id;
        options.description = description;
        if let Some(text) = parameters_json {
            let value = crate::traits::parse_json(&text, "parameters")
                .map_err(|e| pa::AgentError::definition_invalid(e.message))?;
            options.parameters = Some(value);
        }
        Ok(Arc::new(Tool {
            tool: self.agent.as_tool(options)?,
        }))
    }

    /// Runs until the run completes, stops, pauses, fails or is cancelled. A failed run
    /// throws its error carrying the failed state. Cancelling the awaiting coroutine cancels
    /// the run.
    pub async fn run(&self, options: RunOptions) -> Result<Arc<RunResult>, PhaseoError> {
        let (options, token) = core_run_options(options)?;
        let agent = self.agent.clone();
        let result = on_core(token, async move { agent.run(options).await }).await??;
        Ok(RunResult::wrap(result))
    }

    /// Continues a paused run (`state` is not changed; a refused continue throws
    /// `continue_invalid` and leaves it usable).
    pub async fn continue_run(
        &self,
        state: Arc<RunResult>,
        options: ContinueOptions,
    ) -> Result<Arc<RunResult>, PhaseoError> {
        let (options, token) = core_continue_options(options)?;
        let agent = self.agent.clone();
        let result = on_core(token, async move {
            agent.continue_run(&state.result, options).await
        })
        .await??;
        Ok(RunResult::wrap(result))
    }

    /// Continues the paused run `run_id` of the run store, claiming its pause at most once
    /// (docs/behaviour.md §10): a pause already continued elsewhere throws `continue_invalid`
    /// (`Pause <pauseId> of run <runId> was already continued`).
    pub async fn continue_by_id(
        &self,
        run_id: String,
        options: ContinueOptions,
    ) -> Result<Arc<RunResult>, PhaseoError> {
        let (options, token) = core_continue_options(options)?;
        let agent = self.agent.clone();
        let result = on_core(
            token,
            async move { agent.continue_by_id(run_id, options).await },
        )
        .await??;
        Ok(RunResult::wrap(result))
    }

    /// Recovers the stored run `run_id` whose worker died (its lease expired), from its
    /// last checkpoint with the decisions its claim stored; `options` carries no decisions.
    pub async fn recover(
        &self,
        run_id: String,
        options: ContinueOptions,
    ) -> Result<Arc<RunResult>, PhaseoError> {
        let (options, token) = core_continue_options(options)?;
        let agent = self.agent.clone();
        let result = on_core(token, async move { agent.recover(&run_id, options).await }).await??;
        Ok(RunResult::wrap(result))
    }

    /// Closes the agent's MCP servers (a stdio server's process is stopped); a later run
    /// starts them again. Kotlin's `use {}` / `close()` releases the agent, which also
    /// stops them; this is the graceful, awaitable form.
    pub async fn close_servers(&self) {
        let agent = self.agent.clone();
        let _ = on_core(
            pa::CancellationToken::new(),
            async move { agent.close().await },
        )
        .await;
    }

    /// Runs in the background; returns the replayable stream of its events.
    pub fn stream(&self, options: RunOptions) -> Result<Arc<AgentStream>, PhaseoError> {
        let (options, _token) = core_run_options(options)?;
        let (stream, driver) = self.agent.stream_deferred(options);
        pa::exec::runtime().spawn(driver);
        Ok(Arc::new(AgentStream { stream }))
    }

    /// Continues a paused run in the background, as a stream.
    pub fn continue_stream(
        &self,
        state: Arc<RunResult>,
        options: ContinueOptions,
    ) -> Result<Arc<AgentStream>, PhaseoError> {
        let (options, _token) = core_continue_options(options)?;
        let (stream, driver) = self.agent.continue_stream_deferred(&state.result, options);
        pa::exec::runtime().spawn(driver);
        Ok(Arc::new(AgentStream { stream }))
    }
}

/// A streamed run (docs/behaviour.md §6): any number of cursors, each replaying the whole history.
#[derive(uniffi::Object)]
pub struct AgentStream {
    stream: pa::AgentStream,
}

#[uniffi::export(async_runtime = "tokio")]
impl AgentStream {
    /// A cursor from the start of the history.
    pub fn cursor(&self) -> Arc<EventCursor> {
        Arc::new(EventCursor {
            cursor: tokio::sync::Mutex::new(self.stream.cursor()),
        })
    }

    /// Cancels the run; it ends `cancelled` and its result is still returned.
    #[uniffi::method(default(reason = None))]
    pub fn cancel(&self, reason: Option<String>) {
        self.stream.cancel(reason);
    }

    /// Waits for the final result (a failed run throws its error).
    pub async fn result(&self) -> Result<Arc<RunResult>, PhaseoError> {
        Ok(RunResult::wrap(self.stream.result().await?))
    }

    /// The final output as text.
    pub async fn text(&self) -> Result<String, PhaseoError> {
        Ok(self.stream.text().await?)
    }
}

/// One consumer's position in a stream.
#[derive(uniffi::Object)]
pub struct EventCursor {
    cursor: tokio::sync::Mutex<pa::EventCursor>,
}

#[uniffi::export(async_runtime = "tokio")]
impl EventCursor {
    /// The next item as JSON: each event, then `{"type":"result","result":<state>}`, then
    /// null. A failed run throws its error instead of the result item.
    pub async fn next(&self) -> Result<Option<String>, PhaseoError> {
        match self.cursor.lock().await.next_item().await {
            None => Ok(None),
            Some(Err(e)) => Err(e.into()),
            Some(Ok(pa::StreamItem::Event(e))) => Ok(Some(e.to_json())),
            Some(Ok(pa::StreamItem::Result(r))) => Ok(Some(format!(
                "{{\"type\":\"result\",\"result\":{}}}",
                r.to_json()
            ))),
        }
    }
}
