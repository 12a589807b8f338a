//! Calling Python callables from the core's tasks.
//!
//! - Synchronous tool executors (`def`) run on worker threads (Python threads, see
//!   [`crate::workers`]): arguments and result converted there.
//! - Everything else (async executors, hooks, validators, predicates, model clients) runs
//!   on the run's asyncio loop thread — the caller's loop for `*_async` entry points, a
//!   background loop for blocking ones — through a [`LoopBridge`]: jobs queue up in Rust
//!   and ONE wake-up byte per batch makes the loop take them all, so a fan-out of 1,000
//!   calls costs one thread hop, and tokio threads never wait for the GIL. Coroutines become
//!   asyncio tasks; dropping the wait (timeout, cancellation) cancels the task.
//! - Runs of the `*_async` entry points are polled on the loop thread itself (see
//!   [`crate::driver`]): their callbacks start right inside the poll, with no hop at all.

use std::cell::Cell;
use std::collections::HashMap;
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use phaseo_agent::{ToolError, Value};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use tokio::sync::oneshot;

use crate::driver::LoopDriver;
use crate::errors::to_tool_error;

/// A panic in binding code during a call, as the call's error.
fn internal_error(payload: &(dyn std::any::Any + Send)) -> ToolError {
    ToolError::new(format!(
        "internal error: {}",
        phaseo_agent::panic_message(payload)
    ))
}

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
    polls: Vec<Arc<LoopDriver>>,
    wake_sent: bool,
}

thread_local! {
    /// The bridge whose run is being polled on this thread right now (its loop thread),
    /// as an address: callbacks of that run start at once instead of through the queue.
    static POLLING: Cell<usize> = const { Cell::new(0) };
}

/// Marks `bridge` as polled on this thread until dropped (restores the previous mark).
pub struct PollingGuard(usize);

impl PollingGuard {
    pub fn enter(bridge: &Arc<BridgeInner>) -> Self {
        Self(POLLING.with(|p| p.replace(Arc::as_ptr(bridge) as usize)))
    }
}

impl Drop for PollingGuard {
    fn drop(&mut self) {
        POLLING.with(|p| p.set(self.0));
    }
}

fn polled_here(bridge: &Arc<BridgeInner>) -> bool {
    POLLING.with(|p| p.get() == Arc::as_ptr(bridge) as usize)
}

/// The Rust side of one asyncio loop's bridge.
pub struct BridgeInner {
    queue: Mutex<Queue>,
    wake: UnixStream,
    /// Tasks in flight by job id, for cancellation (touched on the loop thread only).
    tasks: Mutex<HashMap<u64, Py<PyAny>>>,
    /// `run(awaitable, done)` of `_bridge._task_runner`: runs an awaitable as a task of
    /// this loop and reports its outcome to `done`.
    run_task: Py<PyAny>,
    /// Runs driven on this loop, until they end (the bridge keeps them alive).
    drivers: Mutex<HashMap<usize, Arc<LoopDriver>>>,
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

    /// Asks the loop to poll `driver` (from any thread, without the GIL).
    pub fn schedule_poll(&self, driver: Arc<LoopDriver>) {
        self.push(|q| q.polls.push(driver));
    }

    /// Keeps `driver` alive until [`Self::forget`] (or the loop closes).
    pub fn keep(&self, driver: &Arc<LoopDriver>) {
        self.drivers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(Arc::as_ptr(driver) as usize, driver.clone());
    }

    /// Lets go of a finished driver.
    pub fn forget(&self, driver: &LoopDriver) {
        let removed = self
            .drivers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(driver as *const LoopDriver as usize));
        drop(removed);
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    fn cancel(&self, id: u64) {
        if !self.closed.load(Ordering::Acquire) {
            self.push(|q| q.cancels.push(id));
        }
    }

    /// Runs on the loop thread: starts queued jobs, cancels abandoned tasks.
    fn drain(self: &Arc<Self>, py: Python<'_>) -> PyResult<()> {
        let (jobs, cancels, polls) = {
            let mut q = self.lock();
            q.wake_sent = false;
            (
                std::mem::take(&mut q.jobs),
                std::mem::take(&mut q.cancels),
                std::mem::take(&mut q.polls),
            )
        };
        let mut interrupted = Ok(());
        for driver in polls {
            if let Err(e) = driver.poll_in_context(py) {
                interrupted = interrupted.and(Err(e));
            }
        }
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
        interrupted.and_then(|()| crate::driver::take_interrupt())
    }

