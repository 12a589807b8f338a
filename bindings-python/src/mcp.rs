//! MCP servers declared from Python (docs/behaviour.md §11): the core's `McpServer` with the host's
//! filter, approval predicate and elicitation hook adapted. The `phaseo_agent` package
//! checks the option names and spellings first (`mcp_stdio_server`, `mcp_http_server`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use phaseo_agent::mcp::{
    McpApproval, McpElicitationHandler, McpServer, McpToolFilter, McpToolInfo,
};
use phaseo_agent::{async_trait, AgentError, OnError, ToolError, Value};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::convert::to_py;
use crate::errors::{to_pyerr, to_tool_error};
use crate::host::{bridge_for, HostFn, EVENT_LOOP};
use crate::tool::PyAgentApproval;

/// The dict a filter sees: `{"name", "description", "annotations"}`.
fn info_dict<'py>(py: Python<'py>, tool: &McpToolInfo) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", &tool.name)?;
    d.set_item("description", &tool.description)?;
    d.set_item("annotations", to_py(py, &tool.annotations)?)?;
    Ok(d)
}

/// `filter(tool) -> bool` (the package wraps the user's callable so it sees a record).
struct PyFilter {
    func: Py<PyAny>,
    host: HostFn,
}

#[async_trait]
impl McpToolFilter for PyFilter {
    /// Only for callers outside a run (the core calls `keep_async`).
    fn keep(&self, tool: &McpToolInfo) -> bool {
        Python::attach(|py| {
            info_dict(py, tool)
                .and_then(|d| self.func.bind(py).call1((d,)))
                .and_then(|v| v.is_truthy())
                .unwrap_or(false)
        })
    }

    async fn keep_async(&self, tool: &McpToolInfo) -> Result<bool, ToolError> {
        let tool = tool.clone();
        self.host
            .call(
                move |py| PyTuple::new(py, [info_dict(py, &tool)?]),
                |v| v.is_truthy().map_err(|e| to_tool_error(v.py(), e)),
            )
            .await
    }
}

/// `on_elicitation(request, context)`; the answer is an MCP `ElicitResult` dict.
struct PyElicitation(HostFn);

#[async_trait]
impl McpElicitationHandler for PyElicitation {
    async fn on_elicitation(&self, server: &str, request: Value) -> Result<Value, ToolError> {
        // Requests come from the connection's own task, outside any run: the hook runs on
        // the run's loop when there is one, else on the binding's background loop.
        let bridge = match EVENT_LOOP.try_with(Clone::clone) {
            Ok(b) => b,
            Err(_) => Python::attach(|py| bridge_for(py, None).map_err(|e| to_tool_error(py, e)))?,
        };
        let server = server.to_owned();
        let call = self.0.call_value(move |py| {
            let context = PyDict::new(py);
            context.set_item("server", server)?;
            PyTuple::new(py, [to_py(py, &request)?, context.into_any()])
        });
        EVENT_LOOP.scope(bridge, call).await
    }
}

/// An MCP server declaration (built by `mcp_stdio_server` / `mcp_http_server`).
#[pyclass(name = "NativeMcpServer", module = "phaseo_agent._native", frozen)]
pub struct PyMcpServer {
    pub server: McpServer,
}

fn invalid(py: Python<'_>, name: &str, message: String) -> PyErr {
    to_pyerr(
        py,
        AgentError::definition_invalid(format!("Invalid MCP server '{name}': {message}")),
    )
}

fn ms(py: Python<'_>, name: &str, what: &str, v: f64) -> PyResult<u64> {
    if v.is_finite() && v > 0.0 {
        Ok(v.ceil() as u64)
    } else {
        Err(invalid(
            py,
            name,
            format!("{what} must be a positive number of milliseconds, got {v}"),
        ))
    }
}

