//! Continuing a paused run (docs/behaviour.md §4): the refusal checks, in order, then the decided calls.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;

use super::tools::{self, accept_result, call_failed, PhaseScope, Resolved};
use super::{fail_in_step, Failure, RunCtx, Start};
use crate::checked_agent::AgentInner;
use crate::error::{AgentError, ErrorCode};
use crate::events::{EventData, EventType};
use crate::options::ContinueOptions;
use crate::state::{
    nested_state_invalid, Message, Pause, PauseKind, PendingKind, PendingToolCall, RunResult,
    RunStatus, ToolCall, STATE_VERSION,
};
use crate::tool::Tool;

/// What to do with each pending call, in pause order.
pub(crate) enum Decision {
    Reject(String),
    /// Run the executor; with a person's edited input (docs/behaviour.md §14).
    Execute(Option<Value>),
    /// Take a supplied output (a manual or hitl call); for a manual tool's approval, with
    /// the person's edited input (docs/behaviour.md §14).
    Supply(Value, Option<Value>),
    /// A person's answer in the tool's place: the tool never runs.
    Respond(Value),
    /// Continue the paused nested run of an agent tool's call (docs/behaviour.md §18)
    /// with the decisions for its calls.
    Nested(Box<RunResult>),
}

pub(crate) struct ResumePlan {
    review_pause: bool,
    decisions: Vec<(PendingToolCall, Decision)>,
}

/// What the first checks of a continue found (docs/behaviour.md §4 items 1 to 5 and the
/// checks of §14), for the checks after them.
struct Given<'a> {
    pause: &'a Pause,
    pending: HashMap<&'a str, &'a PendingToolCall>,
    approvals: Vec<&'a str>,
    rejected: HashMap<&'a str, Option<&'a String>>,
    responses: HashMap<&'a str, &'a Value>,
}

/// The paused nested run that a pending call id belongs to: the outer call id, the rest
/// of the id, and the nested run's state (`None`: a call of this run itself).
fn nested_run_of<'a>(state: &'a RunResult, id: &'a str) -> Option<(&'a str, &'a str, &'a Value)> {
    let pause = state.run.pause.as_ref()?;
    pause.nested_runs.iter().find_map(|(outer, value)| {
        let rest = id.strip_prefix(outer.as_str())?.strip_prefix('/')?;
        Some((outer.as_str(), rest, value))
    })
}

/// The agent tool of the paused step's call `outer` and its nested run's state.
fn nested_parts(
    agent: &AgentInner,
    state: &RunResult,
    outer: &str,
    value: &Value,
) -> Result<(Arc<AgentInner>, RunResult), AgentError> {
    let name = state
        .step_results
        .last()
        .and_then(|s| s.tool_calls.iter().find(|c| *c.id == *outer))
        .map(|c| &*c.name)
        .unwrap_or_default();
    let Some(nested) = agent.tool(name).and_then(|t| t.nested.as_ref()) else {
        return Err(nested_state_invalid(
            outer,
            format!("tool '{name}' is not an agent tool of this agent"),
        ));
    };
    let inner = RunResult::from_value(value.clone())
        .map_err(|e| nested_state_invalid(outer, e.message()))?;
    // A nested agent that signs its states checks this one before anything runs: the
    // outer continue is refused (not the call failed once running).
    if !nested.agent.def.state_secrets.is_empty() {
        crate::signing::verify(&nested.agent.def.state_secrets, &inner)
            .map_err(|e| nested_state_invalid(outer, e.message()))?;
    }
    if inner.run.agent_id != nested.agent.def.id {
        return Err(nested_state_invalid(
            outer,
            format!(
                "it belongs to {}, not {}",
                inner.run.agent_id, nested.agent.def.id
            ),
        ));
    }
    Ok((nested.agent.clone(), inner))
}

