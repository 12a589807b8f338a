//! Runs of the `*_async` entry points, polled on the caller's event-loop thread.
//!
//! The run's future lives in a [`LoopDriver`]; its waker asks the loop (through the
//! loop's bridge) to poll it again, and each poll runs inside the caller's `contextvars`
//! context, with the GIL held, like any asyncio callback. So the callbacks of the run —
//! `async def` tools, hooks, validators, host models, `on_event` — start right inside the
//! poll, with no thread hop, and a batch of finished tool tasks costs one poll. Tokio still
//! provides the timers, blocking threads and sockets (the poll enters its runtime).

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::task::{Context, Wake, Waker};
use std::thread::ThreadId;

use futures::FutureExt;
use phaseo_agent::driven::{DrivenRun, Polled};
use phaseo_agent::CancellationToken;
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyDict};

use crate::host::{BridgeInner, PollingGuard};

/// One run driven on its loop thread.
pub struct LoopDriver {
    run: Mutex<DrivenRun<()>>,
    /// A poll is queued and has not started yet (wake-ups coalesce).
    scheduled: AtomicBool,
    bridge: Arc<BridgeInner>,
    /// The caller's `contextvars` context (a copy), every poll runs in it.
    context: Py<PyAny>,
    /// A Python callable that polls this driver (holds it weakly).
    poll_callable: OnceLock<Py<PyAny>>,
    /// `loop.call_soon(poll, context=...)` as one callable: how the loop thread asks for a poll.
    call_soon_poll: OnceLock<Py<PyAny>>,
    loop_thread: ThreadId,
    /// The `asyncio.Future` handed to Python (settled with an error if a poll panics).
    target: Py<PyAny>,
    /// The loop is gone: drop the run at the end of the poll in progress.
    abandoned: AtomicBool,
}

thread_local! {
    /// A `KeyboardInterrupt` / `SystemExit` raised by a callback that started inside a poll
    /// (an eager task's first step): re-raised once the poll ends, so it stops the loop as
    /// asyncio would.
    static INTERRUPT: std::cell::RefCell<Option<PyErr>> = const { std::cell::RefCell::new(None) };
}

/// Keeps `error` to raise after the poll or drain in progress when it is a host interrupt
/// (KeyboardInterrupt, SystemExit).
pub fn raise_later_if_interrupt(py: Python<'_>, error: &PyErr) {
    if crate::errors::is_interrupt(py, error) {
        INTERRUPT.with(|i| {
            i.borrow_mut().get_or_insert_with(|| error.clone_ref(py));
        });
    }
}

