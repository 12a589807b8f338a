//! Errors across the boundary: core errors become the `phaseo_agent.errors` classes, and
//! Python exceptions become callback errors carrying their message.

use phaseo_agent::{AgentError, ToolError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::result::PyRunResult;

/// A core error as the matching `phaseo_agent.errors` exception.
pub fn to_pyerr(py: Python<'_>, mut error: AgentError) -> PyErr {
    match build(py, &mut error) {
        Ok(err) => err,
        Err(e) => e,
    }
}

fn build(py: Python<'_>, error: &mut AgentError) -> PyResult<PyErr> {
    let module = py.import("phaseo_agent.errors")?;
    let class = module
        .getattr("error_class")?
        .call1((error.code().as_str(),))?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("code", error.code().as_str())?;
    if let Some(target) = error.target() {
        kwargs.set_item("target", target)?;
    }
    if let Some(g) = error.gateway_info() {
        kwargs.set_item("status", g.status)?;
        kwargs.set_item("status_text", g.status_text.clone())?;
        kwargs.set_item("request_id", g.request_id.clone())?;
        kwargs.set_item("reason", g.reason.clone())?;
    }
    if let Some(result) = error.take_result() {
        kwargs.set_item("result", Py::new(py, PyRunResult::new(result))?)?;
    }
    let instance = class.call((error.message(),), Some(&kwargs))?;
    Ok(PyErr::from_value(instance))
}

/// The message of a Python exception raised by a host callback, best effort whatever the
/// exception: `str(exc)`; the class name when that is empty; `repr(exc)` when `str` raises;
/// `<unprintable ClassName>` when both raise.
pub fn host_message(py: Python<'_>, err: &PyErr) -> String {
    let value = err.value(py);
    let class = || {
        value
            .get_type()
            .name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "exception".to_owned())
    };
    let text = |s: PyResult<Bound<'_, pyo3::types::PyString>>| {
        s.ok().map(|s| s.to_string_lossy().into_owned())
    };
    match text(value.str()) {
        Some(t) if t.is_empty() => class(),
        Some(t) => t,
        None => text(value.repr()).unwrap_or_else(|| format!("<unprintable {}>", class())),
    }
}

/// Whether `err` is a host interrupt (`KeyboardInterrupt`, `SystemExit`), which must
/// interrupt rather than become a callback error.
pub fn is_interrupt(py: Python<'_>, err: &PyErr) -> bool {
    err.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py)
        || err.is_instance_of::<pyo3::exceptions::PySystemExit>(py)
}

/// A Python exception as a callback error.
pub fn to_tool_error(py: Python<'_>, err: PyErr) -> ToolError {
    ToolError::new(host_message(py, &err))
}

/// Runs a native entry point so that a Rust panic becomes an `AgentError`, never a
/// `PanicException`.
pub fn no_panic<T>(py: Python<'_>, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    no_panic_as(py, phaseo_agent::ErrorCode::ToolFailed, f)
}

/// [`no_panic`] for a definition (tool, agent, schema, client script): a panic is a
/// `definition_invalid` error.
pub fn no_panic_in_definition<T>(py: Python<'_>, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    no_panic_as(py, phaseo_agent::ErrorCode::DefinitionInvalid, f)
}

fn no_panic_as<T>(
    py: Python<'_>,
    code: phaseo_agent::ErrorCode,
    f: impl FnOnce() -> PyResult<T>,
) -> PyResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => Err(to_pyerr(
            py,
            AgentError::new(
                code,
                format!(
                    "internal error: {}",
                    phaseo_agent::panic_message(p.as_ref())
                ),
            ),
        )),
    }
}
