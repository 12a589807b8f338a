//! The product's state accessor as a run store: the host's own `load(runId)` and
//! `save(runId, state)`, answered asynchronously like every host call. Saves and loads
//! only: no claim (continuing a pause twice is not prevented), no list, delete or recover.

use std::ffi::c_char;
use std::sync::Arc;

use phaseo_agent::store::{AccessorRunStore, StateAccessor};
use phaseo_agent::{async_trait, ToolError, Value};

use crate::error::{guard, CError, PhaseoStatus};
use crate::host::{Host, HostFn, PhaseoCallKind, PhaseoHost};
use crate::store::{out_store, PhaseoStore};

/// The host's `load` and `save` callbacks.
struct HostAccessor {
    load: HostFn,
    save: HostFn,
}

#[async_trait]
impl StateAccessor for HostAccessor {
    async fn load(&self, run_id: &str) -> Result<Option<String>, ToolError> {
        let args = Value::Array(vec![Value::from(run_id)]);
        match self
            .load
            .call(PhaseoCallKind::StoreLoad, &args, None)
            .await?
        {
            Value::Null => Ok(None),
            Value::String(state) => Ok(Some(state)),
            other => Err(ToolError::new(format!(
                "load must answer the state's JSON text (a string) or null, got {other}"
            ))),
        }
    }

    async fn save(&self, run_id: &str, state_json: &str) -> Result<(), ToolError> {
        let args = Value::Array(vec![Value::from(run_id), Value::from(state_json)]);
        self.save
            .call(PhaseoCallKind::StoreSave, &args, None)
            .await
            .map(drop)
    }
}

/// A run store over the host's state accessor: `load_callback` receives `StoreLoad` calls
/// (`[runId]`, answer the state text as a JSON string or null), `save_callback` receives
/// `StoreSave` calls (`[runId, stateJson]`, answer null). A failing callback fails the run
/// with `store_failed`. `host.release` runs when the store handle and every agent and run
/// using it are gone.
#[no_mangle]
pub unsafe extern "C" fn phaseo_store_accessor(
    host: PhaseoHost,
    load_callback: u64,
    save_callback: u64,
    out_store_ptr: *mut *mut PhaseoStore,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    let host = Host::new(host);
    guard(out_error, || {
        if load_callback == 0 || save_callback == 0 {
            return Err(CError::argument(
                "a state accessor needs a load and a save callback",
            ));
        }
        let f = |id| HostFn {
            host: host.clone(),
            id,
        };
        let accessor = HostAccessor {
            load: f(load_callback),
            save: f(save_callback),
        };
        out_store(
            out_store_ptr,
            Arc::new(AccessorRunStore::new(Arc::new(accessor))),
        )?;
        Ok(PhaseoStatus::Ok)
    })
}