/// The tool a pending call is for, following nested runs (docs/behaviour.md §18);
/// `None`: the tool is not defined.
fn pending_tool(
    agent: &AgentInner,
    state: &RunResult,
    id: &str,
    name: &str,
) -> Result<Option<Tool>, AgentError> {
    match nested_run_of(state, id) {
        None => Ok(agent.tool(name).cloned()),
        Some((outer, rest, value)) => {
            let (nested, inner) = nested_parts(agent, state, outer, value)?;
            pending_tool(&nested, &inner, rest, name)
        }
    }
}

/// Each paused nested run's calls must be exactly those the outer pause lists under its
/// call id: stored data cannot add, drop or change a nested decision.
fn check_nested_runs(agent: &AgentInner, state: &RunResult) -> Result<(), AgentError> {
    let Some(pause) = state.run.pause.as_ref() else {
        return Ok(());
    };
    for (outer, value) in &pause.nested_runs {
        let (_, inner) = nested_parts(agent, state, outer, value)?;
        let listed: Vec<&PendingToolCall> = pause
            .pending_tool_calls
            .iter()
            .filter(|p| nested_run_of(state, &p.call.id).is_some_and(|(o, _, _)| o == outer))
            .collect();
        let surfaced = super::nested::surfaced(outer, &inner);
        if inner.run.status != RunStatus::WaitingForHuman
            || listed.len() != surfaced.len()
            || listed.iter().zip(&surfaced).any(|(a, b)| *a != b)
        {
            return Err(nested_state_invalid(
                outer,
                "its pending calls are not the ones the pause lists",
            ));
        }
    }
    Ok(())
}

/// The checks of a continue up to "every id given is pending" (docs/behaviour.md §4), then
/// those of §14 but the edited inputs' validity: `None` for a review pause, which needs no
/// more.
fn check_given<'a>(
    agent: &AgentInner,
    state: &'a RunResult,
    options: &'a ContinueOptions,
) -> Result<Option<Given<'a>>, AgentError> {
    let _ = STATE_VERSION;
    state.check_consistency()?;
    if !agent.def.state_secrets.is_empty() {
        crate::signing::verify(&agent.def.state_secrets, state)?;
    }
    let run = &state.run;
    if run.agent_id != agent.def.id {
        return Err(AgentError::continue_invalid(format!(
            "Cannot continue run {} with agent {}; it belongs to {}",
            run.id, agent.def.id, run.agent_id
        )));
    }
    let pause = match (&run.pause, run.status) {
        (Some(p), RunStatus::WaitingForHuman) => p,
        _ => {
            return Err(AgentError::continue_invalid(format!(
                "Run {} is not waiting for human input",
                run.id
            )))
        }
    };
    if pause.kind == PauseKind::HumanReview {
        if options.human_input.is_none() {
            return Err(AgentError::continue_invalid(format!(
                "Run {} is waiting for human input",
                run.id
            )));
        }
        if let Some(id) = options
            .approvals
            .iter()
            .chain(&options.rejections)
            .map(|d| &d.tool_call_id)
            .chain(options.tool_outputs.iter().map(|o| &o.tool_call_id))
            .chain(options.responses.iter().map(|o| &o.tool_call_id))
            .next()
        {
            return Err(AgentError::continue_invalid(format!(
                "Unknown tool call {id}"
            )));
        }
        return Ok(None);
    }
    check_nested_runs(agent, state)?;
    let pending: HashMap<&str, &PendingToolCall> = pause
        .pending_tool_calls
        .iter()
        .map(|p| (&*p.call.id, p))
        .collect();
    for id in options
        .approvals
        .iter()
        .chain(&options.rejections)
        .map(|d| &d.tool_call_id)
        .chain(options.tool_outputs.iter().map(|o| &o.tool_call_id))
        .chain(options.responses.iter().map(|o| &o.tool_call_id))
    {
        if !pending.contains_key(id.as_str()) {
            return Err(AgentError::continue_invalid(format!(
                "Unknown tool call {id}"
            )));
        }
    }
    // docs/behaviour.md §14: an edit or an answer is for a call waiting for approval, and a
    // call has one decision (these checks come right after "every id given is pending").
    for id in options
        .approvals
        .iter()
        .filter(|d| d.edited_input.is_some())
        .map(|d| &d.tool_call_id)
        .chain(options.responses.iter().map(|o| &o.tool_call_id))
    {
        if pending
            .get(id.as_str())
            .is_some_and(|p| p.kind != PendingKind::Approval)
        {
            return Err(AgentError::continue_invalid(format!(
                "Tool call {id} is not waiting for approval"
            )));
        }
    }
    let approvals = once_each(options.approvals.iter().map(|d| d.tool_call_id.as_str()))?;
    let rejected: HashMap<&str, Option<&String>> =
        once_each(options.rejections.iter().map(|d| d.tool_call_id.as_str()))?
            .into_iter()
            .zip(options.rejections.iter().map(|d| d.reason.as_ref()))
            .collect();
    let responses: HashMap<&str, &Value> =
        once_each(options.responses.iter().map(|r| r.tool_call_id.as_str()))?
            .into_iter()
            .zip(options.responses.iter().map(|r| &r.output))
            .collect();
    for id in options.responses.iter().map(|r| r.tool_call_id.as_str()) {
        if approvals.contains(&id) || rejected.contains_key(id) {
            return Err(more_than_one_decision(id));
        }
    }
    Ok(Some(Given {
        pause,
        pending,
        approvals,
        rejected,
        responses,
    }))
}

