//! One step: model request with retries, assistant message, tool phase, review, stop
//! conditions, final answer.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

use futures::FutureExt;
use serde_json::{json, Value};

use super::{call_ids, fail_in_step, sleep_cancellable, tools, Failure, LoopResult, RunCtx, Start};
use crate::checked_agent::{check_tool_choice, check_tool_ids};
use crate::controls::ToolChoice;
use crate::error::{AgentError, ErrorCode};
use crate::events::{now_iso, EventData, EventType};
use crate::model::{DeltaSink, ModelRequest, ModelResponse, RetryHint, ToolSpec};
use crate::next_turn::NextTurnParams;
use crate::review::{HumanReviewContext, ReviewRequest};
use crate::state::{
    Item, Message, Pause, PauseKind, RunResult, RunStatus, StepRecord, StepResult, StepStatus,
    ToolCall,
};
use crate::stop::StopState;
use crate::turn::{TurnContext, TurnValue};

/// Runs steps until the run completes, stops or pauses.
pub(crate) async fn drive(ctx: &RunCtx, state: &mut RunResult, start: Start) -> LoopResult {
    match start {
        Start::NextStep => {}
        Start::AfterToolPause => {
            let index = state.run.step_count.saturating_sub(1);
            if after_step(ctx, state, index, false, true).await? {
                return Ok(());
            }
        }
        Start::Paused => return Ok(()),
        Start::AfterReviewPause => {
            let index = state.run.step_count.saturating_sub(1);
            if let Some(reason) = check_stop(ctx, state, index).await? {
                stop(ctx, state, reason, None);
                return Ok(());
            }
        }
    }
    loop {
        // A run cancelled while its step ran starts no further step (docs/behaviour.md
        // §3.4): the step's last awaited value (a host's answer to its cancelled call) can
        // arrive within the very poll that had checked the cancellation first
        // (`drive_steps`). Parked here, the run ends `cancelled` on the next poll.
        if ctx.cancel.is_cancelled() {
            std::future::pending::<()>().await;
        }
        if state.run.step_count >= ctx.settings.max_steps {
            return Err(Failure::Failed {
                error: AgentError::new(
                    ErrorCode::MaxSteps,
                    format!("Max steps exceeded ({})", ctx.settings.max_steps),
                ),
                step: None,
            });
        }
        if run_step(ctx, state).await? {
            return Ok(());
        }
    }
}

/// The values of one request.
struct Resolved {
    model: Option<String>,
    instructions: Option<String>,
    temperature: Option<f64>,
    max_output_tokens: Option<u64>,
    top_p: Option<f64>,
    tools: Arc<Vec<ToolSpec>>,
    tool_choice: Option<ToolChoice>,
}

