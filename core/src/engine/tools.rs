//! The tool phase: classify calls in call order, run automatic ones with bounded
//! concurrency, apply results in call order.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::Poll;

use futures::{FutureExt, StreamExt};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::nested::Waiting;
use super::{fail_in_step, Failure, RunCtx};
use crate::error::{AgentError, ErrorCode, ToolError};
use crate::events::{EventData, EventType};
use crate::json::{number_text, to_canonical_string};
use crate::limits::check_value;
use crate::model::ToolSpec;
use crate::next_turn::NextTurnParams;
use crate::state::{
    Message, PendingKind, PendingToolCall, RunResult, RunStatus, ToolCall, ToolCallCounts,
    ToolResult, Usage,
};
use crate::tool::{Approval, OnError, Tool};
use crate::tool_runtime::{PhaseShared, ToolRuntime};
use crate::tool_search::{found_ids, TOOL_SEARCH};
use crate::truncate::truncate_output;

/// A turn's calls, each with whether its arguments parsed: inline while there is one, so
/// that a turn of one call allocates no list for it.
pub(crate) type TurnCalls = smallvec::SmallVec<[(ToolCall, Result<(), String>); 1]>;

/// Collects a turn's calls: a list of many is collected as a `Vec` (the fastest way to fill
/// one of known length) and kept as it is.
pub(crate) fn turn_calls(
    calls: impl ExactSizeIterator<Item = (ToolCall, Result<(), String>)>,
) -> TurnCalls {
    if calls.len() <= 1 {
        calls.collect()
    } else {
        TurnCalls::from_vec(calls.collect())
    }
}

/// A phase's resolved calls, each with its position in the turn: held inline for one call,
/// so that a turn of one call allocates no list for its result.
pub(crate) type Resolutions = smallvec::SmallVec<[(usize, Resolved); 1]>;

/// How one call ended (for calls that did not pause).
pub(crate) struct Resolved {
    pub(crate) call_id: Arc<str>,
    pub(crate) tool_name: Arc<str>,
    pub(crate) outcome: Result<Value, String>,
    pub(crate) preliminary: Vec<Value>,
    pub(crate) context_update: Option<Value>,
    /// Boxed: rarely set, and it would make every resolved call larger.
    pub(crate) next_turn: Option<Box<NextTurnParams>>,
    /// An agent tool's nested run paused (docs/behaviour.md §18): the call waits too.
    pub(crate) nested_pause: Option<Box<RunResult>>,
}

impl Resolved {
    pub(crate) fn error(call: &ToolCall, message: String) -> Self {
        Resolved {
            call_id: call.id.clone(),
            tool_name: call.name.clone(),
            outcome: Err(message),
            preliminary: Vec::new(),
            context_update: None,
            next_turn: None,
            nested_pause: None,
        }
    }
}

/// Shared per step: ids and the context as of the start of the tool phase.
pub(crate) struct PhaseScope {
    pub(crate) step_index: usize,
    /// The run's ids, the step and the context as the phase began, for every call's runtime.
    pub(crate) phase: Arc<PhaseShared>,
    /// Cancelled when the run is, or (a phase of several calls) when one of its calls fails
    /// the run, to stop the others: a phase of one call shares the run's token, as nothing
    /// else would ever cancel its own (see [`PhaseScope::stop_others`]).
    /// Whether the phase's token is its own (a child of the run's).
    own_token: bool,
    /// The executor calls of the phase run one at a time (`ToolRuntime::runs_alone`).
    pub(crate) alone: std::sync::atomic::AtomicBool,
    /// What the phase's nested agent runs spent (docs/behaviour.md §18), added to the
    /// run's usage when the phase ends, whatever way it ends.
    usage: std::sync::Mutex<Usage>,
}

impl PhaseScope {
    /// The scope of a phase of `calls` calls.
    pub(crate) fn new(ctx: &RunCtx, state: &RunResult, step_index: usize, calls: usize) -> Self {
        let own_token = calls > 1;
        PhaseScope {
            step_index,
            phase: PhaseShared::with_token(
                ctx.emitter.ids.clone(),
                step_index,
                state.run.context.clone(),
                match own_token {
                    true => ctx.cancel.child_token(),
                    false => ctx.cancel.clone(),
                },
            ),
            own_token,
            alone: std::sync::atomic::AtomicBool::new(false),
            usage: std::sync::Mutex::new(Usage::default()),
        }
    }

    /// The scope of one call served over MCP (docs/behaviour.md §19): no step, no context;
    /// `alone` when the server runs one call at a time.
    pub(crate) fn served(ctx: &RunCtx, token: CancellationToken, alone: bool) -> Self {
        PhaseScope {
            step_index: 0,
            phase: PhaseShared::with_token(ctx.emitter.ids.clone(), 0, Value::Null, token),
            own_token: false,
            alone: std::sync::atomic::AtomicBool::new(alone),
            usage: std::sync::Mutex::new(Usage::default()),
        }
    }