/// The checks of a continue after the edited inputs' (docs/behaviour.md §4 items 6 to 8),
/// and what to do with each pending call; `edits` are the validated edited inputs.
fn check_decisions(
    agent: &AgentInner,
    state: &RunResult,
    options: &ContinueOptions,
    given: Given<'_>,
    mut edits: HashMap<String, Value>,
) -> Result<ResumePlan, AgentError> {
    let Given {
        pause,
        approvals,
        rejected,
        responses,
        ..
    } = given;
    let approved: HashSet<&str> = approvals.iter().copied().collect();
    for id in approvals {
        if rejected.contains_key(id) {
            return Err(AgentError::continue_invalid(format!(
                "Tool call {id} is both approved and rejected"
            )));
        }
    }
    let mut outputs: HashMap<&str, &Value> = HashMap::new();
    for o in &options.tool_outputs {
        if outputs.insert(&o.tool_call_id, &o.output).is_some() {
            return Err(AgentError::continue_invalid(format!(
                "Tool call {} has more than one output",
                o.tool_call_id
            )));
        }
    }
    let mut tools = Vec::with_capacity(pause.pending_tool_calls.len());
    for p in &pause.pending_tool_calls {
        let Some(tool) = pending_tool(agent, state, &p.call.id, &p.call.name)? else {
            return Err(AgentError::continue_invalid(format!(
                "Tool '{}' of pending call {} is not defined on this agent",
                p.call.name, p.call.id
            )));
        };
        // The recorded kind is stored data: it must be one this tool can produce, so an
        // edited state cannot turn an approval into a call that takes an output.
        let producible = match p.kind {
            PendingKind::Approval => true,
            PendingKind::Hitl => tool.on_tool_called.is_some(),
            PendingKind::Manual => tool.executor.is_none(),
        };
        let output_for_executor = tool.executor.is_some() && outputs.contains_key(&*p.call.id);
        if !producible && !output_for_executor {
            return Err(AgentError::state_invalid(format!(
                "Invalid state: pending call {} of tool '{}' has kind {}, which this tool cannot produce",
                p.call.id,
                p.call.name,
                p.kind.as_str()
            )));
        }
        if (p.kind == PendingKind::Approval || !producible) && output_for_executor {
            return Err(AgentError::continue_invalid(format!(
                "Tool call {} requires approval; an output cannot be supplied for it",
                p.call.id
            )));
        }
        tools.push(tool);
    }
    let mut decisions = Vec::with_capacity(pause.pending_tool_calls.len());
    for (p, tool) in pause.pending_tool_calls.iter().zip(tools) {
        let id = &*p.call.id;
        let decision = if let Some(reason) = rejected.get(id) {
            Decision::Reject(
                reason
                    .cloned()
                    .unwrap_or_else(|| "Tool call rejected by human".to_owned()),
            )
        } else if let Some(output) = responses.get(id) {
            Decision::Respond((*output).clone())
        } else {
            let manual = tool.executor.is_none();
            match p.kind {
                PendingKind::Approval if !approved.contains(id) => {
                    return Err(AgentError::continue_invalid(format!(
                        "Missing approval decision for tool call {id}"
                    )))
                }
                PendingKind::Approval if !manual => Decision::Execute(edits.remove(id)),
                _ => match outputs.get(id) {
                    Some(v) => Decision::Supply((*v).clone(), edits.remove(id)),
                    None => {
                        return Err(AgentError::continue_invalid(format!(
                            "Missing output for tool call {id}"
                        )))
                    }
                },
            }
        };
        match nested_run_of(state, id) {
            None => decisions.push((p.clone(), decision)),
            Some((outer, _, value)) => {
                // One decision per nested run, at its first call: continue that run.
                if !decisions.iter().any(|(d, _)| *d.call.id == *outer) {
                    let (_, inner) = nested_parts(agent, state, outer, value)?;
                    let call = state
                        .step_results
                        .last()
                        .and_then(|s| s.tool_calls.iter().find(|c| *c.id == *outer))
                        .cloned()
                        .expect("checked by nested_parts");
                    let pending = PendingToolCall {
                        call,
                        kind: PendingKind::Approval,
                        reason: String::new(),
                    };
                    decisions.push((pending, Decision::Nested(Box::new(inner))));
                }
            }
        }
    }
    Ok(ResumePlan {
        review_pause: false,
        decisions,
    })
}

