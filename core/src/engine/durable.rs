//! The run loop's seam to a run store (docs/behaviour.md §10): saves fenced by a lease, renewal while
//! the loop works, the at-most-once claim of a continue, and recovery.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{Failure, RunCtx};
use crate::checked_agent::AgentInner;
use crate::error::{AgentError, ErrorCode};
use crate::events::{EventData, EventType};
use crate::options::ContinueOptions;
use crate::state::{RunResult, RunStatus};
use crate::store::{now_ms, LeaseConfig, PauseClaim, RunSnapshot, RunStore, StoredDecisions};

/// One worker's hold on one run.
pub(crate) struct Durable {
    store: Arc<dyn RunStore>,
    owner: String,
    lease: LeaseConfig,
    run_id: String,
    /// The agent's signing secret: stored states are signed like returned ones (docs/behaviour.md §7).
    secret: Option<String>,
    lost: AtomicBool,
}

fn lease_lost(run_id: &str) -> AgentError {
    AgentError::new(
        ErrorCode::LeaseLost,
        format!("Run {run_id} was taken over by another worker (lease lost)"),
    )
}

fn already_continued(pause_id: &str, run_id: &str) -> AgentError {
    AgentError::continue_invalid(format!(
        "Pause {pause_id} of run {run_id} was already continued"
    ))
}

impl Durable {
    pub(crate) fn new(store: Arc<dyn RunStore>, agent: &AgentInner, run_id: &str) -> Arc<Self> {
        Arc::new(Self {
            store,
            owner: uuid::Uuid::new_v4().to_string(),
            lease: agent.def.lease,
            run_id: run_id.to_owned(),
            secret: agent.def.state_secrets.first().cloned(),
            lost: AtomicBool::new(false),
        })
    }

    fn expires(&self, now: i64) -> i64 {
        now.saturating_add(self.lease.duration_ms())
    }

    /// Saves the state; a running state keeps the lease, a paused or final one releases
    /// it. Another worker holding the run gives `lease_lost`.
    pub(crate) async fn save(&self, state: &RunResult) -> Result<(), AgentError> {
        if self.lost.load(Ordering::Relaxed) {
            return Err(lease_lost(&self.run_id));
        }
        let now = now_ms();
        let hold = state.run.status == RunStatus::Running;
        let snapshot = match &self.secret {
            Some(secret) => {
                let mut signed = state.clone();
                signed.signature = None;
                signed.signature = Some(crate::signing::sign(secret, &signed));
                RunSnapshot::of(&signed, now)
            }
            None => RunSnapshot::of(state, now),
        };
        match self
            .store
            .save(&snapshot, &self.owner, hold.then(|| self.expires(now)))
            .await
        {
            Ok(true) => Ok(()),
            Ok(false) => {
                self.lost.store(true, Ordering::Relaxed);
                Err(lease_lost(&self.run_id))
            }
            Err(e) if e.code() == ErrorCode::StoreFailed => Err(e),
            Err(e) => Err(AgentError::store_failed(format!(
                "Run store failed: {}",
                e.message()
            ))),
        }
    }

    /// Renews the lease every `renew_every`, forever (the caller drops this future when
    /// the work ends). A lost lease stops renewing; the next save reports it.
    async fn keep_alive(&self) {
        loop {
            tokio::time::sleep(self.lease.renew_every).await;
            let now = now_ms();
            match self
                .store
                .renew(&self.run_id, &self.owner, self.expires(now))
                .await
            {
                Ok(true) => {}
                Ok(false) => {
                    self.lost.store(true, Ordering::Relaxed);
                    std::future::pending::<()>().await;
                }
                // A store that is down now may be back at the next renewal; a save in
                // between reports the failure.
                Err(_) => {}
            }
        }
    }
}

/// Runs the future `work` makes while renewing the run's lease.
///
/// `work` makes the future here rather than being it: a future passed to an `async fn` is
/// held twice in that function's own future (as its argument, and where it is awaited), and
/// a run's step loop is kilobytes that every run would move and carry twice.
pub(crate) async fn with_lease<F: Future>(ctx: &RunCtx, work: impl FnOnce() -> F) -> F::Output {
    match &ctx.durable {
        None => work().await,
        Some(d) => {
            tokio::select! {
                biased;
                r = work() => r,
                _ = d.keep_alive() => unreachable!("keep_alive never returns"),
            }
        }
    }
}

/// A checkpoint: the save is committed before `checkpoint.saved` is emitted.
pub(crate) async fn checkpoint(
    ctx: &RunCtx,
    state: &RunResult,
    status: RunStatus,
    index: usize,
) -> Result<(), Failure> {
    if let Some(d) = &ctx.durable {
        d.save(state)
            .await
            .map_err(|error| Failure::Failed { error, step: None })?;
    }
    ctx.emitter.emit(
        EventType::CheckpointSaved,
        Some(status),
        Some(index),
        || EventData::None,
    );
    Ok(())
}

/// Whether a failure came from the store itself (then nothing more is written).
pub(crate) fn is_store_failure(error: &AgentError) -> bool {
    matches!(error.code(), ErrorCode::StoreFailed | ErrorCode::LeaseLost)
}

fn store_of(agent: &AgentInner, options: &ContinueOptions) -> Option<Arc<dyn RunStore>> {
    options.store.clone().or_else(|| agent.def.store.clone())
}

