//! MCP servers declared from Python (docs/behaviour.md §11): the declaration is read by the
//! core's reader (`phaseo_agent::spec::mcp_server`), with the host's filter, approval
//! predicate and elicitation hook adapted.

use std::sync::Arc;

use phaseo_agent::mcp::{McpElicitationHandler, McpServer, McpToolFilter, McpToolInfo};
use phaseo_agent::spec::{mcp_server, respell_keys, McpCallbacks};
use phaseo_agent::{async_trait, AgentError, ApprovalPredicate, ToolError, Value};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::convert::{arg_value, camel, snake, to_py};
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

/// The Python functions of one declaration: `{"$callback": id}` is `funcs[id - 1]`.
struct PyMcpCallbacks(Vec<Py<PyAny>>);

impl PyMcpCallbacks {
    fn func(&self, id: u64) -> Py<PyAny> {
        let f = &self.0[(id - 1) as usize];
        Python::attach(|py| f.clone_ref(py))
    }
}

impl McpCallbacks for PyMcpCallbacks {
    fn mcp_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        Arc::new(PyAgentApproval(HostFn::new(self.func(id), false)))
    }

    fn mcp_filter(&self, id: u64) -> Option<Arc<dyn McpToolFilter>> {
        let func = self.func(id);
        let host = HostFn::new(Python::attach(|py| func.clone_ref(py)), false);
        Some(Arc::new(PyFilter { func, host }))
    }

    fn mcp_elicitation(&self, id: u64) -> Option<Arc<dyn McpElicitationHandler>> {
        Some(Arc::new(PyElicitation(HostFn::new(self.func(id), false))))
    }
}

#[pymethods]
impl PyMcpServer {
    /// Reads a declaration (keyword arguments as `mcp_stdio_server` / `mcp_http_server`
    /// spell them; None is absent) with the core's reader: every check and refusal is the
    /// core's, its keys respelled in snake_case. A callable is a host function.
    #[new]
    fn new(declaration: &Bound<'_, PyDict>) -> PyResult<Self> {
        let py = declaration.py();
        let mut funcs = Vec::new();
        let mut spec = serde_json::Map::new();
        for (key, value) in declaration.iter() {
            let key: String = key.extract()?;
            if value.is_none() {
                continue;
            }
            let field = camel(&key);
            if snake(&field) != key {
                // Only the snake_case keywords are Python's: `allowTools` is no option here.
                let name = declaration
                    .get_item("name")?
                    .map_or_else(String::new, |n| n.to_string());
                return Err(to_pyerr(
                    py,
                    AgentError::definition_invalid(format!(
                        "Invalid MCP server '{name}': unknown field '{key}' (options are snake_case)"
                    )),
                ));
            }
            let v = if value.is_callable() {
                funcs.push(value.unbind());
                serde_json::json!({ "$callback": funcs.len() })
            } else {
                // A value with no JSON form, or one that looks like a function marker, is
                // shown as its repr: the reader refuses it as the wrong type.
                match arg_value(&value, &key) {
                    Ok(v) if v.get("$callback").is_none() => v,
                    _ => Value::String(value.repr()?.to_string()),
                }
            };
            spec.insert(field, v);
        }
        let server = mcp_server(&PyMcpCallbacks(funcs), Value::Object(spec))
            .map_err(|e| to_pyerr(py, respell_keys(e, snake)))?;
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