    /// Stops the phase's other calls (one of them failed the run). Only a phase of several
    /// calls has others, and its own token to cancel.
    fn stop_others(&self) {
        debug_assert!(self.own_token, "only a phase of several calls has others");
        if self.own_token {
            self.token().cancel();
        }
    }

    /// The phase's cancellation token (the run's, or the phase's own child of it).
    pub(crate) fn token(&self) -> &CancellationToken {
        self.phase.token()
    }

    /// Counts a nested run's usage.
    pub(crate) fn add_usage(&self, usage: &Usage) {
        self.usage
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add(usage);
    }

    /// Adds the phase's nested usage to the run's.
    pub(crate) fn settle_usage(&self, state: &mut RunResult) {
        let usage = std::mem::take(&mut *self.usage.lock().unwrap_or_else(|e| e.into_inner()));
        state.run.usage.add(&usage);
    }

    /// A runtime for a call of `tool` (the call's tool: its annotations are the runtime's).
    pub(crate) fn runtime(
        &self,
        ctx: &RunCtx,
        tool: &Tool,
        call: &ToolCall,
        token: Option<CancellationToken>,
        accepts_progress: bool,
    ) -> ToolRuntime {
        self.runtime_for(ctx, tool, call.clone(), token, accepts_progress)
    }

    /// A runtime that takes the call (read it back with `ToolRuntime::tool_call`);
    /// cancelled with `token` when one is given, else with the phase or on its own.
    pub(crate) fn runtime_for(
        &self,
        ctx: &RunCtx,
        tool: &Tool,
        call: ToolCall,
        token: Option<CancellationToken>,
        accepts_progress: bool,
    ) -> ToolRuntime {
        let annotations = tool.annotations.clone();
        ToolRuntime::new(self.phase.clone(), call, token, accepts_progress)
            .with_annotations(annotations)
            .with_host_tag(ctx.host_tag)
    }
}

fn policy(ctx: &RunCtx, tool: Option<&Tool>) -> OnError {
    tool.and_then(|t| t.on_error)
        .or(ctx.settings.exec.on_error)
        .unwrap_or_default()
}

fn emit_failed(ctx: &RunCtx, scope: &PhaseScope, call: &ToolCall, message: &str) {
    ctx.emitter.call_ended(&call.id);
    ctx.emitter.emit(
        EventType::ToolFailed,
        Some(RunStatus::Running),
        Some(scope.step_index),
        || EventData::ToolFailed {
            tool_call_id: call.id.to_string(),
            tool_name: call.name.to_string(),
            error: message.to_owned(),
        },
    );
}

fn emit_completed(
    ctx: &RunCtx,
    scope: &PhaseScope,
    call_id: &str,
    tool_name: &str,
    output: &Value,
) {
    ctx.emitter.call_ended(call_id);
    ctx.emitter.emit(
        EventType::ToolCompleted,
        Some(RunStatus::Running),
        Some(scope.step_index),
        || EventData::ToolCompleted {
            tool_call_id: call_id.to_owned(),
            tool_name: tool_name.to_owned(),
            output: output.clone(),
            responded_by_human: false,
        },
    );
}

/// A failed call: `tool.failed`, then either the run fails or the model gets the error.
pub(crate) fn call_failed(
    ctx: &RunCtx,
    scope: &PhaseScope,
    tool: Option<&Tool>,
    call: &ToolCall,
    code: ErrorCode,
    message: String,
    preliminary: Vec<Value>,
) -> Result<Resolved, AgentError> {
    emit_failed(ctx, scope, call, &message);
    if let Some(t) = &ctx.trace {
        t.tool_ended(call, tool, Err((code, &message)));
    }
    match policy(ctx, tool) {
        OnError::FailRun => Err(AgentError::new(code, message)),
        OnError::ReturnToModel => Ok(Resolved {
            preliminary,
            ..Resolved::error(call, message)
        }),
    }
}

fn panic_text(tool: &Tool, p: &(dyn std::any::Any + Send)) -> String {
    format!("Tool {} panicked: {}", tool.id, crate::panic_message(p))
}

async fn guarded<T>(
    fut: impl std::future::Future<Output = Result<T, ToolError>>,
    tool: &Tool,
) -> Result<T, String> {
    guarded_error(fut, tool).await.map_err(|e| e.message)
}

/// Like [`guarded`], keeping the callback's error (an adapter's `invalid_output`).
async fn guarded_error<T>(
    fut: impl std::future::Future<Output = Result<T, ToolError>>,
    tool: &Tool,
) -> Result<T, ToolError> {
    match AssertUnwindSafe(fut).catch_unwind().await {
        Ok(r) => r,
        Err(p) => Err(ToolError::new(panic_text(tool, p.as_ref()))),
    }
}

/// A result that cannot be accepted: the run fails whatever `onError` says.
pub(crate) fn output_invalid(
    ctx: &RunCtx,
    scope: &PhaseScope,
    call: &ToolCall,
    m: String,
) -> AgentError {
    let message = format!("Invalid tool output: {m}");
    emit_failed(ctx, scope, call, &message);
    if let Some(t) = &ctx.trace {
        let tool = ctx.agent.tool(&call.name);
        t.tool_ended(call, tool, Err((ErrorCode::ToolOutputInvalid, &message)));
    }
    AgentError::new(ErrorCode::ToolOutputInvalid, message)
}

