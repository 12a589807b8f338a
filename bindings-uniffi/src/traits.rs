//! The host-implemented traits (uniffi foreign traits: Kotlin interfaces with `suspend`
//! methods, Swift protocols with `async` methods) and ONE small adapter per core trait.
//! Values cross as JSON text; a callback's exception becomes a core `ToolError`.

use std::sync::Arc;

use phaseo_agent as pa;
use phaseo_agent::Value;

use crate::api::ToolRuntime;
use crate::errors::ToolError;
use crate::start_order::StartTurn;

pub(crate) fn to_json(value: &Value) -> String {
    pa::json::to_canonical_string(value)
}

/// Host values arrive as JSON text, read with the core's limits (docs/behaviour.md §7: 64 levels,
/// 64-bit integers), so a value the SDK could not store is refused where it enters.
pub(crate) fn parse_json(text: &str, what: &str) -> Result<Value, pa::ToolError> {
    pa::parse_json_text(text)
        .map_err(|e| pa::ToolError::new(format!("{what} is not valid JSON: {e}")))
}

fn runtime(rt: &pa::ToolRuntime) -> Arc<ToolRuntime> {
    Arc::new(ToolRuntime::new(rt.clone()))
}

/// A tool's executor: receives the validated input (JSON text) and the call's runtime,
/// returns the result (JSON text). Kotlin: a `suspend` function; Swift: `async`. When the
/// call times out or the run is cancelled the core drops the call, which cancels the
/// Kotlin coroutine (Swift: the task).
#[uniffi::export(foreign)]
#[async_trait::async_trait]
pub trait ToolExecutor: Send + Sync {
    /// Runs the call.
    async fn execute(
        &self,
        input_json: String,
        runtime: Arc<ToolRuntime>,
    ) -> Result<String, ToolError>;
}

/// Validates (and may transform) a value: returns the accepted value (JSON text) or throws
/// with the validator's message. `json_schema` describes what it accepts, when it can (it
/// is then sent to the model as a tool's `parameters` when those are absent).
#[uniffi::export(with_foreign)]
pub trait Validator: Send + Sync {
    /// The accepted (possibly transformed) value.
    fn validate(&self, value_json: String) -> Result<String, ToolError>;
    /// A JSON Schema describing the accepted values, or null.
    fn json_schema(&self) -> Result<Option<String>, ToolError>;
}

/// Decides per call whether it needs approval. Tool level: `input_json` is the input;
/// agent level: it is the call `{id, name, input}`.
#[uniffi::export(foreign)]
#[async_trait::async_trait]
pub trait ApprovalPredicate: Send + Sync {
    /// `true` when the call must be approved before it runs.
    async fn requires_approval(
        &self,
        input_json: String,
        runtime: Arc<ToolRuntime>,
    ) -> Result<bool, ToolError>;
}

/// An interactive tool's hook: null (or JSON `null`) pauses the call for human input
/// (pending kind `hitl`); a value becomes the call's result at once.
#[uniffi::export(foreign)]
#[async_trait::async_trait]
pub trait ToolCalledHook: Send + Sync {
    /// Called with the validated input.
    async fn on_tool_called(
        &self,
        input_json: String,
        runtime: Arc<ToolRuntime>,
    ) -> Result<Option<String>, ToolError>;
}

/// Validates or transforms an output supplied on continue for a manual or hitl call.
#[uniffi::export(foreign)]
#[async_trait::async_trait]
pub trait ResponseReceivedHook: Send + Sync {
    /// The output to use.
    async fn on_response_received(
        &self,
        output_json: String,
        runtime: Arc<ToolRuntime>,
    ) -> Result<String, ToolError>;
}

/// A call's overrides for the next model request: a JSON object with any of `model`,
/// `instructions`, `temperature`, `maxOutputTokens`, `topP`, `tools`.
#[uniffi::export(foreign)]
#[async_trait::async_trait]
pub trait NextTurnParamsProvider: Send + Sync {
    /// The overrides this call contributes.
    async fn next_turn_params(
        &self,
        input_json: String,
        runtime: Arc<ToolRuntime>,
    ) -> Result<String, ToolError>;
}