#[pymethods]
impl PyMcpServer {
    #[new]
    #[pyo3(signature = (name, command=None, args=None, env=None, cwd=None, url=None, headers=None, bearer_token=None, allow_tools=None, deny_tools=None, filter=None, tool_prefix=None, require_approval=None, timeout_ms=None, tool_timeouts=None, on_error=None, cache_ttl_ms=None, optional=false, on_elicitation=None, defer_loading=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        name: String,
        command: Option<String>,
        args: Option<Vec<String>>,
        env: Option<BTreeMap<String, String>>,
        cwd: Option<String>,
        url: Option<String>,
        headers: Option<BTreeMap<String, String>>,
        bearer_token: Option<String>,
        allow_tools: Option<Vec<String>>,
        deny_tools: Option<Vec<String>>,
        filter: Option<Bound<'_, PyAny>>,
        tool_prefix: Option<String>,
        require_approval: Option<Bound<'_, PyAny>>,
        timeout_ms: Option<f64>,
        tool_timeouts: Option<HashMap<String, f64>>,
        on_error: Option<String>,
        cache_ttl_ms: Option<f64>,
        optional: bool,
        on_elicitation: Option<Bound<'_, PyAny>>,
        defer_loading: bool,
    ) -> PyResult<Self> {
        let mut server = match (command, url) {
            (Some(command), None) => {
                let mut s = McpServer::stdio(&name, command).args(args.unwrap_or_default());
                for (k, v) in env.unwrap_or_default() {
                    s = s.env(k, v);
                }
                if let Some(dir) = cwd {
                    s = s.cwd(dir);
                }
                s
            }
            (None, Some(url)) => {
                let mut s = McpServer::http(&name, url);
                for (k, v) in headers.unwrap_or_default() {
                    s = s.header(k, v);
                }
                if let Some(token) = bearer_token {
                    s = s.bearer(token);
                }
                s
            }
            _ => {
                return Err(invalid(
                    py,
                    &name,
                    "give either a command (stdio) or a url (Streamable HTTP)".into(),
                ))
            }
        };
        if let Some(names) = allow_tools {
            server = server.allow_tools(names);
        }
        if let Some(names) = deny_tools {
            server = server.deny_tools(names);
        }
        if let Some(f) = filter.filter(|f| !f.is_none()) {
            server = server.filter(Arc::new(PyFilter {
                func: f.clone().unbind(),
                host: HostFn::new(f.unbind(), false),
            }));
        }
        if let Some(prefix) = tool_prefix {
            server = server.tool_prefix(prefix);
        }
        if let Some(rule) = require_approval.filter(|v| !v.is_none()) {
            let approval = if let Ok(b) = rule.extract::<bool>() {
                if b {
                    McpApproval::Always
                } else {
                    McpApproval::Never
                }
            } else if let Ok(text) = rule.extract::<String>() {
                McpApproval::parse(&text).map_err(|e| {
                    invalid(py, &name, e.replace("requireApproval", "require_approval"))
                })?
            } else if rule.is_callable() {
                McpApproval::Predicate(Arc::new(PyAgentApproval(HostFn::new(rule.unbind(), false))))
            } else {
                return Err(invalid(
                    py,
                    &name,
                    format!(
                        "require_approval must be True, False, \"destructive\" or a callable, got {}",
                        rule.repr()?
                    ),
                ));
            };
            server = server.require_approval(approval);
        }
        if let Some(t) = timeout_ms {
            server = server.timeout_ms(ms(py, &name, "timeout_ms", t)?);
        }
        for (tool, t) in tool_timeouts.unwrap_or_default() {
            let what = format!("tool_timeouts[{tool:?}]");
            server = server.tool_timeout_ms(tool, ms(py, &name, &what, t)?);
        }
        if let Some(policy) = on_error {
            let policy = OnError::parse(&policy)
                .map_err(|e| invalid(py, &name, format!("on_error: {e}")))?;
            server = server.on_error(policy);
        }
        if let Some(t) = cache_ttl_ms {
            server = server.cache_ttl_ms(ms(py, &name, "cache_ttl_ms", t)?);
        }
        server = server.optional(optional);
        // Every tool of the server waits for the built-in tool_search (docs/behaviour.md §17).
        server = server.defer_loading(defer_loading);
        if let Some(f) = on_elicitation.filter(|f| !f.is_none()) {
            server = server.on_elicitation(Arc::new(PyElicitation(HostFn::new(f.unbind(), false))));
        }
        Ok(Self { server })
    }

    /// The server's name.
    #[getter]
    fn name(&self) -> &str {
        self.server.name()
    }

    /// `"stdio"` or `"http"`.
    #[getter]
    fn transport(&self) -> &'static str {
        match self.server.transport() {
            phaseo_agent::mcp::McpTransport::Stdio { .. } => "stdio",
            phaseo_agent::mcp::McpTransport::Http { .. } => "http",
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "McpServer(name={:?}, transport={:?})",
            self.server.name(),
            self.transport()
        )
    }
}