    /// Calls a job's callable; an awaitable result becomes a task (see `_bridge._task`)
    /// that reports back through a [`TaskDone`].
    fn start(self: &Arc<Self>, py: Python<'_>, job: Job) {
        let Job { id, start, finish } = job;
        let value = match start(py) {
            Ok(v) => v,
            Err(e) => return finish(py, Err(e)),
        };
        if !is_awaitable(&value) {
            return finish(py, Ok(value));
        }
        let done = match Bound::new(
            py,
            TaskDone {
                bridge: Arc::downgrade(self),
                id,
                finish: Mutex::new(Some(finish)),
            },
        ) {
            Ok(d) => d,
            Err(e) => {
                // The finish went with the failed allocation: nothing to report to.
                e.write_unraisable(py, None);
                return;
            }
        };
        match self.run_task.bind(py).call1((value, &done)) {
            // Still running (a task that finished at once reported already).
            Ok(task) if done.get().pending() => {
                self.tasks
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(id, task.unbind());
            }
            Ok(_) => {}
            Err(e) => {
                // An eager task whose first step raised KeyboardInterrupt / SystemExit (after
                // reporting it): it must still stop the loop.
                crate::driver::raise_later_if_interrupt(py, &e);
                done.get().report(py, Err(e));
            }
        }
    }
}

/// Reports the outcome of one task to the core (called by `_bridge._task`).
#[pyclass(name = "TaskDone", module = "phaseo_agent._native", frozen)]
pub struct TaskDone {
    bridge: std::sync::Weak<BridgeInner>,
    id: u64,
    finish: Mutex<Option<Finish>>,
}

impl TaskDone {
    fn pending(&self) -> bool {
        self.finish
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    fn report(&self, py: Python<'_>, outcome: PyResult<Bound<'_, PyAny>>) {
        let finish = self.finish.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(bridge) = self.bridge.upgrade() {
            let task = bridge
                .tasks
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&self.id);
            drop(task);
        }
        if let Some(finish) = finish {
            finish(py, outcome);
        }
    }
}

#[pymethods]
impl TaskDone {
    /// `done(True, value)` or `done(False, exception)`.
    fn __call__(&self, py: Python<'_>, ok: bool, value: Bound<'_, PyAny>) {
        let outcome = if ok {
            Ok(value)
        } else {
            Err(PyErr::from_value(value))
        };
        self.report(py, outcome);
    }
}

fn is_awaitable(obj: &Bound<'_, PyAny>) -> bool {
    obj.hasattr("__await__").unwrap_or(false)
}

/// A loop's bridge, as the Python layer holds it (one per loop, see `_bridge.bridge_for`).
#[pyclass(name = "LoopBridge", module = "phaseo_agent._native", frozen)]
pub struct PyLoopBridge {
    pub inner: Arc<BridgeInner>,
}

#[pymethods]
impl PyLoopBridge {
    /// A bridge woken through `wake_fd` (a socket its loop reads) that runs awaitables
    /// with `run_task(awaitable, done)`. It holds no reference to the loop, so a finished
    /// loop can be collected (its `weakref.finalize` closes the bridge).
    #[new]
    fn new(wake_fd: i32, run_task: Py<PyAny>) -> PyResult<Self> {
        use std::os::fd::{BorrowedFd, FromRawFd, IntoRawFd};
        // SAFETY: the Python layer passes an open socket it keeps alive; we own a duplicate.
        let owned = unsafe { BorrowedFd::borrow_raw(wake_fd) }.try_clone_to_owned()?;
        let wake = unsafe { UnixStream::from_raw_fd(owned.into_raw_fd()) };
        wake.set_nonblocking(true)?;
        Ok(Self {
            inner: Arc::new(BridgeInner {
                queue: Mutex::new(Queue::default()),
                wake,
                tasks: Mutex::new(HashMap::new()),
                run_task,
                drivers: Mutex::new(HashMap::new()),
                next_id: AtomicU64::new(1),
                closed: AtomicBool::new(false),
            }),
        })
    }

    /// Called by the loop when the wake socket is readable.
    /// Called by the loop when the wake socket is readable (raises a KeyboardInterrupt or
    /// SystemExit a callback raised meanwhile).
    fn drain(&self, py: Python<'_>) -> PyResult<()> {
        self.inner.drain(py)
    }

