//! Calling Python callables from the core's tasks.
//!
//! - Synchronous tool executors (`def`) run on blocking threads: one GIL acquisition per
//!   call, arguments and result converted there.
//! - Everything else (async executors, hooks, validators, predicates, model clients) runs
//!   on the run's asyncio loop thread — the caller's loop for `*_async` entry points, a
//!   background loop for blocking ones — through a [`LoopBridge`]: jobs queue up in Rust
//!   and ONE wake-up byte per batch makes the loop take them all, so a fan-out of 1,000
//!   calls costs one thread hop, and tokio threads never wait for the GIL. Coroutines become
//!   asyncio tasks; dropping the wait (timeout, cancellation) cancels the task.

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use phaseo_agent::{ToolError, Value};
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyTuple};
use tokio::sync::oneshot;

use crate::convert::to_value;
use crate::errors::to_tool_error;

fn shutting_down() -> ToolError {
    ToolError::new("the Python interpreter is shutting down")
}

tokio::task_local! {
    /// The loop bridge of the current run.
    pub static EVENT_LOOP: Arc<BridgeInner>;
}

type Start = Box<dyn for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyAny>> + Send>;
type Finish = Box<dyn for<'py> FnOnce(Python<'py>, PyResult<Bound<'py, PyAny>>) + Send>;

struct Job {
    id: u64,
    start: Start,
    finish: Finish,
}

#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    cancels: Vec<u64>,
    wake_sent: bool,
}

/// The Rust side of one asyncio loop's bridge.
pub struct BridgeInner {
    event_loop: Py<PyAny>,
    queue: Mutex<Queue>,
    wake: UnixStream,
    /// Tasks in flight by job id, for cancellation (touched on the loop thread only).
    tasks: Mutex<HashMap<u64, Py<PyAny>>>,
    /// What to do when a task ends, by the task object's address (alive until its
    /// done callback ran).
    finishes: Mutex<HashMap<usize, (u64, Finish)>>,
    /// The one done callback every task of this loop shares.
    on_done: OnceLock<Py<PyAny>>,
    next_id: AtomicU64,
    closed: AtomicBool,
}

impl BridgeInner {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(&self, f: impl FnOnce(&mut Queue)) {
        let wake = {
            let mut q = self.lock();
            f(&mut q);
            !std::mem::replace(&mut q.wake_sent, true)
        };
        if wake {
            // A full socket buffer means a wake-up is pending anyway.
            let _ = (&self.wake).write(&[1]);
        }
    }

    fn submit(&self, start: Start, finish: Finish) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.push(|q| q.jobs.push(Job { id, start, finish }));
        id
    }

    fn cancel(&self, id: u64) {
        if !self.closed.load(Ordering::Acquire) {
            self.push(|q| q.cancels.push(id));
        }
    }

    /// Runs on the loop thread: starts queued jobs, cancels abandoned tasks.
    fn drain(self: &Arc<Self>, py: Python<'_>) {
        let (jobs, cancels) = {
            let mut q = self.lock();
            q.wake_sent = false;
            (std::mem::take(&mut q.jobs), std::mem::take(&mut q.cancels))
        };
        for job in jobs {
            self.start(py, job);
        }
        for id in cancels {
            let task = self
                .tasks
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&id);
            if let Some(task) = task {
                let _ = task.bind(py).call_method0("cancel");
            }
        }
    }

    fn start(self: &Arc<Self>, py: Python<'_>, job: Job) {
        let Job { id, start, finish } = job;
        let value = match start(py) {
            Ok(v) => v,
            Err(e) => return finish(py, Err(e)),
        };
        if !is_awaitable(&value) {
            return finish(py, Ok(value));
        }
        let task = match self
            .event_loop
            .bind(py)
            .call_method1("create_task", (ensure_coroutine(py, value),))
        {
            Ok(t) => t,
            Err(e) => return finish(py, Err(e)),
        };
        let on_done = match self.done_callback(py) {
            Ok(cb) => cb,
            Err(e) => {
                let _ = task.call_method0("cancel");
                return finish(py, Err(e));
            }
        };
        self.finishes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(task.as_ptr() as usize, (id, finish));
        if let Err(e) = task.call_method1("add_done_callback", (on_done,)) {
            let _ = task.call_method0("cancel");
            let entry = self
                .finishes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&(task.as_ptr() as usize));
            if let Some((_, finish)) = entry {
                finish(py, Err(e));
            }
            return;
        }
        self.tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, task.unbind());
    }

    fn done_callback<'py>(self: &Arc<Self>, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(cb) = self.on_done.get() {
            return Ok(cb.bind(py).clone());
        }
        let bridge = Arc::downgrade(self);
        let cb = PyCFunction::new_closure(py, None, None, move |args, _| -> PyResult<()> {
            let py = args.py();
            let task = args.get_item(0)?;
            let Some(b) = bridge.upgrade() else {
                return Ok(());
            };
            let entry = b
                .finishes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&(task.as_ptr() as usize));
            if let Some((id, finish)) = entry {
                b.tasks
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id);
                finish(py, task.call_method0("result"));
            }
            Ok(())
        })?
        .into_any();
        let _ = self.on_done.set(cb.clone().unbind());
        Ok(cb)
    }
}

