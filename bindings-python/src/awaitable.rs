//! Rust futures as asyncio awaitables: an `asyncio.Future` on the caller's loop, resolved
//! from the tokio task through `call_soon_threadsafe`. Cancelling the Python future
//! cancels the Rust work (through its token). The resolving attach is counted (see
//! `lifecycle`), so interpreter shutdown never interrupts it.

use std::future::Future;

use phaseo_agent::CancellationToken;
use pyo3::prelude::*;
use pyo3::types::PyCFunction;

use crate::lifecycle;

/// The running loop and a new `asyncio.Future` of it; cancelling the future cancels
/// `cancel`.
pub fn loop_future<'py>(
    py: Python<'py>,
    cancel: Option<CancellationToken>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let event_loop = py.import("asyncio")?.call_method0("get_running_loop")?;
    let future = event_loop.call_method0("create_future")?;
    if let Some(token) = cancel {
        let on_done = PyCFunction::new_closure(py, None, None, move |args, _| -> PyResult<()> {
            if args.get_item(0)?.call_method0("cancelled")?.is_truthy()? {
                token.cancel();
            }
            Ok(())
        })?;
        future.call_method1("add_done_callback", (on_done,))?;
    }
    Ok((event_loop, future))
}

/// Wraps `work`; `convert` turns its output into the Python result (or exception).
pub fn awaitable<'py, F, T, C>(
    py: Python<'py>,
    cancel: Option<CancellationToken>,
    work: F,
    convert: C,
) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
    C: for<'a> FnOnce(Python<'a>, T) -> PyResult<Py<PyAny>> + Send + 'static,
{
    let (event_loop, future) = loop_future(py, cancel)?;
    let resolve = py
        .import("phaseo_agent._bridge")?
        .getattr("resolve")?
        .unbind();
    let (loop_ref, future_ref) = (event_loop.unbind(), future.clone().unbind());
    phaseo_agent::exec::runtime().spawn(async move {
        let output = work.await;
        lifecycle::attach(move |py| {
            let (ok, value) = match convert(py, output) {
                Ok(v) => (true, v),
                Err(e) => (false, e.into_value(py).into_any()),
            };
            let _ =
                loop_ref.call_method1(py, "call_soon_threadsafe", (resolve, future_ref, ok, value));
        });
    });
    Ok(future)
}
