//! The run loop: steps, tool phases, pauses, continues and how a run ends.

mod call_ids;
mod durable;
mod emitter;
mod nested;
mod resume;
#[cfg(feature = "mcp-server")]
mod served;
mod step;
mod tools;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::checked_agent::AgentInner;
use crate::controls::ToolChoice;
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
use crate::telemetry::{Parents, RunStart, RunTrace};

pub(crate) use durable::checkpoint;
use durable::{with_lease, Durable};
pub(crate) use emitter::Emitter;
#[cfg(feature = "mcp-server")]
pub(crate) use served::{CallHost, ServedTools};

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
    pub(crate) tool_choice: Option<ToolChoice>,
    pub(crate) parallel_tool_calls: Option<bool>,
    pub(crate) active_tools: Option<Vec<String>>,
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
            tool_choice: o.tool_choice,
            parallel_tool_calls: o.parallel_tool_calls,
            active_tools: o.active_tools,
        }
    }
}

/// Refuses overrides that name tools the agent does not have (`definition_invalid`),
/// before anything runs.
fn check_overrides(agent: &AgentInner, o: &RunOverrides) -> Result<(), AgentError> {
    let invalid = |m: String| AgentError::definition_invalid(format!("Invalid run options: {m}"));
    if let Some(exec) = &o.tool_execution {
        exec.check("Invalid run options")?;
    }
    if let Some(ids) = &o.active_tools {
        let ids = Value::from(
            ids.iter()
                .map(|s| Value::from(s.as_str()))
                .collect::<Vec<_>>(),
        );
        crate::checked_agent::check_tool_ids(&ids, Some(&agent.tool_index)).map_err(invalid)?;
    }
    if let Some(choice) = &o.tool_choice {
        crate::checked_agent::check_tool_choice(&choice.to_value(), Some(&agent.tool_index))
            .map_err(invalid)?;
    }
    Ok(())
}

/// Everything a run needs besides its state.
pub(crate) struct RunCtx {
    pub(crate) agent: Arc<AgentInner>,
    pub(crate) client: Arc<dyn ModelClient>,
    pub(crate) settings: Settings,
    pub(crate) emitter: Emitter,
    pub(crate) cancel: CancellationToken,
    pub(crate) created_at: SystemTime,
    /// The run store's hold on this run, when the run is stored.
    pub(crate) durable: Option<Arc<Durable>>,
    /// The spans of this call; `None` when tracing is off.
    pub(crate) trace: Option<Arc<RunTrace>>,
    /// The binding's tag of the run, given to its tool calls' runtimes.
    pub(crate) host_tag: Option<u64>,
    /// The call ids of the run's messages (`call_ids.rs`).
    pub(crate) call_ids: call_ids::CallIdIndex,
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
    /// A continue paused the run again (a nested agent's run paused once more,
    /// docs/behaviour.md §18): nothing more to do.
    Paused,
}

fn user_content(input: &Value) -> String {
    match input {
        Value::String(s) => s.clone(),
        other => to_canonical_string(other),
    }
}

/// The caller's own values must be storable (docs/behaviour.md §7): refused with `state_invalid`, as
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

/// The per-run tool set (the seam between the engine and MCP, docs/behaviour.md §11): the agent
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
            // Boxed: listing MCP servers is kilobytes of future that a run of an agent
            // without servers would otherwise carry too.
            r = Box::pin(mcp.run_agent(&agent)) => Some(r),
        };
    }
    let _ = cancel;
    Some(Ok(agent))
}

/// [`run_agent`] for a continue or a recover, which fail without a result: cancelled while
/// listing is `cancelled`.
async fn continue_agent(
    agent: Arc<AgentInner>,
    options: &ContinueOptions,
) -> Result<Arc<AgentInner>, AgentError> {
    let never = CancellationToken::new();
    match run_agent(agent, options.cancel.as_ref().unwrap_or(&never)).await {
        Some(r) => r,
        None => Err(AgentError::new(ErrorCode::Cancelled, CANCELLED_MESSAGE)),
    }
}

/// The cancel message of a run.
pub(crate) const CANCELLED_MESSAGE: &str = "Agent run cancelled";

