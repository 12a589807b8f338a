//! `PhaseoRun`: a run started on the core's runtime (or driven by the host's own thread,
//! see `drive.rs`), awaited by a blocking wait or told done through the host's `on_done`,
//! and cancellable from any thread.

use std::ffi::c_char;
use std::future::Future;
use std::sync::{Arc, Condvar, Mutex};

use phaseo_agent::driven::BoxedRun;
use phaseo_agent::{AgentError, CancellationToken, RunResult};

use crate::error::{guard, owned_string, write_out, CError, PhaseoStatus};
use crate::host::Host;

pub(crate) struct Shared {
    /// `None` until the run ends; its state stays native until a host asks for its text
    /// (`phaseo_run_wait`) or takes it (`phaseo_run_take_state`, which leaves `Taken`).
    outcome: Mutex<Option<Outcome>>,
    ended: Condvar,
}

impl Shared {
    /// Records the run's outcome and wakes the waiters.
    pub(crate) fn end(&self, outcome: Outcome) {
        *lock(&self.outcome) = Some(outcome);
        self.ended.notify_all();
    }
}

/// How a run ended: its state, or its error's JSON text.
pub(crate) enum Outcome {
    State(Box<RunResult>),
    Failed(String),
    /// The state was handed to the host (`phaseo_run_take_state`).
    Taken,
}

/// The outcome of a run's future.
pub(crate) fn outcome_of(result: Result<RunResult, AgentError>) -> Outcome {
    match result {
        Ok(result) => Outcome::State(Box::new(result)),
        Err(e) => Outcome::Failed(CError::from(e).to_json()),
    }
}

/// The outcome of a run whose future panicked (a core bug): it still ends for the host.
pub(crate) fn panicked(message: String) -> Outcome {
    Outcome::Failed(
        CError::new(
            phaseo_agent::ErrorCode::ToolFailed,
            format!("internal error: {message}"),
        )
        .to_json(),
    )
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
    /// Starts `run` as `start` says; `host.on_done` is called when it ends. The future
    /// comes boxed from where it is made (see `BoxedRun`).
    pub(crate) fn new(
        start: Start,
        host: Arc<Host>,
        cancel: CancellationToken,
        run: BoxedRun<Result<RunResult, AgentError>>,
    ) -> Self {
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
/// again (same answer), until the state is taken with `phaseo_run_take_state`. Blocks:
/// never call it from a callback.
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
        let slot = ended(run, "phaseo_run_wait")?;
        match slot.as_ref() {
            Some(Outcome::State(state)) => {
                write_out(out_json, state.to_json());
                Ok(PhaseoStatus::Ok)
            }
            Some(Outcome::Failed(error)) => Err(RawError(error.clone()).into()),
            Some(Outcome::Taken) => Err(taken()),
            None => unreachable!("waited until the outcome was set"),
        }
    })
}

/// Takes the ended run's state as a native handle, without writing its JSON text:
/// `PHASEO_STATUS_OK` gives the state in `out_state` (free it with `phaseo_state_free`)
/// and, in `out_head`, the canonical JSON text of the state with its growing parts
/// (`run.messages`, `steps`, `stepResults`) empty and `items` holding only the output's
/// entry (none is written when `out_head` is NULL); the whole text is
/// `phaseo_state_json`'s. A failed run gives `PHASEO_STATUS_ERROR` as `phaseo_run_wait`
/// does (and may be asked again). Once taken, the state is the host's: `phaseo_run_wait`
/// and this function refuse to give it again. Blocks until the run ended, like
/// `phaseo_run_wait`.
#[no_mangle]
pub unsafe extern "C" fn phaseo_run_take_state(
    run: *const PhaseoRun,
    out_state: *mut *mut PhaseoState,
    out_head: *mut *mut c_char,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    if !out_state.is_null() {
        *out_state = std::ptr::null_mut();
    }
    if !out_head.is_null() {
        *out_head = std::ptr::null_mut();
    }
    guard(out_error, || {
        if out_state.is_null() {
            return Err(CError::argument("out_state is NULL"));
        }
        let mut slot = ended(run, "phaseo_run_take_state")?;
        match slot.as_ref() {
            Some(Outcome::State(_)) => {}
            Some(Outcome::Failed(error)) => return Err(RawError(error.clone()).into()),
            Some(Outcome::Taken) => return Err(taken()),
            None => unreachable!("waited until the outcome was set"),
        }
        let Some(Outcome::State(mut state)) = slot.replace(Outcome::Taken) else {
            unreachable!("the outcome was a state")
        };
        drop(slot);
        if !out_head.is_null() {
            write_out(out_head, state.head_json());
        }
        *out_state = Box::into_raw(Box::new(PhaseoState { state }));
        Ok(PhaseoStatus::Ok)
    })
}

/// The run's outcome slot once the run ended (waited for).
unsafe fn ended<'a>(
    run: *const PhaseoRun,
    function: &str,
) -> Result<std::sync::MutexGuard<'a, Option<Outcome>>, CError> {
    let run = run
        .as_ref()
        .ok_or_else(|| CError::argument("the run handle is NULL"))?;
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(CError::argument(format!(
            "{function} was called from a callback (a core thread); wait elsewhere"
        )));
    }
    if run.driven.as_ref().is_some_and(|d| !d.ended()) {
        return Err(CError::argument(format!(
            "{function} was called on a driven run that has not ended; poll it with phaseo_run_poll until it ends"
        )));
    }
    let mut slot = lock(&run.shared.outcome);
    while slot.is_none() {
        slot = run
            .shared
            .ended
            .wait(slot)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
    }
    Ok(slot)
}

fn taken() -> CError {
    CError::argument("the run's state was already taken with phaseo_run_take_state")
}

/// A run's state held natively (`phaseo_run_take_state`).
pub struct PhaseoState {
    state: Box<RunResult>,
}

/// The state's canonical JSON text (free it with `phaseo_string_free`); NULL for a NULL
/// state. Any thread, any number of times.
#[no_mangle]
pub unsafe extern "C" fn phaseo_state_json(state: *const PhaseoState) -> *mut c_char {
    match state.as_ref() {
        Some(s) => owned_string(s.state.to_json()),
        None => std::ptr::null_mut(),
    }
}

/// The state's canonical JSON text without its `items` (free it with
/// `phaseo_string_free`); NULL for a NULL state. Every other part is as in
/// `phaseo_state_json`'s text, in its order; the items repeat every call's input and output,
/// so a host that gives the application the conversation, steps and step results at once
/// reads them from this shorter text and asks for the whole one only when it is wanted. Not a
/// state to continue. Any thread, any number of times.
#[no_mangle]
pub unsafe extern "C" fn phaseo_state_json_without_items(state: *const PhaseoState) -> *mut c_char {
    match state.as_ref() {
        Some(s) => owned_string(s.state.to_json_without_items()),
        None => std::ptr::null_mut(),
    }
}

/// A rough size in bytes of the memory the state holds (0 for a NULL state): what a host
/// holding it tells its garbage collector.
#[no_mangle]
pub unsafe extern "C" fn phaseo_state_size(state: *const PhaseoState) -> usize {
    state.as_ref().map_or(0, |s| s.state.estimated_size())
}

/// Frees a state taken with `phaseo_run_take_state`. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn phaseo_state_free(state: *mut PhaseoState) {
    if !state.is_null() {
        drop(Box::from_raw(state));
    }
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
