//! Tools defined in Python: one adapter per core trait, each wrapping a Python callable.

use std::sync::Arc;

use phaseo_agent::spec;
use phaseo_agent::AgentError;
use phaseo_agent::{
    async_trait, ApprovalPredicate, ExecuteFuture, JsonSchema, NextTurnParams,
    NextTurnParamsProvider, OnError, ResponseReceivedHook, Tool, ToolCalledHook, ToolError,
    ToolExecutor, ToolRuntime, Validator, Value,
};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::convert::{arg_value, camel_keys, result_value, to_py};
use crate::errors::{no_panic_in_definition, to_pyerr, to_tool_error};
use crate::host::HostFn;
use crate::runtime::PyToolRuntime;

fn input_and_runtime<'py>(
    py: Python<'py>,
    value: &Value,
    runtime: ToolRuntime,
) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(
        py,
        [
            to_py(py, value)?,
            Bound::new(py, PyToolRuntime::new(runtime))?.into_any(),
        ],
    )
}

struct PyExecutor(HostFn);

#[async_trait]
impl ToolExecutor for PyExecutor {
    async fn execute(&self, input: Value, runtime: ToolRuntime) -> Result<Value, ToolError> {
        self.0
            .call_result(move |py| input_and_runtime(py, &input, runtime))
            .await
    }

    /// The input is converted from the runtime's call as it is: no copy of it is made.
    fn execute_call<'a>(&'a self, runtime: ToolRuntime) -> ExecuteFuture<'a> {
        Box::pin(self.0.call_result(move |py| {
            input_and_runtime(py, &runtime.tool_call().input, runtime.clone())
        }))
    }
}

/// A JSON Schema compiled in the core, usable as a validator from Python.
#[pyclass(name = "JsonSchemaValidator", module = "phaseo_agent", frozen)]
pub struct PyJsonSchemaValidator {
    pub schema: JsonSchema,
}

#[pymethods]
impl PyJsonSchemaValidator {
    #[new]
    fn new(py: Python<'_>, schema: &Bound<'_, PyAny>) -> PyResult<Self> {
        let schema = arg_value(schema, "schema")?;
        no_panic_in_definition(py, || {
            JsonSchema::compile(&schema)
                .map(|schema| Self { schema })
                .map_err(|e| {
                    to_pyerr(
                        py,
                        phaseo_agent::AgentError::definition_invalid(format!(
                            "Invalid JSON Schema: {e}"
                        )),
                    )
                })
        })
    }

    /// Returns the value when valid; raises `ValueError("<pointer>: <reason>")` otherwise.
    fn __call__<'py>(&self, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let v = arg_value(value, "value")?;
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.schema.check(&v)))
            .unwrap_or_else(|p| {
                Err(format!(
                    "internal error: {}",
                    phaseo_agent::panic_message(p.as_ref())
                ))
            })
            .map_err(pyo3::exceptions::PyValueError::new_err)?;
        Ok(value.clone())
    }

    /// The schema.
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, self.schema.schema())
    }
}

struct PyValidator {
    func: HostFn,
    schema: Option<Value>,
}

#[async_trait]
impl Validator for PyValidator {
    async fn validate(&self, value: Value) -> Result<Value, ToolError> {
        self.func
            .call_value(move |py| PyTuple::new(py, [to_py(py, &value)?]))
            .await
    }

    fn json_schema(&self) -> Option<Value> {
        self.schema.clone()
    }
}

/// A validator from Python: a core JSON Schema validator, or a callable
/// `(value) -> value` that raises on invalid values (with an optional self-description).
pub fn validator(obj: &Bound<'_, PyAny>, schema: Option<Value>) -> Arc<dyn Validator> {
    if let Ok(v) = obj.cast::<PyJsonSchemaValidator>() {
        return Arc::new(v.get().schema.clone());
    }
    Arc::new(PyValidator {
        func: HostFn::new(obj.clone().unbind(), false),
        schema,
    })
}

struct PyApproval(HostFn);

#[async_trait]
impl ApprovalPredicate for PyApproval {
    async fn requires_approval(&self, input: &Value, rt: &ToolRuntime) -> Result<bool, ToolError> {
        let (input, rt) = (input.clone(), rt.clone());
        self.0
            .call(
                move |py| input_and_runtime(py, &input, rt),
                |v| v.is_truthy().map_err(|e| to_tool_error(v.py(), e)),
            )
            .await
    }
}

/// The agent-level predicate receives `(call, runtime)` with `call` an `AgentToolCall`
/// (`call.name` or `call["name"]`).
pub struct PyAgentApproval(pub HostFn);

