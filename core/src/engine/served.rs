//! One call from an MCP client, run through the run loop's own tool path
//! (docs/behaviour.md §19): budgets, validation, the approval decision, timeout, retries,
//! progress checks, output checks and events are the code a model's call goes through.

use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::tools::{
    classify, execute_call, over_budget, refused_by_budget, PhaseScope, Plan, Resolved,
};
use super::{Emitter, RunCtx, Settings};
use crate::checked_agent::AgentInner;
use crate::clients::ScriptedClient;
use crate::error::AgentError;
use crate::events::{AgentEvent, EventData, EventListener};
use crate::model::ModelClient;
use crate::options::{ContinueOptions, RunOverrides, ToolDecision};
use crate::state::{PendingKind, RunResult, ToolCall, ToolCallCounts};
use crate::telemetry::{Parents, RunStart, RunTrace};

/// What the serving side answers for one call while it runs.
#[async_trait]
pub(crate) trait CallHost: Send + Sync {
    /// A progress value the tool reported (already checked against its `eventSchema`).
    fn progress(&self, value: &Value);
    /// Asks whoever called whether the call may run: `Ok(true)` approved, `Ok(false)`
    /// declined, `Err` the message of why nobody could be asked.
    async fn approve(&self, call: &ToolCall) -> Result<bool, String>;
}

/// The message of a served call a person declined (or a client did not approve).
pub(crate) const REJECTED: &str = "Tool call rejected by human";

/// The tools a server exposes, with what their calls share: the server's budgets
/// (counted over the server's lifetime, as a run counts over its steps) and its
/// `toolConcurrency` permits.
pub(crate) struct ServedTools {
    agent: Arc<AgentInner>,
    /// The model client of agent tools without their own (docs/behaviour.md §18).
    client: Arc<dyn ModelClient>,
    listener: Option<Arc<dyn EventListener>>,
    counts: Mutex<ToolCallCounts>,
    permits: Semaphore,
}

/// Forwards a call's checked progress values to its host, and every event to the
/// application's listener.
struct CallEvents {
    call_id: String,
    host: Arc<dyn CallHost>,
    listener: Option<Arc<dyn EventListener>>,
}

impl EventListener for CallEvents {
    fn on_event(&self, event: &AgentEvent) {
        if let EventData::ToolPreliminary {
            tool_call_id,
            result,
            ..
        } = &event.data
        {
            if *tool_call_id == self.call_id {
                self.host.progress(result);
            }
        }
        if let Some(listener) = &self.listener {
            listener.on_event(event);
        }
    }
}

impl ServedTools {
    /// Serves the tools of a checked agent; its `toolExecution` gives the concurrency and
    /// budgets. `client` runs the agent tools that have no client of their own.
    pub(crate) fn new(
        agent: Arc<AgentInner>,
        client: Option<Arc<dyn ModelClient>>,
        listener: Option<Arc<dyn EventListener>>,
    ) -> Self {
        let permits = Settings::new(&agent, RunOverrides::default(), None)
            .exec
            .concurrency();
        ServedTools {
            agent,
            // Only agent tools reach a model; a server of plain tools never does.
            client: client.unwrap_or_else(|| Arc::new(ScriptedClient::new(Vec::new()))),
            listener,
            counts: Mutex::new(ToolCallCounts::default()),
            permits: Semaphore::new(permits),
        }
    }

    /// Runs one call to its end: `Ok` is the tool's (checked) result, `Err` the message a
    /// model would have seen. `cancel` stops the executor (the client's cancellation).
    pub(crate) async fn call(
        &self,
        name: &str,
        input: Value,
        cancel: CancellationToken,
        host: Arc<dyn CallHost>,
        traceparent: Option<&str>,
    ) -> Result<Value, String> {
        let call_id = format!("mcp_{}", uuid::Uuid::new_v4().simple());
        // The call's span (the server's name as the agent, the call id as the run) with the
        // client's `traceparent` as parent: tool spans are its children, as in a run.
        let trace = RunTrace::start(
            RunStart {
                agent_id: &self.agent.def.id,
                run_id: &call_id,
                resumed: false,
                store_claim: None,
            },
            Parents {
                stored: None,
                host: traceparent,
            },
        );
        let outcome = self
            .call_traced(name, input, cancel, host, call_id, trace.clone())
            .await;
        if let Some(t) = &trace {
            t.served_call_ended(outcome.as_ref().err().map(String::as_str));
        }
        outcome
    }

