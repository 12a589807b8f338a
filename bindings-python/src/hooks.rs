//! Stop conditions, human review, per-turn values, event listeners and model clients
//! written in Python, adapted to the core traits; plus the built-in clients.

use std::sync::Arc;

use phaseo_agent::{
    async_trait, stop, AgentEvent, CancellationToken, EventListener, HostModelFunctions,
    HostStreamSender, HumanReview, HumanReviewContext, ModelClient, ModelError, ModelRequest,
    ModelResponse, ReviewRequest, ScriptedClient, StopCondition, StopState, TestClient, ToolError,
    TurnContext, TurnResolver, Value,
};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::convert::{camel_keys, returned, snake_keys, to_py};
use crate::errors::{no_panic_in_definition, to_pyerr};
use crate::host::HostFn;
use crate::limits::RESPONSE_DEPTH;
use phaseo_agent::spec::{respell_keys, snake_case};

fn one_arg(
    value: Value,
) -> impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>> + Send + 'static {
    move |py| PyTuple::new(py, [to_py(py, &value)?])
}

/// A stop condition (built-in or a Python predicate).
#[pyclass(name = "StopCondition", module = "phaseo_agent", frozen)]
pub struct PyStopCondition {
    pub condition: Arc<dyn StopCondition>,
    label: String,
}

struct HostStop(HostFn);

#[async_trait]
impl StopCondition for HostStop {
    async fn check(&self, state: &StopState<'_>) -> Result<Option<String>, ToolError> {
        let value = snake_keys(state.to_value());
        let answer = self.0.call_value(one_arg(value)).await?;
        Ok(stop::reason_from_answer(&answer))
    }
}

#[pymethods]
impl PyStopCondition {
    /// A condition from a predicate `(state) -> bool | str` (`True` → `custom_condition`).
    #[staticmethod]
    fn from_callable(predicate: &Bound<'_, PyAny>) -> Self {
        Self {
            condition: Arc::new(HostStop(HostFn::new(predicate.clone().unbind(), false))),
            label: "custom".into(),
        }
    }

    fn __repr__(&self) -> String {
        format!("StopCondition({})", self.label)
    }
}

fn builtin(condition: Arc<dyn StopCondition>, label: String) -> PyStopCondition {
    PyStopCondition { condition, label }
}

/// Stops once `n` steps completed (`step_count:<n>`).
#[pyfunction]
pub fn step_count_is(n: usize) -> PyStopCondition {
    builtin(stop::step_count_is(n), format!("step_count_is({n})"))
}

/// Stops once total tokens reach `n` (`max_tokens:<n>`).
#[pyfunction]
pub fn max_tokens_used(n: u64) -> PyStopCondition {
    builtin(stop::max_tokens_used(n), format!("max_tokens_used({n})"))
}

/// Stops once the cost reaches `x` (`max_cost:<x>`).
#[pyfunction]
pub fn max_cost(x: f64) -> PyStopCondition {
    builtin(stop::max_cost(x), format!("max_cost({x})"))
}

/// Stops once the run is `ms` milliseconds old (`max_duration:<ms>`).
#[pyfunction]
pub fn max_duration(ms: u64) -> PyStopCondition {
    builtin(stop::max_duration(ms), format!("max_duration({ms})"))
}

/// Stops once any step called `name` (`tool_call:<name>`).
#[pyfunction]
pub fn has_tool_call(name: String) -> PyStopCondition {
    let label = format!("has_tool_call({name:?})");
    builtin(stop::has_tool_call(name), label)
}

/// Stops once any step finished with `reason` (`finish_reason:<reason>`).
#[pyfunction]
pub fn finish_reason_is(reason: String) -> PyStopCondition {
    let label = format!("finish_reason_is({reason:?})");
    builtin(stop::finish_reason_is(reason), label)
}

/// `human_review(ctx) -> None | {"reason", "payload"}`, or any object with `.reason` (and
/// `.payload`), such as the product's `AgentHumanReviewRequest`.
pub struct HostReview(pub HostFn);

fn review_answer(obj: &Bound<'_, PyAny>) -> Result<Value, ToolError> {
    let is_mapping = obj.cast::<pyo3::types::PyMapping>().is_ok();
    if !obj.is_none() && !is_mapping && obj.hasattr("reason").unwrap_or(false) {
        let field = |name: &str| -> Result<Value, ToolError> {
            match obj.getattr(name) {
                Ok(v) => crate::convert::returned_value(&v),
                Err(_) => Ok(Value::Null),
            }
        };
        let mut answer = serde_json::Map::new();
        answer.insert("reason".into(), field("reason")?);
        answer.insert("payload".into(), field("payload")?);
        return Ok(Value::Object(answer));
    }
    crate::convert::returned_value(obj)
}

