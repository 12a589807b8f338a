//! Driven runs: a run that the host polls on a thread of its own instead of a task of the
//! core's runtime (`phaseo_agent_run_driven`, `phaseo_run_poll`).
//!
//! Why: a run on the core's runtime hands every tool call over twice — a core thread
//! queues the call and sleeps, a host thread wakes to run it, and its answer wakes a core
//! thread again. A turn of one call then costs two thread wake-ups, far more than the turn
//! itself. A host whose runtime schedules its own tasks cheaply (Go's goroutines) instead
//! polls the run where it waits for it: the calls the poll produces are started by the
//! same thread, and an answer given on a host thread wakes the driver without the kernel.
//!
//! The wake protocol: `phaseo_run_poll` polls the run's future once (again at once when it
//! was woken meanwhile) and returns `PHASEO_STATUS_PENDING` when the run waits for
//! something. When that something happens (a call's answer, a timer, a cancellation) the
//! host's `wake` function is called — once per pending poll, from whichever thread made the
//! run ready — and the host polls again. Core resources (timers, the blocking pool, spawned
//! connections) stay on the core's runtime.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Wake, Waker};

use phaseo_agent::driven::{BoxedRun, DrivenRun, Polled};
use phaseo_agent::{AgentError, RunResult};

use crate::error::{guard, CError, PhaseoStatus};
use crate::host::Host;
use crate::run::{outcome_of, panicked, PhaseoRun, Shared};

/// Called when a driven run can make progress: poll it again (from the host's thread, not
/// inside this call). May be called from any thread, during `phaseo_run_poll` included.
pub type PhaseoWakeFn = Option<unsafe extern "C" fn(wake_data: *mut c_void)>;

/// The driven part of a [`PhaseoRun`]: its future and host until it ends, and its waker.
pub(crate) struct Driven {
    running: Mutex<Option<Running>>,
    shared: Arc<Shared>,
    waker: Arc<DriveWaker>,
}

/// A driven run that has not ended. Let go before it ends, its future is dropped first
/// (inside the core's runtime, `DrivenRun`), then its host.
struct Running {
    run: DrivenRun<Result<RunResult, AgentError>>,
    /// Told `on_done`, then let go (its `release`), when the run ends.
    host: Arc<Host>,
}

impl Driven {
    pub(crate) fn new(
        shared: Arc<Shared>,
        host: Arc<Host>,
        run: BoxedRun<Result<RunResult, AgentError>>,
    ) -> Self {
        Self {
            running: Mutex::new(Some(Running {
                run: DrivenRun::boxed(run),
                host,
            })),
            shared,
            waker: Arc::new(DriveWaker::default()),
        }
    }

    /// Whether the run has ended (its future is gone).
    pub(crate) fn ended(&self) -> bool {
        lock(&self.running).is_none()
    }

    /// Polls the run until it is pending without having been woken meanwhile, or ended.
    fn poll(&self, wake: Target) -> PhaseoStatus {
        let mut slot = lock(&self.running);
        let Some(running) = slot.as_mut() else {
            return PhaseoStatus::Ok;
        };
        *lock(&self.waker.target) = Some(wake);
        let waker = Waker::from(self.waker.clone());
        let mut cx = Context::from_waker(&waker);
        let state = &self.waker.state;
        let polled = running.run.poll(
            &mut cx,
            || state.store(POLLING, Ordering::SeqCst),
            // A wake-up during the poll left WOKEN_WHILE_POLLING: there is more to do now.
            || {
                state
                    .compare_exchange(POLLING, IDLE, Ordering::SeqCst, Ordering::SeqCst)
                    .is_err()
            },
        );
        let outcome = match polled {
            Polled::Pending => return PhaseoStatus::Pending,
            Polled::Busy => {
                // A run that keeps waking itself: give the host's thread back, and be
                // polled again.
                state.store(IDLE, Ordering::SeqCst);
                self.waker.wake_by_ref();
                return PhaseoStatus::Pending;
            }
            Polled::Ended(result) => outcome_of(result),
            Polled::Panicked(message) => panicked(message),
        };
        // The run's future is gone already: what it held is let go before the outcome
        // is told.
        let Some(Running { host, .. }) = slot.take() else {
            unreachable!("polled a running run");
        };
        drop(slot);
        self.shared.end(outcome);
        host.done();
        PhaseoStatus::Ok
    }
}

const IDLE: u8 = 0;
const POLLING: u8 = 1;
const WOKEN_WHILE_POLLING: u8 = 2;
const NOTIFIED: u8 = 3;

/// The host's wake function and its data.
#[derive(Clone, Copy)]
struct Target(unsafe extern "C" fn(*mut c_void), *mut c_void);

// SAFETY: the ABI requires the wake function and its data to be usable from any thread.
unsafe impl Send for Target {}

/// The waker of a driven run: tells the host once per pending poll, and never while the
/// run is being polled (that poll goes round again instead).
#[derive(Default)]
struct DriveWaker {
    state: AtomicU8,
    target: Mutex<Option<Target>>,
}

impl Wake for DriveWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut state = self.state.load(Ordering::SeqCst);
        loop {
            let next = match state {
                IDLE => NOTIFIED,
                POLLING => WOKEN_WHILE_POLLING,
                _ => return,
            };
            match self
                .state
                .compare_exchange(state, next, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) if next == NOTIFIED => break,
                Ok(_) => return,
                Err(now) => state = now,
            }
        }
        let target = *lock(&self.target);
        if let Some(Target(wake, data)) = target {
            // SAFETY: ABI contract (see `PhaseoWakeFn`).
            unsafe { wake(data) };
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Polls a run started by `phaseo_agent_run_driven` (or `_continue_driven`,
/// `_recover_driven`) on the calling thread: the run does its work here, its host's
/// `invoke` and `on_event` are called here, until it waits for something.
/// `PHASEO_STATUS_PENDING`: it waits; `wake(wake_data)` will be called (from any thread,
/// maybe before this function returns) when it should be polled again.
/// `PHASEO_STATUS_OK`: it ended (`on_done` was called); take its result with
/// `phaseo_run_wait`, which does not block. One thread at a time; never from a callback.
#[no_mangle]
pub unsafe extern "C" fn phaseo_run_poll(
    run: *const PhaseoRun,
    wake: PhaseoWakeFn,
    wake_data: *mut c_void,
    out_error: *mut *mut std::ffi::c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let run = run
            .as_ref()
            .ok_or_else(|| CError::argument("the run handle is NULL"))?;
        let wake = wake.ok_or_else(|| CError::argument("wake is NULL"))?;
        let driven = run.driven.as_ref().ok_or_else(|| {
            CError::argument(
                "phaseo_run_poll was given a run the core runs itself (not started driven)",
            )
        })?;
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(CError::argument(
                "phaseo_run_poll was called from a callback (a core thread); poll elsewhere",
            ));
        }
        Ok(driven.poll(Target(wake, wake_data)))
    })
}
