//! Agent tools (docs/behaviour.md §18): a call runs the nested agent — or continues its
//! paused run with the decisions for its calls — and ends as the call's output, as a tool
//! error, or paused, its pending calls surfacing on the outer run as
//! `<outerCallId>/<nestedCallId>`.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::tools::{accept_result, call_failed, timeout_message, within, PhaseScope, Resolved};
use super::{Emitter, RunCtx};
use crate::agent_tool::{nested_id, nested_input, NestedAgent};
use crate::error::{AgentError, ErrorCode};
use crate::events::{AgentEvent, EventListener};
use crate::model::ModelClient;
use crate::options::{ContinueOptions, RunOptions, ToolDecision, ToolOutput};
use crate::state::{PauseKind, PendingToolCall, RunResult, RunStatus, ToolCall, Usage};
use crate::tool::Tool;

/// Hands a nested run's events to the outer run's listener and stream.
struct Forward {
    emitter: Emitter,
    parent: String,
}

impl EventListener for Forward {
    fn on_event(&self, event: &AgentEvent) {
        self.emitter.forward(event, &self.parent);
    }
}

/// How a nested run (or the continue of one) ended.
enum Ended {
    Output(Value),
    Failed(String),
    Paused(Box<RunResult>),
}

fn listener(ctx: &RunCtx, call: &ToolCall) -> Option<Arc<dyn EventListener>> {
    ctx.emitter.is_active().then(|| {
        Arc::new(Forward {
            emitter: ctx.emitter.clone(),
            parent: call.id.to_string(),
        }) as Arc<dyn EventListener>
    })
}

fn client(ctx: &RunCtx, nested: &NestedAgent) -> Arc<dyn ModelClient> {
    nested.client.clone().unwrap_or_else(|| ctx.client.clone())
}

/// Reads a nested run's result: what it ended with and the usage it spent since `before`.
fn ended(tool: &Tool, outcome: Result<RunResult, AgentError>, before: &Usage) -> (Ended, Usage) {
    let (ended, usage) = match outcome {
        Ok(state) => {
            let usage = state.run.usage;
            let ended = match (state.run.status, state.run.pause.as_ref()) {
                (RunStatus::Completed | RunStatus::Stopped, _) => {
                    Ended::Output(state.run.result.clone())
                }
                (RunStatus::WaitingForHuman, Some(p)) if p.kind != PauseKind::HumanReview => {
                    Ended::Paused(Box::new(state))
                }
                (RunStatus::WaitingForHuman, _) => Ended::Failed(format!(
                    "Agent tool {} paused its run for human review, which an agent tool cannot \
                     ask for",
                    tool.id
                )),
                _ => Ended::Failed(
                    state
                        .run
                        .error
                        .as_ref()
                        .map(|e| e.message.clone())
                        .unwrap_or_else(|| format!("Agent tool {} did not finish", tool.id)),
                ),
            };
            (ended, usage)
        }
        Err(e) => {
            let usage = e.result().map(|s| s.run.usage).unwrap_or_default();
            (Ended::Failed(e.message().to_owned()), usage)
        }
    };
    (ended, spent_since(usage, before))
}

fn spent_since(now: Usage, before: &Usage) -> Usage {
    Usage {
        input_tokens: now.input_tokens.saturating_sub(before.input_tokens),
        output_tokens: now.output_tokens.saturating_sub(before.output_tokens),
        cached_tokens: now.cached_tokens.saturating_sub(before.cached_tokens),
        total_tokens: now.total_tokens.saturating_sub(before.total_tokens),
        cost: (now.cost - before.cost).max(0.0),
    }
}

/// Runs an agent tool's call: a new nested run of the call's `input`.
pub(crate) async fn execute(
    ctx: &RunCtx,
    scope: &PhaseScope,
    tool: &Tool,
    nested: &NestedAgent,
    call: ToolCall,
) -> Result<Resolved, AgentError> {
    let token = scope.token().child_token();
    let mut options = RunOptions::new(nested_input(&call.input), client(ctx, nested));
    options.context = scope.phase.context().clone();
    options.cancel = Some(token.clone());
    options.on_event = listener(ctx, &call);
    options.host_tag = ctx.host_tag;
    let run = start_run(nested.agent.clone(), options);
    finish(ctx, scope, tool, call, token, run, Usage::default()).await
}

/// Continues the paused nested run of `call` with `options` (the decisions for its calls).
pub(crate) async fn resume(
    ctx: &RunCtx,
    scope: &PhaseScope,
    call: ToolCall,
    state: RunResult,
    mut options: ContinueOptions,
) -> Result<Resolved, AgentError> {
    let tool = ctx
        .agent
        .tool(&call.name)
        .expect("checked before resolving");
    let nested = tool.nested.as_ref().expect("checked before resolving");
    let token = scope.token().child_token();
    options.client = client(ctx, nested);
    options.cancel = Some(token.clone());
    options.on_event = listener(ctx, &call);
    options.host_tag = ctx.host_tag;
    let before = state.run.usage;
    let run = continue_run(nested.agent.clone(), state, options);
    finish(ctx, scope, tool, call, token, run, before).await
}