/// The interrupt kept by [`raise_later_if_interrupt`], as a result.
pub fn take_interrupt() -> PyResult<()> {
    match INTERRUPT.with(|i| i.borrow_mut().take()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

impl Wake for LoopDriver {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.scheduled.swap(true, Ordering::AcqRel) || self.bridge.is_closed() {
            return;
        }
        // On the loop thread (a callback of this loop is running): no socket round trip.
        if std::thread::current().id() == self.loop_thread {
            if let Some(call_soon) = self.call_soon_poll.get() {
                let queued = Python::attach(|py| call_soon.bind(py).call0().is_ok());
                if queued {
                    return;
                }
            }
        }
        self.bridge.schedule_poll(self.clone());
    }
}

impl LoopDriver {
    /// Polls in the run's context (called by the bridge on the loop thread).
    pub fn poll_in_context(self: &Arc<Self>, py: Python<'_>) -> PyResult<()> {
        let Some(poll) = self.poll_callable.get() else {
            return Ok(());
        };
        match self.context.bind(py).call_method1("run", (poll.bind(py),)) {
            Ok(_) => Ok(()),
            Err(e) if !e.is_instance_of::<pyo3::exceptions::PyException>(py) => Err(e),
            Err(_) => {
                // The context is entered already (a nested event loop runs inside one of
                // this run's callbacks): poll in it as it is rather than lose the wake-up.
                self.poll_now(py);
                take_interrupt()
            }
        }
    }

    fn poll_now(self: &Arc<Self>, py: Python<'_>) {
        use std::sync::TryLockError;
        self.scheduled.store(false, Ordering::Release);
        let mut run = match self.run.try_lock() {
            Ok(run) => run,
            // Re-entered (a callback ran a nested event loop): poll again after this poll.
            Err(TryLockError::WouldBlock) => {
                self.wake_by_ref();
                return;
            }
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
        };
        if run.has_ended() {
            return;
        }
        let waker = Waker::from(self.clone());
        let polled = {
            let _polling = PollingGuard::enter(&self.bridge);
            run.poll_once(&mut Context::from_waker(&waker))
        };
        if matches!(polled, Polled::Pending) && !self.abandoned.load(Ordering::Acquire) {
            return;
        }
        run.abandon();
        drop(run);
        self.bridge.forget(self);
        if let Polled::Panicked(message) = polled {
            let target = self.target.bind(py);
            if matches!(
                target.call_method0("done").and_then(|d| d.is_truthy()),
                Ok(false)
            ) {
                let error =
                    pyo3::exceptions::PyRuntimeError::new_err(format!("internal error: {message}"));
                if let Err(e) = target.call_method1("set_exception", (error.into_value(py),)) {
                    e.write_unraisable(py, Some(target));
                }
            }
        }
    }

    /// Drops the run (its loop is gone); a poll in progress drops it when it ends.
    pub fn abandon(&self) {
        self.abandoned.store(true, Ordering::Release);
        if let Ok(mut run) = self.run.try_lock() {
            run.abandon();
        }
    }
}

/// Runs `work` on the running loop's thread and returns an `asyncio.Future` of its
/// outcome, converted by `convert`. Cancelling the Python future cancels `cancel`.
pub fn drive<'py, F, T, C>(
    py: Python<'py>,
    bridge: Arc<BridgeInner>,
    cancel: CancellationToken,
    work: F,
    convert: C,
) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
    C: for<'a> FnOnce(Python<'a>, T) -> PyResult<Py<PyAny>> + Send + 'static,
{
    let (event_loop, future) = crate::awaitable::loop_future(py, Some(cancel))?;

    let target = future.clone().unbind();
    let run = DrivenRun::new(async move {
        let outcome = AssertUnwindSafe(work).catch_unwind().await;
        // Polled on the loop thread with the GIL held: attaching is free.
        Python::attach(|py| {
            let target = target.bind(py);
            if !matches!(
                target.call_method0("done").and_then(|d| d.is_truthy()),
                Ok(false)
            ) {
                return;
            }
            let settled =
                match outcome {
                    Ok(output) => match convert(py, output) {
                        Ok(value) => target.call_method1("set_result", (value,)),
                        Err(e) => target.call_method1("set_exception", (e.into_value(py),)),
                    },
                    Err(_) => target.call_method1(
                        "set_exception",
                        (pyo3::exceptions::PyRuntimeError::new_err(
                            "internal error: the run panicked",
                        )
                        .into_value(py),),
                    ),
                };
            if let Err(e) = settled {
                e.write_unraisable(py, Some(target));
            }
        });
    });

    let context = py.import("contextvars")?.call_method0("copy_context")?;
    let driver = Arc::new(LoopDriver {
        run: Mutex::new(run),
        scheduled: AtomicBool::new(true),
        bridge: bridge.clone(),
        context: context.clone().unbind(),
        poll_callable: OnceLock::new(),
        call_soon_poll: OnceLock::new(),
        loop_thread: std::thread::current().id(),
        target: future.clone().unbind(),
        abandoned: AtomicBool::new(false),
    });
    let weak: Weak<LoopDriver> = Arc::downgrade(&driver);
    let poll = PyCFunction::new_closure(py, None, None, move |args, _| -> PyResult<()> {
        if let Some(driver) = weak.upgrade() {
            driver.poll_now(args.py());
        }
        take_interrupt()
    })?;
    let _ = driver.poll_callable.set(poll.clone().unbind().into_any());
    let kwargs = PyDict::new(py);
    kwargs.set_item("context", &context)?;
    let call_soon = py
        .import("functools")?
        .getattr("partial")?
        .call((event_loop.getattr("call_soon")?, poll), Some(&kwargs))?;
    let _ = driver.call_soon_poll.set(call_soon.clone().unbind());
    // The first poll: the next loop iteration (so keeping the driver after queueing it is safe).
    call_soon.call0()?;
    bridge.keep(&driver);
    Ok(future)
}
