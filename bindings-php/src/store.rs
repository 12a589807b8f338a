//! Run stores (docs/behaviour.md §10): in-memory, SQLite and PostgreSQL, with load, list, delete
//! and prune.

use std::sync::Arc;

use phaseo_agent::store::{
    parse_statuses, AccessorRunStore, InMemoryRunStore, ListQuery, PostgresRunStore, RunStore,
    SqliteRunStore, StateAccessor, StoredRun,
};
use phaseo_agent::{async_trait, AgentError, ToolError, Value};

use crate::error::NativeError;
use crate::handles::STORES;
use crate::host::{Host, HostFn};

/// The application's accessor (the product's `StateAccessor`), adapted by the PHP layer:
/// `load(runId)` answers the state JSON or null, `save(runId, stateJson)`.
struct PhpAccessor {
    load: HostFn,
    save: HostFn,
}

#[async_trait]
impl StateAccessor for PhpAccessor {
    async fn load(&self, run_id: &str) -> Result<Option<String>, ToolError> {
        match self
            .load
            .call(
                "accessorLoad",
                Value::Array(vec![Value::from(run_id)]),
                None,
            )
            .await?
        {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s)),
            _ => Err(ToolError::new(
                "the state accessor's load must return a RunResult or null",
            )),
        }
    }

    async fn save(&self, run_id: &str, state_json: &str) -> Result<(), ToolError> {
        let args = Value::Array(vec![Value::from(run_id), Value::from(state_json)]);
        self.save.call("accessorSave", args, None).await.map(|_| ())
    }
}

/// A store over PHP's `load`/`save` callables (registry ids).
pub fn accessor(load: u64, save: u64) -> i64 {
    let host = Arc::new(Host);
    let accessor = PhpAccessor {
        load: HostFn {
            host: host.clone(),
            id: load,
        },
        save: HostFn { host, id: save },
    };
    STORES.insert(Arc::new(AccessorRunStore::new(Arc::new(accessor))))
}

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

/// A page of runs: `{"runs": [...], "nextCursor"}`.
pub fn list(store: i64, query: Option<&str>) -> Result<String, NativeError> {
    let store = STORES.get(store)?;
    let q = ListQuery::from_json(query)?;
    let page = phaseo_agent::exec::block_on(async move { store.list(&q).await })?;
    let runs = page
        .runs
        .iter()
        .map(row_json)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(serde_json::json!({"runs": runs, "nextCursor": page.next_cursor}).to_string())
}

/// Deletes the runs of `statuses` last updated before `older_than_ms` (ms since the epoch);
/// how many.
pub fn prune(store: i64, statuses: Vec<String>, older_than_ms: i64) -> Result<u64, NativeError> {
    let store = STORES.get(store)?;
    let statuses = parse_statuses(&statuses)?;
    Ok(phaseo_agent::exec::block_on(async move {
        store.prune(&statuses, older_than_ms).await
    })?)
}

/// Deletes a stored run.
pub fn delete(store: i64, run_id: String) -> Result<bool, NativeError> {
    let store = STORES.get(store)?;
    Ok(phaseo_agent::exec::block_on(async move {
        store.delete(&run_id).await
    })?)
}