/// The ids of one kind of decision, in order, each given once (docs/behaviour.md §14: a
/// call has one decision).
fn once_each<'a>(ids: impl Iterator<Item = &'a str>) -> Result<Vec<&'a str>, AgentError> {
    let mut seen = HashSet::new();
    ids.map(|id| match seen.insert(id) {
        true => Ok(id),
        false => Err(more_than_one_decision(id)),
    })
    .collect()
}

fn more_than_one_decision(id: &str) -> AgentError {
    AgentError::continue_invalid(format!("Tool call {id} has more than one decision"))
}

/// Every check of a continue, in the order of docs/behaviour.md §4 and §14: nothing has run
/// or changed when one refuses.
pub(crate) async fn plan(
    agent: &AgentInner,
    state: &RunResult,
    options: &ContinueOptions,
) -> Result<ResumePlan, AgentError> {
    let Some(given) = check_given(agent, state, options)? else {
        return Ok(ResumePlan {
            review_pause: true,
            decisions: Vec::new(),
        });
    };
    let edits = check_edits(agent, state, options, &given).await?;
    check_decisions(agent, state, options, given, edits)
}

/// Validates the edited inputs as the model's arguments would be (value limits,
/// `parameters`, then `inputSchema`, whose returned value is what runs) BEFORE anything
/// runs, right after the checks of [`check_given`]: an invalid one refuses the continue
/// and leaves the state as it was (docs/behaviour.md §14). An edit of a call whose tool is
/// no longer defined is left for the check that says so. A nested call's edit is checked
/// here too, so that nothing runs when it is invalid; the nested run checks it again when
/// it continues. Returns the inputs to run with, by call id.
async fn check_edits(
    agent: &AgentInner,
    state: &RunResult,
    options: &ContinueOptions,
    given: &Given<'_>,
) -> Result<HashMap<String, Value>, AgentError> {
    let mut edits = HashMap::new();
    for approval in &options.approvals {
        let Some(edited) = &approval.edited_input else {
            continue;
        };
        let id = approval.tool_call_id.as_str();
        let Some(pending) = given.pending.get(id) else {
            continue;
        };
        let Some(tool) = pending_tool(agent, state, id, &pending.call.name)? else {
            continue;
        };
        let refuse = |m: String| {
            AgentError::continue_invalid(format!("Edited input for tool call {id} is invalid: {m}"))
        };
        crate::limits::check_value(edited).map_err(|e| refuse(e.to_string()))?;
        tool.check_input(edited).map_err(refuse)?;
        let input = match &tool.input_schema {
            Some(validator) => {
                let outcome = std::panic::AssertUnwindSafe(validator.validate(edited.clone()));
                match futures::FutureExt::catch_unwind(outcome).await {
                    Ok(Ok(v)) => v,
                    Ok(Err(e)) => return Err(refuse(e.message)),
                    Err(p) => return Err(refuse(crate::panic_message(p.as_ref()))),
                }
            }
            None => edited.clone(),
        };
        edits.insert(id.to_owned(), input);
    }
    Ok(edits)
}