#[async_trait]
impl ApprovalPredicate for PyAgentApproval {
    async fn requires_approval(&self, _input: &Value, rt: &ToolRuntime) -> Result<bool, ToolError> {
        let rt = rt.clone();
        self.0
            .call(
                move |py| {
                    PyTuple::new(
                        py,
                        [
                            crate::convert::tool_call_record(py, rt.tool_call())?,
                            Bound::new(py, PyToolRuntime::new(rt.clone()))?.into_any(),
                        ],
                    )
                },
                |v| v.is_truthy().map_err(|e| to_tool_error(v.py(), e)),
            )
            .await
    }
}

struct PyToolCalled(HostFn);

#[async_trait]
impl ToolCalledHook for PyToolCalled {
    async fn on_tool_called(
        &self,
        input: Value,
        rt: ToolRuntime,
    ) -> Result<Option<Value>, ToolError> {
        self.0
            .call(
                move |py| input_and_runtime(py, &input, rt),
                |v| {
                    if v.is_none() {
                        Ok(None)
                    } else {
                        result_value(v).map(Some)
                    }
                },
            )
            .await
    }
}

struct PyResponseReceived(HostFn);

#[async_trait]
impl ResponseReceivedHook for PyResponseReceived {
    async fn on_response_received(
        &self,
        output: Value,
        rt: ToolRuntime,
    ) -> Result<Value, ToolError> {
        self.0
            .call_result(move |py| input_and_runtime(py, &output, rt))
            .await
    }
}

struct PyNextTurn(HostFn);

#[async_trait]
impl NextTurnParamsProvider for PyNextTurn {
    async fn next_turn_params(
        &self,
        input: &Value,
        rt: &ToolRuntime,
    ) -> Result<NextTurnParams, ToolError> {
        let (input, rt) = (input.clone(), rt.clone());
        let v = self
            .0
            .call_value(move |py| input_and_runtime(py, &input, rt))
            .await?;
        NextTurnParams::from_value(camel_keys(v)).map_err(ToolError::new)
    }
}

/// A tool's `max_calls` and `retry` (`(max_attempts, backoff_ms)`), checked by the core's
/// readers of the canonical keys (docs/behaviour.md §15), whose refusals name the keys as
/// every binding's do (`maxCalls`, `retry.maxAttempts`).
fn call_limits(
    py: Python<'_>,
    mut tool: Tool,
    max_calls: Option<f64>,
    retry: Option<(f64, Option<f64>)>,
) -> PyResult<Tool> {
    let id = tool.id().to_owned();
    let refused = |e: AgentError| {
        let e = AgentError::definition_invalid(format!(
            "Invalid definition of tool '{id}': {}",
            e.message()
        ));
        to_pyerr(py, e)
    };
    if let Some(n) = max_calls {
        let n = spec::at_least_one(n, "maxCalls").map_err(refused)?;
        tool = tool.max_calls(n);
    }
    if let Some((max_attempts, backoff_ms)) = retry {
        let retry = spec::tool_retry(max_attempts, backoff_ms).map_err(refused)?;
        tool = tool.retry(retry);
    }
    Ok(tool)
}

/// A tool defined from Python (`define_tool(AgentTool(...))`).
#[pyclass(name = "Tool", module = "phaseo_agent", frozen)]
pub struct PyTool {
    pub tool: Tool,
}

