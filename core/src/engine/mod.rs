//! The run loop: steps, tool phases, pauses, continues and how a run ends.

mod emitter;
mod resume;
mod step;
mod tools;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::agent::AgentInner;
use crate::error::{AgentError, ErrorCode};
use crate::events::{now_iso, EventData, EventType};
use crate::json::to_canonical_string;
use crate::limits::{check_value, ValueLimitError};
use crate::model::ModelClient;
use crate::options::{ContinueOptions, ModelRetry, RunOptions, RunOverrides, ToolExecutionConfig};
use crate::signing;
use crate::state::{Message, RunError, RunRecord, RunResult, RunStatus, Usage};
use crate::stop::StopCondition;
use crate::stream::StreamShared;

pub(crate) use emitter::Emitter;

/// Settings of one `run`/`continue` call: the definition with the call's overrides.
pub(crate) struct Settings {
    pub(crate) max_steps: usize,
    pub(crate) stop_when: Vec<Arc<dyn StopCondition>>,
    pub(crate) retry: ModelRetry,
    pub(crate) exec: ToolExecutionConfig,
    pub(crate) model: Option<String>,
    pub(crate) temperature: Option<f64>,
    pub(crate) max_output_tokens: Option<u64>,
    pub(crate) top_p: Option<f64>,
}

impl Settings {
    fn new(agent: &AgentInner, o: RunOverrides, stored: Option<&RunRecord>) -> Self {
        let def = &agent.def;
        Settings {
            max_steps: o
                .max_steps
                .or(stored.and_then(|r| r.max_steps))
                .unwrap_or(def.max_steps),
            stop_when: o.stop_when.unwrap_or_else(|| def.stop_when.clone()),
            retry: o.model_retry.unwrap_or(def.model_retry),
            exec: o.tool_execution.unwrap_or_default().or(def.tool_execution),
            model: o.model.or_else(|| stored.and_then(|r| r.model.clone())),
            temperature: o.temperature,
            max_output_tokens: o.max_output_tokens,
            top_p: o.top_p,
        }
    }
}

/// Everything a run needs besides its state.
pub(crate) struct RunCtx {
    pub(crate) agent: Arc<AgentInner>,
    pub(crate) client: Arc<dyn ModelClient>,
    pub(crate) settings: Settings,
    pub(crate) emitter: Emitter,
    pub(crate) cancel: CancellationToken,
    pub(crate) created_at: SystemTime,
}

/// Why the loop stopped early.
pub(crate) enum Failure {
    /// The run failed; `step` is the step it failed in (None: between steps).
    Failed {
        error: AgentError,
        step: Option<usize>,
    },
}

pub(crate) type LoopResult = Result<(), Failure>;

pub(crate) fn fail_in_step(step: usize) -> impl FnOnce(AgentError) -> Failure {
    move |error| Failure::Failed {
        error,
        step: Some(step),
    }
}

/// Where the loop starts.
pub(crate) enum Start {
    /// A new step.
    NextStep,
    /// Right after a continue resolved a paused tool step: review and stop conditions of
    /// that step first.
    AfterToolPause,
    /// Right after a continue of a review pause: stop conditions of that step first.
    AfterReviewPause,
}

fn user_content(input: &Value) -> String {
    match input {
        Value::String(s) => s.clone(),
        other => to_canonical_string(other),
    }
}

/// The caller's own values must be storable (SPEC §7): refused with `state_invalid`, as
/// they would make a state that cannot be read back.
fn check_run_values(options: &RunOptions) -> Result<(), AgentError> {
    let refuse = |what: &str, e: ValueLimitError| {
        AgentError::state_invalid(format!("Invalid run {what}: {e}"))
    };
    check_value(&options.input).map_err(|e| refuse("input", e))?;
    check_value(&options.context).map_err(|e| refuse("context", e))?;
    for m in options.messages.iter().flatten() {
        for call in m.tool_calls.iter().flatten() {
            check_value(&call.input).map_err(|e| refuse("messages", e))?;
        }
    }
    Ok(())
}

