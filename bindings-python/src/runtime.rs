//! The runtime object Python executors and hooks receive.

use phaseo_agent::{ToolRuntime, Value};
use pyo3::prelude::*;

use crate::convert::{arg_value, to_py};
use crate::limits::MAX_DEPTH;
use crate::reader::read;

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
        crate::lifecycle::detach(py, move || {
            let deadline = phaseo_agent::duration::deadline_in_secs(timeout);
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

/// What a tool call sees of its run (docs/behaviour.md §2.1).
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

    /// The call, an `AgentToolCall`: `{"id", "name", "input"}` with attribute access too
    /// (`runtime.tool_call.id`); `id` is the idempotency key.
    #[getter]
    fn tool_call<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::convert::tool_call_record(py, self.runtime.tool_call())
    }

    /// The called tool's MCP annotations (`readOnlyHint`, `destructiveHint`, …; `{}` when
    /// the server gave none), or None for a tool that is not an MCP tool.
    #[getter]
    fn tool_annotations<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.runtime.tool_annotations() {
            Some(a) => to_py(py, a),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The number of this attempt at the call, from 1: a tool with `retry` runs again
    /// after an attempt that raised or timed out (docs/behaviour.md §15).
    #[getter]
    fn attempt(&self) -> u32 {
        self.runtime.attempt()
    }

    /// `"<run_id>:<tool_call_id>"`: the same for every attempt, for a call approved on
    /// continue in another process and for a call run again by `recover`; pass it to a
    /// side-effecting service so that the effect happens at most once.
    #[getter]
    fn idempotency_key(&self) -> String {
        self.runtime.idempotency_key()
    }

    /// The call's cancellation flag.
    #[getter]
    fn cancelled(&self) -> PyCancelledFlag {
        PyCancelledFlag {
            runtime: self.runtime.clone(),
        }
    }

    /// Publishes a progress value (`tool.preliminary_result`). A value that is not JSON
    /// or beyond the limits (64 levels, a cycle, an integer beyond 64 bits) fails the call
    /// with `tool_event_invalid`, and raises `ValueError`/`TypeError` here so the tool stops.
    fn emit_progress(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        match read(value, MAX_DEPTH) {
            Ok(v) => {
                self.runtime.emit_progress(v);
                Ok(())
            }
            Err(e) => {
                if let Some(interrupt) = e.interrupt(py) {
                    return Err(interrupt);
                }
                let message = e.message(py);
                crate::limits::reject_progress(&self.runtime, &message);
                Err(e.into_arg_error("emit_progress"))
            }
        }
    }

    /// Replaces the application context for later turns. A value that is not JSON raises
    /// `TypeError`, one beyond the limits (64 levels, a cycle, an integer beyond 64 bits)
    /// `ValueError`; the context is then unchanged.
    fn set_context(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v: Value = arg_value(value, "set_context")?;
        self.runtime
            .set_context(v)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("set_context: {e}")))
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
