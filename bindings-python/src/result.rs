//! Run results as typed Python objects over the core's state.

use phaseo_agent::{RunResult, Value};
use pyo3::prelude::*;

use crate::convert::{snake_keys, to_py};
use crate::errors::to_pyerr;
use crate::limits::STATE_DEPTH;

/// Token and cost usage.
#[pyclass(name = "Usage", module = "phaseo_agent", frozen, get_all)]
#[derive(Clone)]
pub struct PyUsage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Cached prompt tokens.
    pub cached_tokens: u64,
    /// Total tokens.
    pub total_tokens: u64,
    /// Cost.
    pub cost: f64,
}

#[pymethods]
impl PyUsage {
    fn __repr__(&self) -> String {
        format!(
            "Usage(input_tokens={}, output_tokens={}, cached_tokens={}, total_tokens={}, cost={})",
            self.input_tokens, self.output_tokens, self.cached_tokens, self.total_tokens, self.cost
        )
    }
}

/// A call waiting for a decision or an output.
#[pyclass(name = "PendingToolCall", module = "phaseo_agent", frozen, get_all)]
pub struct PyPendingToolCall {
    /// The call id (use it in approvals, rejections and tool outputs).
    pub tool_call_id: String,
    /// The tool id.
    pub tool_name: String,
    /// The validated input.
    pub input: Py<PyAny>,
    /// `"approval"`, `"manual"` or `"hitl"`.
    pub kind: String,
    /// Why it waits.
    pub reason: String,
}

#[pymethods]
impl PyPendingToolCall {
    fn __repr__(&self) -> String {
        format!(
            "PendingToolCall(tool_call_id={:?}, tool_name={:?}, kind={:?})",
            self.tool_call_id, self.tool_name, self.kind
        )
    }
}

fn str_of<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The result of a run or continue: the whole resumable state.
#[pyclass(name = "RunResult", module = "phaseo_agent", frozen)]
pub struct PyRunResult {
    pub inner: RunResult,
}

impl PyRunResult {
    pub fn new(inner: RunResult) -> Self {
        Self { inner }
    }
}

#[pymethods]
impl PyRunResult {
    /// `queued`, `running`, `waiting_for_human`, `completed`, `stopped`, `failed` or
    /// `cancelled`.
    #[getter]
    fn status(&self) -> String {
        self.inner.status().as_str().to_owned()
    }