/// The per-run tool set (the seam between the engine and MCP, SPEC §11): the agent
/// itself, or — when it declares MCP servers — an agent with the listed MCP tools added
/// (listed now unless cached). `None`: cancelled while listing.
async fn run_agent(
    agent: Arc<AgentInner>,
    cancel: &CancellationToken,
) -> Option<Result<Arc<AgentInner>, AgentError>> {
    #[cfg(feature = "mcp")]
    if let Some(mcp) = agent.mcp.clone() {
        return tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            r = mcp.run_agent(&agent) => Some(r),
        };
    }
    let _ = cancel;
    Some(Ok(agent))
}

/// The cancel message of a run.
pub(crate) const CANCELLED_MESSAGE: &str = "Agent run cancelled";

pub(crate) async fn run(
    agent: Arc<AgentInner>,
    options: RunOptions,
    stream: Option<Arc<StreamShared>>,
) -> Result<RunResult, AgentError> {
    check_run_values(&options)?;
    let now = SystemTime::now();
    let created = now_iso();
    let run_id: Arc<str> = Arc::from(uuid::Uuid::new_v4().to_string());
    let agent_id: Arc<str> = Arc::from(agent.def.id.as_str());
    let mut messages = options.messages.unwrap_or_default();
    messages.push(Message::user(user_content(&options.input)));
    let max_steps_override = options.overrides.max_steps;
    let model_override = options.overrides.model.clone();
    let settings = Settings::new(&agent, options.overrides, None);
    let mut state = RunResult {
        run: RunRecord {
            id: run_id.to_string(),
            agent_id: agent.def.id.clone(),
            status: RunStatus::Queued,
            input: options.input,
            context: options.context,
            messages,
            result: Value::Null,
            error: None,
            pause: None,
            stop_reason: None,
            usage: Usage::default(),
            created_at: created.clone(),
            updated_at: created,
            step_count: 0,
            next_turn_params: None,
            model: model_override,
            max_steps: max_steps_override,
        },
        steps: Vec::new(),
        step_results: Vec::new(),
        signature: None,
    };
    let cancel = options.cancel.unwrap_or_default();
    let listed = run_agent(agent.clone(), &cancel).await;
    let (agent, listing) = match listed {
        Some(Ok(run_agent)) => (run_agent, Ok(())),
        Some(Err(e)) => (agent, Err(Some(e))),
        None => (agent, Err(None)),
    };
    let ctx = RunCtx {
        agent,
        client: options.client,
        settings,
        emitter: Emitter::new(run_id, agent_id, options.on_event, stream),
        cancel,
        created_at: now,
    };
    ctx.emitter
        .emit(EventType::RunStarted, Some(RunStatus::Queued), None, || {
            EventData::None
        });
    state.run.status = RunStatus::Running;
    match listing {
        Ok(()) => drive_and_finish(&ctx, state, Start::NextStep).await,
        // A listing that failed (or found a name collision) fails the run, result attached.
        Err(Some(error)) => finish(
            &ctx,
            state,
            Err(Some(Failure::Failed { error, step: None })),
        ),
        Err(None) => finish(&ctx, state, Err(None)),
    }
}

pub(crate) async fn continue_run(
    agent: Arc<AgentInner>,
    state: &RunResult,
    options: ContinueOptions,
    stream: Option<Arc<StreamShared>>,
) -> Result<RunResult, AgentError> {
    // MCP tools are listed before the SPEC §4 checks, so a paused MCP call is known there.
    let never = CancellationToken::new();
    let agent = match run_agent(agent, options.cancel.as_ref().unwrap_or(&never)).await {
        Some(r) => r?,
        None => return Err(AgentError::new(ErrorCode::Cancelled, CANCELLED_MESSAGE)),
    };
    let plan = resume::check(&agent, state, &options)?;
    if let Some(context) = &options.context {
        check_value(context)
            .map_err(|e| AgentError::state_invalid(format!("Invalid continue context: {e}")))?;
    }
    let mut state = state.clone();
    // A new signature is made when the run ends, and only by an agent with a secret.
    state.signature = None;
    let created_at =
        humantime::parse_rfc3339_weak(&state.run.created_at).unwrap_or_else(|_| SystemTime::now());
    if let Some(model) = &options.overrides.model {
        state.run.model = Some(model.clone());
    }
    if let Some(max) = options.overrides.max_steps {
        state.run.max_steps = Some(max);
    }
    let settings = Settings::new(&agent, options.overrides.clone(), Some(&state.run));
    let ctx = RunCtx {
        emitter: Emitter::new(
            Arc::from(state.run.id.as_str()),
            Arc::from(agent.def.id.as_str()),
            options.on_event.clone(),
            stream,
        ),
        agent,
        client: options.client.clone(),
        settings,
        cancel: options.cancel.clone().unwrap_or_default(),
        created_at,
    };
    if let Some(context) = options.context.clone() {
        state.run.context = context;
    }
    let previous = state.run.status;
    state.run.status = RunStatus::Running;
    state.run.updated_at = now_iso();
    ctx.emitter.emit(
        EventType::RunResumed,
        Some(RunStatus::Running),
        None,
        || EventData::Resumed {
            previous_status: previous,
        },
    );
    let outcome = {
        let fut = resume::resolve(&ctx, &mut state, plan, options);
        tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => None,
            r = fut => Some(r),
        }
    };
    match outcome {
        None => finish(&ctx, state, Err(None)),
        Some(Err(failure)) => finish(&ctx, state, Err(Some(failure))),
        Some(Ok(start)) => drive_and_finish(&ctx, state, start).await,
    }
}

