//! Calling Python callables from the core's tasks: synchronous callables on blocking
//! threads (or inline when quick), coroutines on the run's asyncio loop, cancelled when
//! the core stops waiting for them.

use std::sync::{Arc, Mutex};

use phaseo_agent::{ToolError, Value};
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyTuple};

use crate::convert::to_value;
use crate::errors::to_tool_error;
use crate::lifecycle;

fn shutting_down() -> ToolError {
    ToolError::new("the Python interpreter is shutting down")
}

tokio::task_local! {
    /// The asyncio loop of the current run: the caller's loop for `*_async` entry points,
    /// `None` for blocking entry points (coroutines then run on a background loop thread).
    pub static EVENT_LOOP: Option<Arc<Py<PyAny>>>;
}

/// The loop of the current run, if it has one.
pub fn current_loop() -> Option<Arc<Py<PyAny>>> {
    EVENT_LOOP.try_with(Clone::clone).ok().flatten()
}

/// A Python callable the core calls back.
pub struct HostFn {
    func: Py<PyAny>,
    /// Run on a blocking thread (synchronous tool executors): it may take long.
    blocking: bool,
}

impl HostFn {
    /// Wraps a callable.
    pub fn new(func: Py<PyAny>, blocking: bool) -> Self {
        Self { func, blocking }
    }

    /// Calls it with the arguments `args` builds (under the GIL), awaits a returned
    /// awaitable on the run's loop, and converts the outcome with `convert` (under the GIL).
    pub async fn call<T, A, C>(&self, args: A, convert: C) -> Result<T, ToolError>
    where
        A: for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>> + Send + 'static,
        C: for<'py> FnOnce(&Bound<'py, PyAny>) -> PyResult<T> + Send + 'static,
        T: Send + 'static,
    {
        let event_loop = current_loop();
        let func = lifecycle::attach(|py| self.func.clone_ref(py)).ok_or_else(shutting_down)?;
        let call = move || -> Result<Returned, ToolError> {
            lifecycle::attach(|py| {
                let result = args(py)
                    .and_then(|a| func.bind(py).call1(a))
                    .map_err(|e| to_tool_error(py, e))?;
                if is_awaitable(&result) {
                    Ok(Returned::Pending(
                        submit(py, result, event_loop).map_err(|e| to_tool_error(py, e))?,
                    ))
                } else {
                    Ok(Returned::Ready(result.unbind()))
                }
            })
            .unwrap_or_else(|| Err(shutting_down()))
        };
        let returned = if self.blocking {
            match tokio::task::spawn_blocking(call).await {
                Ok(r) => r?,
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(e) => return Err(ToolError::new(e.to_string())),
            }
        } else {
            call()?
        };
        let value = match returned {
            Returned::Ready(v) => v,
            Returned::Pending(pending) => pending.wait().await?,
        };
        lifecycle::attach(|py| convert(value.bind(py)).map_err(|e| to_tool_error(py, e)))
            .unwrap_or_else(|| Err(shutting_down()))
    }

    /// Calls it and converts the outcome to a JSON value.
    pub async fn call_value<A>(&self, args: A) -> Result<Value, ToolError>
    where
        A: for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>> + Send + 'static,
    {
        self.call(args, to_value).await
    }
}

enum Returned {
    Ready(Py<PyAny>),
    Pending(PendingCoroutine),
}

fn is_awaitable(obj: &Bound<'_, PyAny>) -> bool {
    obj.hasattr("__await__").unwrap_or(false)
}

/// A coroutine submitted to a loop; cancelled if dropped before it finished.
pub struct PendingCoroutine {
    future: Option<Py<PyAny>>,
    done: tokio::sync::oneshot::Receiver<()>,
}

/// Submits an awaitable to the run's loop (or the background loop).
pub fn submit(
    py: Python<'_>,
    awaitable: Bound<'_, PyAny>,
    event_loop: Option<Arc<Py<PyAny>>>,
) -> PyResult<PendingCoroutine> {
    let bridge = py.import("phaseo_agent._bridge")?;
    let target = match event_loop {
        Some(l) => l.bind(py).clone(),
        None => bridge.getattr("background_loop")?.call0()?,
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    let tx = Mutex::new(Some(tx));
    let done = PyCFunction::new_closure(py, None, None, move |_args, _kwargs| {
        if let Some(tx) = tx.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = tx.send(());
        }
    })?;
    let future = bridge.getattr("submit")?.call1((awaitable, target, done))?;
    Ok(PendingCoroutine {
        future: Some(future.unbind()),
        done: rx,
    })
}

impl PendingCoroutine {
    /// Waits for the coroutine's outcome.
    pub async fn wait(mut self) -> Result<Py<PyAny>, ToolError> {
        let _ = (&mut self.done).await;
        let future = self.future.take().expect("waited once");
        lifecycle::attach(|py| {
            future
                .bind(py)
                .call_method0("result")
                .map(Bound::unbind)
                .map_err(|e| to_tool_error(py, e))
        })
        .unwrap_or_else(|| Err(shutting_down()))
    }
}

impl Drop for PendingCoroutine {
    fn drop(&mut self) {
        if let Some(future) = self.future.take() {
            // The core stopped waiting (timeout, cancellation): cancel the asyncio task.
            lifecycle::attach(|py| {
                let _ = future.bind(py).call_method0("cancel");
            });
        }
    }
}