    /// The final output (None while paused or after a failure).
    #[getter]
    fn output<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, self.inner.output())
    }

    /// The final output as text: a string as is, None as `""`, any other value as the
    /// core's canonical JSON (the same text in every language).
    fn output_text(&self) -> String {
        self.inner.output_text()
    }

    /// The run id.
    #[getter]
    fn run_id(&self) -> &str {
        &self.inner.run.id
    }

    /// The agent id.
    #[getter]
    fn agent_id(&self) -> &str {
        &self.inner.run.agent_id
    }

    /// Model responses so far.
    #[getter]
    fn step_count(&self) -> usize {
        self.inner.run.step_count
    }

    /// Why a stop condition ended the run.
    #[getter]
    fn stop_reason(&self) -> Option<String> {
        self.inner.run.stop_reason.clone()
    }

    /// The application context.
    #[getter]
    fn context<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner.run.context)
    }

    /// Cumulative usage.
    #[getter]
    fn usage(&self) -> PyUsage {
        let u = self.inner.usage();
        PyUsage {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cached_tokens: u.cached_tokens,
            total_tokens: u.total_tokens,
            cost: u.cost,
        }
    }

    /// Calls waiting for a decision or output (empty unless paused on tools).
    #[getter]
    fn pending(&self, py: Python<'_>) -> PyResult<Vec<PyPendingToolCall>> {
        self.inner
            .pending()
            .iter()
            .map(|p| {
                Ok(PyPendingToolCall {
                    tool_call_id: p.call.id.to_string(),
                    tool_name: p.call.name.to_string(),
                    input: to_py(py, &p.call.input)?.unbind(),
                    kind: str_of(&p.kind),
                    reason: p.reason.clone(),
                })
            })
            .collect()
    }

    /// The pause (`{id, reason, payload, requested_at, kind, pending_tool_calls}`) or None.
    #[getter]
    fn pause<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = serde_json::to_value(&self.inner.run.pause).unwrap_or(Value::Null);
        to_py(py, &snake_keys(v))
    }

    /// The error of a failed or cancelled run (`{code, message}`) or None.
    #[getter]
    fn error<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = serde_json::to_value(&self.inner.run.error).unwrap_or(Value::Null);
        to_py(py, &snake_keys(v))
    }

    /// The conversation, as dicts with snake_case keys.
    #[getter]
    fn messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = serde_json::to_value(self.inner.messages()).unwrap_or(Value::Null);
        to_py(py, &snake_keys(v))
    }

    /// What each step produced, as dicts with snake_case keys.
    #[getter]
    fn step_results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = serde_json::to_value(&self.inner.step_results).unwrap_or(Value::Null);
        to_py(py, &snake_keys(v))
    }

    /// The run's items (messages, tool calls, tool results, output).
    #[getter]
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = serde_json::to_value(self.inner.items()).unwrap_or(Value::Null);
        to_py(py, &snake_keys(v))
    }

    /// The canonical JSON text of the state (continues in any language).
    fn to_json(&self) -> String {
        self.inner.to_json()
    }

    /// The canonical state as a dict (camelCase keys, as in the JSON text).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner.to_value())
    }

    /// Parses state JSON text (`str`, or UTF-8 `bytes`); raises `AgentStateError` (code
    /// `state_invalid`) when it is malformed or of an unsupported version — including text
    /// that is not valid Unicode and any other type.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Self> {
        let text = state_text(text).map_err(|m| state_error(py, m))?;
        parse_state(py, move || RunResult::from_json(&text))
    }

    /// Parses a state dict (the canonical camelCase form); raises `AgentStateError` (code
    /// `state_invalid`) for anything that is not a valid state, whatever its shape.
    #[staticmethod]
    fn from_dict(py: Python<'_>, state: &Bound<'_, PyAny>) -> PyResult<Self> {
        let value = match crate::reader::read(state, STATE_DEPTH) {
            Ok(v) => v,
            Err(e) => {
                if let Some(interrupt) = e.interrupt(py) {
                    return Err(interrupt);
                }
                return Err(state_error(py, e.message(py)));
            }
        };
        parse_state(py, move || RunResult::from_value(value))
    }

    fn __repr__(&self) -> String {
        format!(
            "RunResult(run_id={:?}, status={:?}, step_count={})",
            self.inner.run.id,
            self.inner.status().as_str(),
            self.inner.run.step_count
        )
    }
}

fn state_error(py: Python<'_>, problem: String) -> PyErr {
    to_pyerr(
        py,
        phaseo_agent::AgentError::state_invalid(format!("Invalid state: {problem}")),
    )
}

/// The text of a state given as `str` or `bytes`.
fn state_text(text: &Bound<'_, PyAny>) -> Result<String, String> {
    if let Ok(s) = text.cast::<pyo3::types::PyString>() {
        return s.to_cow().map(|c| c.into_owned()).map_err(|e| {
            format!(
                "text is not valid Unicode ({})",
                crate::errors::host_message(text.py(), &e)
            )
        });
    }
    if let Ok(b) = text.cast::<pyo3::types::PyBytes>() {
        return String::from_utf8(b.as_bytes().to_vec())
            .map_err(|e| format!("text is not valid UTF-8 ({e})"));
    }
    Err(format!(
        "expected JSON text, got {}",
        text.get_type()
            .name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "object".to_owned())
    ))
}

/// Parses a state in the core; a panic there (malformed state must never crash) is an
/// invalid state too.
fn parse_state(
    py: Python<'_>,
    parse: impl FnOnce() -> Result<RunResult, phaseo_agent::AgentError>,
) -> PyResult<PyRunResult> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(parse)) {
        Ok(parsed) => parsed.map(PyRunResult::new).map_err(|e| to_pyerr(py, e)),
        Err(p) => Err(state_error(
            py,
            format!(
                "internal error: {}",
                phaseo_agent::panic_message(p.as_ref())
            ),
        )),
    }
}