/// Checks a result's limits and `outputSchema` and collects its next-turn overrides: what every
/// call that produced a result goes through.
pub(crate) async fn accept_result(
    ctx: &RunCtx,
    scope: &PhaseScope,
    tool: &Tool,
    runtime: ToolRuntime,
    value: Value,
    mut preliminary: Vec<Value>,
) -> Result<Resolved, AgentError> {
    let call = runtime.tool_call();
    check_value(&value).map_err(|e| output_invalid(ctx, scope, call, e.to_string()))?;
    let (value, next_turn) = if tool.output_schema.is_none() && tool.next_turn_params.is_none() {
        // Nothing to await: no future of the checks in every call's future.
        (value, None)
    } else {
        match Box::pin(settled_checks(
            ctx,
            scope,
            tool,
            &runtime,
            value,
            &mut preliminary,
        ))
        .await
        {
            Ok(checked) => checked,
            Err(ended) => return ended,
        }
    };
    if let Some(t) = &ctx.trace {
        t.tool_ended(call, Some(tool), Ok(&value));
    }
    emit_completed(ctx, scope, &call.id, &call.name, &value);
    let context_update = runtime.take_context_update();
    let (call_id, tool_name) = runtime.into_id_and_name();
    Ok(Resolved {
        call_id,
        tool_name,
        outcome: Ok(value),
        preliminary,
        context_update,
        next_turn,
        nested_pause: None,
    })
}

/// [`awaited_checks`] with its refusals settled: `Err` is how the call ends (the run fails
/// for an output `outputSchema` refused; the call failed, with its `preliminary` values,
/// when its next-turn overrides could not be resolved).
pub(crate) async fn settled_checks(
    ctx: &RunCtx,
    scope: &PhaseScope,
    tool: &Tool,
    runtime: &ToolRuntime,
    value: Value,
    preliminary: &mut Vec<Value>,
) -> Result<(Value, Option<Box<NextTurnParams>>), Result<Resolved, AgentError>> {
    let call = runtime.tool_call();
    awaited_checks(tool, call, runtime, value)
        .await
        .map_err(|refused| match refused {
            Refused::Invalid(m) => Err(output_invalid(ctx, scope, call, m)),
            Refused::Failed(m) => call_failed(
                ctx,
                scope,
                Some(tool),
                call,
                ErrorCode::ToolFailed,
                m,
                std::mem::take(preliminary),
            ),
        })
}

/// Why [`awaited_checks`] refused a result.
enum Refused {
    /// The `outputSchema` refused it (its message): the run fails.
    Invalid(String),
    /// The next-turn overrides could not be resolved: the call failed.
    Failed(String),
}

/// A result's `outputSchema` check and next-turn overrides, for a tool that has either.
async fn awaited_checks(
    tool: &Tool,
    call: &ToolCall,
    runtime: &ToolRuntime,
    value: Value,
) -> Result<(Value, Option<Box<NextTurnParams>>), Refused> {
    let value = match &tool.output_schema {
        None => value,
        Some(v) => guarded(v.validate(value), tool)
            .await
            .map_err(Refused::Invalid)?,
    };
    let next_turn = match &tool.next_turn_params {
        None => None,
        Some(source) => Some(Box::new(
            guarded(source.resolve(&call.input, runtime), tool)
                .await
                .map_err(Refused::Failed)?,
        )),
    };
    Ok((value, next_turn))
}

/// Where a call goes after classification.
pub(crate) enum Plan {
    Done(Resolved),
    Pending(PendingToolCall),
    Execute(ToolCall),
}

/// What a call's classification decides without awaiting anything: its plan, or the
/// tool whose input validator, `onToolCalled` hook or approval rule must be awaited first.
enum Checked<'a> {
    Planned(Plan),
    Awaits(ToolCall, &'a Tool),
}

/// Classifies a call (docs/behaviour.md §3.1, step 4): unknown tool, invalid input,
/// interactive, needs approval, manual or automatic.
/// `known`: the agent's tool of the call's name, if any (looked up once by the caller).
pub(crate) async fn classify<'a>(
    ctx: &'a RunCtx,
    scope: &PhaseScope,
    known: Option<&'a Tool>,
    call: ToolCall,
    args: Result<(), String>,
    offered: &Arc<Vec<ToolSpec>>,
) -> Result<Plan, AgentError> {
    match check_call(ctx, scope, known, call, args, offered)? {
        Checked::Planned(plan) => Ok(plan),
        // On the heap: this future stays a few words for the calls decided above, and a
        // turn of many calls moves it once per call.
        Checked::Awaits(call, tool) => Box::pin(classify_awaited(ctx, scope, call, tool)).await,
    }
}

