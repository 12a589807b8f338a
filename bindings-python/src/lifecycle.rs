//! Interpreter shutdown safety. Rust threads (tokio workers, blocking threads) that touch
//! Python while the interpreter finalizes crash the process (CPython ends such threads
//! inside Rust frames). Every attach from such a thread is counted; an `atexit` hook stops
//! new attaches and waits, without the GIL, until the counted ones are done.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pyo3::prelude::*;

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static SHUTTING_DOWN: AtomicBool = AtomicBool::new(false);

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

/// Whether the interpreter is shutting down.
pub fn is_shutting_down() -> bool {
    SHUTTING_DOWN.load(Ordering::SeqCst)
}

/// Attaches to Python from a Rust thread, unless the interpreter is shutting down.
pub fn attach<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> Option<R> {
    let _counted = InFlight::start()?;
    Some(Python::attach(f))
}

/// The `atexit` hook: no new attaches, then wait (up to 5 s, without the GIL) for the
/// attaches in progress — except worker threads running an abandoned synchronous tool
/// (timed out or cancelled, ignoring it): nobody waits for their result, and they may block
/// for much longer.
#[pyfunction]
pub fn _shutdown(py: Python<'_>) {
    SHUTTING_DOWN.store(true, Ordering::SeqCst);
    crate::workers::wake_all();
    py.detach(|| {
        let deadline = Instant::now() + Duration::from_secs(5);
        while IN_FLIGHT.load(Ordering::SeqCst) > crate::workers::abandoned()
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}