fn is_awaitable(obj: &Bound<'_, PyAny>) -> bool {
    obj.hasattr("__await__").unwrap_or(false)
}

fn ensure_coroutine<'py>(py: Python<'py>, value: Bound<'py, PyAny>) -> Bound<'py, PyAny> {
    // Native coroutines (`async def`) are the common case: checked without a lookup.
    if value.get_type().name().is_ok_and(|n| n == "coroutine") {
        return value;
    }
    let coroutine = py
        .import("asyncio")
        .and_then(|a| a.call_method1("iscoroutine", (&value,)))
        .and_then(|r| r.is_truthy())
        .unwrap_or(false);
    if coroutine {
        return value;
    }
    py.import("phaseo_agent._bridge")
        .and_then(|b| b.getattr("_await")?.call1((&value,)))
        .unwrap_or(value)
}

/// A loop's bridge, as the Python layer holds it (one per loop, see `_bridge.bridge_for`).
#[pyclass(name = "LoopBridge", module = "phaseo_agent._native", frozen)]
pub struct PyLoopBridge {
    pub inner: Arc<BridgeInner>,
}

#[pymethods]
impl PyLoopBridge {
    /// A bridge for `event_loop`, woken through `wake_fd` (a socket the loop reads).
    #[new]
    fn new(event_loop: Py<PyAny>, wake_fd: i32) -> PyResult<Self> {
        use std::os::fd::{BorrowedFd, FromRawFd, IntoRawFd};
        // SAFETY: the Python layer passes an open socket it keeps alive; we own a duplicate.
        let owned = unsafe { BorrowedFd::borrow_raw(wake_fd) }.try_clone_to_owned()?;
        let wake = unsafe { UnixStream::from_raw_fd(owned.into_raw_fd()) };
        wake.set_nonblocking(true)?;
        Ok(Self {
            inner: Arc::new(BridgeInner {
                event_loop,
                queue: Mutex::new(Queue::default()),
                wake,
                tasks: Mutex::new(HashMap::new()),
                finishes: Mutex::new(HashMap::new()),
                on_done: OnceLock::new(),
                next_id: AtomicU64::new(1),
                closed: AtomicBool::new(false),
            }),
        })
    }

    /// Called by the loop when the wake socket is readable.
    fn drain(&self, py: Python<'_>) {
        self.inner.drain(py);
    }

    /// Marks the bridge closed (its loop is closing).
    fn close(&self) {
        self.inner.closed.store(true, Ordering::Release);
    }
}

/// The bridge of the loop `event_loop` (created on first use by the Python layer).
pub fn bridge_for(
    py: Python<'_>,
    event_loop: Option<&Bound<'_, PyAny>>,
) -> PyResult<Arc<BridgeInner>> {
    let module = py.import("phaseo_agent._bridge")?;
    let bridge = match event_loop {
        Some(l) => module.getattr("bridge_for")?.call1((l,))?,
        None => module.getattr("background_bridge")?.call0()?,
    };
    Ok(bridge.cast::<PyLoopBridge>()?.get().inner.clone())
}