/// Human review after every step that did not pause: receives `{runId, agentId, stepIndex,
/// input, context, messages, response, isFinal}`; returns `{reason, payload}` to pause (pause
/// kind `human_review`) or null to go on.
#[uniffi::export(foreign)]
#[async_trait::async_trait]
pub trait HumanReview: Send + Sync {
    /// The review decision.
    async fn review(&self, context_json: String) -> Result<Option<String>, ToolError>;
}

/// A host stop condition: receives `{steps, usage, elapsedMs, stepCount}` and answers with
/// JSON `true` (stop, reason `custom_condition`), a reason string (stop with it), or
/// `false`/`null` (go on).
#[uniffi::export(foreign)]
#[async_trait::async_trait]
pub trait StopCondition: Send + Sync {
    /// The answer as JSON text.
    async fn check(&self, state_json: String) -> Result<String, ToolError>;
}

/// A per-turn value (model, instructions, temperature, maxOutputTokens, topP): receives
/// `{numberOfTurns, stepIndex, messages, context}`, returns the value (JSON; null = unset).
#[uniffi::export(foreign)]
#[async_trait::async_trait]
pub trait TurnResolver: Send + Sync {
    /// The value for this turn.
    async fn resolve(&self, turn_json: String) -> Result<String, ToolError>;
}

/// A host model client: receives the request `{agentId, model, instructions, messages,
/// tools, context, temperature, maxOutputTokens, topP, stream, toolChoice, parallelToolCalls}`
/// (each tool `{id, description, parameters, strict?, inputExamples?}`) and returns a response in the
/// short scripted form (`{text?, toolCalls?: [{id, name, arguments}], usage?, cost?,
/// finishReason?, …}`) or the full form (`{message: {...}, usage, …}`). Throwing is a model
/// failure (retried per `modelRetry`).
#[uniffi::export(foreign)]
#[async_trait::async_trait]
pub trait ModelClient: Send + Sync {
    /// One response.
    async fn generate(&self, request_json: String) -> Result<String, ToolError>;
}

/// A host model client that streams: `stream` hands each event to `sink` as it comes —
/// `{"type": "text-delta", "delta"}`, `{"type": "reasoning-delta", "delta"}`,
/// `{"type": "tool-input-start", "toolCallId", "toolName"}`, `{"type": "tool-input-delta",
/// "toolCallId", "delta"}` (a call's arguments as the model writes them, docs/behaviour.md
/// §16), `{"type": "item", "item"}` — and the final `{"type": "response", "response"}` (a
/// response in the form `generate` returns), then returns. Throwing fails the attempt
/// (retried per `modelRetry`; the deltas already sent stay in the run's history).
/// `generate` serves runs that are not streamed; a client without one (`can_generate`
/// false) is drained through `stream` instead.
#[uniffi::export(foreign)]
#[async_trait::async_trait]
pub trait StreamingModelClient: Send + Sync {
    /// Whether `generate` is implemented (else `stream` serves every run).
    fn can_generate(&self) -> bool;
    /// One response.
    async fn generate(&self, request_json: String) -> Result<String, ToolError>;
    /// One response, streamed through `sink`.
    async fn stream(
        &self,
        request_json: String,
        sink: Arc<ModelStreamSink>,
    ) -> Result<(), ToolError>;
}

/// Where a [`StreamingModelClient`] sends the events of one streamed attempt.
#[derive(uniffi::Object)]
pub struct ModelStreamSink(pa::HostStreamSender);

#[uniffi::export]
impl ModelStreamSink {
    /// Hands one event (JSON text) to the run at once. Throws, naming the problem, for an
    /// event the run cannot read, or when the attempt is over (cancelled or timed out):
    /// then stop streaming.
    pub fn send(&self, event_json: String) -> Result<(), ToolError> {
        let event = parse_json(&event_json, "the model stream event")
            .map_err(|e| ToolError::new(e.message))?;
        self.0.send(&event).map_err(ToolError::new)
    }

    /// Whether the attempt is over (the client may stop streaming).
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }
}

