//! Streamed runs: cursors over the replayable history, blocking or awaitable.

use std::sync::Arc;

use phaseo_agent::{AgentStream, EventCursor, StreamItem};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tokio::sync::Mutex;

use crate::convert::{snake_keys, to_py};
use crate::errors::to_pyerr;
use crate::result::PyRunResult;

/// A streamed run (the public `AgentStream` wraps it).
#[pyclass(name = "NativeStream", module = "phaseo_agent._native", frozen)]
pub struct PyAgentStream {
    stream: AgentStream,
}

impl PyAgentStream {
    pub fn new(stream: AgentStream) -> Self {
        Self { stream }
    }
}

/// One consumer's position in the history.
#[pyclass(name = "NativeCursor", module = "phaseo_agent._native", frozen)]
pub struct PyCursor {
    cursor: Arc<Mutex<EventCursor>>,
}

/// An item as Python: an event dict (snake_case keys), `{"type": "result", "result":
/// RunResult}`, `None` at the end; a failed run raises its error.
fn item_to_py(
    py: Python<'_>,
    item: Option<Result<StreamItem, phaseo_agent::AgentError>>,
) -> PyResult<Py<PyAny>> {
    match item {
        None => Ok(py.None()),
        Some(Err(e)) => Err(to_pyerr(py, e)),
        Some(Ok(StreamItem::Event(e))) => Ok(to_py(py, &snake_keys(e.to_value()))?.unbind()),
        Some(Ok(StreamItem::Result(r))) => {
            let d = PyDict::new(py);
            d.set_item("type", "result")?;
            d.set_item("result", Py::new(py, PyRunResult::new(*r))?)?;
            Ok(d.into_any().unbind())
        }
    }
}

#[pymethods]
impl PyCursor {
    /// The next item, blocking without the GIL.
    fn next_blocking(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let cursor = self.cursor.clone();
        let item = crate::lifecycle::detach(py, move || {
            phaseo_agent::exec::runtime()
                .block_on(async move { cursor.lock().await.next_item().await })
        });
        item_to_py(py, item)
    }

    /// The next item, as an awaitable.
    fn next_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let cursor = self.cursor.clone();
        crate::awaitable::awaitable(
            py,
            None,
            async move { cursor.lock().await.next_item().await },
            item_to_py,
        )
    }
}

#[pymethods]
impl PyAgentStream {
    /// A new cursor from the start of the history.
    fn cursor(&self) -> PyCursor {
        PyCursor {
            cursor: Arc::new(Mutex::new(self.stream.cursor())),
        }
    }

    /// Cancels the run; it ends `cancelled` and its result is still returned.
    #[pyo3(signature = (reason=None))]
    fn cancel(&self, reason: Option<String>) {
        self.stream.cancel(reason);
    }
}