/// The part of [`classify`] that awaits nothing: most calls end here, their plan needing
/// no callback.
fn check_call<'a>(
    ctx: &'a RunCtx,
    scope: &PhaseScope,
    known: Option<&'a Tool>,
    call: ToolCall,
    args: Result<(), String>,
    offered: &Arc<Vec<ToolSpec>>,
) -> Result<Checked<'a>, AgentError> {
    // Every tool is offered unless the turn narrowed the list (`activeTools`, next-turn
    // `tools`): then a call to a tool left out is as unknown as a made-up name.
    // A deferred tool is offered only once loaded (docs/behaviour.md §17).
    let offered = (Arc::ptr_eq(offered, &ctx.agent.tool_specs)
        && !known.is_some_and(Tool::is_deferred))
        || offered.iter().any(|s| s.id == *call.name);
    let Some(tool) = known.filter(|_| offered) else {
        let message = if known.is_some() {
            format!("Unknown tool '{}' (not offered in this turn)", call.name)
        } else {
            format!("Unknown tool '{}'", call.name)
        };
        return call_failed(
            ctx,
            scope,
            None,
            &call,
            ErrorCode::UnknownTool,
            message,
            vec![],
        )
        .map(|r| Checked::Planned(Plan::Done(r)));
    };
    let checked = args.and_then(|()| tool.check_input(&call.input));
    if let Err(e) = checked {
        return invalid_input(ctx, scope, tool, &call, e).map(Checked::Planned);
    }
    let awaits = tool.input_schema.is_some()
        || tool.on_tool_called.is_some()
        || ctx.agent.def.require_approval.is_some()
        || matches!(tool.approval, Approval::Predicate(_));
    if awaits {
        return Ok(Checked::Awaits(call, tool));
    }
    let needs_approval = matches!(tool.approval, Approval::Always);
    decided(ctx, scope, tool, call, Ok(needs_approval)).map(Checked::Planned)
}

/// A call whose input its tool refuses: a failed result, or the run fails (`onError`).
fn invalid_input(
    ctx: &RunCtx,
    scope: &PhaseScope,
    tool: &Tool,
    call: &ToolCall,
    message: String,
) -> Result<Plan, AgentError> {
    call_failed(
        ctx,
        scope,
        Some(tool),
        call,
        ErrorCode::ToolInputInvalid,
        format!("Invalid tool input: {message}"),
        vec![],
    )
    .map(Plan::Done)
}

/// Where a call goes once whether it needs approval is known (an approval rule that threw:
/// a failed result).
fn decided(
    ctx: &RunCtx,
    scope: &PhaseScope,
    tool: &Tool,
    call: ToolCall,
    needs_approval: Result<bool, String>,
) -> Result<Plan, AgentError> {
    match needs_approval {
        Err(m) => call_failed(
            ctx,
            scope,
            Some(tool),
            &call,
            ErrorCode::ToolFailed,
            m,
            vec![],
        )
        .map(Plan::Done),
        Ok(true) => Ok(pending(call, PendingKind::Approval)),
        Ok(false) if tool.executor.is_none() => Ok(pending(call, PendingKind::Manual)),
        Ok(false) => Ok(Plan::Execute(call)),
    }
}

/// The rest of [`classify`] for a call that [`check_call`] could not decide alone.
async fn classify_awaited(
    ctx: &RunCtx,
    scope: &PhaseScope,
    call: ToolCall,
    tool: &Tool,
) -> Result<Plan, AgentError> {
    let call = match &tool.input_schema {
        None => call,
        Some(validator) => {
            let mut input = Value::clone(&call.input);
            if let Some(loose) = &tool.loose_parameters {
                // A strict tool's generated schema asked for null where the type has a
                // default (docs/behaviour.md §20): the host type decodes it as left out.
                crate::strict_schema::drop_strict_nulls(&mut input, loose);
            }
            let input = match guarded(validator.validate(input), tool).await {
                Ok(v) => v,
                Err(e) => return invalid_input(ctx, scope, tool, &call, e),
            };
            ToolCall {
                input: Arc::new(input),
                ..call
            }
        }
    };
    if let Some(hook) = &tool.on_tool_called {
        let token = scope.token().child_token();
        let runtime = scope.runtime(ctx, tool, &call, Some(token.clone()), false);
        // `timeoutMs` bounds the hook like an executor: it is the tool's work.
        let answered = within(
            tool.timeout,
            &token,
            std::pin::pin!(guarded_error(
                hook.on_tool_called(Value::clone(&call.input), runtime.clone()),
                tool,
            )),
        )
        .await;
        let Some(answered) = answered else {
            token.cancel();
            return call_failed(
                ctx,
                scope,
                Some(tool),
                &call,
                ErrorCode::ToolTimeout,
                timeout_message(tool),
                vec![],
            )
            .map(Plan::Done);
        };
        return match answered {
            Ok(None) => Ok(pending(call, PendingKind::Hitl)),
            Ok(Some(value)) => accept_result(ctx, scope, tool, runtime, value, vec![])
                .await
                .map(Plan::Done),
            Err(e) if e.is_invalid_output() => Err(output_invalid(ctx, scope, &call, e.message)),
            Err(e) => call_failed(
                ctx,
                scope,
                Some(tool),
                &call,
                ErrorCode::ToolFailed,
                e.message,
                vec![],
            )
            .map(Plan::Done),
        };
    }
    let needs_approval = match (&ctx.agent.def.require_approval, &tool.approval) {
        (Some(agent_rule), _) => {
            let runtime = scope.runtime(ctx, tool, &call, None, false);
            guarded(agent_rule.requires_approval(&call.input, &runtime), tool).await
        }
        (None, Approval::Never) => Ok(false),
        (None, Approval::Always) => Ok(true),
        (None, Approval::Predicate(p)) => {
            let runtime = scope.runtime(ctx, tool, &call, None, false);
            guarded(p.requires_approval(&call.input, &runtime), tool).await
        }
    };
    decided(ctx, scope, tool, call, needs_approval)
}