pub(crate) async fn run(
    agent: Arc<AgentInner>,
    options: RunOptions,
    stream: Option<Arc<StreamShared>>,
) -> Result<RunResult, AgentError> {
    check_run_values(&options)?;
    let host_traceparent = options.traceparent.clone();
    let host_tag = options.host_tag;
    // The run's tool set (with its MCP tools, docs/behaviour.md §11) comes first: the overrides may name
    // MCP tools, and the store's hold is on the agent that runs.
    let cancel = options.cancel.unwrap_or_default();
    let (agent, listing) = match run_agent(agent.clone(), &cancel).await {
        Some(Ok(run_agent)) => (run_agent, Ok(())),
        Some(Err(e)) => (agent, Err(Some(e))),
        None => (agent, Err(None)),
    };
    if listing.is_ok() {
        check_overrides(&agent, &options.overrides)?;
    }
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
            traceparent: None,
            tool_call_counts: Default::default(),
            loaded_tools: Vec::new(),
        },
        steps: Vec::new(),
        step_results: Vec::new(),
        signature: None,
        signed_content_altered: false,
    };
    let durable = options
        .store
        .or_else(|| agent.def.store.clone())
        .map(|store| Durable::new(store, &agent, &run_id));
    let trace = RunTrace::start(
        RunStart {
            agent_id: &agent.def.id,
            run_id: &run_id,
            resumed: false,
            store_claim: durable.as_ref().map(|_| "run"),
        },
        Parents {
            stored: None,
            host: host_traceparent.as_deref(),
        },
    );
    if let Some(t) = &trace {
        state.run.traceparent = Some(t.traceparent());
    }
    let ctx = RunCtx {
        agent,
        client: options.client,
        settings,
        emitter: Emitter::new(run_id, agent_id, options.on_event, stream),
        cancel,
        created_at: now,
        durable,
        trace,
        host_tag,
        call_ids: Default::default(),
    };
    ctx.emitter
        .emit(EventType::RunStarted, Some(RunStatus::Queued), None, || {
            EventData::None
        });
    state.run.status = RunStatus::Running;
    match listing {
        Ok(()) => {}
        // A listing that failed (or found a name collision) fails the run, result attached.
        Err(Some(error)) => {
            return finish(
                &ctx,
                state,
                Err(Some(Failure::Failed { error, step: None })),
            )
            .await
        }
        Err(None) => return finish(&ctx, state, Err(None)).await,
    }
    if let Some(d) = &ctx.durable {
        // A store (an application's accessor) that does not answer holds no cancelled run.
        let saved = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => None,
            r = d.save(&state) => Some(r),
        };
        match saved {
            None => return finish(&ctx, state, Err(None)).await,
            Some(Err(error)) => {
                return finish(
                    &ctx,
                    state,
                    Err(Some(Failure::Failed { error, step: None })),
                )
                .await
            }
            Some(Ok(())) => {}
        }
    }
    let outcome = drive_steps(&ctx, &mut state, Start::NextStep).await;
    finish(&ctx, state, outcome).await
}

pub(crate) async fn continue_run(
    agent: Arc<AgentInner>,
    state: Option<&RunResult>,
    options: ContinueOptions,
    stream: Option<Arc<StreamShared>>,
) -> Result<RunResult, AgentError> {
    // MCP tools are listed before the docs/behaviour.md §4 checks, so a paused MCP call is known there.
    let agent = continue_agent(agent, &options).await?;
    check_overrides(&agent, &options.overrides)?;
    if let Some(context) = &options.context {
        check_value(context)
            .map_err(|e| AgentError::state_invalid(format!("Invalid continue context: {e}")))?;
    }
    let (mut state, plan, durable) = unless_cancelled(options.cancel.as_ref(), || {
        durable::prepare_continue(&agent, state, &options)
    })
    .await?;
    // A new signature is made when the run ends, and only by an agent with a secret.
    state.signature = None;
    resume_paused(agent, state, plan, options, stream, durable, "continue").await
}

/// `work` (a continue's load and claim of its stored run), or `cancelled` when the run is
/// cancelled first: a store that does not answer (an application's accessor blocked) holds
/// no cancelled continue. Nothing ran yet, so the error has no result and the state stays
/// as it was.
///
/// `work` makes the future here, as in [`with_lease`]: passed in, it would be held twice.
async fn unless_cancelled<T, F>(
    cancel: Option<&CancellationToken>,
    work: impl FnOnce() -> F,
) -> Result<T, AgentError>
where
    F: std::future::Future<Output = Result<T, AgentError>>,
{
    let Some(cancel) = cancel else {
        return work().await;
    };
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(AgentError::new(ErrorCode::Cancelled, CANCELLED_MESSAGE)),
        r = work() => r,
    }
}

