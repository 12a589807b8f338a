//! Run stores (SPEC §10): in-memory, SQLite and PostgreSQL, with load, list and delete.

use std::sync::Arc;

use phaseo_agent::store::{
    parse_statuses, InMemoryRunStore, ListQuery, PostgresRunStore, RunStore, SqliteRunStore,
    StoredRun,
};
use phaseo_agent::AgentError;
use serde::Deserialize;

use crate::error::NativeError;
use crate::handles::STORES;

/// Opens a store: `memory`, `sqlite` (path) or `postgres` (URL).
pub fn open(kind: &str, target: Option<&str>) -> Result<i64, NativeError> {
    let need = || {
        target
            .map(str::to_owned)
            .ok_or_else(|| NativeError::argument(format!("a {kind} store needs a target")))
    };
    let store: Arc<dyn RunStore> = match kind {
        "memory" => Arc::new(InMemoryRunStore::new()),
        "sqlite" => Arc::new(SqliteRunStore::open(&need()?)?),
        "postgres" => {
            let url = need()?;
            Arc::new(phaseo_agent::exec::block_on(async move {
                PostgresRunStore::connect(&url).await
            })?)
        }
        other => {
            return Err(NativeError::argument(format!(
                "unknown store kind {other:?}: memory, sqlite or postgres"
            )))
        }
    };
    Ok(STORES.insert(store))
}

fn row_json(run: &StoredRun) -> Result<serde_json::Value, AgentError> {
    run.state()?;
    Ok(serde_json::json!({
        "runId": run.run_id,
        "agentId": run.agent_id,
        "status": run.status,
        "pauseId": run.pause_id,
        "version": run.version,
        "createdAtMs": run.created_at_ms,
        "updatedAtMs": run.updated_at_ms,
        "leaseOwner": run.lease_owner,
        "leaseExpiresAtMs": run.lease_expires_at_ms,
        "state": run.state_json,
    }))
}

/// A stored run's row (its state as canonical JSON text), or None.
pub fn load(store: i64, run_id: String) -> Result<Option<String>, NativeError> {
    let store = STORES.get(store)?;
    let found = phaseo_agent::exec::block_on(async move { store.load(&run_id).await })?;
    Ok(match found {
        Some(row) => Some(row_json(&row)?.to_string()),
        None => None,
    })
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct QuerySpec {
    #[serde(default)]
    statuses: Vec<String>,
    agent_id: Option<String>,
    limit: Option<usize>,
    cursor: Option<String>,
}

/// A page of runs: `{"runs": [...], "nextCursor"}`.
pub fn list(store: i64, query: Option<&str>) -> Result<String, NativeError> {
    let store = STORES.get(store)?;
    let spec: QuerySpec = match query {
        None => QuerySpec::default(),
        Some(text) => serde_json::from_str(text)
            .map_err(|e| NativeError::definition(format!("Invalid store query: {e}")))?,
    };
    let mut q = ListQuery::default()
        .statuses(parse_statuses(&spec.statuses)?)
        .limit(spec.limit.unwrap_or(0))
        .cursor(spec.cursor);
    if let Some(a) = spec.agent_id {
        q = q.agent_id(a);
    }
    let page = phaseo_agent::exec::block_on(async move { store.list(&q).await })?;
    let runs = page
        .runs
        .iter()
        .map(row_json)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(serde_json::json!({"runs": runs, "nextCursor": page.next_cursor}).to_string())
}

/// Deletes a stored run.
pub fn delete(store: i64, run_id: String) -> Result<bool, NativeError> {
    let store = STORES.get(store)?;
    Ok(phaseo_agent::exec::block_on(async move {
        store.delete(&run_id).await
    })?)
}
