//! An application's own `load(runId)`/`save(state)` accessor used as a store (the
//! product's reference API). It has no claim: continuing a pause twice is not prevented.

use std::sync::Arc;

use async_trait::async_trait;

use super::query::{ListQuery, RunPage};
use super::row::{PauseClaim, RunSnapshot, StoredRun};
use super::RunStore;
use crate::error::{AgentError, ToolError};
use crate::state::RunStatus;

/// The host side of an accessor: loads and saves a run's canonical state JSON.
#[async_trait]
pub trait StateAccessor: Send + Sync {
    /// The state JSON of a run, `None` when unknown.
    async fn load(&self, run_id: &str) -> Result<Option<String>, ToolError>;
    /// Stores the state JSON of a run (replacing any earlier one).
    async fn save(&self, run_id: &str, state_json: &str) -> Result<(), ToolError>;
}

/// A [`RunStore`] over a [`StateAccessor`]: saves and loads only. Claims always succeed
/// (no at-most-once), leases are not kept, and list/delete/prune/recover are refused with
/// `store_failed`.
pub struct AccessorRunStore {
    accessor: Arc<dyn StateAccessor>,
}

impl AccessorRunStore {
    /// Wraps an accessor.
    pub fn new(accessor: Arc<dyn StateAccessor>) -> Self {
        Self { accessor }
    }
}

fn failed(op: &str, e: ToolError) -> AgentError {
    AgentError::store_failed(format!("Run store failed: {op}: {}", e.message))
}

fn unsupported(op: &str) -> AgentError {
    AgentError::store_failed(format!(
        "Run store failed: {op} is not supported by a load/save state accessor"
    ))
}

#[async_trait]
impl RunStore for AccessorRunStore {
    async fn save(&self, s: &RunSnapshot, _: &str, _: Option<i64>) -> Result<bool, AgentError> {
        self.accessor
            .save(&s.run_id, &s.state_json)
            .await
            .map_err(|e| failed("save", e))?;
        Ok(true)
    }

    async fn load(&self, run_id: &str) -> Result<Option<StoredRun>, AgentError> {
        let Some(state_json) = self
            .accessor
            .load(run_id)
            .await
            .map_err(|e| failed("load", e))?
        else {
            return Ok(None);
        };
        let state = crate::state::RunResult::from_json(&state_json).map_err(|e| {
            AgentError::state_invalid(format!(
                "Stored state of run {run_id} is invalid: {}",
                e.message()
            ))
        })?;
        Ok(Some(StoredRun {
            run_id: run_id.to_owned(),
            agent_id: state.run.agent_id.clone(),
            status: state.run.status.as_str().to_owned(),
            pause_id: state.run.pause.as_ref().map(|p| p.id.clone()),
            claimed_pause_id: None,
            decisions_json: None,
            lease_owner: None,
            lease_expires_at_ms: None,
            version: 0,
            created_at_ms: 0,
            updated_at_ms: 0,
            state_json,
        }))
    }

    async fn claim(&self, _: &PauseClaim) -> Result<bool, AgentError> {
        Ok(true)
    }

    async fn renew(&self, _: &str, _: &str, _: i64) -> Result<bool, AgentError> {
        Ok(true)
    }

    async fn take_over(
        &self,
        _: &str,
        _: i64,
        _: &str,
        _: i64,
        _: i64,
    ) -> Result<bool, AgentError> {
        Err(unsupported("recover"))
    }

    async fn list(&self, _: &ListQuery) -> Result<RunPage, AgentError> {
        Err(unsupported("list"))
    }

    async fn delete(&self, _: &str) -> Result<bool, AgentError> {
        Err(unsupported("delete"))
    }

    async fn prune(&self, _: &[RunStatus], _: i64) -> Result<u64, AgentError> {
        Err(unsupported("prune"))
    }

    fn supports_claims(&self) -> bool {
        false
    }
}