#[async_trait]
impl HumanReview for HostReview {
    async fn review(
        &self,
        ctx: &HumanReviewContext<'_>,
    ) -> Result<Option<ReviewRequest>, ToolError> {
        let answer = self
            .0
            .call(one_arg(snake_keys(ctx.to_value())), review_answer)
            .await?;
        ReviewRequest::from_answer(answer)
    }
}

/// A field computed per turn: `fn(turn) -> value`.
pub struct HostTurn(pub HostFn);

#[async_trait]
impl TurnResolver for HostTurn {
    async fn resolve(&self, turn: &TurnContext<'_>) -> Result<Value, ToolError> {
        self.0
            .call_value(one_arg(snake_keys(turn.to_value())))
            .await
    }
}

/// `on_event(event_dict)`: called synchronously, in order; its exceptions are ignored.
pub struct HostListener(pub Py<PyAny>);

impl EventListener for HostListener {
    fn on_event(&self, event: &AgentEvent) {
        let value = snake_keys(event.to_value());
        crate::lifecycle::attach(|py| {
            let outcome = to_py(py, &value).and_then(|v| self.0.bind(py).call1((v,)));
            if let Err(e) = outcome {
                e.write_unraisable(py, Some(self.0.bind(py)));
            }
        });
    }
}

/// A Python model client: an object with `generate(request)` and/or `stream(request)`, or
/// a plain function `(request) -> response` (sync or async).
pub struct PyModelFunctions {
    generate: Option<HostFn>,
    /// `_client.drain` bound to the client's `stream`.
    stream: Option<HostFn>,
}

/// A response from Python: a dict or object with snake_case or camelCase keys, full
/// (`{"message": ...}`) or short (`{"text", "tool_calls"}`).
pub fn response_from_py(
    obj: &Bound<'_, PyAny>,
) -> Result<Result<ModelResponse, ModelError>, ToolError> {
    let value = returned(obj, RESPONSE_DEPTH, |m| {
        ToolError::new(format!("model response: {m}"))
    })?;
    ModelResponse::from_script_entry(&camel_keys(value)).map_err(ToolError::new)
}

/// What a streaming Python client yields into: `send(event)` passes one event to the run
/// at once (raising `ValueError` for a malformed event or once the attempt is over).
#[pyclass(name = "ModelStreamSink", module = "phaseo_agent._native", frozen)]
pub struct PyStreamSink {
    sender: HostStreamSender,
}

#[pymethods]
impl PyStreamSink {
    /// Passes one stream event on to the run.
    fn send(&self, event: &Bound<'_, PyAny>) -> PyResult<()> {
        let value = crate::reader::read(event, RESPONSE_DEPTH)
            .map_err(|e| e.into_arg_error("model stream event"))?;
        self.sender
            .send(&camel_keys(value))
            .map_err(pyo3::exceptions::PyValueError::new_err)
    }

    /// Whether the attempt is over (cancelled or timed out): stop reading the stream.
    #[getter]
    fn closed(&self) -> bool {
        self.sender.is_closed()
    }
}

/// The core's [`phaseo_agent::HostModel`] decides which of the two functions a run calls.
#[async_trait]
impl HostModelFunctions for PyModelFunctions {
    fn has_generate(&self) -> bool {
        self.generate.is_some()
    }

    fn has_stream(&self) -> bool {
        self.stream.is_some()
    }

    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        _cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        let Some(generate) = &self.generate else {
            return Err(ModelError::new("the model client has no generate method"));
        };
        let value = snake_keys(request.to_value());
        generate
            .call(one_arg(value), response_from_py)
            .await
            .map_err(|e| ModelError::new(e.message))?
    }

    async fn stream(
        &self,
        request: &ModelRequest<'_>,
        _cancel: &CancellationToken,
        sender: HostStreamSender,
    ) -> Result<(), ModelError> {
        let Some(stream) = &self.stream else {
            return Err(ModelError::new("the model client has no stream method"));
        };
        let value = snake_keys(request.to_value());
        stream
            .call(
                move |py| {
                    let sink = Bound::new(py, PyStreamSink { sender })?;
                    PyTuple::new(py, [to_py(py, &value)?, sink.into_any()])
                },
                |_| Ok(()),
            )
            .await
            .map_err(|e| ModelError::new(e.message))
    }
}

/// Answers with the given responses in order (dicts like `{"text": ...}` or
/// `{"tool_calls": [{"id", "name", "arguments"}]}`; `{"fail": "message"}` fails an attempt).
#[pyclass(name = "ScriptedClient", module = "phaseo_agent", frozen)]
pub struct PyScriptedClient {
    pub client: Arc<ScriptedClient>,
}