/// A person's answer in the place of an approval-gated call: checked like a result
/// (`outputSchema`), `tool.completed` with `respondedByHuman`, and the tool never runs.
async fn respond(
    ctx: &RunCtx,
    scope: &PhaseScope,
    pending: &PendingToolCall,
    output: Value,
) -> Result<Resolved, AgentError> {
    let call = &pending.call;
    let tool = ctx
        .agent
        .tool(&call.name)
        .expect("checked before resolving");
    if let Err(e) = crate::limits::check_value(&output) {
        return Err(tools::output_invalid(ctx, scope, call, e.to_string()));
    }
    // As a tool's result would be: `outputSchema`, then the next-turn overrides (docs/behaviour.md
    // §2.6: a call given an output on continue contributes them).
    let runtime = scope.runtime(ctx, tool, call, None, false);
    let mut no_progress = Vec::new();
    let settled = tools::settled_checks(ctx, scope, tool, &runtime, output, &mut no_progress);
    let (output, next_turn) = match settled.await {
        Ok(checked) => checked,
        Err(ended) => return ended,
    };
    ctx.emitter.emit(
        EventType::ToolCompleted,
        Some(RunStatus::Running),
        Some(scope.step_index),
        || EventData::ToolCompleted {
            tool_call_id: call.id.to_string(),
            tool_name: call.name.to_string(),
            output: output.clone(),
            responded_by_human: true,
        },
    );
    if let Some(t) = &ctx.trace {
        t.tool_ended(call, Some(tool), Ok(&output));
    }
    Ok(Resolved {
        outcome: Ok(output),
        next_turn,
        ..Resolved::error(call, String::new())
    })
}

async fn supply(
    ctx: &RunCtx,
    scope: &PhaseScope,
    pending: &PendingToolCall,
    output: Value,
) -> Result<Resolved, AgentError> {
    let call = &pending.call;
    let tool = ctx
        .agent
        .tool(&call.name)
        .expect("checked before resolving");
    if let Err(e) = crate::limits::check_value(&output) {
        return Err(tools::output_invalid(ctx, scope, call, e.to_string()));
    }
    let runtime = scope.runtime(ctx, tool, call, None, false);
    let output = match &tool.on_response_received {
        None => output,
        Some(hook) => {
            let outcome =
                std::panic::AssertUnwindSafe(hook.on_response_received(output, runtime.clone()));
            match futures::FutureExt::catch_unwind(outcome).await {
                Ok(Ok(v)) => v,
                Ok(Err(e)) if e.is_invalid_output() => {
                    return Err(tools::output_invalid(ctx, scope, call, e.message))
                }
                Ok(Err(e)) => {
                    return call_failed(
                        ctx,
                        scope,
                        Some(tool),
                        call,
                        ErrorCode::ToolFailed,
                        e.message,
                        vec![],
                    )
                }
                Err(p) => {
                    let m = format!(
                        "Tool {} panicked: {}",
                        tool.id,
                        crate::panic_message(p.as_ref())
                    );
                    return call_failed(
                        ctx,
                        scope,
                        Some(tool),
                        call,
                        ErrorCode::ToolFailed,
                        m,
                        vec![],
                    );
                }
            }
        }
    };
    accept_result(ctx, scope, tool, runtime, output, vec![]).await
}

