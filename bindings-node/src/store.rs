//! Run stores from JavaScript (docs/behaviour.md §10): SQLite, PostgreSQL, in memory, or
//! the application's own `{load, save}` accessor. The public factories are in
//! `lib/stores.js`.

use std::sync::Arc;

use napi_derive::napi;
use phaseo_agent::store::{
    parse_statuses, AccessorRunStore, InMemoryRunStore, ListQuery, PostgresRunStore, RunStore,
    SqliteRunStore, StateAccessor, StoredRun,
};
use phaseo_agent::{async_trait, AgentError, ToolError, Value};

use crate::errors::{no_panic, to_napi};
use crate::host::HostFn;

/// A run store, as the native layer holds it.
#[napi]
pub struct NativeRunStore {
    pub(crate) store: Arc<dyn RunStore>,
}

/// The application's accessor, adapted by `lib/stores.js`: `load(runId) -> stateJson | null`
/// and `save(runId, stateJson)` (each may return a Promise).
struct JsAccessor {
    load: HostFn,
    save: HostFn,
}

#[async_trait]
impl StateAccessor for JsAccessor {
    async fn load(&self, run_id: &str) -> Result<Option<String>, ToolError> {
        match self.load.call_plain(&[Value::from(run_id)]).await? {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s)),
            _ => Err(ToolError::new(
                "the state accessor's load must return a state or null",
            )),
        }
    }

    async fn save(&self, run_id: &str, state_json: &str) -> Result<(), ToolError> {
        self.save
            .call_plain(&[Value::from(run_id), Value::from(state_json)])
            .await
            .map(|_| ())
    }
}

fn query(
    statuses: Option<Vec<String>>,
    agent_id: Option<String>,
    limit: Option<u32>,
    cursor: Option<String>,
) -> Result<ListQuery, AgentError> {
    let mut q = ListQuery::default()
        .statuses(parse_statuses(&statuses.unwrap_or_default())?)
        .limit(limit.unwrap_or(0) as usize)
        .cursor(cursor);
    if let Some(a) = agent_id {
        q = q.agent_id(a);
    }
    Ok(q)
}

#[napi]
impl NativeRunStore {
    /// A store in this process's memory.
    #[napi(factory)]
    pub fn memory() -> Self {
        Self {
            store: Arc::new(InMemoryRunStore::new()),
        }
    }

    /// The SQLite file at `path` (created and migrated when needed).
    #[napi(factory)]
    pub fn sqlite(path: String) -> napi::Result<Self> {
        no_panic(|| {
            let store = SqliteRunStore::open(&path).map_err(to_napi)?;
            Ok(Self {
                store: Arc::new(store),
            })
        })
    }

    /// The application's accessor: callables `load` and `save` of the JS registry.
    #[napi(factory)]
    pub fn accessor(load: u32, save: u32) -> Self {
        let accessor = JsAccessor {
            load: HostFn { id: load },
            save: HostFn { id: save },
        };
        Self {
            store: Arc::new(AccessorRunStore::new(Arc::new(accessor))),
        }
    }

    /// One page of runs as JSON text `{runs, nextCursor}`, oldest update first.
    #[napi]
    pub async fn list(
        &self,
        statuses: Option<Vec<String>>,
        agent_id: Option<String>,
        limit: Option<u32>,
        cursor: Option<String>,
    ) -> napi::Result<String> {
        let q = query(statuses, agent_id, limit, cursor).map_err(to_napi)?;
        let page = self.store.list(&q).await.map_err(to_napi)?;
        page.to_json().map_err(to_napi)
    }

    /// The stored run `run_id` as JSON text, or null.
    #[napi]
    pub async fn load(&self, run_id: String) -> napi::Result<Option<String>> {
        let found = self.store.load(&run_id).await.map_err(to_napi)?;
        found
            .as_ref()
            .map(StoredRun::to_json)
            .transpose()
            .map_err(to_napi)
    }

    /// Deletes a run; whether it was stored.
    #[napi]
    pub async fn delete(&self, run_id: String) -> napi::Result<bool> {
        self.store.delete(&run_id).await.map_err(to_napi)
    }

    /// Deletes the runs of `statuses` last updated before `older_than_ms`; how many.
    #[napi]
    pub async fn prune(&self, statuses: Vec<String>, older_than_ms: f64) -> napi::Result<f64> {
        let statuses = parse_statuses(&statuses).map_err(to_napi)?;
        let n = self
            .store
            .prune(&statuses, older_than_ms as i64)
            .await
            .map_err(to_napi)?;
        Ok(n as f64)
    }
}

/// Connects to the PostgreSQL database at `url` (and migrates it).
#[napi(js_name = "connectPostgresRunStore")]
pub async fn connect_postgres(url: String) -> napi::Result<NativeRunStore> {
    let store = PostgresRunStore::connect(&url).await.map_err(to_napi)?;
    Ok(NativeRunStore {
        store: Arc::new(store),
    })
}