#[pymethods]
impl PyScriptedClient {
    #[new]
    #[pyo3(signature = (responses, used=0))]
    fn new(py: Python<'_>, responses: Vec<Bound<'_, PyAny>>, used: usize) -> PyResult<Self> {
        let mut entries = Vec::with_capacity(responses.len());
        for (i, r) in responses.iter().enumerate() {
            let value = crate::reader::read(r, RESPONSE_DEPTH)
                .map_err(|e| e.into_arg_error(&format!("responses[{i}]")))?;
            entries.push(camel_keys(value));
        }
        let client = no_panic_in_definition(py, || {
            ScriptedClient::from_script(&entries).map_err(|e| {
                to_pyerr(
                    py,
                    phaseo_agent::AgentError::definition_invalid(format!("ScriptedClient: {e}")),
                )
            })
        })?;
        Ok(Self {
            client: Arc::new(client.skipping(used)),
        })
    }

    /// How many responses have been consumed.
    #[getter]
    fn cursor(&self) -> usize {
        self.client.cursor()
    }
}

/// Calls every offered tool once with arguments generated from its schema, then answers
/// with a summary of the results (offline, for trying tools out).
#[pyclass(name = "TestClient", module = "phaseo_agent", frozen)]
pub struct PyTestClient;

#[pymethods]
impl PyTestClient {
    #[new]
    fn new() -> Self {
        Self
    }

    /// Not a pytest test class, despite its name.
    #[classattr]
    fn __test__() -> bool {
        false
    }
}

/// A real model endpoint over HTTP: the Phaseo gateway or an OpenAI-compatible server.
#[pyclass(name = "HttpModelClient", module = "phaseo_agent", frozen)]
pub struct PyHttpClient {
    pub client: Arc<dyn ModelClient>,
    label: String,
}

#[pymethods]
impl PyHttpClient {
    fn __repr__(&self) -> String {
        self.label.clone()
    }
}

/// An HTTP client of `kind` (`"gateway"` or `"openai-compatible"`) from its options, as
/// the core reads them (`phaseo_agent::spec::http_client_options`: camelCase keys, the
/// product's spellings included; the Python layer only respells its keyword arguments).
#[pyfunction]
pub fn http_client(kind: &str, options: &Bound<'_, PyAny>) -> PyResult<PyHttpClient> {
    let value = crate::convert::arg_value(options, "client options")?;
    let py = options.py();
    // Refusals name the keys as Python spells them (`client_options`, `fetch_impl`, …).
    let refused = |e| to_pyerr(py, respell_keys(e, snake_case));
    let mut options = phaseo_agent::spec::http_client_options(value).map_err(refused)?;
    options
        .headers
        .push(("X-Phaseo-Client".into(), "phaseo-agent-python".into()));
    let client = phaseo_agent::spec::http_client(kind, &options).map_err(refused)?;
    // The base URL the client resolved (the environment's or the default when not given).
    let label = if kind == "gateway" {
        let base = phaseo_agent::GatewayClient::from_options(&options);
        format!("GatewayClient(base_url={:?})", base.base_url_str())
    } else {
        let base = phaseo_agent::OpenAICompatibleClient::from_options(&options);
        format!("OpenAICompatibleClient(base_url={:?})", base.base_url_str())
    };
    Ok(PyHttpClient { client, label })
}

/// The model client behind a Python client argument.
pub fn client_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Arc<dyn ModelClient>> {
    if let Ok(s) = obj.cast::<PyScriptedClient>() {
        return Ok(s.get().client.clone());
    }
    if let Ok(h) = obj.cast::<PyHttpClient>() {
        return Ok(h.get().client.clone());
    }
    if obj.cast::<PyTestClient>().is_ok() {
        return Ok(Arc::new(TestClient::new()));
    }
    let callable = |name: &str| {
        obj.getattr(name)
            .ok()
            .filter(|f| !f.is_none() && f.is_callable())
    };
    let stream = match callable("stream") {
        Some(stream) => {
            let client = obj.py().import("phaseo_agent._client")?;
            let is_async: bool = client.getattr("is_async")?.call1((&stream,))?.extract()?;
            let drain = obj
                .py()
                .import("functools")?
                .getattr("partial")?
                .call1((client.getattr("drain")?, stream))?;
            // A synchronous stream may block between events: it runs on a worker thread.
            Some(HostFn::new(drain.unbind(), !is_async))
        }
        None => None,
    };
    let generate = callable("generate")
        .or_else(|| (stream.is_none() && obj.is_callable()).then(|| obj.clone()))
        .map(|f| HostFn::new(f.unbind(), false));
    if generate.is_none() && stream.is_none() {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "client must be ScriptedClient, TestClient, a client from create_gateway_agent_client / \
             create_openai_compatible_client, an object with generate(request) and/or \
             stream(request), or a function (request) -> response; got {}",
            obj.get_type().name()?
        )));
    }
    Ok(Arc::new(phaseo_agent::HostModel(PyModelFunctions {
        generate,
        stream,
    })))
}