/// Receives every event of a run (JSON text) as it happens, in order, synchronously from
/// the run loop: the run waits for it (it may block, even on another run), so keep it quick.
#[uniffi::export(foreign)]
pub trait EventListener: Send + Sync {
    /// One event.
    fn on_event(&self, event_json: String) -> Result<(), ToolError>;
}

// ---------------------------------------------------------------------------------------
// Adapters: one per core trait.

/// [`ToolExecutor`] as the core's executor.
pub(crate) struct HostExecutor(pub Arc<dyn ToolExecutor>);

#[pa::async_trait]
impl pa::ToolExecutor for HostExecutor {
    async fn execute(&self, input: Value, rt: pa::ToolRuntime) -> Result<Value, pa::ToolError> {
        self.run(to_json(&input), rt).await
    }

    /// The input's text is written from the runtime's call (no copy of the value is made),
    /// or is the model's argument text when that is already the input's canonical text.
    fn execute_call<'a>(&'a self, rt: pa::ToolRuntime) -> pa::ExecuteFuture<'a> {
        let call = rt.tool_call();
        let input = match call.input_text() {
            Some(text) => text.to_owned(),
            None => to_json(&call.input),
        };
        Box::pin(self.run(input, rt))
    }

    fn writes_input_text(&self) -> bool {
        true
    }
}

impl HostExecutor {
    /// Calls the host with the JSON text `input` and reads its answer.
    async fn run(&self, input: String, rt: pa::ToolRuntime) -> Result<Value, pa::ToolError> {
        // Before the first await: the core asks for the calls in call order.
        let mut turn = StartTurn::take();
        turn.wait_turn().await;
        let runtime = Arc::new(ToolRuntime::new(rt).with_start_signal(turn.started_signal()));
        let out = self
            .0
            .execute(input, runtime)
            .await
            .map_err(ToolError::into_core)?;
        // A result the core cannot store is an invalid output (`tool_output_invalid`).
        pa::parse_json_text(&out).map_err(pa::ToolError::invalid_output)
    }
}

/// Runs a synchronous host callback from async core code on a thread of the core runtime's
/// blocking pool, and awaits it. Host code may block there, even on a run of its own (a
/// validator that asks another agent): on a runtime worker it would hold that worker, and
/// the task the nested run spawns from it lands in the worker's own next-task slot, which
/// no other worker takes, so the nested run never began and both waited for ever. If the
/// wait is dropped (a timeout, a cancelled run) the callback still runs to its end and its
/// answer is dropped; a panic in it unwinds here, as if it had run in place.
async fn host_blocking<T: Send + 'static>(
    call: impl FnOnce() -> T + Send + 'static,
) -> Result<T, pa::ToolError> {
    match pa::exec::runtime().spawn_blocking(call).await {
        Ok(out) => Ok(out),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => Err(pa::ToolError::new("the SDK's runtime is shutting down")),
    }
}

/// Runs a synchronous host callback that the core calls synchronously (an event listener,
/// an MCP tool filter) where it may block: on a worker of the core's multi-thread runtime,
/// the worker first hands its other tasks to a new thread (`block_in_place`), for the
/// reason [`host_blocking`] gives; anywhere else the callback just runs.
pub(crate) fn host_in_place<T>(call: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(call)
        }
        _ => call(),
    }
}

/// [`Validator`] as the core's validator.
pub(crate) struct HostValidator(pub Arc<dyn Validator>);

#[pa::async_trait]
impl pa::Validator for HostValidator {
    async fn validate(&self, value: Value) -> Result<Value, pa::ToolError> {
        let host = Arc::clone(&self.0);
        let text = to_json(&value);
        let out = host_blocking(move || host.validate(text))
            .await?
            .map_err(ToolError::into_core)?;
        parse_json(&out, "the validated value")
    }

    fn json_schema(&self) -> Option<Value> {
        let text = self.0.json_schema().ok().flatten()?;
        serde_json::from_str(&text).ok()
    }
}

/// A JSON Schema compiled by the core, usable wherever a [`Validator`] is.
pub(crate) struct SchemaValidator(pub pa::JsonSchema);

