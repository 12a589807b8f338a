//! `PhaseoRun`: a run started on the core's runtime (or driven by the host's own thread,
//! see `drive.rs`), awaited by a blocking wait or told done through the host's `on_done`,
//! and cancellable from any thread.

use std::ffi::c_char;
use std::future::Future;
use std::sync::{Arc, Condvar, Mutex};

use phaseo_agent::{AgentError, CancellationToken, RunResult};

use crate::error::{guard, write_out, CError, PhaseoStatus};
use crate::host::Host;

pub(crate) struct Shared {
    outcome: Mutex<Option<Result<String, String>>>,
    ended: Condvar,
}

impl Shared {
    /// Records the run's outcome (its state's JSON, or its error's) and wakes the waiters.
    pub(crate) fn end(&self, outcome: Result<String, String>) {
        *lock(&self.outcome) = Some(outcome);
        self.ended.notify_all();
    }
}

/// The outcome of a run's future: its state's JSON, or its error's.
pub(crate) fn outcome_of(result: Result<RunResult, AgentError>) -> Result<String, String> {
    match result {
        Ok(result) => Ok(result.to_json()),
        Err(e) => Err(CError::from(e).to_json()),
    }
}

/// The outcome of a run whose future panicked (a core bug): it still ends for the host.
pub(crate) fn panicked(message: String) -> Result<String, String> {
    Err(CError::new(
        phaseo_agent::ErrorCode::ToolFailed,
        format!("internal error: {message}"),
    )
    .to_json())
}

/// How a run is started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Start {
    /// As a task of the core's runtime.
    Spawn,
    /// Not at all: the host drives it with `phaseo_run_poll` on its own thread.
    Driven,
}

/// A run in flight (or ended). Freeing an unfinished run cancels it.
pub struct PhaseoRun {
    pub(crate) shared: Arc<Shared>,
    cancel: CancellationToken,
    /// The run's future when the host drives it (`Start::Driven`).
    pub(crate) driven: Option<crate::drive::Driven>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl PhaseoRun {
    /// Starts `run` as `start` says; `host.on_done` is called when it ends.
    pub(crate) fn new<F>(start: Start, host: Arc<Host>, cancel: CancellationToken, run: F) -> Self
    where
        F: Future<Output = Result<RunResult, AgentError>> + Send + 'static,
    {
        let shared = Arc::new(Shared {
            outcome: Mutex::new(None),
            ended: Condvar::new(),
        });
        if start == Start::Driven {
            let driven = crate::drive::Driven::new(shared.clone(), host, run);
            return Self {
                shared,
                cancel,
                driven: Some(driven),
            };
        }
        let done = shared.clone();
        phaseo_agent::exec::runtime().spawn(async move {
            // A panic in the run (a core bug) must still end it for the host.
            let outcome = match futures_catch(run).await {
                Ok(result) => outcome_of(result),
                Err(message) => panicked(message),
            };
            done.end(outcome);
            host.done();
        });
        Self {
            shared,
            cancel,
            driven: None,
        }
    }
}

async fn futures_catch<F: Future + Send + 'static>(fut: F) -> Result<F::Output, String>
where
    F::Output: Send + 'static,
{
    // Run as its own task: a panic there is reported through its JoinHandle.
    tokio::spawn(fut)
        .await
        .map_err(|e| match e.try_into_panic() {
            Ok(p) => phaseo_agent::panic_message(p.as_ref()),
            Err(e) => e.to_string(),
        })
}

/// Cancels the run: it ends `cancelled` and returns its result (docs/behaviour.md §3.4). Any thread.
#[no_mangle]
pub unsafe extern "C" fn phaseo_run_cancel(run: *const PhaseoRun) {
    if let Some(run) = run.as_ref() {
        run.cancel.cancel();
    }
}

/// Whether the run has ended (`phaseo_run_wait` will not block).
#[no_mangle]
pub unsafe extern "C" fn phaseo_run_is_done(run: *const PhaseoRun) -> bool {
    run.as_ref()
        .is_some_and(|r| lock(&r.shared.outcome).is_some())
}

/// Waits for the run to end. Paused, completed, stopped and cancelled runs give
/// `PHASEO_STATUS_OK` and their canonical state JSON in `out_json`; a failed run gives
/// `PHASEO_STATUS_ERROR` and an error whose `state` is the failed state. May be called
/// again (same answer). Blocks: never call it from a callback.
#[no_mangle]
pub unsafe extern "C" fn phaseo_run_wait(
    run: *const PhaseoRun,
    out_json: *mut *mut c_char,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    if !out_json.is_null() {
        *out_json = std::ptr::null_mut();
    }
    guard(out_error, || {
        let run = run
            .as_ref()
            .ok_or_else(|| CError::argument("the run handle is NULL"))?;
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(CError::argument(
                "phaseo_run_wait was called from a callback (a core thread); wait elsewhere",
            ));
        }
        if run.driven.as_ref().is_some_and(|d| !d.ended()) {
            return Err(CError::argument(
                "phaseo_run_wait was called on a driven run that has not ended; poll it with phaseo_run_poll until it ends",
            ));
        }
        let mut slot = lock(&run.shared.outcome);
        while slot.is_none() {
            slot = run
                .shared
                .ended
                .wait(slot)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        match slot.as_ref() {
            Some(Ok(state)) => {
                write_out(out_json, state.clone());
                Ok(PhaseoStatus::Ok)
            }
            Some(Err(error)) => Err(RawError(error.clone()).into()),
            None => unreachable!("waited until the outcome was set"),
        }
    })
}

/// An error already in its JSON form.
struct RawError(String);

impl From<RawError> for CError {
    fn from(e: RawError) -> Self {
        CError::raw(e.0)
    }
}

/// Frees a run handle; an unfinished run is cancelled. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn phaseo_run_free(run: *mut PhaseoRun) {
    if !run.is_null() {
        let run = Box::from_raw(run);
        if lock(&run.shared.outcome).is_none() {
            run.cancel.cancel();
        }
    }
}