/// How long a run, once cancelled, still waits for the save of its final state: any store
/// that works saves within it; one that does not answer (an application's accessor
/// blocked) no longer holds the cancelled run, which then fails with `store_failed` (its
/// final state was not saved).
const SAVE_AFTER_CANCEL: Duration = Duration::from_secs(5);

/// Recovers a stored run whose lease expired (docs/behaviour.md §10).
pub(crate) async fn recover(
    agent: Arc<AgentInner>,
    run_id: &str,
    options: ContinueOptions,
) -> Result<RunResult, AgentError> {
    // As for a continue: the MCP tools are listed before the stored run is checked.
    let agent = continue_agent(agent, &options).await?;
    let (recovered, durable) = unless_cancelled(options.cancel.as_ref(), || {
        durable::prepare_recover(&agent, run_id, options.clone())
    })
    .await?;
    match recovered {
        durable::Recovered::Claimed(claimed) => {
            let (state, plan, options) = *claimed;
            resume_paused(agent, state, plan, options, None, Some(durable), "recover").await
        }
        durable::Recovered::Running(state) => {
            let mut state = *state;
            let ctx = continue_ctx(&agent, &mut state, &options, None, Some(durable), "recover");
            ctx.emitter.emit(
                EventType::RunResumed,
                Some(RunStatus::Running),
                None,
                || EventData::Resumed {
                    previous_status: RunStatus::Running,
                },
            );
            state.run.status = RunStatus::Running;
            let outcome = drive_steps(&ctx, &mut state, Start::NextStep).await;
            finish(&ctx, state, outcome).await
        }
    }
}

fn continue_ctx(
    agent: &Arc<AgentInner>,
    state: &mut RunResult,
    options: &ContinueOptions,
    stream: Option<Arc<StreamShared>>,
    durable: Option<Arc<Durable>>,
    claim: &'static str,
) -> RunCtx {
    let created_at =
        humantime::parse_rfc3339_weak(&state.run.created_at).unwrap_or_else(|_| SystemTime::now());
    if let Some(model) = &options.overrides.model {
        state.run.model = Some(model.clone());
    }
    if let Some(max) = options.overrides.max_steps {
        state.run.max_steps = Some(max);
    }
    let settings = Settings::new(agent, options.overrides.clone(), Some(&state.run));
    let trace = RunTrace::start(
        RunStart {
            agent_id: &agent.def.id,
            run_id: &state.run.id,
            resumed: true,
            store_claim: durable.as_ref().map(|_| claim),
        },
        Parents {
            stored: state.run.traceparent.as_deref(),
            host: options.traceparent.as_deref(),
        },
    );
    // Tracing off here keeps the stored context, so a later traced continue still joins
    // the trace of the call that paused.
    if let Some(t) = &trace {
        state.run.traceparent = Some(t.traceparent());
    }
    RunCtx {
        emitter: Emitter::new(
            Arc::from(state.run.id.as_str()),
            Arc::from(agent.def.id.as_str()),
            options.on_event.clone(),
            stream,
        ),
        agent: agent.clone(),
        client: options.client.clone(),
        settings,
        cancel: options.cancel.clone().unwrap_or_default(),
        created_at,
        durable,
        trace,
        host_tag: options.host_tag,
        call_ids: Default::default(),
    }
}

async fn resume_paused(
    agent: Arc<AgentInner>,
    mut state: RunResult,
    plan: resume::ResumePlan,
    options: ContinueOptions,
    stream: Option<Arc<StreamShared>>,
    durable: Option<Arc<Durable>>,
    claim: &'static str,
) -> Result<RunResult, AgentError> {
    let ctx = continue_ctx(&agent, &mut state, &options, stream, durable, claim);
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
        let fut = with_lease(&ctx, || resume::resolve(&ctx, &mut state, plan, options));
        tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => None,
            r = fut => Some(r),
        }
    };
    match outcome {
        None => finish(&ctx, state, Err(None)).await,
        // As in `drive_steps`: a failure reached while cancelling is the cancellation.
        Some(Err(_)) if ctx.cancel.is_cancelled() => finish(&ctx, state, Err(None)).await,
        Some(Err(failure)) => finish(&ctx, state, Err(Some(failure))).await,
        Some(Ok(start)) => {
            let outcome = drive_steps(&ctx, &mut state, start).await;
            finish(&ctx, state, outcome).await
        }
    }
}