type NestedRun = BoxFuture<'static, Result<RunResult, AgentError>>;

// The nested run is the run loop again: these plain functions box it, so the loop's own
// future type does not contain itself.
fn start_run(agent: Arc<crate::checked_agent::AgentInner>, options: RunOptions) -> NestedRun {
    Box::pin(super::run(agent, options, None))
}

fn continue_run(
    agent: Arc<crate::checked_agent::AgentInner>,
    state: RunResult,
    options: ContinueOptions,
) -> NestedRun {
    Box::pin(async move { super::continue_run(agent, Some(&state), options, None).await })
}

async fn finish(
    ctx: &RunCtx,
    scope: &PhaseScope,
    tool: &Tool,
    call: ToolCall,
    token: tokio_util::sync::CancellationToken,
    run: NestedRun,
    before: Usage,
) -> Result<Resolved, AgentError> {
    let outcome = within(tool.timeout, &token, std::pin::pin!(run)).await;
    let Some(outcome) = outcome else {
        return call_failed(
            ctx,
            scope,
            Some(tool),
            &call,
            ErrorCode::ToolTimeout,
            timeout_message(tool),
            vec![],
        );
    };
    let (ended, usage) = ended(tool, outcome, &before);
    scope.add_usage(&usage);
    match ended {
        Ended::Output(value) => {
            let runtime = scope.runtime(ctx, tool, &call, Some(token), false);
            accept_result(ctx, scope, tool, runtime, value, vec![]).await
        }
        Ended::Failed(message) => call_failed(
            ctx,
            scope,
            Some(tool),
            &call,
            ErrorCode::ToolFailed,
            message,
            vec![],
        ),
        Ended::Paused(state) => Ok(Resolved {
            nested_pause: Some(state),
            ..Resolved::error(&call, String::new())
        }),
    }
}

/// The pending calls a paused nested run of the call `outer` surfaces on the outer run.
pub(crate) fn surfaced(outer: &str, state: &RunResult) -> Vec<PendingToolCall> {
    state
        .run
        .pause
        .iter()
        .flat_map(|p| &p.pending_tool_calls)
        .map(|p| PendingToolCall {
            call: ToolCall {
                id: nested_id(outer, &p.call.id).into(),
                ..p.call.clone()
            },
            kind: p.kind,
            reason: p.reason.clone(),
        })
        .collect()
}

/// Calls that wait for decisions after a tool phase: pending calls in call order and the
/// paused nested runs by outer call id.
#[derive(Default)]
pub(crate) struct Waiting {
    pub(crate) calls: Vec<(usize, PendingToolCall)>,
    pub(crate) nested_runs: BTreeMap<String, Value>,
}

impl Waiting {
    /// Takes the calls whose nested run paused out of `resolved`.
    pub(crate) fn take_paused(&mut self, resolved: &mut super::tools::Resolutions) {
        // Nearly always no call paused: nothing to move.
        if resolved.iter().all(|(_, r)| r.nested_pause.is_none()) {
            return;
        }
        let mut kept = super::tools::Resolutions::with_capacity(resolved.len());
        for (i, mut r) in resolved.drain(..) {
            match r.nested_pause.take() {
                Some(state) => {
                    self.calls
                        .extend(surfaced(&r.call_id, &state).into_iter().map(|p| (i, p)));
                    self.nested_runs
                        .insert(r.call_id.to_string(), state.to_value());
                }
                None => kept.push((i, r)),
            }
        }
        *resolved = kept;
    }

    /// The pending calls in call order (a nested run's calls in their own order).
    pub(crate) fn into_parts(mut self) -> (Vec<PendingToolCall>, BTreeMap<String, Value>) {
        self.calls.sort_by_key(|(i, _)| *i);
        (
            self.calls.into_iter().map(|(_, p)| p).collect(),
            self.nested_runs,
        )
    }
}

/// The continue options of the nested run of the call `outer`: the decisions whose ids
/// start with `<outer>/`, that prefix taken off.
pub(crate) fn sub_options(options: &ContinueOptions, outer: &str) -> ContinueOptions {
    let strip = |id: &str| {
        id.strip_prefix(outer)
            .and_then(|rest| rest.strip_prefix(crate::agent_tool::NESTED_ID_SEPARATOR))
            .map(str::to_owned)
    };
    let decisions = |list: &[ToolDecision]| -> Vec<ToolDecision> {
        list.iter()
            .filter_map(|d| {
                Some(ToolDecision {
                    tool_call_id: strip(&d.tool_call_id)?,
                    ..d.clone()
                })
            })
            .collect()
    };
    let outputs = |list: &[ToolOutput]| -> Vec<ToolOutput> {
        list.iter()
            .filter_map(|o| Some(ToolOutput::new(strip(&o.tool_call_id)?, o.output.clone())))
            .collect()
    };
    let mut sub = ContinueOptions::new(options.client.clone());
    sub.approvals = decisions(&options.approvals);
    sub.rejections = decisions(&options.rejections);
    sub.tool_outputs = outputs(&options.tool_outputs);
    sub.responses = outputs(&options.responses);
    sub
}
