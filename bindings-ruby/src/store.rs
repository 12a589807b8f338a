//! Run stores (docs/behaviour.md §10): `PhaseoAgentSdk::Native::RunStore` over the core's stores, and
//! the application's own `load(run_id)` / `save(result)` object as a store.

use std::sync::Arc;
use std::time::Duration;

use magnus::{Error, Module, Object, Ruby};
use phaseo_agent::store::{
    parse_statuses, AccessorRunStore, InMemoryRunStore, ListQuery, PostgresRunStore, RunStore,
    SqliteRunStore, StateAccessor, StoredRun,
};
use phaseo_agent::{async_trait, AgentError, ToolError, Value};

use crate::adapters::HostFn;
use crate::agent::raise;
use crate::host::{serve_until, Slot};

/// A run store.
#[magnus::wrap(class = "PhaseoAgentSdk::Native::RunStore", free_immediately, size)]
pub struct NativeRunStore(pub Arc<dyn RunStore>);

/// The application's accessor, adapted by the Ruby layer: `load(run_id) -> state JSON |
/// nil` and `save(run_id, state_json)`.
struct RbAccessor {
    load: HostFn,
    save: HostFn,
}

#[async_trait]
impl StateAccessor for RbAccessor {
    async fn load(&self, run_id: &str) -> Result<Option<String>, ToolError> {
        match self.load.call_values(vec![Value::from(run_id)]).await? {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s)),
            _ => Err(ToolError::new(
                "the state accessor's load must return a state or nil",
            )),
        }
    }

    async fn save(&self, run_id: &str, state_json: &str) -> Result<(), ToolError> {
        self.save
            .call_values(vec![Value::from(run_id), Value::from(state_json)])
            .await
            .map(|_| ())
    }
}

/// Runs `work` on the core's runtime while this Ruby thread serves callbacks (an accessor
/// store calls Ruby); Ctrl-C stops the wait.
pub fn block_on<T: Send + 'static>(
    ruby: &Ruby,
    work: impl std::future::Future<Output = Result<T, AgentError>> + Send + 'static,
) -> Result<T, Error> {
    let slot = Slot::<Result<T, AgentError>>::new();
    let filler = slot.clone();
    let task = phaseo_agent::exec::runtime().spawn(async move { filler.fill(work.await) });
    let abort = task.abort_handle();
    serve_until(ruby, slot.as_ref(), &move || abort.abort(), Duration::ZERO)?;
    match slot.take() {
        Some(r) => r.map_err(|e| raise(ruby, e)),
        None => Err(raise(
            ruby,
            AgentError::store_failed(
                "internal error: the store operation ended without an outcome",
            ),
        )),
    }
}

impl NativeRunStore {
    fn memory() -> Self {
        Self(Arc::new(InMemoryRunStore::new()))
    }

    fn sqlite(ruby: &Ruby, path: String) -> Result<Self, Error> {
        let store = SqliteRunStore::open(&path).map_err(|e| raise(ruby, e))?;
        Ok(Self(Arc::new(store)))
    }

    fn postgres(ruby: &Ruby, url: String) -> Result<Self, Error> {
        let store = block_on(ruby, async move { PostgresRunStore::connect(&url).await })?;
        Ok(Self(Arc::new(store)))
    }

    fn accessor(load: u64, save: u64) -> Self {
        Self(Arc::new(AccessorRunStore::new(Arc::new(RbAccessor {
            load: HostFn(load),
            save: HostFn(save),
        }))))
    }

    /// One page as JSON text `{runs, nextCursor}`.
    fn list(
        ruby: &Ruby,
        rb_self: &Self,
        statuses: Vec<String>,
        agent_id: Option<String>,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<String, Error> {
        let mut q = ListQuery::default()
            .statuses(parse_statuses(&statuses).map_err(|e| raise(ruby, e))?)
            .limit(limit)
            .cursor(cursor);
        if let Some(a) = agent_id {
            q = q.agent_id(a);
        }
        let store = rb_self.0.clone();
        block_on(ruby, async move {
            let page = store.list(&q).await?;
            page.to_json()
        })
    }

    fn load(ruby: &Ruby, rb_self: &Self, run_id: String) -> Result<Option<String>, Error> {
        let store = rb_self.0.clone();
        block_on(ruby, async move {
            store
                .load(&run_id)
                .await?
                .as_ref()
                .map(StoredRun::to_json)
                .transpose()
        })
    }

    fn delete(ruby: &Ruby, rb_self: &Self, run_id: String) -> Result<bool, Error> {
        let store = rb_self.0.clone();
        block_on(ruby, async move { store.delete(&run_id).await })
    }

    fn prune(
        ruby: &Ruby,
        rb_self: &Self,
        statuses: Vec<String>,
        older_than_ms: i64,
    ) -> Result<u64, Error> {
        let statuses = parse_statuses(&statuses).map_err(|e| raise(ruby, e))?;
        let store = rb_self.0.clone();
        block_on(
            ruby,
            async move { store.prune(&statuses, older_than_ms).await },
        )
    }
}

/// Defines `PhaseoAgentSdk::Native::RunStore`.
pub fn init(ruby: &Ruby, module: magnus::RModule) -> Result<(), Error> {
    use magnus::{function, method};
    let native = module.define_module("Native")?;
    let c = native.define_class("RunStore", ruby.class_object())?;
    c.define_singleton_method("memory", function!(NativeRunStore::memory, 0))?;
    c.define_singleton_method("sqlite", function!(NativeRunStore::sqlite, 1))?;
    c.define_singleton_method("postgres", function!(NativeRunStore::postgres, 1))?;
    c.define_singleton_method("accessor", function!(NativeRunStore::accessor, 2))?;
    c.define_method("list", method!(NativeRunStore::list, 4))?;
    c.define_method("load", method!(NativeRunStore::load, 1))?;
    c.define_method("delete", method!(NativeRunStore::delete, 1))?;
    c.define_method("prune", method!(NativeRunStore::prune, 2))?;
    Ok(())
}