/// Drives a run's steps, its lease renewed, until they end or the run is cancelled: how the
/// run ends ([`finish`]'s outcome). The state is borrowed, not moved in: a value moved into
/// an `async fn` is held twice in its future, and the callers' futures hold it already.
async fn drive_steps(
    ctx: &RunCtx,
    state: &mut RunResult,
    start: Start,
) -> Result<(), Option<Failure>> {
    let outcome = {
        let fut = with_lease(ctx, || step::drive(ctx, state, start));
        tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => None,
            r = fut => Some(r),
        }
    };
    match outcome {
        None => Err(None),
        Some(Ok(())) => Ok(()),
        // A failure the run reached while it was being cancelled is the cancellation's: a
        // host may answer a call with its error (its context cancelled) within the very
        // poll that checked for cancellation and then started the call.
        Some(Err(_)) if ctx.cancel.is_cancelled() => Err(None),
        Some(Err(failure)) => Err(Some(failure)),
    }
}

/// Ends a run and saves its final state (docs/behaviour.md §10): a completed or paused run was saved
/// by its last checkpoint; after a failure of the store itself nothing more is written
/// (the run stays recoverable). A final save that fails fails the run with
/// `store_failed`, the result attached. The run span ends with what the caller gets.
///
/// Boxed: ending a run (the final save, the state's signature) is kilobytes of future, made
/// once per run; inline, every run, continue and recover future would carry it from its
/// start, and they are moved whole when a binding starts them.
fn finish(
    ctx: &RunCtx,
    state: RunResult,
    outcome: Result<(), Option<Failure>>,
) -> BoxFuture<'_, Result<RunResult, AgentError>> {
    Box::pin(async move {
        let result = finish_and_save(ctx, state, outcome).await;
        if let Some(t) = &ctx.trace {
            match &result {
                Ok(state) => t.run_ended(state),
                Err(e) => {
                    if let Some(state) = e.result() {
                        t.run_ended(state);
                    }
                }
            }
        }
        result
    })
}

async fn finish_and_save(
    ctx: &RunCtx,
    state: RunResult,
    outcome: Result<(), Option<Failure>>,
) -> Result<RunResult, AgentError> {
    let skip_save = match &outcome {
        Ok(()) => state.run.status != RunStatus::Stopped,
        Err(Some(Failure::Failed { error, .. })) => durable::is_store_failure(error),
        Err(None) => false,
    };
    let result = conclude(ctx, state, outcome);
    let Some(d) = ctx.durable.as_ref().filter(|_| !skip_save) else {
        return result;
    };
    let save = async {
        match &result {
            Ok(state) => d.save(state).await,
            Err(e) => {
                d.save(e.result().expect("a failed run carries its result"))
                    .await
            }
        }
    };
    let given_up = async {
        ctx.cancel.cancelled().await;
        tokio::time::sleep(SAVE_AFTER_CANCEL).await;
    };
    let saved = tokio::select! {
        r = save => r,
        () = given_up => Err(AgentError::store_failed(format!(
            "Run store failed: the state of the cancelled run was not saved within {} s",
            SAVE_AFTER_CANCEL.as_secs()
        ))),
    };
    match (saved, result) {
        (Ok(()), result) => result,
        (Err(error), result) => {
            let mut state = match result {
                Ok(state) => state,
                Err(mut e) => e.take_result().expect("a failed run carries its result"),
            };
            state.run.status = RunStatus::Failed;
            state.run.pause = None;
            state.run.error = Some(RunError {
                code: error.code(),
                message: error.message().to_owned(),
                gateway: None,
            });
            Err(error.with_result(state))
        }
    }
}

/// The final status and events of a run: `Err(None)` = cancelled, `Err(Some(_))` = failed.
fn conclude(
    ctx: &RunCtx,
    mut state: RunResult,
    outcome: Result<(), Option<Failure>>,
) -> Result<RunResult, AgentError> {
    // A completed, stopped or paused run set its time when it ended (and may have been
    // saved with it): the result must be the stored state.
    if outcome.is_err() {
        state.run.updated_at = now_iso();
    }
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
            ctx.emitter.end_open_calls(RunStatus::Cancelled);
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
            ctx.emitter.end_open_calls(RunStatus::Failed);
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

/// Signs the state an agent with a `state_secret` produces (docs/behaviour.md §7).
fn sign(ctx: &RunCtx, mut state: RunResult) -> RunResult {
    state.signature = None;
    state.signed_content_altered = false;
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