fn pending(call: ToolCall, kind: PendingKind) -> Plan {
    Plan::Pending(PendingToolCall {
        call,
        kind,
        reason: kind.reason().to_owned(),
    })
}

/// How one attempt of an executor ended.
enum Attempt {
    /// It returned a value.
    Returned(Value),
    /// It returned a value that cannot cross from the host (`tool_output_invalid`).
    InvalidOutput(String),
    /// It threw, panicked or timed out: retried while attempts are left.
    Failed(ErrorCode, String),
}

/// Runs one call's executor: timeout, progress, cancellation, panics, retries (the tool's
/// `retry`: a thrown or timed-out attempt runs again after `backoff × attempt`, with
/// `tool.retrying` before it; docs/behaviour.md §15), error policy. `input_edited`: the
/// call's input is a person's edit on approval (docs/behaviour.md §14).
pub(crate) async fn execute_call(
    ctx: &RunCtx,
    scope: &PhaseScope,
    call: ToolCall,
    input_edited: bool,
) -> Result<Resolved, AgentError> {
    let tool = ctx
        .agent
        .tool(&call.name)
        .expect("classified calls name known tools");
    execute_known(ctx, scope, tool, call, input_edited).await
}

/// [`execute_call`] for a caller that holds the call's tool already (`tool`: the agent's
/// tool of the call's name).
async fn execute_known(
    ctx: &RunCtx,
    scope: &PhaseScope,
    tool: &Tool,
    call: ToolCall,
    input_edited: bool,
) -> Result<Resolved, AgentError> {
    ctx.emitter.emit(
        EventType::ToolStarted,
        Some(RunStatus::Running),
        Some(scope.step_index),
        || EventData::ToolStarted {
            tool_call_id: call.id.to_string(),
            tool_name: call.name.to_string(),
            input_edited,
        },
    );
    ctx.emitter
        .call_started(&call.id, &call.name, scope.step_index);
    if let Some(t) = &ctx.trace {
        t.tool_started(&call, Some(tool));
    }
    if let Some(nested) = &tool.nested {
        // Boxed: an agent tool's state would make every call's future larger, and a
        // turn's calls are moved into the set that runs them.
        return Box::pin(super::nested::execute(ctx, scope, tool, nested, call)).await;
    }
    let attempts = tool.retry.map_or(1, |r| r.max_attempts.max(1));
    let mut preliminary = Vec::new();
    let mut call = Some(call);
    let mut attempt = 1;
    loop {
        // The last attempt takes the call itself: a tool without retries copies nothing.
        let this_call = match attempt < attempts {
            true => call.clone(),
            false => call.take(),
        }
        .expect("the call is kept until its last attempt");
        // The attempt is cancelled through its runtime (its own token is made only when
        // something asks for it).
        let runtime = scope
            .runtime_for(ctx, tool, this_call, None, true)
            .with_attempt(attempt)
            .with_alone(scope.alone.load(std::sync::atomic::Ordering::Relaxed));
        let outcome = run_attempt(ctx, scope, tool, &runtime, &mut preliminary).await?;
        let call = runtime.tool_call();
        let (code, message) = match outcome {
            Attempt::Returned(value) => {
                return accept_result(ctx, scope, tool, runtime, value, preliminary).await
            }
            Attempt::InvalidOutput(message) => {
                return Err(output_invalid(ctx, scope, call, message))
            }
            Attempt::Failed(code, message) => (code, message),
        };
        if attempt >= attempts || scope.token().is_cancelled() {
            return call_failed(ctx, scope, Some(tool), call, code, message, preliminary);
        }
        attempt += 1;
        ctx.emitter.emit(
            EventType::ToolRetrying,
            Some(RunStatus::Running),
            Some(scope.step_index),
            || EventData::ToolRetrying {
                tool_call_id: call.id.to_string(),
                tool_name: call.name.to_string(),
                attempt,
                error: message.clone(),
            },
        );
        // Saturating: a backoff of u64::MAX ms times many attempts is a very long wait, not a panic.
        let backoff = tool
            .retry
            .map_or(std::time::Duration::ZERO, |r| r.backoff)
            .saturating_mul(attempt - 1);
        tokio::select! {
            biased;
            _ = scope.token().cancelled() => {
                return call_failed(ctx, scope, Some(tool), call, code, message, preliminary);
            }
            _ = tokio::time::sleep(backoff) => {}
        }
    }
}