    async fn call_traced(
        &self,
        name: &str,
        input: Value,
        cancel: CancellationToken,
        host: Arc<dyn CallHost>,
        call_id: String,
        trace: Option<Arc<RunTrace>>,
    ) -> Result<Value, String> {
        let run_id: Arc<str> = Arc::from(call_id.as_str());
        let listener: Arc<dyn EventListener> = Arc::new(CallEvents {
            call_id: call_id.clone(),
            host: host.clone(),
            listener: self.listener.clone(),
        });
        let ctx = RunCtx {
            agent: self.agent.clone(),
            client: self.client.clone(),
            settings: Settings::new(&self.agent, RunOverrides::default(), None),
            emitter: Emitter::new(
                run_id,
                Arc::from(self.agent.def.id.as_str()),
                Some(listener),
                None,
            ),
            cancel: cancel.clone(),
            created_at: SystemTime::now(),
            durable: None,
            trace,
            host_tag: None,
            call_ids: Default::default(),
        };
        let scope = PhaseScope::served(
            &ctx,
            cancel.child_token(),
            self.permits.available_permits() <= 1,
        );
        let call = ToolCall::new(call_id, name, input);
        let refused = {
            let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
            let refused = over_budget(&ctx, &counts, ctx.agent.tool(&call.name), &call);
            if refused.is_none() {
                counts.admit(&call.name);
            }
            refused
        };
        if let Some(message) = refused {
            return outcome(Ok(refused_by_budget(&ctx, &scope, &call, message)));
        }
        let offered = self.agent.tool_specs.clone();
        let known = ctx.agent.tool(&call.name);
        let call = match classify(&ctx, &scope, known, call, Ok(()), &offered).await {
            Err(e) => return Err(e.message().to_owned()),
            Ok(Plan::Done(resolved)) => return outcome(Ok(resolved)),
            Ok(Plan::Execute(call)) => call,
            Ok(Plan::Pending(p)) => match p.kind {
                PendingKind::Approval => match host.approve(&p.call).await? {
                    true => p.call,
                    false => return Err(REJECTED.to_owned()),
                },
                _ => {
                    return Err(format!(
                        "Tool {} asks a person for its result and cannot be served",
                        p.call.name
                    ))
                }
            },
        };
        let _permit = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(super::CANCELLED_MESSAGE.to_owned()),
            p = self.permits.acquire() => p.map_err(|e| e.to_string())?,
        };
        // A cancelled call's executor is dropped as a cancelled run's is: its token is
        // cancelled first, then hosts that wait on the call itself are told it is over.
        let run = async {
            let mut resolved = execute_call(&ctx, &scope, call.clone(), false).await;
            // An agent tool's nested run paused for approvals (docs/behaviour.md §18): each
            // is asked through the client, and the nested run goes on with the answers.
            while let Ok(Resolved {
                nested_pause: Some(state),
                ..
            }) = resolved
            {
                let decisions = decide(&*host, &state, self.client.clone()).await?;
                resolved =
                    super::nested::resume(&ctx, &scope, call.clone(), *state, decisions).await;
            }
            outcome(resolved)
        };
        tokio::select! {
            biased;
            r = run => r,
            _ = cancel.cancelled() => Err(super::CANCELLED_MESSAGE.to_owned()),
        }
    }
}

/// The decisions of a paused nested run's pending calls, each approval asked of the client:
/// approved calls run, declined ones are rejected (the nested agent sees the rejection).
/// A pending call that is not an approval cannot be served.
async fn decide(
    host: &dyn CallHost,
    state: &RunResult,
    client: Arc<dyn ModelClient>,
) -> Result<ContinueOptions, String> {
    let mut options = ContinueOptions::new(client);
    for pending in state.run.pause.iter().flat_map(|p| &p.pending_tool_calls) {
        if pending.kind != PendingKind::Approval {
            return Err(format!(
                "Tool {} asks a person for its result and cannot be served",
                pending.call.name
            ));
        }
        let decision = ToolDecision::new(&pending.call.id);
        match host.approve(&pending.call).await? {
            true => options.approvals.push(decision),
            false => options.rejections.push(decision),
        }
    }
    Ok(options)
}

fn outcome(resolved: Result<Resolved, AgentError>) -> Result<Value, String> {
    match resolved {
        Ok(r) => r.outcome,
        Err(e) => Err(e.message().to_owned()),
    }
}