fn reject(ctx: &RunCtx, scope: &PhaseScope, pending: &PendingToolCall, reason: String) -> Resolved {
    ctx.emitter.emit(
        EventType::ToolFailed,
        Some(RunStatus::Running),
        Some(scope.step_index),
        || EventData::ToolFailed {
            tool_call_id: pending.call.id.to_string(),
            tool_name: pending.call.name.to_string(),
            error: reason.clone(),
        },
    );
    if let Some(t) = &ctx.trace {
        let tool = ctx.agent.tool(&pending.call.name);
        t.tool_ended(&pending.call, tool, Ok(&Value::String(reason.clone())));
    }
    Resolved::error(&pending.call, reason)
}

/// The history shows what ran (docs/behaviour.md §14): an edited call's input in the
/// assistant message and the step's calls, and its result records `input` and
/// `originalInput`.
fn record_edits(state: &mut RunResult, edits: Vec<(Arc<str>, Value)>) {
    if edits.is_empty() {
        return;
    }
    let mut assistant = state
        .run
        .messages
        .iter_mut()
        .rev()
        .find(|m| m.role == crate::state::Role::Assistant);
    let step = state
        .step_results
        .last_mut()
        .expect("a paused tool step has a result");
    for (id, input) in edits {
        let mut original = None;
        let shared = Arc::new(input.clone());
        for call in assistant
            .iter_mut()
            .flat_map(|m| m.tool_calls.iter_mut().flatten())
            .chain(step.tool_calls.iter_mut())
            .filter(|c| c.id == id)
        {
            let replaced = std::mem::replace(&mut call.input, shared.clone());
            original = Some(Arc::unwrap_or_clone(replaced));
        }
        if let Some(result) = step.tool_results.iter_mut().find(|r| r.tool_call_id == id) {
            result.original_input = original;
            result.input = Some(input);
        }
    }
}

