//! Tracing from Python: `enable_tracing`, `flush_tracing`, `shutdown_tracing`,
//! and the host's current OpenTelemetry span as the parent of a run.

use std::collections::BTreeMap;

use phaseo_agent::telemetry::{self, TracingOptions};
use pyo3::prelude::*;

use crate::errors::to_pyerr;

/// Turns tracing on for the process (see `phaseo_agent.enable_tracing`).
#[pyfunction]
#[pyo3(signature = (endpoint=None, headers=None, service_name=None, capture_content=false))]
pub fn enable_tracing(
    py: Python<'_>,
    endpoint: Option<String>,
    headers: Option<BTreeMap<String, String>>,
    service_name: Option<String>,
    capture_content: bool,
) -> PyResult<()> {
    let options = TracingOptions {
        endpoint,
        headers: headers.unwrap_or_default(),
        service_name,
        capture_content,
    };
    crate::lifecycle::detach(py, || telemetry::enable(options)).map_err(|e| to_pyerr(py, e))
}

/// Exports every ended span now (waits, without the GIL).
#[pyfunction]
pub fn flush_tracing(py: Python<'_>) -> PyResult<()> {
    crate::lifecycle::detach(py, telemetry::flush)
        .map_err(pyo3::exceptions::PyRuntimeError::new_err)
}

/// Exports what is left and turns tracing off.
#[pyfunction]
pub fn shutdown_tracing(py: Python<'_>) -> PyResult<()> {
    crate::lifecycle::detach(py, telemetry::shutdown)
        .map_err(pyo3::exceptions::PyRuntimeError::new_err)
}

/// The `traceparent` of the host's current span (`opentelemetry-api`, when installed and
/// a span is current), read only while tracing is on; the Python layer does the reading,
/// so the binding never depends on the package.
pub fn host_traceparent(py: Python<'_>) -> Option<String> {
    if !telemetry::is_enabled() {
        return None;
    }
    let module = py.import("phaseo_agent._tracing").ok()?;
    let value = module.call_method0("_current_traceparent").ok()?;
    value.extract::<Option<String>>().ok().flatten()
}