    /// Marks the bridge closed (its loop is gone) and drops the runs still driven on it.
    fn close(&self) {
        self.inner.closed.store(true, Ordering::Release);
        let tasks =
            std::mem::take(&mut *self.inner.tasks.lock().unwrap_or_else(|e| e.into_inner()));
        drop(tasks);
        let drivers =
            std::mem::take(&mut *self.inner.drivers.lock().unwrap_or_else(|e| e.into_inner()));
        for driver in drivers.into_values() {
            driver.abandon();
        }
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
    /// Run on a worker thread (synchronous tool executors): it may take long.
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
    /// thread that runs it. Whatever the callable raises becomes the call's error.
    pub async fn call<T, A, C>(&self, args: A, convert: C) -> Result<T, ToolError>
    where
        A: for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>> + Send + 'static,
        C: for<'py> FnOnce(&Bound<'py, PyAny>) -> Result<T, ToolError> + Send + 'static,
        T: Send + 'static,
    {
        let bridge = EVENT_LOOP.try_with(Clone::clone).ok();
        let func = self.func.clone();
        if self.blocking {
            let (tx, rx) = oneshot::channel::<Result<Result<T, ToolError>, (Py<PyAny>, C)>>();
            // A panic in binding code must not take the worker thread (and the call's
            // answer) with it.
            let prepare: crate::workers::Prepare = Box::new(move |py| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    args(py).map(|a| (func.bind(py).clone(), a))
                }))
                .unwrap_or_else(|p| {
                    Err(pyo3::exceptions::PyRuntimeError::new_err(
                        internal_error(p.as_ref()).message,
                    ))
                })
            });
            let finish: crate::workers::Finish = Box::new(move |py, result| {
                let outcome =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match result {
                        Ok(v) if is_awaitable(&v) => Err((v.unbind(), convert)),
                        Ok(v) => Ok(convert(&v)),
                        Err(e) => Ok(Err(to_tool_error(py, e))),
                    }))
                    .unwrap_or_else(|p| Ok(Err(internal_error(p.as_ref()))));
                let _ = tx.send(outcome);
            });
            let job = crate::workers::run(crate::workers::Job { prepare, finish });
            // Dropped here (the call timed out or was cancelled), `job` abandons the call:
            // it never starts, or its thread stops counting against the pool's limit.
            let outcome = rx.await;
            job.finish();
            return match outcome {
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

    /// Calls it and converts the outcome to a JSON value (a refused value is the call's
    /// error).
    pub async fn call_value<A>(&self, args: A) -> Result<Value, ToolError>
    where
        A: for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>> + Send + 'static,
    {
        self.call(args, crate::convert::returned_value).await
    }

    /// Calls it and converts the outcome to a tool result (a refused value is an invalid
    /// output).
    pub async fn call_result<A>(&self, args: A) -> Result<Value, ToolError>
    where
        A: for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>> + Send + 'static,
    {
        self.call(args, crate::convert::result_value).await
    }
}

async fn run_on_loop<T, S, C>(
    bridge: Arc<BridgeInner>,
    start: S,
    convert: C,
) -> Result<T, ToolError>
where
    S: for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyAny>> + Send + 'static,
    C: for<'py> FnOnce(&Bound<'py, PyAny>) -> Result<T, ToolError> + Send + 'static,
    T: Send + 'static,
{
    if bridge.closed.load(Ordering::Acquire) {
        return Err(ToolError::new("the run's event loop is closed"));
    }
    let (tx, rx) = oneshot::channel::<Result<T, ToolError>>();
    let finish: Finish = Box::new(move |py, outcome| {
        let converted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match outcome {
            Ok(v) => convert(&v),
            Err(e) => Err(to_tool_error(py, e)),
        }))
        .unwrap_or_else(|p| Err(internal_error(p.as_ref())));
        let _ = tx.send(converted);
    });
    let id = if polled_here(&bridge) {
        // Called while the loop thread polls this run: start right here.
        let id = bridge.next_id.fetch_add(1, Ordering::Relaxed);
        Python::attach(|py| {
            bridge.start(
                py,
                Job {
                    id,
                    start: Box::new(start),
                    finish,
                },
            )
        });
        id
    } else {
        bridge.submit(Box::new(start), finish)
    };
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
