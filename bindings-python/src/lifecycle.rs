//! Interpreter shutdown safety. Once CPython (3.11–3.13) finalizes, a thread that takes
//! the GIL back is ended with `pthread_exit`, a forced unwind that crashes the process when
//! it crosses Rust frames (their destructors and `catch_unwind` run and touch Python, or
//! abort). So Rust code never takes the GIL back after exit began: attaches from Rust
//! threads (tokio) are counted, and an `atexit` hook stops new ones and waits, without the
//! GIL, until the counted ones are done; a Python thread blocked in Rust code without the
//! GIL ([`detach`]) stays parked there instead of coming back. The worker threads of
//! synchronous executors are Python threads for the same reason (see `workers`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use pyo3::prelude::*;

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static SHUTTING_DOWN: AtomicBool = AtomicBool::new(false);
/// The thread that ran the `atexit` hook: the one that finalizes the interpreter.
static FINALIZING_THREAD: OnceLock<ThreadId> = OnceLock::new();

/// Counts one piece of work that will touch Python from a Rust thread.
pub struct InFlight(());

impl InFlight {
    /// `None` once the interpreter is shutting down.
    pub fn start() -> Option<Self> {
        IN_FLIGHT.fetch_add(1, Ordering::SeqCst);
        if SHUTTING_DOWN.load(Ordering::SeqCst) {
            IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(InFlight(()))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Attaches to Python from a Rust thread, unless the interpreter is shutting down.
pub fn attach<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> Option<R> {
    let _counted = InFlight::start()?;
    Some(Python::attach(f))
}

/// `py.detach(f)` for code that may still be blocked when the interpreter exits (a daemon
/// thread in a run, a worker waiting for work): coming back after exit began, the thread
/// parks for good instead of taking the GIL back — except on the thread that finalizes,
/// which owns the interpreter. Coming back before, it is counted until it holds the GIL,
/// so the `atexit` hook waits for it.
pub fn detach<T, F>(py: Python<'_>, f: F) -> T
where
    F: FnOnce() -> T + Send,
    T: Send,
{
    let (value, _counted) = py.detach(|| {
        let value = f();
        let counted = InFlight::start();
        if counted.is_none() && FINALIZING_THREAD.get() != Some(&std::thread::current().id()) {
            loop {
                std::thread::park();
            }
        }
        (value, counted)
    });
    value
}

/// The `atexit` hook: no new attaches from Rust threads, then wait (up to 5 s, without the
/// GIL) for those in progress. Executors still running (a `def` that timed out and ignores
/// `runtime.cancelled`) are not waited for: they run on Python threads, with no Rust frame
/// on the stack while the executor runs.
#[pyfunction]
pub fn _shutdown(py: Python<'_>) {
    let _ = FINALIZING_THREAD.set(std::thread::current().id());
    SHUTTING_DOWN.store(true, Ordering::SeqCst);
    py.detach(|| {
        let deadline = Instant::now() + Duration::from_secs(5);
        while IN_FLIGHT.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}