async fn resolve_turn(
    ctx: &RunCtx,
    state: &mut RunResult,
    index: usize,
) -> Result<Resolved, AgentError> {
    let def = &ctx.agent.def;
    let turn = TurnContext {
        number_of_turns: index.saturating_add(1),
        step_index: index,
        messages: &state.run.messages,
        context: &state.run.context,
    };
    async fn value(v: &TurnValue, turn: &TurnContext<'_>, name: &str) -> Result<Value, AgentError> {
        match std::panic::AssertUnwindSafe(v.resolve(turn))
            .catch_unwind()
            .await
        {
            Ok(r) => r.map_err(|e| {
                AgentError::new(ErrorCode::ToolFailed, format!("{name}: {}", e.message))
            }),
            Err(p) => Err(AgentError::new(
                ErrorCode::ToolFailed,
                format!("{name}: panicked: {}", crate::panic_message(p.as_ref())),
            )),
        }
    }
    // An unset field is null with no future made and polled for it: most definitions set
    // none of these, and every turn resolves all seven.
    macro_rules! resolve {
        ($field:ident, $name:literal) => {
            match &def.$field {
                None => Value::Null,
                Some(v) => value(v, &turn, $name).await?,
            }
        };
    }
    let model = resolve!(model, "model");
    let instructions = resolve!(instructions, "instructions");
    let temperature = resolve!(temperature, "temperature");
    let max_output_tokens = resolve!(max_output_tokens, "maxOutputTokens");
    let top_p = resolve!(top_p, "topP");
    let tool_choice = resolve!(tool_choice, "toolChoice");
    let active_tools = resolve!(active_tools, "activeTools");
    let s = &ctx.settings;
    let known = Some(&ctx.agent.tool_index);
    let bad_value = |m: String| AgentError::new(ErrorCode::ToolFailed, m);
    let tool_choice = match &s.tool_choice {
        Some(choice) => Some(choice.clone()),
        None if tool_choice.is_null() => None,
        None => Some(check_tool_choice(&tool_choice, known).map_err(bad_value)?),
    };
    let available = available(ctx, state);
    let tools = match &s.active_tools {
        Some(ids) => offer(&available, ids),
        None if active_tools.is_null() => available.clone(),
        None => offer(
            &available,
            &check_tool_ids(&active_tools, known).map_err(bad_value)?,
        ),
    };
    let mut resolved = Resolved {
        model: s
            .model
            .clone()
            .or_else(|| model.as_str().map(str::to_owned)),
        instructions: instructions.as_str().map(str::to_owned),
        temperature: s.temperature.or_else(|| temperature.as_f64()),
        max_output_tokens: s.max_output_tokens.or_else(|| max_output_tokens.as_u64()),
        top_p: s.top_p.or_else(|| top_p.as_f64()),
        tools,
        tool_choice,
    };
    if let Some(next) = state.run.next_turn_params.take() {
        apply_next_turn(&available, &mut resolved, next);
    }
    Ok(resolved)
}

fn apply_next_turn(available: &Arc<Vec<ToolSpec>>, r: &mut Resolved, next: NextTurnParams) {
    if next.model.is_some() {
        r.model = next.model;
    }
    if next.instructions.is_some() {
        r.instructions = next.instructions;
    }
    if next.temperature.is_some() {
        r.temperature = next.temperature;
    }
    if next.max_output_tokens.is_some() {
        r.max_output_tokens = next.max_output_tokens;
    }
    if next.top_p.is_some() {
        r.top_p = next.top_p;
    }
    if let Some(ids) = next.tools {
        r.tools = offer(available, &ids);
    }
    if next.tool_choice.is_some() {
        r.tool_choice = next.tool_choice;
    }
}

/// What the run may offer now (docs/behaviour.md §17): the always-loaded tools in
/// definition order, then the tools `tool_search` loaded, in load order — the list only
/// grows at its end, so a provider's cache of its start stays valid.
fn available(ctx: &RunCtx, state: &RunResult) -> Arc<Vec<ToolSpec>> {
    let loaded = &state.run.loaded_tools;
    if loaded.is_empty() {
        return ctx.agent.tool_specs.clone();
    }
    let mut specs = Vec::with_capacity(ctx.agent.tool_specs.len() + loaded.len());
    specs.extend(ctx.agent.tool_specs.iter().cloned());
    specs.extend(
        loaded
            .iter()
            .filter_map(|id| ctx.agent.tool(id).filter(|t| t.is_deferred()))
            .map(crate::checked_agent::tool_spec),
    );
    Arc::new(specs)
}

/// The specs of `available` named by `ids`, in offered order (others are skipped).
fn offer(available: &[ToolSpec], ids: &[String]) -> Arc<Vec<ToolSpec>> {
    Arc::new(
        available
            .iter()
            .filter(|s| ids.contains(&s.id))
            .cloned()
            .collect(),
    )
}

/// The run's delta sink for one attempt; remembers whether the client streamed items.
struct StreamDeltas<'a>(&'a RunCtx, usize, AtomicBool);