/// One attempt of a call's executor, under the tool's timeout, with its progress checked.
async fn run_attempt(
    ctx: &RunCtx,
    scope: &PhaseScope,
    tool: &Tool,
    runtime: &ToolRuntime,
    preliminary: &mut Vec<Value>,
) -> Result<Attempt, AgentError> {
    let executor = tool
        .executor
        .as_ref()
        .expect("automatic calls have executors");
    // The executor and the checks of its progress values run under the deadline: at the
    // deadline all of it is dropped at once, so neither a slow executor nor a slow
    // `eventSchema` holds the run, and progress values still queued are discarded.
    let finished = {
        let work = async {
            // Dropped with this future, however it ends (a timeout or a dropped run too).
            let _forget = ForgetWaker(runtime);
            let exec = AssertUnwindSafe(executor.execute_call(runtime.clone())).catch_unwind();
            tokio::pin!(exec);
            let finished = loop {
                // Progress first: values reported before the result are delivered before it.
                let next = std::future::poll_fn(|cx| match runtime.poll_progress(cx) {
                    Poll::Ready(()) => Poll::Ready(None),
                    Poll::Pending => exec.as_mut().poll(cx).map(Some),
                })
                .await;
                if let Some(r) = next {
                    break r;
                }
                for value in runtime.take_progress() {
                    // On the heap: most calls report no progress, and every call's
                    // future is as large as its largest part.
                    Box::pin(progress(ctx, scope, tool, runtime, value, preliminary)).await?;
                }
            };
            runtime.close_progress();
            for value in runtime.take_progress() {
                Box::pin(progress(ctx, scope, tool, runtime, value, preliminary)).await?;
            }
            Ok::<_, AgentError>(finished)
        };
        within(tool.timeout, runtime, std::pin::pin!(work)).await
    };
    runtime.close_progress();
    Ok(match finished.transpose()? {
        None => {
            runtime.cancel();
            Attempt::Failed(ErrorCode::ToolTimeout, timeout_message(tool))
        }
        Some(Ok(Ok(value))) => Attempt::Returned(value),
        Some(Ok(Err(e))) if e.is_invalid_output() => Attempt::InvalidOutput(e.message),
        Some(Ok(Err(e))) => Attempt::Failed(e.code(), e.message),
        Some(Err(p)) => Attempt::Failed(ErrorCode::ToolFailed, panic_text(tool, p.as_ref())),
    })
}

/// Makes a call's runtime forget the run loop's waker when the wait for the call ends or is
/// dropped (see `ToolRuntime::forget_waker`).
struct ForgetWaker<'a>(&'a ToolRuntime);

impl Drop for ForgetWaker<'_> {
    fn drop(&mut self) {
        self.0.forget_waker();
    }
}

/// What [`within`] cancels when its time is up: a token, or a call's runtime.
pub(crate) trait Cancel {
    /// Cancels it.
    fn cancel(&self);
}

impl Cancel for CancellationToken {
    fn cancel(&self) {
        CancellationToken::cancel(self);
    }
}

impl Cancel for ToolRuntime {
    fn cancel(&self) {
        ToolRuntime::cancel(self);
    }
}

/// Runs `work` to its end, or until `limit` elapses: then `token` is cancelled first (so
/// the work is told why it stops) and the result is `None`; the caller drops `work`.
/// `work` is pinned by the caller, so that this future holds a reference and not a second
/// copy of it: a turn's calls are moved into the set that runs them, and a smaller future
/// is a cheaper move.
///
/// A result first seen past the deadline is late, and discarded as the timer would have
/// it (docs/behaviour.md §2.2): a synchronous executor that blocked the thread which also
/// drives the run (Node's one JavaScript thread) hands its result over in the same turn
/// of that thread as the timer's wake-up, and which of the two is seen first must not
/// decide the outcome.
pub(crate) async fn within<F: std::future::Future>(
    limit: Option<std::time::Duration>,
    token: &impl Cancel,
    mut work: std::pin::Pin<&mut F>,
) -> Option<F::Output> {
    // A limit too far for the clock (docs/behaviour.md §2.2: up to 2^64 − 1 ms) is none.
    let Some(deadline) = limit.and_then(|limit| tokio::time::Instant::now().checked_add(limit))
    else {
        return Some(work.await);
    };
    let on_time = tokio::select! {
        biased;
        r = work.as_mut() => (tokio::time::Instant::now() < deadline).then_some(r),
        _ = tokio::time::sleep_until(deadline) => None,
    };
    if on_time.is_none() {
        token.cancel();
    }
    on_time
}

/// `Tool <id> timed out after <ms>ms`.
pub(crate) fn timeout_message(tool: &Tool) -> String {
    let ms = tool
        .timeout
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0);
    format!("Tool {} timed out after {}ms", tool.id, number_text(ms))
}