async fn drive_and_finish(
    ctx: &RunCtx,
    mut state: RunResult,
    start: Start,
) -> Result<RunResult, AgentError> {
    let outcome = {
        let fut = step::drive(ctx, &mut state, start);
        tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => None,
            r = fut => Some(r),
        }
    };
    match outcome {
        None => finish(ctx, state, Err(None)),
        Some(Ok(())) => finish(ctx, state, Ok(())),
        Some(Err(failure)) => finish(ctx, state, Err(Some(failure))),
    }
}

/// Ends a run: `Err(None)` = cancelled, `Err(Some(_))` = failed.
fn finish(
    ctx: &RunCtx,
    mut state: RunResult,
    outcome: Result<(), Option<Failure>>,
) -> Result<RunResult, AgentError> {
    state.run.updated_at = now_iso();
    match outcome {
        Ok(()) => Ok(sign(ctx, state)),
        Err(None) => {
            state.run.status = RunStatus::Cancelled;
            state.run.pause = None;
            let message = ctx
                .emitter
                .cancel_reason()
                .unwrap_or_else(|| CANCELLED_MESSAGE.to_owned());
            state.run.error = Some(RunError {
                code: ErrorCode::Cancelled,
                message: message.clone(),
                gateway: None,
            });
            ctx.emitter.emit(
                EventType::RunCancelled,
                Some(RunStatus::Cancelled),
                None,
                || EventData::Error {
                    error: message,
                    code: ErrorCode::Cancelled.as_str(),
                },
            );
            Ok(sign(ctx, state))
        }
        Err(Some(Failure::Failed { error, step })) => {
            state.run.status = RunStatus::Failed;
            state.run.pause = None;
            state.run.error = Some(RunError {
                code: error.code(),
                message: error.message().to_owned(),
                gateway: error.gateway_info().cloned(),
            });
            if let Some(index) = step {
                if let Some(record) = state.steps.iter_mut().find(|s| s.index == index) {
                    record.status = crate::state::StepStatus::Failed;
                }
                ctx.emitter.emit(
                    EventType::StepFailed,
                    Some(RunStatus::Failed),
                    Some(index),
                    || EventData::StepFailed {
                        error: error.message().to_owned(),
                    },
                );
            }
            ctx.emitter
                .emit(EventType::RunFailed, Some(RunStatus::Failed), None, || {
                    EventData::Error {
                        error: error.message().to_owned(),
                        code: error.code().as_str(),
                    }
                });
            Err(error.with_result(sign(ctx, state)))
        }
    }
}

/// Signs the state an agent with a `state_secret` produces (SPEC §7).
fn sign(ctx: &RunCtx, mut state: RunResult) -> RunResult {
    state.signature = None;
    if let Some(secret) = ctx.agent.def.state_secrets.first() {
        state.signature = Some(signing::sign(secret, &state));
    }
    state
}

/// Sleeps, or returns early when the run is cancelled.
pub(crate) async fn sleep_cancellable(ctx: &RunCtx, d: Duration) {
    tokio::select! {
        _ = tokio::time::sleep(d) => {}
        _ = ctx.cancel.cancelled() => {}
    }
}