/// The state of a continue, and the hold on it: loads it by run id, refuses a pause
/// already claimed (first of all checks), runs the docs/behaviour.md §4 checks, then claims the pause.
pub(crate) async fn prepare_continue(
    agent: &AgentInner,
    given: Option<&RunResult>,
    options: &ContinueOptions,
) -> Result<(RunResult, super::resume::ResumePlan, Option<Arc<Durable>>), AgentError> {
    if let (Some(state), Some(id)) = (given, &options.run_id) {
        if &state.run.id != id {
            return Err(AgentError::continue_invalid(format!(
                "The state given is of run {}, not of run {id}",
                state.run.id
            )));
        }
    }
    let Some(store) = store_of(agent, options) else {
        let Some(state) = given else {
            return Err(AgentError::continue_invalid(
                "Continuing by run id needs a run store (agent or continue option `store`)",
            ));
        };
        let plan = super::resume::plan(agent, state, options).await?;
        return Ok((state.clone(), plan, None));
    };
    let run_id = given
        .map(|s| s.run.id.clone())
        .or_else(|| options.run_id.clone())
        .expect("a state or a run id");
    let row = store.load(&run_id).await?;
    let state = match (given, &row) {
        (Some(s), _) => s.clone(),
        (None, Some(row)) => row.state()?,
        (None, None) => {
            return Err(AgentError::continue_invalid(format!(
                "Run {run_id} is not in the run store"
            )))
        }
    };
    let wanted = state.run.pause.as_ref().map(|p| p.id.clone());
    if let (Some(row), true) = (&row, store.supports_claims()) {
        match &wanted {
            Some(p) => {
                if row.claimed_pause_id.as_deref() == Some(p.as_str())
                    || row.pause_id.as_deref() != Some(p.as_str())
                {
                    return Err(already_continued(p, &run_id));
                }
            }
            None => {
                if let Some(claimed) = &row.claimed_pause_id {
                    return Err(already_continued(claimed, &run_id));
                }
            }
        }
    }
    let plan = super::resume::plan(agent, &state, options).await?;
    let durable = Durable::new(store.clone(), agent, &run_id);
    if store.supports_claims() {
        let pause_id = wanted.expect("a continuable state is paused");
        let now = now_ms();
        let claim = PauseClaim {
            run_id: run_id.clone(),
            pause_id: pause_id.clone(),
            expected_version: row.as_ref().map(|r| r.version).unwrap_or(0),
            decisions_json: StoredDecisions::of(options).to_json(),
            owner: durable.owner.clone(),
            lease_expires_at_ms: durable.expires(now),
            now_ms: now,
            insert: row.is_none().then(|| RunSnapshot::of(&state, now)),
        };
        if !store.claim(&claim).await? {
            return Err(already_continued(&pause_id, &run_id));
        }
    }
    Ok((state, plan, Some(durable)))
}

/// What a recovery resumes.
pub(crate) enum Recovered {
    /// A claimed pause: continue it with the stored decisions.
    Claimed(Box<(RunResult, super::resume::ResumePlan, ContinueOptions)>),
    /// A run that died mid-run: go on from its last checkpoint.
    Running(Box<RunResult>),
}

/// Takes over a run whose lease expired.
pub(crate) async fn prepare_recover(
    agent: &AgentInner,
    run_id: &str,
    options: ContinueOptions,
) -> Result<(Recovered, Arc<Durable>), AgentError> {
    if !options.approvals.is_empty()
        || !options.rejections.is_empty()
        || !options.tool_outputs.is_empty()
        || options.human_input.is_some()
    {
        return Err(AgentError::continue_invalid(
            "A recovery applies the stored decisions; none may be given",
        ));
    }
    let Some(store) = store_of(agent, &options) else {
        return Err(AgentError::continue_invalid(
            "Recovering a run needs a run store (agent or continue option `store`)",
        ));
    };
    let Some(row) = store.load(run_id).await? else {
        return Err(AgentError::continue_invalid(format!(
            "Run {run_id} is not in the run store"
        )));
    };
    let status = row.run_status()?;
    if status != RunStatus::Running {
        return Err(AgentError::continue_invalid(format!(
            "Run {run_id} is {}; only a running run whose lease expired can be recovered",
            status.as_str()
        )));
    }
    let now = now_ms();
    if let Some(until) = row.lease_expires_at_ms.filter(|&t| t >= now) {
        return Err(AgentError::continue_invalid(format!(
            "Run {run_id} is held by a live worker (its lease ends in {} ms)",
            until - now + 1
        )));
    }
    let state = row.state()?;
    if !agent.def.state_secrets.is_empty() {
        crate::signing::verify(&agent.def.state_secrets, &state)?;
    }
    if state.run.agent_id != agent.def.id {
        return Err(AgentError::continue_invalid(format!(
            "Cannot continue run {run_id} with agent {}; it belongs to {}",
            agent.def.id, state.run.agent_id
        )));
    }
    let claimed = state.run.status == RunStatus::WaitingForHuman
        && state.run.pause.as_ref().map(|p| &p.id) == row.claimed_pause_id.as_ref();
    let recovered = if claimed {
        let decisions = row.decisions()?.unwrap_or_default();
        let options = decisions.apply(options);
        let plan = super::resume::plan(agent, &state, &options).await?;
        Recovered::Claimed(Box::new((state, plan, options)))
    } else {
        Recovered::Running(Box::new(state))
    };
    let durable = Durable::new(store.clone(), agent, run_id);
    if !store
        .take_over(
            run_id,
            row.version,
            &durable.owner,
            durable.expires(now),
            now,
        )
        .await?
    {
        return Err(AgentError::continue_invalid(format!(
            "Run {run_id} was recovered by another worker"
        )));
    }
    Ok((recovered, durable))
}