async fn progress(
    ctx: &RunCtx,
    scope: &PhaseScope,
    tool: &Tool,
    runtime: &ToolRuntime,
    value: Result<Value, String>,
    preliminary: &mut Vec<Value>,
) -> Result<(), AgentError> {
    let call = runtime.tool_call();
    let invalid = |m: String| {
        runtime.cancel();
        let message = format!("Invalid tool event: {m}");
        emit_failed(ctx, scope, call, &message);
        if let Some(t) = &ctx.trace {
            t.tool_ended(
                call,
                Some(tool),
                Err((ErrorCode::ToolEventInvalid, &message)),
            );
        }
        AgentError::new(ErrorCode::ToolEventInvalid, message)
    };
    let value = value.map_err(&invalid)?;
    check_value(&value).map_err(|e| invalid(e.to_string()))?;
    let value = match &tool.event_schema {
        None => value,
        Some(v) => guarded(v.validate(value), tool).await.map_err(invalid)?,
    };
    ctx.emitter.emit(
        EventType::ToolPreliminaryResult,
        None,
        Some(scope.step_index),
        || EventData::ToolPreliminary {
            tool_call_id: call.id.to_string(),
            tool_name: call.name.to_string(),
            result: value.clone(),
        },
    );
    preliminary.push(value);
    Ok(())
}

/// Runs calls with at most `concurrency` at once; results come back indexed. The first
/// fatal error cancels the others and is returned.
pub(crate) async fn run_concurrently<F, Fut>(
    scope: &PhaseScope,
    concurrency: usize,
    jobs: Vec<(usize, F)>,
) -> Result<Resolutions, AgentError>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<Resolved, AgentError>>,
{
    let mut out = Resolutions::with_capacity(jobs.len());
    if concurrency <= 1 || jobs.len() <= 1 {
        scope
            .alone
            .store(true, std::sync::atomic::Ordering::Relaxed);
        for (i, job) in jobs {
            // Boxed, as below: inline, the largest job's future would be part of every
            // caller's future (a continue's whole future among them).
            out.push((i, Box::pin(job()).await?));
        }
        return Ok(out);
    }
    // Each call's future is built on the heap when it is first polled: the set that runs
    // them moves every entry into an allocation of its own, and a call's future is over a
    // kilobyte, while the job that makes it is a few words.
    let mut running = futures::stream::iter(
        jobs.into_iter()
            .map(|(i, job)| async move { (i, Box::pin(job()).await) }),
    )
    .buffer_unordered(concurrency);
    while let Some((i, r)) = running.next().await {
        match r {
            Ok(resolved) => out.push((i, resolved)),
            Err(e) => {
                scope.stop_others();
                return Err(e);
            }
        }
    }
    Ok(out)
}

/// Tool message content: strings verbatim, other values as canonical JSON, truncated to
/// `maxOutputChars`.
pub(crate) fn message_content(ctx: &RunCtx, outcome: &Result<Value, String>) -> String {
    let content = match outcome {
        Ok(Value::String(s)) => s.clone(),
        Ok(v) => to_canonical_string(v),
        Err(message) => to_canonical_string(&json!({ "error": message })),
    };
    match ctx.settings.exec.max_output_chars {
        Some(max) => truncate_output(content, max),
        None => content,
    }
}

/// Applies resolved calls in call order: tool messages, tool results, context
/// replacements and next-turn overrides.
pub(crate) fn apply(ctx: &RunCtx, state: &mut RunResult, mut resolved: Resolutions) {
    resolved.sort_by_key(|(i, _)| *i);
    let step = state
        .step_results
        .last_mut()
        .expect("a tool phase follows a step");
    state.run.messages.reserve(resolved.len());
    step.tool_results.reserve(resolved.len());
    for (_, r) in resolved {
        let content = message_content(ctx, &r.outcome);
        state.run.messages.push(Message::tool(
            &r.call_id,
            &r.tool_name,
            content,
            r.outcome.is_err(),
        ));
        let (result, error) = match r.outcome {
            Ok(v) => (Some(v), None),
            Err(e) => (None, Some(e)),
        };
        let tool_result = ToolResult {
            tool_call_id: r.call_id,
            tool_name: r.tool_name,
            result,
            preliminary_results: r.preliminary,
            error,
            input: None,
            original_input: None,
            next_turn_params: r.next_turn.clone(),
        };
        if ctx.emitter.is_streaming() {
            let item = crate::state::Item::of_tool_result(&tool_result);
            ctx.emitter
                .emit(EventType::ResponseItem, None, Some(step.step_index), || {
                    EventData::Item { item }
                });
        }
        if let (Some(v), Some(_)) = (&tool_result.result, &ctx.agent.search) {
            if &*tool_result.tool_name == TOOL_SEARCH {
                load_found(ctx, &mut state.run.loaded_tools, v);
            }
        }
        step.tool_results.push(tool_result);
        if let Some(context) = r.context_update {
            state.run.context = context;
        }
        if let Some(next) = r.next_turn {
            state
                .run
                .next_turn_params
                .get_or_insert_with(NextTurnParams::default)
                .merge(*next);
        }
    }
}

