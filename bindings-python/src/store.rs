//! Run stores from Python (docs/behaviour.md §10): SQLite, PostgreSQL, in memory, or the application's
//! own `load`/`save` accessor. The public classes are in `phaseo_agent/_store.py`.

use std::future::Future;
use std::sync::Arc;

use phaseo_agent::store::{
    parse_statuses, AccessorRunStore, InMemoryRunStore, ListQuery, PostgresRunStore, RunStore,
    SqliteRunStore, StateAccessor, StoredRun,
};
use phaseo_agent::{async_trait, AgentError, ToolError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::errors::{no_panic, to_pyerr};
use crate::host::{bridge_for, HostFn, EVENT_LOOP};
use crate::result::PyRunResult;

/// A run store, as the native layer holds it.
#[pyclass(name = "NativeRunStore", module = "phaseo_agent._native", frozen)]
pub struct PyRunStore {
    pub store: Arc<dyn RunStore>,
    kind: &'static str,
}

/// The application's accessor: `load(run_id) -> state JSON | None` and
/// `save(run_id, state_json)`, each maybe a coroutine function (the Python layer adapts
/// the product's `load(runId)`/`save(state)` to these).
struct HostAccessor {
    load: HostFn,
    save: HostFn,
}

#[async_trait]
impl StateAccessor for HostAccessor {
    async fn load(&self, run_id: &str) -> Result<Option<String>, ToolError> {
        let id = run_id.to_owned();
        self.load
            .call(
                move |py| PyTuple::new(py, [id]),
                |v| {
                    if v.is_none() {
                        return Ok(None);
                    }
                    v.extract::<String>().map(Some).map_err(|_| {
                        ToolError::new("the state accessor's load must return a state or None")
                    })
                },
            )
            .await
    }

    async fn save(&self, run_id: &str, state_json: &str) -> Result<(), ToolError> {
        let args = [run_id.to_owned(), state_json.to_owned()];
        self.save
            .call(move |py| PyTuple::new(py, args), |_| Ok(()))
            .await
    }
}

/// Runs a store operation on the shared runtime without the GIL. Accessor callbacks run
/// on the background event loop.
fn block<T, F>(py: Python<'_>, fut: F) -> PyResult<T>
where
    F: Future<Output = Result<T, AgentError>> + Send + 'static,
    T: Send + 'static,
{
    let bridge = bridge_for(py, None)?;
    let rt = phaseo_agent::exec::runtime();
    let outcome = crate::lifecycle::detach(py, || rt.block_on(EVENT_LOOP.scope(bridge, fut)));
    outcome.map_err(|e| to_pyerr(py, e))
}

fn row<'py>(py: Python<'py>, run: StoredRun) -> PyResult<Bound<'py, PyDict>> {
    let state = run.state().map_err(|e| to_pyerr(py, e))?;
    let d = PyDict::new(py);
    d.set_item("run_id", &run.run_id)?;
    d.set_item("agent_id", &run.agent_id)?;
    d.set_item("status", &run.status)?;
    d.set_item("pause_id", &run.pause_id)?;
    d.set_item("version", run.version)?;
    d.set_item("created_at_ms", run.created_at_ms)?;
    d.set_item("updated_at_ms", run.updated_at_ms)?;
    d.set_item("lease_owner", &run.lease_owner)?;
    d.set_item("lease_expires_at_ms", run.lease_expires_at_ms)?;
    d.set_item("state", Py::new(py, PyRunResult::new(state))?)?;
    Ok(d)
}

impl PyRunStore {
    fn new(store: Arc<dyn RunStore>, kind: &'static str) -> Self {
        Self { store, kind }
    }
}

#[pymethods]
impl PyRunStore {
    /// A store in this process's memory (tests; nothing survives the process).
    #[staticmethod]
    fn memory() -> Self {
        Self::new(Arc::new(InMemoryRunStore::new()), "memory")
    }

    /// The SQLite file at `path` (created and migrated when needed).
    #[staticmethod]
    fn sqlite(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        no_panic(py, || {
            let store = crate::lifecycle::detach(py, || SqliteRunStore::open(&path))
                .map_err(|e| to_pyerr(py, e))?;
            Ok(Self::new(Arc::new(store), "sqlite"))
        })
    }

    /// The PostgreSQL database at `url`: connects (and migrates) now.
    #[staticmethod]
    fn postgres(py: Python<'_>, url: String) -> PyResult<Self> {
        no_panic(py, || {
            let store = block(py, async move { PostgresRunStore::connect(&url).await })?;
            Ok(Self::new(Arc::new(store), "postgres"))
        })
    }

    /// The application's accessor (no at-most-once claim, no listing).
    #[staticmethod]
    fn accessor(load: Bound<'_, PyAny>, save: Bound<'_, PyAny>) -> Self {
        let accessor = HostAccessor {
            load: HostFn::new(load.unbind(), false),
            save: HostFn::new(save.unbind(), false),
        };
        Self::new(
            Arc::new(AccessorRunStore::new(Arc::new(accessor))),
            "accessor",
        )
    }

    /// `"memory"`, `"sqlite"`, `"postgres"` or `"accessor"`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.kind
    }

    /// One page of runs: `(rows, next_cursor)`, oldest update first.
    #[pyo3(signature = (statuses=None, agent_id=None, limit=None, cursor=None))]
    fn list<'py>(
        &self,
        py: Python<'py>,
        statuses: Option<Vec<String>>,
        agent_id: Option<String>,
        limit: Option<usize>,
        cursor: Option<String>,
    ) -> PyResult<(Vec<Bound<'py, PyDict>>, Option<String>)> {
        no_panic(py, || {
            let mut query = ListQuery::default()
                .statuses(
                    parse_statuses(&statuses.unwrap_or_default()).map_err(|e| to_pyerr(py, e))?,
                )
                .limit(limit.unwrap_or(0))
                .cursor(cursor);
            if let Some(a) = agent_id {
                query = query.agent_id(a);
            }
            let store = self.store.clone();
            let page = block(py, async move { store.list(&query).await })?;
            let rows = page
                .runs
                .into_iter()
                .map(|r| row(py, r))
                .collect::<PyResult<Vec<_>>>()?;
            Ok((rows, page.next_cursor))
        })
    }

    /// The stored run `run_id`, or None.
    fn load<'py>(&self, py: Python<'py>, run_id: String) -> PyResult<Option<Bound<'py, PyDict>>> {
        no_panic(py, || {
            let store = self.store.clone();
            let found = block(py, async move { store.load(&run_id).await })?;
            found.map(|r| row(py, r)).transpose()
        })
    }

    /// Deletes a run; whether it was stored.
    fn delete(&self, py: Python<'_>, run_id: String) -> PyResult<bool> {
        no_panic(py, || {
            let store = self.store.clone();
            block(py, async move { store.delete(&run_id).await })
        })
    }

    /// Deletes the runs of `statuses` last updated before `older_than_ms`; how many.
    fn prune(&self, py: Python<'_>, statuses: Vec<String>, older_than_ms: i64) -> PyResult<u64> {
        no_panic(py, || {
            let statuses = parse_statuses(&statuses).map_err(|e| to_pyerr(py, e))?;
            let store = self.store.clone();
            block(
                py,
                async move { store.prune(&statuses, older_than_ms).await },
            )
        })
    }

    fn __repr__(&self) -> String {
        format!("NativeRunStore({})", self.kind)
    }
}
