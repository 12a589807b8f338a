//! Run stores (docs/behaviour.md §10) as `PhaseoStore` handles: in-memory, SQLite and PostgreSQL, with
//! the queries an application needs (load, list, delete, prune).

use std::ffi::c_char;
use std::sync::Arc;

use phaseo_agent::store::{
    parse_statuses, InMemoryRunStore, ListQuery, PostgresRunStore, RunStore, SqliteRunStore,
};

use crate::error::{guard, read_opt_str, read_str, write_out, CError, PhaseoStatus};

/// A run store; shared by any number of agents and runs (it lives until the last of them
/// and the handle are gone).
pub struct PhaseoStore {
    pub(crate) store: Arc<dyn RunStore>,
}

pub(crate) unsafe fn out_store(
    out: *mut *mut PhaseoStore,
    store: Arc<dyn RunStore>,
) -> Result<(), CError> {
    if out.is_null() {
        return Err(CError::argument("out_store is NULL"));
    }
    *out = Box::into_raw(Box::new(PhaseoStore { store }));
    Ok(())
}

/// Borrows a store handle (NULL = none).
pub(crate) unsafe fn store_arg(store: *const PhaseoStore) -> Option<Arc<dyn RunStore>> {
    store.as_ref().map(|s| s.store.clone())
}

/// A new in-memory store.
#[no_mangle]
pub unsafe extern "C" fn phaseo_store_memory(
    out_store_ptr: *mut *mut PhaseoStore,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        out_store(out_store_ptr, Arc::new(InMemoryRunStore::new()))?;
        Ok(PhaseoStatus::Ok)
    })
}

/// Opens (creating if needed) a SQLite store at `path`.
#[no_mangle]
pub unsafe extern "C" fn phaseo_store_sqlite(
    path: *const c_char,
    out_store_ptr: *mut *mut PhaseoStore,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let path = read_str(path, "path")?;
        let store = SqliteRunStore::open(path)?;
        out_store(out_store_ptr, Arc::new(store))?;
        Ok(PhaseoStatus::Ok)
    })
}

/// Connects to PostgreSQL (`postgres://…` URL) and creates the store's tables if needed.
/// Blocks until connected; must not be called from a callback.
#[no_mangle]
pub unsafe extern "C" fn phaseo_store_postgres(
    url: *const c_char,
    out_store_ptr: *mut *mut PhaseoStore,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let url = read_str(url, "url")?.to_owned();
        let store =
            phaseo_agent::exec::block_on(async move { PostgresRunStore::connect(&url).await })?;
        out_store(out_store_ptr, Arc::new(store))?;
        Ok(PhaseoStatus::Ok)
    })
}

/// Frees a store handle (runs still using the store keep it alive). NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn phaseo_store_free(store: *mut PhaseoStore) {
    if !store.is_null() {
        drop(Box::from_raw(store));
    }
}

unsafe fn store_ref<'a>(store: *const PhaseoStore) -> Result<&'a PhaseoStore, CError> {
    store
        .as_ref()
        .ok_or_else(|| CError::argument("the store handle is NULL"))
}

/// Loads run `run_id`: `out_json` receives its row `{runId, agentId, status, pauseId,
/// version, createdAtMs, updatedAtMs, leaseOwner, leaseExpiresAtMs, state}`, or NULL when
/// the store has no such run. Blocks.
#[no_mangle]
pub unsafe extern "C" fn phaseo_store_load(
    store: *const PhaseoStore,
    run_id: *const c_char,
    out_json: *mut *mut c_char,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let store = store_ref(store)?.store.clone();
        let run_id = read_str(run_id, "run_id")?.to_owned();
        let found = phaseo_agent::exec::block_on(async move { store.load(&run_id).await })?;
        if !out_json.is_null() {
            *out_json = std::ptr::null_mut();
        }
        if let Some(row) = found {
            write_out(out_json, row.to_json()?);
        }
        Ok(PhaseoStatus::Ok)
    })
}

/// Lists runs, newest first. `query_json` (NULL = everything) is `{statuses?, agentId?,
/// limit?, cursor?}`; `out_json` receives `{runs: [row…], nextCursor}`. Blocks.
#[no_mangle]
pub unsafe extern "C" fn phaseo_store_list(
    store: *const PhaseoStore,
    query_json: *const c_char,
    out_json: *mut *mut c_char,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let store = store_ref(store)?.store.clone();
        let q = ListQuery::from_json(read_opt_str(query_json, "query_json")?)?;
        let page = phaseo_agent::exec::block_on(async move { store.list(&q).await })?;
        write_out(out_json, page.to_json()?);
        Ok(PhaseoStatus::Ok)
    })
}

/// Deletes run `run_id`; `out_deleted` (may be NULL) says whether it existed. Blocks.
#[no_mangle]
pub unsafe extern "C" fn phaseo_store_delete(
    store: *const PhaseoStore,
    run_id: *const c_char,
    out_deleted: *mut bool,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let store = store_ref(store)?.store.clone();
        let run_id = read_str(run_id, "run_id")?.to_owned();
        let deleted = phaseo_agent::exec::block_on(async move { store.delete(&run_id).await })?;
        if !out_deleted.is_null() {
            *out_deleted = deleted;
        }
        Ok(PhaseoStatus::Ok)
    })
}

/// Deletes the runs whose status is one of `statuses_json` (a JSON array of status names,
/// e.g. `["completed","cancelled"]`) last updated before `older_than_ms` (a cut-off in
/// milliseconds since the epoch); `out_count` (may be NULL) receives how many. Blocks.
#[no_mangle]
pub unsafe extern "C" fn phaseo_store_prune(
    store: *const PhaseoStore,
    statuses_json: *const c_char,
    older_than_ms: i64,
    out_count: *mut u64,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let store = store_ref(store)?.store.clone();
        let names: Vec<String> = serde_json::from_str(read_str(statuses_json, "statuses_json")?)
            .map_err(|e| {
                CError::argument(format!(
                    "statuses_json must be a JSON array of status names: {e}"
                ))
            })?;
        let statuses = parse_statuses(&names)?;
        let count =
            phaseo_agent::exec::block_on(
                async move { store.prune(&statuses, older_than_ms).await },
            )?;
        if !out_count.is_null() {
            *out_count = count;
        }
        Ok(PhaseoStatus::Ok)
    })
}
