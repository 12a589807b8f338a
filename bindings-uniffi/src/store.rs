//! Run stores (docs/behaviour.md §10): SQLite, PostgreSQL and in memory, as one object the agent
//! definition, a run or a continue can take. Every operation runs on the core's runtime.

use std::sync::Arc;

use phaseo_agent as pa;
use phaseo_agent::store::{parse_statuses, ListQuery};

use crate::api::{on_core, RunResult};
use crate::errors::{PhaseoError, ToolError};

/// Where runs are kept between processes.
#[derive(uniffi::Object)]
pub struct RunStore {
    pub(crate) store: Arc<dyn pa::store::RunStore>,
}

/// One stored run: its row columns and its state.
#[derive(uniffi::Record)]
pub struct StoredRun {
    /// The run id.
    pub run_id: String,
    /// The owning agent's id.
    pub agent_id: String,
    /// The row's status (`running` once a pause has been claimed).
    pub status: String,
    /// The pause of the stored state, if waiting.
    pub pause_id: Option<String>,
    /// Row version.
    pub version: i64,
    /// Creation time (ms since the epoch).
    pub created_at_ms: i64,
    /// Time of the last write (ms since the epoch).
    pub updated_at_ms: i64,
    /// The stored state (its `pendingJson()` lists what a waiting run waits on).
    pub state: Arc<RunResult>,
}

/// One page of a listing.
#[derive(uniffi::Record)]
pub struct RunPage {
    /// The runs, oldest update first.
    pub runs: Vec<StoredRun>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

fn stored(run: pa::store::StoredRun) -> Result<StoredRun, PhaseoError> {
    let state = run.state()?;
    Ok(StoredRun {
        run_id: run.run_id,
        agent_id: run.agent_id,
        status: run.status,
        pause_id: run.pause_id,
        version: run.version,
        created_at_ms: run.created_at_ms,
        updated_at_ms: run.updated_at_ms,
        state: RunResult::wrap(state),
    })
}

/// The SQLite file at `path` (created and migrated when needed).
#[uniffi::export]
pub fn sqlite_run_store(path: String) -> Result<Arc<RunStore>, PhaseoError> {
    Ok(Arc::new(RunStore {
        store: Arc::new(pa::store::SqliteRunStore::open(&path)?),
    }))
}

/// A store in this process's memory (tests).
#[uniffi::export]
pub fn in_memory_run_store() -> Arc<RunStore> {
    Arc::new(RunStore {
        store: Arc::new(pa::store::InMemoryRunStore::new()),
    })
}

/// The PostgreSQL database at `url`: connects and migrates.
#[uniffi::export(async_runtime = "tokio")]
pub async fn postgres_run_store(url: String) -> Result<Arc<RunStore>, PhaseoError> {
    let store = on_core(pa::CancellationToken::new(), async move {
        pa::store::PostgresRunStore::connect(&url).await
    })
    .await??;
    Ok(Arc::new(RunStore {
        store: Arc::new(store),
    }))
}

#[uniffi::export(async_runtime = "tokio")]
impl RunStore {
    /// One page of runs of `statuses` (empty: any) and `agent_id`, oldest update first
    /// (`limit` 0: 100).
    pub async fn list(
        &self,
        statuses: Vec<String>,
        agent_id: Option<String>,
        limit: u32,
        cursor: Option<String>,
    ) -> Result<RunPage, PhaseoError> {
        let mut query = ListQuery::default()
            .statuses(parse_statuses(&statuses)?)
            .limit(limit as usize)
            .cursor(cursor);
        if let Some(a) = agent_id {
            query = query.agent_id(a);
        }
        let store = self.store.clone();
        let page = on_core(pa::CancellationToken::new(), async move {
            store.list(&query).await
        })
        .await??;
        Ok(RunPage {
            runs: page
                .runs
                .into_iter()
                .map(stored)
                .collect::<Result<_, _>>()?,
            next_cursor: page.next_cursor,
        })
    }

    /// The stored run `run_id`, or null.
    pub async fn load(&self, run_id: String) -> Result<Option<StoredRun>, PhaseoError> {
        let store = self.store.clone();
        let found = on_core(pa::CancellationToken::new(), async move {
            store.load(&run_id).await
        })
        .await??;
        found.map(stored).transpose()
    }

    /// Deletes a run; whether it was stored.
    pub async fn delete(&self, run_id: String) -> Result<bool, PhaseoError> {
        let store = self.store.clone();
        Ok(on_core(pa::CancellationToken::new(), async move {
            store.delete(&run_id).await
        })
        .await??)
    }

    /// Deletes the runs of `statuses` last updated before `older_than_ms`; how many.
    pub async fn prune(
        &self,
        statuses: Vec<String>,
        older_than_ms: i64,
    ) -> Result<u64, PhaseoError> {
        let statuses = parse_statuses(&statuses)?;
        let store = self.store.clone();
        Ok(on_core(pa::CancellationToken::new(), async move {
            store.prune(&statuses, older_than_ms).await
        })
        .await??)
    }
}

/// The product's state accessor implemented by the host: loads and saves a run's state
/// (its canonical JSON, `RunResult.toJson()`). Kotlin: `suspend` methods; Swift: `async`.
/// Used as a store it has no claim: continuing one pause twice is not prevented, and
/// list/delete/prune/recover are refused with `store_failed`.
#[uniffi::export(foreign)]
#[async_trait::async_trait]
pub trait StateJsonAccessor: Send + Sync {
    /// The state JSON of run `run_id`, or null when unknown.
    async fn load(&self, run_id: String) -> Result<Option<String>, ToolError>;
    /// Stores the state JSON of run `run_id` (replacing any earlier one).
    async fn save(&self, run_id: String, state_json: String) -> Result<(), ToolError>;
}

struct HostAccessor(Arc<dyn StateJsonAccessor>);

#[async_trait::async_trait]
impl pa::store::StateAccessor for HostAccessor {
    async fn load(&self, run_id: &str) -> Result<Option<String>, pa::ToolError> {
        self.0
            .load(run_id.to_owned())
            .await
            .map_err(ToolError::into_core)
    }

    async fn save(&self, run_id: &str, state_json: &str) -> Result<(), pa::ToolError> {
        self.0
            .save(run_id.to_owned(), state_json.to_owned())
            .await
            .map_err(ToolError::into_core)
    }
}

/// A store over the host's `load`/`save` accessor (the product's reference API).
#[uniffi::export]
pub fn accessor_run_store(accessor: Arc<dyn StateJsonAccessor>) -> Arc<RunStore> {
    Arc::new(RunStore {
        store: Arc::new(pa::store::AccessorRunStore::new(Arc::new(HostAccessor(
            accessor,
        )))),
    })
}