impl DeltaSink for StreamDeltas<'_> {
    fn item(&self, item: &Item) {
        self.2.store(true, Ordering::Relaxed);
        self.0
            .emitter
            .emit(EventType::ResponseItem, None, Some(self.1), || {
                EventData::Item { item: item.clone() }
            });
    }

    fn text_delta(&self, delta: &str) {
        self.0
            .emitter
            .emit(EventType::OutputTextDelta, None, Some(self.1), || {
                EventData::Delta {
                    delta: delta.to_owned(),
                }
            });
    }

    fn reasoning_delta(&self, delta: &str) {
        self.0
            .emitter
            .emit(EventType::ReasoningDelta, None, Some(self.1), || {
                EventData::Delta {
                    delta: delta.to_owned(),
                }
            });
    }

    fn tool_input_start(&self, tool_call_id: &str, tool_name: &str) {
        self.0
            .emitter
            .emit(EventType::ToolInputStarted, None, Some(self.1), || {
                EventData::ToolInputStarted {
                    tool_call_id: tool_call_id.to_owned(),
                    tool_name: tool_name.to_owned(),
                }
            });
    }

    fn tool_input_delta(&self, tool_call_id: &str, delta: &str) {
        self.0
            .emitter
            .emit(EventType::ToolInputDelta, None, Some(self.1), || {
                EventData::ToolInputDelta {
                    tool_call_id: tool_call_id.to_owned(),
                    delta: delta.to_owned(),
                }
            });
    }
}

/// The longest `Retry-After` wait the loop honours.
const MAX_RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(60);

/// A successful model call: the response, its 1-based attempt, and whether that attempt
/// streamed its own items (then the step's items are not derived from the response).
struct ModelCall {
    response: ModelResponse,
    attempt: u32,
    streamed_items: bool,
}

async fn call_model(
    ctx: &RunCtx,
    request: &ModelRequest<'_>,
    index: usize,
) -> Result<ModelCall, AgentError> {
    let attempts = ctx.settings.retry.max_retries.saturating_add(1);
    let mut attempt = 1;
    loop {
        ctx.emitter.emit(
            EventType::ModelRequested,
            Some(RunStatus::Running),
            Some(index),
            || EventData::ModelRequested {
                attempt,
                model: request.model.clone(),
            },
        );
        if let Some(t) = &ctx.trace {
            t.chat_started(request.model.as_deref(), index, attempt, request.messages);
        }
        let sink = StreamDeltas(ctx, index, AtomicBool::new(false));
        let call = async {
            let deltas = request.stream.then_some(&sink as &dyn DeltaSink);
            ctx.client.attempt(request, &ctx.cancel, deltas).await
        };
        let outcome = std::panic::AssertUnwindSafe(call).catch_unwind().await;
        let (error, retry) = match outcome {
            Ok(Ok(response)) => {
                if let Some(t) = &ctx.trace {
                    t.chat_completed(&response);
                }
                return Ok(ModelCall {
                    response,
                    attempt,
                    streamed_items: sink.2.load(Ordering::Relaxed),
                });
            }
            Ok(Err(failure)) => (failure.error, failure.retry),
            Err(panic) => (
                crate::model::ModelError::new(format!(
                    "model client panicked: {}",
                    crate::panic_message(panic.as_ref())
                )),
                RetryHint::RETRY,
            ),
        };
        if let Some(t) = &ctx.trace {
            let code = match error.gateway {
                Some(_) => ErrorCode::Gateway,
                None => ErrorCode::ModelFailed,
            };
            t.chat_failed(code, &error.message);
        }
        if attempt >= attempts || !retry.retryable {
            ctx.emitter.emit(
                EventType::ModelFailed,
                Some(RunStatus::Running),
                Some(index),
                || EventData::ModelFailed {
                    attempt,
                    error: error.message.clone(),
                },
            );
            return Err(match error.gateway {
                Some(info) => AgentError::gateway(error.message, info),
                None => AgentError::new(ErrorCode::ModelFailed, error.message),
            });
        }
        let wait = match retry.retry_after {
            Some(after) => after.min(MAX_RETRY_AFTER),
            None => ctx.settings.retry.backoff.saturating_mul(attempt),
        };
        sleep_cancellable(ctx, wait).await;
        attempt += 1;
    }
}