impl Validator for SchemaValidator {
    fn validate(&self, value_json: String) -> Result<String, ToolError> {
        let value: Value = serde_json::from_str(&value_json)
            .map_err(|e| ToolError::new(format!("the value is not valid JSON: {e}")))?;
        self.0.check(&value).map_err(ToolError::new)?;
        Ok(value_json)
    }

    fn json_schema(&self) -> Result<Option<String>, ToolError> {
        Ok(Some(to_json(self.0.schema())))
    }
}

/// Tool-level [`ApprovalPredicate`] `(input, runtime)`.
pub(crate) struct HostApproval(pub Arc<dyn ApprovalPredicate>);

#[pa::async_trait]
impl pa::ApprovalPredicate for HostApproval {
    async fn requires_approval(
        &self,
        input: &Value,
        rt: &pa::ToolRuntime,
    ) -> Result<bool, pa::ToolError> {
        self.0
            .requires_approval(to_json(input), runtime(rt))
            .await
            .map_err(ToolError::into_core)
    }
}

/// Agent-level [`ApprovalPredicate`] `(call, runtime)`.
pub(crate) struct HostAgentApproval(pub Arc<dyn ApprovalPredicate>);

#[pa::async_trait]
impl pa::ApprovalPredicate for HostAgentApproval {
    async fn requires_approval(
        &self,
        _input: &Value,
        rt: &pa::ToolRuntime,
    ) -> Result<bool, pa::ToolError> {
        let call = pa::json::to_canonical_string(rt.tool_call());
        self.0
            .requires_approval(call, runtime(rt))
            .await
            .map_err(ToolError::into_core)
    }
}

/// [`ToolCalledHook`] as the core's hook (null and JSON `null` pause).
pub(crate) struct HostToolCalled(pub Arc<dyn ToolCalledHook>);

#[pa::async_trait]
impl pa::ToolCalledHook for HostToolCalled {
    async fn on_tool_called(
        &self,
        input: Value,
        rt: pa::ToolRuntime,
    ) -> Result<Option<Value>, pa::ToolError> {
        let answer = self
            .0
            .on_tool_called(to_json(&input), runtime(&rt))
            .await
            .map_err(ToolError::into_core)?;
        match answer {
            None => Ok(None),
            Some(text) => {
                let v = pa::parse_json_text(&text).map_err(pa::ToolError::invalid_output)?;
                Ok((!v.is_null()).then_some(v))
            }
        }
    }
}

/// [`ResponseReceivedHook`] as the core's hook.
pub(crate) struct HostResponseReceived(pub Arc<dyn ResponseReceivedHook>);

#[pa::async_trait]
impl pa::ResponseReceivedHook for HostResponseReceived {
    async fn on_response_received(
        &self,
        output: Value,
        rt: pa::ToolRuntime,
    ) -> Result<Value, pa::ToolError> {
        let out = self
            .0
            .on_response_received(to_json(&output), runtime(&rt))
            .await
            .map_err(ToolError::into_core)?;
        pa::parse_json_text(&out).map_err(pa::ToolError::invalid_output)
    }
}

/// [`NextTurnParamsProvider`] as the core's provider.
pub(crate) struct HostNextTurn(pub Arc<dyn NextTurnParamsProvider>);

#[pa::async_trait]
impl pa::NextTurnParamsProvider for HostNextTurn {
    async fn next_turn_params(
        &self,
        input: &Value,
        rt: &pa::ToolRuntime,
    ) -> Result<pa::NextTurnParams, pa::ToolError> {
        let out = self
            .0
            .next_turn_params(to_json(input), runtime(rt))
            .await
            .map_err(ToolError::into_core)?;
        pa::NextTurnParams::from_value(parse_json(&out, "nextTurnParams")?)
            .map_err(pa::ToolError::new)
    }
}

/// [`HumanReview`] as the core's hook.
pub(crate) struct HostReview(pub Arc<dyn HumanReview>);