/// Waits for a job's outcome; cancels its task if dropped first.
struct Waiting {
    bridge: Arc<BridgeInner>,
    id: u64,
    done: bool,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if !self.done {
            self.bridge.cancel(self.id);
        }
    }
}

/// A Python callable the core calls back.
pub struct HostFn {
    func: Arc<Py<PyAny>>,
    /// Run on a blocking thread (synchronous tool executors): it may take long.
    blocking: bool,
}

impl HostFn {
    /// Wraps a callable.
    pub fn new(func: Py<PyAny>, blocking: bool) -> Self {
        Self {
            func: Arc::new(func),
            blocking,
        }
    }

    /// Calls it with the arguments `args` builds, awaits a returned awaitable as a task on
    /// the run's loop, and converts the outcome with `convert` — all under the GIL of the
    /// thread that runs it.
    pub async fn call<T, A, C>(&self, args: A, convert: C) -> Result<T, ToolError>
    where
        A: for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>> + Send + 'static,
        C: for<'py> FnOnce(&Bound<'py, PyAny>) -> PyResult<T> + Send + 'static,
        T: Send + 'static,
    {
        let bridge = EVENT_LOOP.try_with(Clone::clone).ok();
        let func = self.func.clone();
        if self.blocking {
            let (tx, rx) = oneshot::channel::<Result<Result<T, ToolError>, (Py<PyAny>, C)>>();
            crate::workers::run(Box::new(move |py| {
                let result = args(py).and_then(|a| func.bind(py).call1(a));
                let outcome = match result {
                    Ok(v) if is_awaitable(&v) => Err((v.unbind(), convert)),
                    Ok(v) => Ok(convert(&v).map_err(|e| to_tool_error(py, e))),
                    Err(e) => Ok(Err(to_tool_error(py, e))),
                };
                let _ = tx.send(outcome);
            }));
            return match rx.await {
                Ok(Ok(r)) => r,
                // A `def` returned an awaitable: await it on the loop like a coroutine.
                Ok(Err((awaitable, convert))) => {
                    let bridge =
                        bridge.ok_or_else(|| ToolError::new("no event loop for an awaitable"))?;
                    run_on_loop(bridge, move |py| Ok(awaitable.into_bound(py)), convert).await
                }
                Err(_) => Err(shutting_down()),
            };
        }
        let bridge = bridge.ok_or_else(|| {
            ToolError::new("Python callbacks need a run started by the Python binding")
        })?;
        run_on_loop(
            bridge,
            move |py| args(py).and_then(|a| func.bind(py).call1(a)),
            convert,
        )
        .await
    }

    /// Calls it and converts the outcome to a JSON value.
    pub async fn call_value<A>(&self, args: A) -> Result<Value, ToolError>
    where
        A: for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>> + Send + 'static,
    {
        self.call(args, to_value).await
    }
}

async fn run_on_loop<T, S, C>(
    bridge: Arc<BridgeInner>,
    start: S,
    convert: C,
) -> Result<T, ToolError>
where
    S: for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyAny>> + Send + 'static,
    C: for<'py> FnOnce(&Bound<'py, PyAny>) -> PyResult<T> + Send + 'static,
    T: Send + 'static,
{
    if bridge.closed.load(Ordering::Acquire) {
        return Err(ToolError::new("the run's event loop is closed"));
    }
    let (tx, rx) = oneshot::channel::<Result<T, ToolError>>();
    let finish: Finish = Box::new(move |py, outcome| {
        let converted = outcome
            .and_then(|v| convert(&v))
            .map_err(|e| to_tool_error(py, e));
        let _ = tx.send(converted);
    });
    let id = bridge.submit(Box::new(start), finish);
    let mut waiting = Waiting {
        bridge,
        id,
        done: false,
    };
    let outcome = rx.await;
    waiting.done = true;
    outcome.unwrap_or_else(|_| {
        Err(ToolError::new(
            "the run's event loop stopped before the call finished",
        ))
    })
}