/// Ends the records of the last step's next-turn overrides (the step is done): with
/// `merged`, the run's overrides become those of the step's calls merged in call order
/// (docs/behaviour.md §2.6), whichever were resolved before a pause and whichever on
/// continue.
pub(crate) fn settle_next_turn(state: &mut RunResult, merged: bool) {
    let Some(step) = state.step_results.last_mut() else {
        return;
    };
    let records = step
        .tool_results
        .iter_mut()
        .filter_map(|r| r.next_turn_params.take());
    if merged {
        state.run.next_turn_params = records.fold(None, |all, next| {
            let mut all = all.unwrap_or_default();
            all.merge(*next);
            Some(all)
        });
    } else {
        records.for_each(drop);
    }
}

/// Loads the deferred tools a `tool_search` result found, once each, in its order
/// (docs/behaviour.md §17).
fn load_found(ctx: &RunCtx, loaded: &mut Vec<String>, result: &Value) {
    for id in found_ids(result) {
        if ctx.agent.is_deferred(id) && !loaded.iter().any(|l| l == id) {
            loaded.push(id.to_owned());
        }
    }
}

/// Why a call would go beyond a budget of the run (docs/behaviour.md §15): its tool's
/// `maxCalls` (`tool`: the agent's tool of the call's name), then
/// `toolExecution.maxToolCalls`; `None` admits it.
pub(crate) fn over_budget(
    ctx: &RunCtx,
    counts: &ToolCallCounts,
    tool: Option<&Tool>,
    call: &ToolCall,
) -> Option<String> {
    if let Some(max) = tool.and_then(|t| t.max_calls) {
        if counts.of(&call.name) >= max as usize {
            return Some(format!(
                "Tool {} may be called at most {max} times in a run",
                call.name
            ));
        }
    }
    match ctx.settings.exec.max_tool_calls {
        Some(max) if counts.total >= max => {
            Some(format!("A run may make at most {max} tool calls"))
        }
        _ => None,
    }
}

/// A call refused by a budget: not validated, approved or executed; `tool.failed`, and the
/// model sees the error whatever `onError` says (the step goes on).
pub(crate) fn refused_by_budget(
    ctx: &RunCtx,
    scope: &PhaseScope,
    call: &ToolCall,
    message: String,
) -> Resolved {
    emit_failed(ctx, scope, call, &message);
    if let Some(t) = &ctx.trace {
        let tool = ctx.agent.tool(&call.name);
        t.tool_ended(call, tool, Err((ErrorCode::ToolFailed, &message)));
    }
    Resolved::error(call, message)
}

/// The tool phase of a step. Returns the calls that wait (none: no pause).
pub(crate) async fn tool_phase(
    ctx: &RunCtx,
    state: &mut RunResult,
    index: usize,
    calls: TurnCalls,
    offered: &Arc<Vec<ToolSpec>>,
) -> Result<Waiting, Failure> {
    let scope = PhaseScope::new(ctx, state, index, calls.len());
    let mut done = Resolutions::new();
    let mut waiting = Waiting::default();
    let mut execute = smallvec::SmallVec::<[_; 1]>::with_capacity(calls.len());
    for (i, (call, args)) in calls.into_iter().enumerate() {
        let known = ctx.agent.tool(&call.name);
        if let Some(message) = over_budget(ctx, &state.run.tool_call_counts, known, &call) {
            done.push((i, refused_by_budget(ctx, &scope, &call, message)));
            continue;
        }
        state.run.tool_call_counts.admit(&call.name);
        match classify(ctx, &scope, known, call, args, offered)
            .await
            .map_err(fail_in_step(index))?
        {
            Plan::Done(r) => done.push((i, r)),
            Plan::Pending(p) => waiting.calls.push((i, p)),
            Plan::Execute(call) => {
                execute.push((i, call, known.expect("classified calls name known tools")))
            }
        }
    }
    let executed = if execute.len() == 1 {
        // A lone call runs here, as `run_concurrently` would run it, without a list of one
        // job to build for it (every sequential turn would allocate it).
        scope
            .alone
            .store(true, std::sync::atomic::Ordering::Relaxed);
        let (i, call, tool) = execute.pop().expect("one call");
        execute_known(ctx, &scope, tool, call, false)
            .await
            .map(|r| smallvec::smallvec![(i, r)])
    } else {
        let scope_ref = &scope;
        let jobs = execute
            .into_iter()
            .map(|(i, call, tool)| (i, move || execute_known(ctx, scope_ref, tool, call, false)))
            .collect();
        run_concurrently(&scope, ctx.settings.exec.concurrency(), jobs).await
    };
    scope.settle_usage(state);
    let mut executed = executed.map_err(fail_in_step(index))?;
    waiting.take_paused(&mut executed);
    if done.is_empty() {
        done = executed;
    } else {
        done.extend(executed);
    }
    apply(ctx, state, done);
    Ok(waiting)
}
