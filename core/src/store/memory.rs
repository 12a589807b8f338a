//! A store in this process's memory: for tests and single-process applications.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;

use super::query::{ListQuery, RunPage};
use super::row::{PauseClaim, RunSnapshot, StoredRun};
use super::RunStore;
use crate::error::AgentError;
use crate::state::RunStatus;

/// Runs kept in memory, with the same claim and lease rules as the database stores.
#[derive(Default)]
pub struct InMemoryRunStore {
    rows: Mutex<HashMap<String, StoredRun>>,
}

impl InMemoryRunStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn rows(&self) -> std::sync::MutexGuard<'_, HashMap<String, StoredRun>> {
        self.rows.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn fresh_row(s: &RunSnapshot, owner: Option<&str>, expires: Option<i64>) -> StoredRun {
    StoredRun {
        run_id: s.run_id.clone(),
        agent_id: s.agent_id.clone(),
        status: s.status.as_str().to_owned(),
        pause_id: s.pause_id.clone(),
        claimed_pause_id: None,
        decisions_json: None,
        lease_owner: owner.map(str::to_owned),
        lease_expires_at_ms: expires,
        version: 1,
        created_at_ms: s.created_at_ms,
        updated_at_ms: s.updated_at_ms,
        state_json: s.state_json.clone(),
    }
}

#[async_trait]
impl RunStore for InMemoryRunStore {
    async fn save(
        &self,
        s: &RunSnapshot,
        owner: &str,
        expires: Option<i64>,
    ) -> Result<bool, AgentError> {
        let mut rows = self.rows();
        let kept_owner = expires.map(|_| owner);
        match rows.get_mut(&s.run_id) {
            None => {
                rows.insert(s.run_id.clone(), fresh_row(s, kept_owner, expires));
                Ok(true)
            }
            Some(row) if row.lease_owner.as_deref() == Some(owner) => {
                row.agent_id = s.agent_id.clone();
                row.status = s.status.as_str().to_owned();
                row.pause_id = s.pause_id.clone();
                row.lease_owner = kept_owner.map(str::to_owned);
                row.lease_expires_at_ms = expires;
                row.version += 1;
                row.updated_at_ms = s.updated_at_ms;
                row.state_json = s.state_json.clone();
                Ok(true)
            }
            Some(_) => Ok(false),
        }
    }

    async fn load(&self, run_id: &str) -> Result<Option<StoredRun>, AgentError> {
        Ok(self.rows().get(run_id).cloned())
    }

    async fn claim(&self, c: &PauseClaim) -> Result<bool, AgentError> {
        let mut rows = self.rows();
        if let Some(s) = &c.insert {
            if !rows.contains_key(&s.run_id) {
                rows.insert(s.run_id.clone(), fresh_row(s, None, None));
            }
        }
        let expected = if c.insert.is_some() {
            None
        } else {
            Some(c.expected_version)
        };
        match rows.get_mut(&c.run_id) {
            Some(row)
                if expected.is_none_or(|v| v == row.version)
                    && row.status == RunStatus::WaitingForHuman.as_str()
                    && row.pause_id.as_deref() == Some(c.pause_id.as_str()) =>
            {
                row.status = RunStatus::Running.as_str().to_owned();
                row.claimed_pause_id = Some(c.pause_id.clone());
                row.decisions_json = Some(c.decisions_json.clone());
                row.lease_owner = Some(c.owner.clone());
                row.lease_expires_at_ms = Some(c.lease_expires_at_ms);
                row.version += 1;
                row.updated_at_ms = c.now_ms;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn renew(&self, run_id: &str, owner: &str, expires: i64) -> Result<bool, AgentError> {
        match self.rows().get_mut(run_id) {
            Some(row) if row.lease_owner.as_deref() == Some(owner) => {
                row.lease_expires_at_ms = Some(expires);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn take_over(
        &self,
        run_id: &str,
        expected_version: i64,
        owner: &str,
        expires: i64,
        now_ms: i64,
    ) -> Result<bool, AgentError> {
        match self.rows().get_mut(run_id) {
            Some(row)
                if row.version == expected_version
                    && row.status == RunStatus::Running.as_str()
                    && row.lease_expires_at_ms.is_none_or(|t| t < now_ms) =>
            {
                row.lease_owner = Some(owner.to_owned());
                row.lease_expires_at_ms = Some(expires);
                row.version += 1;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn list(&self, q: &ListQuery) -> Result<RunPage, AgentError> {
        let statuses = q.status_strings();
        let after = q.after()?;
        let mut rows: Vec<StoredRun> = self
            .rows()
            .values()
            .filter(|r| statuses.is_empty() || statuses.contains(&r.status.as_str()))
            .filter(|r| q.agent_id.as_ref().is_none_or(|a| &r.agent_id == a))
            .filter(|r| q.updated_after_ms.is_none_or(|t| r.updated_at_ms >= t))
            .filter(|r| q.updated_before_ms.is_none_or(|t| r.updated_at_ms < t))
            .filter(|r| {
                after
                    .as_ref()
                    .is_none_or(|(t, id)| (r.updated_at_ms, &r.run_id) > (*t, id))
            })
            .cloned()
            .collect();
        rows.sort_by(|a, b| (a.updated_at_ms, &a.run_id).cmp(&(b.updated_at_ms, &b.run_id)));
        rows.truncate(q.page_size() + 1);
        Ok(RunPage::from_rows(rows, q.page_size()))
    }

    async fn delete(&self, run_id: &str) -> Result<bool, AgentError> {
        Ok(self.rows().remove(run_id).is_some())
    }

    async fn prune(&self, statuses: &[RunStatus], older_than_ms: i64) -> Result<u64, AgentError> {
        let mut rows = self.rows();
        let before = rows.len();
        rows.retain(|_, r| {
            !(statuses.iter().any(|s| s.as_str() == r.status) && r.updated_at_ms < older_than_ms)
        });
        Ok((before - rows.len()) as u64)
    }
}