/// A model's tool call as the run records it: its arguments parsed (with `keep_text`, their
/// text kept when it is already their canonical text), or their raw text and why it is not
/// JSON.
fn parse_call(
    call: crate::model::ModelToolCall,
    keep_text: bool,
) -> (ToolCall, Result<(), String>) {
    // Text that is not JSON, the empty text included, is invalid input (docs/behaviour.md
    // §2.7); the HTTP clients read a provider's call without arguments as `{}`.
    let parsed = match keep_text {
        true => crate::limits::parse_json_text_canonical(&call.arguments),
        false => crate::limits::parse_json_text(&call.arguments).map(|v| (v, false)),
    };
    match parsed {
        Ok((input, true)) => (
            ToolCall::with_input_text(call.id.into(), call.name.into(), input, call.arguments),
            Ok(()),
        ),
        Ok((input, false)) => (ToolCall::new(call.id, call.name, input), Ok(())),
        Err(e) => (
            ToolCall::new(call.id, call.name, Value::String(call.arguments)),
            Err(e),
        ),
    }
}

/// Runs one step; `true` when the run ended or paused.
async fn run_step(ctx: &RunCtx, state: &mut RunResult) -> Result<bool, Failure> {
    let index = state.run.step_count;
    let resolved = resolve_turn(ctx, state, index)
        .await
        .map_err(fail_in_step(index))?;
    ctx.emitter.emit(
        EventType::StepStarted,
        Some(RunStatus::Running),
        Some(index),
        || EventData::None,
    );
    let output_schema = ctx
        .agent
        .def
        .output_schema
        .as_ref()
        .and_then(|v| v.json_schema());
    let request = ModelRequest {
        agent_id: &ctx.agent.def.id,
        model: resolved.model,
        instructions: resolved.instructions,
        messages: &state.run.messages,
        tools: resolved.tools,
        context: &state.run.context,
        temperature: resolved.temperature,
        max_output_tokens: resolved.max_output_tokens,
        top_p: resolved.top_p,
        stream: ctx.emitter.is_streaming(),
        output_schema: output_schema.as_ref(),
        tool_choice: resolved.tool_choice,
        parallel_tool_calls: ctx
            .settings
            .parallel_tool_calls
            .or(ctx.agent.def.parallel_tool_calls),
    };
    let offered = request.tools.clone();
    let requested_model = request.model.clone();
    let ModelCall {
        response,
        attempt: attempts,
        streamed_items,
    } = call_model(ctx, &request, index)
        .await
        .map_err(fail_in_step(index))?;
    drop(request);

    let usage = response.normalized_usage();
    let finish_reason = response.finish_reason_or_default();
    let raw_calls = response.message.tool_calls;
    // Each call keeps its parsed arguments (or the raw text and why it is not JSON).
    let keep_text = ctx.agent.keeps_input_text;
    let mut parsed = tools::turn_calls(raw_calls.into_iter().map(|c| parse_call(c, keep_text)));
    call_ids::make_unique(&ctx.call_ids, &state.run.messages, &mut parsed);
    let calls: Vec<ToolCall> = parsed.iter().map(|(c, _)| c.clone()).collect();
    let text = response.message.content;
    state.run.step_count = state.run.step_count.saturating_add(1);
    state.run.usage.add(&usage);
    state.run.messages.push(Message {
        tool_calls: (!calls.is_empty()).then(|| calls.clone()),
        reasoning: response.message.reasoning.clone(),
        ..Message::assistant(text.clone())
    });
    let model = response.model.clone().or(requested_model);
    state.steps.push(StepRecord {
        index,
        status: StepStatus::Checkpointed,
        model_attempts: attempts,
        model: model.clone(),
        request_id: response.request_id.clone(),
        provider: response.provider.clone(),
    });
    state.step_results.push(StepResult {
        step_index: index,
        text: text.clone(),
        reasoning: response.message.reasoning,
        tool_calls: calls,
        tool_results: Vec::new(),
        usage,
        finish_reason: Some(finish_reason),
    });
    ctx.emitter.emit(
        EventType::ModelCompleted,
        Some(RunStatus::Running),
        Some(index),
        || EventData::ModelCompleted {
            attempt: attempts,
            model,
            usage,
            request_id: response.request_id,
        },
    );
    if ctx.emitter.is_streaming() && !streamed_items {
        let step = state.step_results.last().expect("just pushed");
        let mut items = Item::of_step(step);
        items.retain(|i| !matches!(i, Item::ToolResult { .. } | Item::Error { .. }));
        for item in items {
            ctx.emitter
                .emit(EventType::ResponseItem, None, Some(index), || {
                    EventData::Item { item }
                });
        }
    }

    if parsed.is_empty() {
        return final_answer(ctx, state, index, text).await;
    }

    let waiting = tools::tool_phase(ctx, state, index, parsed, &offered).await?;
    let (pending, nested_runs) = waiting.into_parts();
    if !pending.is_empty() {
        pause(ctx, state, index, tool_pause(pending, nested_runs)).await?;
        return Ok(true);
    }
    tools::settle_next_turn(state, false);
    after_step(ctx, state, index, false, false).await
}