/// Runs the decided calls and rebuilds the paused step; returns where the loop goes on.
pub(crate) async fn resolve(
    ctx: &RunCtx,
    state: &mut RunResult,
    plan: ResumePlan,
    options: ContinueOptions,
) -> Result<Start, Failure> {
    let index = state.run.step_count.saturating_sub(1);
    state.run.pause = None;
    if plan.review_pause {
        if let Some(text) = options.human_input {
            state.run.messages.push(Message::user(text));
        }
        super::checkpoint(ctx, state, RunStatus::Running, index).await?;
        return Ok(Start::AfterReviewPause);
    }
    let scope = PhaseScope::new(ctx, state, index, plan.decisions.len());
    // Call order of the paused turn: position of each call in the assistant message.
    let order: HashMap<Arc<str>, usize> = state
        .step_results
        .last()
        .map(|s| {
            s.tool_calls
                .iter()
                .enumerate()
                .map(|(i, c)| (c.id.clone(), i))
                .collect()
        })
        .unwrap_or_default();
    let position = |id: &str| order.get(id).copied().unwrap_or(usize::MAX);
    let nested_options: HashMap<Arc<str>, ContinueOptions> = plan
        .decisions
        .iter()
        .filter(|(_, d)| matches!(d, Decision::Nested(_)))
        .map(|(p, _)| {
            (
                p.call.id.clone(),
                super::nested::sub_options(&options, &p.call.id),
            )
        })
        .collect();
    let mut nested_options = nested_options;
    let edits: Vec<(Arc<str>, Value)> = plan
        .decisions
        .iter()
        .filter_map(|(p, d)| match d {
            Decision::Execute(Some(input)) | Decision::Supply(_, Some(input)) => {
                Some((p.call.id.clone(), input.clone()))
            }
            _ => None,
        })
        .collect();
    let scope_ref = &scope;
    let jobs: Vec<_> = plan
        .decisions
        .into_iter()
        .map(|(pending, decision)| {
            let i = position(&pending.call.id);
            let sub = nested_options.remove(&pending.call.id);
            (i, move || async move {
                if let Some(t) = &ctx.trace {
                    let d = match (&decision, pending.kind) {
                        (Decision::Reject(_), _) => "rejected",
                        (Decision::Respond(_), _) => "responded",
                        (Decision::Nested(_), _) => "nested",
                        (_, PendingKind::Approval) => "approved",
                        _ => "supplied",
                    };
                    t.tool_decision(&pending.call.id, d);
                }
                match decision {
                    Decision::Reject(reason) => Ok(reject(ctx, scope_ref, &pending, reason)),
                    Decision::Execute(None) => {
                        tools::execute_call(ctx, scope_ref, pending.call, false).await
                    }
                    Decision::Execute(Some(input)) => {
                        let call = ToolCall {
                            input: Arc::new(input),
                            ..pending.call
                        };
                        tools::execute_call(ctx, scope_ref, call, true).await
                    }
                    Decision::Supply(output, None) => {
                        supply(ctx, scope_ref, &pending, output).await
                    }
                    Decision::Supply(output, Some(input)) => {
                        // The hook and the next-turn overrides see the input that stands.
                        let call = ToolCall {
                            input: Arc::new(input),
                            ..pending.call
                        };
                        let pending = PendingToolCall { call, ..pending };
                        supply(ctx, scope_ref, &pending, output).await
                    }
                    Decision::Respond(output) => respond(ctx, scope_ref, &pending, output).await,
                    Decision::Nested(state) => {
                        let sub = sub.expect("made for every nested decision");
                        super::nested::resume(ctx, scope_ref, pending.call, *state, sub).await
                    }
                }
            })
        })
        .collect();
    let resolved = tools::run_concurrently(&scope, ctx.settings.exec.concurrency(), jobs).await;
    scope.settle_usage(state);
    let mut resolved = resolved.map_err(fail_in_step(index))?;
    let mut waiting = super::nested::Waiting::default();
    waiting.take_paused(&mut resolved);
    // The turn's automatic results are already at the end of the conversation: take them
    // off and put every tool message of the turn back in call order.
    let tail_start = state
        .run
        .messages
        .iter()
        .rposition(|m| m.role == crate::state::Role::Assistant)
        .map(|i| i + 1)
        .unwrap_or(state.run.messages.len());
    let earlier: Vec<Message> = state.run.messages.drain(tail_start..).collect();
    let earlier_results = std::mem::take(
        &mut state
            .step_results
            .last_mut()
            .expect("a paused tool step has a result")
            .tool_results,
    );
    // A state paused before the calls' overrides were recorded holds only their merge: the
    // overrides decided now go on top of it.
    let recorded = state.run.next_turn_params.is_none()
        || earlier_results.iter().any(|r| r.next_turn_params.is_some());
    tools::apply(ctx, state, resolved);
    let step = state.step_results.last_mut().expect("present");
    let mut results = earlier_results;
    results.append(&mut step.tool_results);
    results.sort_by_key(|r| position(&r.tool_call_id));
    step.tool_results = results;
    record_edits(state, edits);
    let mut messages: Vec<Message> = earlier;
    messages.extend(state.run.messages.drain(tail_start..));
    messages.sort_by_key(|m| position(m.tool_call_id.as_deref().unwrap_or("")));
    state.run.messages.extend(messages);
    let (pending, nested_runs) = waiting.into_parts();
    if !pending.is_empty() {
        // A nested run paused again: the outer call still waits, and so does the run (the
        // overrides' records are kept for the next continue).
        // `humanInput` follows the turn's tool messages, so it waits for the last of them.
        super::step::pause(
            ctx,
            state,
            index,
            super::step::tool_pause(pending, nested_runs),
        )
        .await?;
        return Ok(Start::Paused);
    }
    tools::settle_next_turn(state, recorded);
    if let Some(text) = options.human_input {
        state.run.messages.push(Message::user(text));
    }
    super::checkpoint(ctx, state, RunStatus::Running, index).await?;
    Ok(Start::AfterToolPause)
}