#[pymethods]
impl PyTool {
    #[new]
    #[pyo3(signature = (id, description, parameters, execute, execute_is_async, timeout_ms, require_approval, on_error, input_schema, input_schema_json, output_schema, event_schema, on_tool_called, on_response_received, next_turn_params, strict=false, input_examples=None, max_calls=None, retry=None, defer_loading=false, annotations=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        id: String,
        description: String,
        parameters: Option<&Bound<'_, PyAny>>,
        execute: Option<&Bound<'_, PyAny>>,
        execute_is_async: bool,
        timeout_ms: Option<f64>,
        require_approval: Option<&Bound<'_, PyAny>>,
        on_error: Option<String>,
        input_schema: Option<&Bound<'_, PyAny>>,
        input_schema_json: Option<&Bound<'_, PyAny>>,
        output_schema: Option<&Bound<'_, PyAny>>,
        event_schema: Option<&Bound<'_, PyAny>>,
        on_tool_called: Option<&Bound<'_, PyAny>>,
        on_response_received: Option<&Bound<'_, PyAny>>,
        next_turn_params: Option<&Bound<'_, PyAny>>,
        strict: bool,
        input_examples: Option<&Bound<'_, PyAny>>,
        max_calls: Option<f64>,
        retry: Option<(f64, Option<f64>)>,
        defer_loading: bool,
        annotations: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let parameters = match parameters {
            Some(p) if !p.is_none() => arg_value(p, "parameters")?,
            _ => Value::Null,
        };
        let mut tool = match execute {
            Some(f) if !f.is_none() => Tool::with_executor(
                id,
                description,
                parameters,
                Arc::new(PyExecutor(HostFn::new(
                    f.clone().unbind(),
                    !execute_is_async,
                ))),
            ),
            _ => Tool::external(id, description, parameters),
        };
        if let Some(ms) = timeout_ms {
            tool = tool.timeout_ms(ms);
        }
        match require_approval {
            None => {}
            Some(r) if r.is_none() => {}
            Some(r) if r.is_callable() => {
                tool = tool.approval_rule(phaseo_agent::Approval::Predicate(Arc::new(PyApproval(
                    HostFn::new(r.clone().unbind(), false),
                ))))
            }
            Some(r) if r.is_truthy()? => tool = tool.require_approval(),
            Some(_) => {}
        }
        if let Some(p) = on_error {
            let policy = OnError::parse(&p).map_err(|e| {
                to_pyerr(
                    py,
                    phaseo_agent::AgentError::definition_invalid(format!(
                        "Invalid definition of tool '{}': {e}",
                        tool.id()
                    )),
                )
            })?;
            tool = tool.on_error(policy);
        }
        if let Some(v) = input_schema.filter(|v| !v.is_none()) {
            let schema = match input_schema_json {
                Some(s) if !s.is_none() => Some(arg_value(s, "input_schema")?),
                _ => None,
            };
            tool = tool.input_schema(validator(v, schema));
        }
        if let Some(v) = output_schema.filter(|v| !v.is_none()) {
            tool = tool.output_schema(validator(v, None));
        }
        if let Some(v) = event_schema.filter(|v| !v.is_none()) {
            tool = tool.event_schema(validator(v, None));
        }
        if let Some(h) = on_tool_called.filter(|v| !v.is_none()) {
            tool = tool.on_tool_called_hook(Arc::new(PyToolCalled(HostFn::new(
                h.clone().unbind(),
                false,
            ))));
        }
        if let Some(h) = on_response_received.filter(|v| !v.is_none()) {
            tool = tool.on_response_received_hook(Arc::new(PyResponseReceived(HostFn::new(
                h.clone().unbind(),
                false,
            ))));
        }
        match next_turn_params {
            Some(n) if n.is_callable() => {
                tool = tool.next_turn_params_provider(Arc::new(PyNextTurn(HostFn::new(
                    n.clone().unbind(),
                    false,
                ))));
            }
            Some(n) if !n.is_none() => {
                let params =
                    NextTurnParams::from_value(camel_keys(arg_value(n, "next_turn_params")?))
                        .map_err(|e| {
                            to_pyerr(
                                py,
                                phaseo_agent::AgentError::definition_invalid(format!(
                                    "Invalid definition of tool '{}': {e}",
                                    tool.id()
                                )),
                            )
                        })?;
                tool = tool.next_turn_params(params);
            }
            _ => {}
        }
        tool = tool.strict(strict);
        if let Some(examples) = input_examples.filter(|v| !v.is_none()) {
            let examples = match arg_value(examples, "input_examples")? {
                Value::Array(list) => list,
                other => {
                    return Err(to_pyerr(
                        py,
                        phaseo_agent::AgentError::definition_invalid(format!(
                            "Invalid definition of tool '{}': inputExamples must be a list of \
                             argument objects, got {other}",
                            tool.id()
                        )),
                    ))
                }
            };
            tool = tool.input_examples(examples);
        }
        tool = call_limits(py, tool, max_calls, retry)?;
        // Offered only once the core's built-in tool_search finds it (docs/behaviour.md §17).
        tool = tool.defer_loading(defer_loading);
        // Listed when the tool is served over MCP (docs/behaviour.md §19); the core checks them.
        if let Some(a) = annotations.filter(|a| !a.is_none()) {
            let value = camel_keys(arg_value(a, "annotations")?);
            phaseo_agent::check_annotations(&value).map_err(|m| {
                to_pyerr(
                    py,
                    AgentError::definition_invalid(format!(
                        "Invalid definition of tool '{}': {m}",
                        tool.id()
                    )),
                )
            })?;
            tool = tool.annotations(value);
        }
        no_panic_in_definition(py, || tool.check().map_err(|e| to_pyerr(py, e)))?;
        Ok(Self { tool })
    }

    /// The tool id.
    #[getter]
    fn id(&self) -> &str {
        self.tool.id()
    }

    /// The description.
    #[getter]
    fn description(&self) -> &str {
        self.tool.description()
    }

    /// The JSON Schema sent to the model.
    #[getter]
    fn parameters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, self.tool.parameters_schema())
    }

    /// Whether the tool is manual (no executor).
    #[getter]
    fn manual(&self) -> bool {
        self.tool.is_manual()
    }

    fn __repr__(&self) -> String {
        format!("Tool(id={:?})", self.tool.id())
    }
}