#[pa::async_trait]
impl pa::HumanReview for HostReview {
    async fn review(
        &self,
        ctx: &pa::HumanReviewContext<'_>,
    ) -> Result<Option<pa::ReviewRequest>, pa::ToolError> {
        let answer = self
            .0
            .review(to_json(&ctx.to_value()))
            .await
            .map_err(ToolError::into_core)?;
        match answer {
            None => Ok(None),
            Some(text) => pa::ReviewRequest::from_answer(parse_json(&text, "the review")?),
        }
    }
}

/// [`StopCondition`] as the core's condition.
pub(crate) struct HostStop(pub Arc<dyn StopCondition>);

#[pa::async_trait]
impl pa::StopCondition for HostStop {
    async fn check(&self, state: &pa::StopState<'_>) -> Result<Option<String>, pa::ToolError> {
        let answer = self
            .0
            .check(to_json(&state.to_value()))
            .await
            .map_err(ToolError::into_core)?;
        Ok(pa::stop::reason_from_answer(&parse_json(
            &answer,
            "the stop condition's answer",
        )?))
    }
}

/// [`TurnResolver`] as the core's per-turn value.
pub(crate) struct HostTurn(pub Arc<dyn TurnResolver>);

#[pa::async_trait]
impl pa::TurnResolver for HostTurn {
    async fn resolve(&self, turn: &pa::TurnContext<'_>) -> Result<Value, pa::ToolError> {
        let out = self
            .0
            .resolve(to_json(&turn.to_value()))
            .await
            .map_err(ToolError::into_core)?;
        parse_json(&out, "the per-turn value")
    }
}

/// Calls a host's `generate` and reads its answer (the response in the short scripted form).
async fn generate_with<F>(generate: F) -> Result<pa::ModelResponse, pa::ModelError>
where
    F: std::future::Future<Output = Result<String, ToolError>>,
{
    let out = generate
        .await
        .map_err(|e| pa::ModelError::new(e.into_core().message))?;
    let value = parse_json(&out, "the model response").map_err(pa::ModelError::from)?;
    pa::ModelResponse::from_script_entry(&value).map_err(pa::ModelError::new)?
}

/// [`ModelClient`] as the core's client (the response in the short scripted form).
pub(crate) struct HostModel(pub Arc<dyn ModelClient>);

#[pa::async_trait]
impl pa::ModelClient for HostModel {
    async fn generate(
        &self,
        request: &pa::ModelRequest<'_>,
        _cancel: &pa::CancellationToken,
    ) -> Result<pa::ModelResponse, pa::ModelError> {
        generate_with(self.0.generate(to_json(&request.to_value()))).await
    }
}

/// [`StreamingModelClient`]'s two functions; the core's [`pa::HostModel`] decides which one
/// a run calls.
pub(crate) struct HostStreamingFunctions(pub Arc<dyn StreamingModelClient>);

#[pa::async_trait]
impl pa::HostModelFunctions for HostStreamingFunctions {
    fn has_generate(&self) -> bool {
        self.0.can_generate()
    }

    fn has_stream(&self) -> bool {
        true
    }

    async fn generate(
        &self,
        request: &pa::ModelRequest<'_>,
        _cancel: &pa::CancellationToken,
    ) -> Result<pa::ModelResponse, pa::ModelError> {
        generate_with(self.0.generate(to_json(&request.to_value()))).await
    }

    async fn stream(
        &self,
        request: &pa::ModelRequest<'_>,
        _cancel: &pa::CancellationToken,
        events: pa::HostStreamSender,
    ) -> Result<(), pa::ModelError> {
        let sink = Arc::new(ModelStreamSink(events));
        self.0
            .stream(to_json(&request.to_value()), sink)
            .await
            .map_err(|e| pa::ModelError::new(e.into_core().message))
    }
}

/// [`EventListener`] as the core's listener (a throwing listener is ignored).
pub(crate) struct HostListener(pub Arc<dyn EventListener>);

impl pa::EventListener for HostListener {
    fn on_event(&self, event: &pa::AgentEvent) {
        let json = event.to_json();
        let _ = host_in_place(|| self.0.on_event(json));
    }
}
