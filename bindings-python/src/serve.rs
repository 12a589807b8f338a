//! `serve_mcp`: the application's tools served as an MCP server (docs/behaviour.md §19).
//! The core runs the server; this adapter only sets the loop the tools' Python callbacks
//! run on and blocks without the GIL where Python waits.

use std::sync::Arc;

use phaseo_agent::mcp_server::{
    serve_mcp as core_serve, McpServeOptions, McpToolServer, ServedCall,
};
use pyo3::prelude::*;

use crate::convert::arg_value;
use crate::errors::to_pyerr;
use crate::host::{bridge_for, EVENT_LOOP};
use crate::tool::PyTool;

/// A running MCP server; stops on `close()` and at the end of its input (stdio).
#[pyclass(name = "McpToolServer", module = "phaseo_agent", frozen)]
pub struct PyMcpToolServer {
    server: Arc<McpToolServer>,
}

#[pymethods]
impl PyMcpToolServer {
    /// `http://host:port/path` of a Streamable HTTP server; `None` on stdio.
    #[getter]
    fn url(&self) -> Option<String> {
        self.server.url().map(str::to_owned)
    }

    /// Whether the server has stopped.
    #[getter]
    fn closed(&self) -> bool {
        self.server.is_closed()
    }

    /// Stops the server and waits until it has stopped.
    fn close(&self, py: Python<'_>) {
        let server = self.server.clone();
        crate::lifecycle::detach(py, move || {
            phaseo_agent::exec::runtime().block_on(server.close())
        });
    }

    /// Waits until the server stops, at most `timeout` seconds; returns whether it stopped.
    /// Ctrl-C interrupts the wait.
    #[pyo3(signature = (timeout=None))]
    fn wait(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<bool> {
        let deadline = phaseo_agent::duration::deadline_in_secs(timeout);
        loop {
            let server = self.server.clone();
            let done = crate::lifecycle::detach(py, move || {
                phaseo_agent::exec::runtime().block_on(async {
                    tokio::time::timeout(std::time::Duration::from_millis(50), server.wait())
                        .await
                        .is_ok()
                })
            });
            if done {
                return Ok(true);
            }
            py.check_signals()?;
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return Ok(false);
            }
        }
    }
}

/// Starts the server. `transport` is the core's form (`"stdio"`, `"http"`, or
/// `{"type", "host", "port", "path", "authToken", "allowedOrigins", "allowedHosts"}`);
/// Python callbacks run on `event_loop` (else the binding's background loop).
#[pyfunction]
#[pyo3(signature = (tools, name, version, transport=None, tool_execution=None, event_loop=None))]
pub fn serve_mcp(
    py: Python<'_>,
    tools: Vec<Bound<'_, PyTool>>,
    name: String,
    version: String,
    transport: Option<&Bound<'_, PyAny>>,
    tool_execution: Option<&Bound<'_, PyAny>>,
    event_loop: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyMcpToolServer> {
    let tools = tools.iter().map(|t| t.get().tool.clone()).collect();
    let mut options = McpServeOptions::new(name).version(version);
    if let Some(t) = transport.filter(|t| !t.is_none()) {
        let value = arg_value(t, "transport")?;
        options = options
            .transport(phaseo_agent::spec::serve_transport(value).map_err(|e| to_pyerr(py, e))?);
    }
    if let Some(e) = tool_execution.filter(|e| !e.is_none()) {
        options = options.tool_execution(crate::agent::tool_execution(py, e)?);
    }
    let bridge = bridge_for(py, event_loop)?;
    options = options.call_scope(Arc::new(move |call: ServedCall| -> ServedCall {
        Box::pin(EVENT_LOOP.scope(bridge.clone(), call))
    }));
    let started = crate::lifecycle::detach(py, move || {
        phaseo_agent::exec::runtime().block_on(core_serve(tools, options))
    });
    let server = started.map_err(|e| to_pyerr(py, e))?;
    Ok(PyMcpToolServer {
        server: Arc::new(server),
    })
}
