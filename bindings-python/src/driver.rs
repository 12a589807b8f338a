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
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::ThreadId;

use futures::FutureExt;
use phaseo_agent::CancellationToken;
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyDict};

use crate::host::{BridgeInner, PollingGuard};

type RunFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// One run driven on its loop thread.
pub struct LoopDriver {
    future: Mutex<Option<RunFuture>>,
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
    pub fn poll_in_context(self: &Arc<Self>, py: Python<'_>) {
        let Some(poll) = self.poll_callable.get() else {
            return;
        };
        if self
            .context
            .bind(py)
            .call_method1("run", (poll.bind(py),))
            .is_err()
        {
            // The context is entered already (a nested event loop runs inside one of this
            // run's callbacks): poll in it as it is rather than lose the wake-up.
            self.poll_now();
        }
    }

    fn poll_now(self: &Arc<Self>) {
        self.scheduled.store(false, Ordering::Release);
        // Re-entered (a callback ran a nested event loop): poll again once this poll ends.
        let Ok(mut slot) = self.future.try_lock() else {
            self.wake_by_ref();
            return;
        };
        let Some(future) = slot.as_mut() else {
            return;
        };
        let _runtime = phaseo_agent::exec::runtime().enter();
        let _polling = PollingGuard::enter(&self.bridge);
        let waker = Waker::from(self.clone());
        if let Poll::Ready(()) = future.as_mut().poll(&mut Context::from_waker(&waker)) {
            *slot = None;
            drop(slot);
            self.bridge.forget(self);
        }
    }

    /// Drops the run (its loop is gone).
    pub fn abandon(&self) {
        let future = self.future.lock().unwrap_or_else(|e| e.into_inner()).take();
        drop(future);
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
    let run: RunFuture = Box::pin(async move {
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
        future: Mutex::new(Some(run)),
        scheduled: AtomicBool::new(true),
        bridge: bridge.clone(),
        context: context.clone().unbind(),
        poll_callable: OnceLock::new(),
        call_soon_poll: OnceLock::new(),
        loop_thread: std::thread::current().id(),
    });
    let weak: Weak<LoopDriver> = Arc::downgrade(&driver);
    let poll = PyCFunction::new_closure(py, None, None, move |_, _| {
        if let Some(driver) = weak.upgrade() {
            driver.poll_now();
        }
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
