//! The runtime object Python executors and hooks receive.

use phaseo_agent::{ToolRuntime, Value};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{to_py, to_value};

/// Cancellation of one tool call, as seen from Python: `is_set()` and `wait(timeout)`.
#[pyclass(name = "CancelledFlag", module = "phaseo_agent", frozen)]
pub struct PyCancelledFlag {
    runtime: ToolRuntime,
}

#[pymethods]
impl PyCancelledFlag {
    /// Whether the call has been cancelled (timeout or run cancellation).
    fn is_set(&self) -> bool {
        self.runtime.is_cancelled()
    }

    /// Blocks (without the GIL) until cancelled or `timeout` seconds pass; returns whether
    /// the call is cancelled.
    #[pyo3(signature = (timeout=None))]
    fn wait(&self, py: Python<'_>, timeout: Option<f64>) -> bool {
        let token = self.runtime.cancellation_token().clone();
        py.detach(move || {
            let deadline = timeout.map(|t| {
                std::time::Instant::now() + std::time::Duration::from_secs_f64(t.max(0.0))
            });
            while !token.is_cancelled() {
                if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                    return false;
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            true
        })
    }

    fn __bool__(&self) -> bool {
        self.runtime.is_cancelled()
    }

    fn __repr__(&self) -> String {
        format!("CancelledFlag(is_set={})", self.runtime.is_cancelled())
    }
}

/// What a tool call sees of its run (SPEC §2.1).
#[pyclass(name = "ToolRuntime", module = "phaseo_agent", frozen)]
pub struct PyToolRuntime {
    runtime: ToolRuntime,
}

impl PyToolRuntime {
    pub fn new(runtime: ToolRuntime) -> Self {
        Self { runtime }
    }
}

#[pymethods]
impl PyToolRuntime {
    /// The run id.
    #[getter]
    fn run_id(&self) -> &str {
        self.runtime.run_id()
    }

    /// The agent id.
    #[getter]
    fn agent_id(&self) -> &str {
        self.runtime.agent_id()
    }

    /// Index of the step that requested the call.
    #[getter]
    fn step_index(&self) -> usize {
        self.runtime.step_index()
    }

    /// The application context as it was when the tool phase began.
    #[getter]
    fn context<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, self.runtime.context())
    }

    /// The call: `{"id", "name", "input"}`; `id` is the idempotency key.
    #[getter]
    fn tool_call<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let call = self.runtime.tool_call();
        let d = PyDict::new(py);
        d.set_item("id", &call.id)?;
        d.set_item("name", &call.name)?;
        d.set_item("input", to_py(py, &call.input)?)?;
        Ok(d)
    }

    /// The call's cancellation flag.
    #[getter]
    fn cancelled(&self) -> PyCancelledFlag {
        PyCancelledFlag {
            runtime: self.runtime.clone(),
        }
    }

    /// Publishes a progress value (`tool.preliminary_result`).
    fn emit_progress(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.runtime.emit_progress(to_value(value)?);
        Ok(())
    }

    /// Replaces the application context for later turns.
    fn set_context(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v: Value = to_value(value)?;
        self.runtime
            .set_context(v)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
    }

    fn __repr__(&self) -> String {
        format!(
            "ToolRuntime(run_id={:?}, step_index={}, tool_call={:?})",
            self.runtime.run_id(),
            self.runtime.step_index(),
            self.runtime.tool_call().id
        )
    }
}