/// The pause of a tool step whose calls wait: its kind from the pending calls'
/// (docs/behaviour.md §4), with the paused nested runs (docs/behaviour.md §18).
pub(crate) fn tool_pause(
    pending: Vec<crate::state::PendingToolCall>,
    nested_runs: std::collections::BTreeMap<String, Value>,
) -> Pause {
    use crate::state::PendingKind;
    let kind = if pending.iter().any(|p| p.kind == PendingKind::Approval) {
        PauseKind::ToolApproval
    } else if pending.iter().any(|p| p.kind == PendingKind::Hitl) {
        PauseKind::Hitl
    } else {
        PauseKind::ManualTool
    };
    Pause {
        id: uuid::Uuid::new_v4().to_string(),
        reason: "Pending tool calls require input".to_owned(),
        payload: Value::Null,
        requested_at: now_iso(),
        kind,
        pending_tool_calls: pending,
        nested_runs,
    }
}

/// Pauses the run after a step.
pub(crate) async fn pause(
    ctx: &RunCtx,
    state: &mut RunResult,
    index: usize,
    pause: Pause,
) -> Result<(), Failure> {
    state.run.status = RunStatus::WaitingForHuman;
    state.run.updated_at = now_iso();
    if let Some(record) = state.steps.iter_mut().find(|s| s.index == index) {
        record.status = StepStatus::Paused;
    }
    let status = Some(RunStatus::WaitingForHuman);
    ctx.emitter
        .emit(EventType::StepCompleted, status, Some(index), || {
            EventData::None
        });
    let event_pause = ctx.emitter.is_active().then(|| pause.clone());
    state.run.pause = Some(pause);
    super::checkpoint(ctx, state, RunStatus::WaitingForHuman, index).await?;
    ctx.emitter
        .emit(EventType::RunWaitingForHuman, status, Some(index), || {
            EventData::Waiting {
                pause: Box::new(event_pause.expect("built when active")),
            }
        });
    Ok(())
}

fn response_value(state: &RunResult, index: usize) -> Value {
    match state
        .step_results
        .iter()
        .rev()
        .find(|s| s.step_index == index)
    {
        Some(step) => json!({
            "message": {"content": step.text, "toolCalls": step.tool_calls},
            "usage": step.usage,
            "finishReason": step.finish_reason,
        }),
        None => Value::Null,
    }
}

async fn review(
    ctx: &RunCtx,
    state: &RunResult,
    index: usize,
    is_final: bool,
) -> Result<Option<ReviewRequest>, Failure> {
    let Some(hook) = &ctx.agent.def.human_review else {
        return Ok(None);
    };
    let response = response_value(state, index);
    let review_ctx = HumanReviewContext {
        run_id: &state.run.id,
        agent_id: &state.run.agent_id,
        step_index: index,
        input: &state.run.input,
        context: &state.run.context,
        messages: &state.run.messages,
        response: &response,
        is_final,
    };
    let outcome = std::panic::AssertUnwindSafe(hook.review(&review_ctx))
        .catch_unwind()
        .await;
    match outcome {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) => Err(fail_in_step(index)(AgentError::new(
            ErrorCode::ToolFailed,
            format!("humanReview failed: {}", e.message),
        ))),
        Err(p) => Err(fail_in_step(index)(AgentError::new(
            ErrorCode::ToolFailed,
            format!("humanReview panicked: {}", crate::panic_message(p.as_ref())),
        ))),
    }
}

fn review_pause(request: ReviewRequest) -> Pause {
    Pause {
        id: uuid::Uuid::new_v4().to_string(),
        reason: request.reason,
        payload: request.payload,
        requested_at: now_iso(),
        kind: PauseKind::HumanReview,
        pending_tool_calls: Vec::new(),
        nested_runs: Default::default(),
    }
}

pub(crate) fn elapsed_ms(ctx: &RunCtx) -> u64 {
    SystemTime::now()
        .duration_since(ctx.created_at)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

async fn check_stop(
    ctx: &RunCtx,
    state: &RunResult,
    index: usize,
) -> Result<Option<String>, Failure> {
    if ctx.settings.stop_when.is_empty() {
        return Ok(None);
    }
    let stop_state = StopState {
        steps: &state.step_results,
        usage: &state.run.usage,
        elapsed_ms: elapsed_ms(ctx),
        step_count: state.run.step_count,
    };
    for condition in &ctx.settings.stop_when {
        let outcome = std::panic::AssertUnwindSafe(condition.check(&stop_state))
            .catch_unwind()
            .await;
        match outcome {
            Ok(Ok(Some(reason))) => return Ok(Some(reason)),
            Ok(Ok(None)) => {}
            Ok(Err(e)) => {
                return Err(fail_in_step(index)(AgentError::new(
                    ErrorCode::ToolFailed,
                    format!("stopWhen failed: {}", e.message),
                )))
            }
            Err(p) => {
                return Err(fail_in_step(index)(AgentError::new(
                    ErrorCode::ToolFailed,
                    format!("stopWhen panicked: {}", crate::panic_message(p.as_ref())),
                )))
            }
        }
    }
    Ok(None)
}

fn latest_text(state: &RunResult) -> String {
    state
        .run
        .messages
        .iter()
        .rev()
        .find(|m| m.role == crate::state::Role::Assistant)
        .map(|m| m.content.clone())
        .unwrap_or_default()
}

fn stop(ctx: &RunCtx, state: &mut RunResult, reason: String, step_completed: Option<usize>) {
    state.run.status = RunStatus::Stopped;
    state.run.result = Value::String(latest_text(state));
    state.run.stop_reason = Some(reason.clone());
    state.run.updated_at = now_iso();
    let status = Some(RunStatus::Stopped);
    emit_output_item(ctx, state);
    if let Some(index) = step_completed {
        ctx.emitter
            .emit(EventType::StepCompleted, status, Some(index), || {
                EventData::None
            });
    }
    ctx.emitter
        .emit(EventType::RunStopped, status, None, || EventData::Stopped {
            stop_reason: reason,
            output: state.run.result.clone(),
        });
}

fn emit_output_item(ctx: &RunCtx, state: &RunResult) {
    if ctx.emitter.is_streaming() {
        ctx.emitter
            .emit(EventType::ResponseItem, None, None, || EventData::Item {
                item: Item::Output {
                    value: state.run.result.clone(),
                },
            });
    }
}

/// Review and stop conditions after a tool step that did not pause; `true` when the run
/// ended or paused. `resumed`: the step was resolved by a continue (its `step.completed`
/// was emitted before the pause).
pub(crate) async fn after_step(
    ctx: &RunCtx,
    state: &mut RunResult,
    index: usize,
    is_final: bool,
    resumed: bool,
) -> Result<bool, Failure> {
    if let Some(request) = review(ctx, state, index, is_final).await? {
        pause(ctx, state, index, review_pause(request)).await?;
        return Ok(true);
    }
    if let Some(reason) = check_stop(ctx, state, index).await? {
        stop(ctx, state, reason, (!resumed).then_some(index));
        return Ok(true);
    }
    // The time is read where the state is seen: in a checkpoint saved here, or when the run
    // ends, pauses or stops (each sets it). With no store, formatting it after every step
    // was work no one saw.
    if ctx.durable.is_some() {
        state.run.updated_at = now_iso();
    }
    if !resumed {
        let status = Some(RunStatus::Running);
        ctx.emitter
            .emit(EventType::StepCompleted, status, Some(index), || {
                EventData::None
            });
        super::checkpoint(ctx, state, RunStatus::Running, index).await?;
    }
    Ok(false)
}

async fn final_answer(
    ctx: &RunCtx,
    state: &mut RunResult,
    index: usize,
    text: String,
) -> Result<bool, Failure> {
    if let Some(request) = review(ctx, state, index, true).await? {
        pause(ctx, state, index, review_pause(request)).await?;
        return Ok(true);
    }
    if let Some(reason) = check_stop(ctx, state, index).await? {
        stop(ctx, state, reason, Some(index));
        return Ok(true);
    }
    let output = match &ctx.agent.def.output_schema {
        None => Value::String(text),
        Some(validator) => validate_output(validator.as_ref(), text)
            .await
            .map_err(fail_in_step(index))?,
    };
    state.run.status = RunStatus::Completed;
    state.run.result = output;
    state.run.pause = None;
    state.run.updated_at = now_iso();
    emit_output_item(ctx, state);
    let status = Some(RunStatus::Completed);
    ctx.emitter
        .emit(EventType::StepCompleted, status, Some(index), || {
            EventData::None
        });
    super::checkpoint(ctx, state, RunStatus::Completed, index).await?;
    ctx.emitter.emit(EventType::RunCompleted, status, None, || {
        EventData::Completed {
            output: state.run.result.clone(),
        }
    });
    Ok(true)
}

/// Validates the final text; when the text itself fails but parses as JSON that passes,
/// the parsed value becomes the output (structured output).
async fn validate_output(
    validator: &dyn crate::schema::Validator,
    text: String,
) -> Result<Value, AgentError> {
    let as_text = std::panic::AssertUnwindSafe(validator.validate(Value::String(text.clone())))
        .catch_unwind()
        .await;
    let first_error = match as_text {
        Ok(Ok(v)) => return Ok(v),
        Ok(Err(e)) => e.message,
        Err(p) => format!("validator panicked: {}", crate::panic_message(p.as_ref())),
    };
    // Any JSON value within the value limits, a JSON string (`"yes"`, quotes included)
    // among them (docs/behaviour.md §3.3).
    if let Ok(parsed) = crate::limits::parse_json_text(&text) {
        if let Ok(Ok(v)) = std::panic::AssertUnwindSafe(validator.validate(parsed))
            .catch_unwind()
            .await
        {
            return Ok(v);
        }
    }
    Err(AgentError::new(
        ErrorCode::AgentOutputInvalid,
        format!("Invalid agent output: {first_error}"),
    ))
}
