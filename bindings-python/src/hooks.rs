//! Stop conditions, human review, per-turn values, event listeners and model clients
//! written in Python, adapted to the core traits; plus the built-in clients.

use std::sync::Arc;

use phaseo_agent::{
    async_trait, stop, AgentEvent, CancellationToken, EventListener, HumanReview,
    HumanReviewContext, ModelClient, ModelError, ModelRequest, ModelResponse, ReviewRequest,
    ScriptedClient, StopCondition, StopState, TestClient, ToolError, TurnContext, TurnResolver,
    Value,
};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::convert::{camel_keys, returned, snake_keys, to_py};
use crate::errors::{no_panic_in_definition, to_pyerr};
use crate::host::HostFn;
use crate::limits::RESPONSE_DEPTH;

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

/// `human_review(ctx) -> None | {"reason", "payload"}`.
pub struct HostReview(pub HostFn);

#[async_trait]
impl HumanReview for HostReview {
    async fn review(
        &self,
        ctx: &HumanReviewContext<'_>,
    ) -> Result<Option<ReviewRequest>, ToolError> {
        let answer = self
            .0
            .call_value(one_arg(snake_keys(ctx.to_value())))
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

/// Any Python object with `generate(request)` (sync or async).
pub struct HostModel(pub HostFn);

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

#[async_trait]
impl ModelClient for HostModel {
    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        _cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        let value = snake_keys(request.to_value());
        let outcome = self
            .0
            .call(one_arg(value), response_from_py)
            .await
            .map_err(|e| ModelError::new(e.message))?;
        outcome
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

fn http_options(
    api_key: Option<String>,
    base_url: Option<String>,
    model: Option<String>,
    timeout_ms: Option<f64>,
    headers: Option<std::collections::HashMap<String, String>>,
) -> phaseo_agent::HttpClientOptions {
    let mut headers: Vec<(String, String)> = headers.unwrap_or_default().into_iter().collect();
    headers.push(("X-Phaseo-Client".into(), "phaseo-agent-python".into()));
    phaseo_agent::HttpClientOptions {
        api_key,
        base_url,
        model,
        timeout_ms,
        headers,
    }
}

/// The Phaseo gateway client (`POST {base}/responses`); the key defaults to
/// `PHASEO_API_KEY`, the base URL to `PHASEO_BASE_URL` or `https://api.phaseo.app/v1`.
#[pyfunction]
#[pyo3(signature = (*, api_key=None, base_url=None, model=None, timeout_ms=None, headers=None))]
pub fn create_gateway_agent_client(
    api_key: Option<String>,
    base_url: Option<String>,
    model: Option<String>,
    timeout_ms: Option<f64>,
    headers: Option<std::collections::HashMap<String, String>>,
) -> PyHttpClient {
    let client = phaseo_agent::GatewayClient::from_options(&http_options(
        api_key, base_url, model, timeout_ms, headers,
    ));
    let label = format!("GatewayClient(base_url={:?})", client.base_url_str());
    PyHttpClient {
        client: Arc::new(client),
        label,
    }
}

/// An OpenAI-compatible chat-completions client (`POST {base}/chat/completions`: OpenAI,
/// vLLM, Ollama, llama.cpp, LM Studio); defaults from `OPENAI_BASE_URL`/`OPENAI_API_KEY`.
#[pyfunction]
#[pyo3(signature = (*, base_url=None, api_key=None, model=None, timeout_ms=None, headers=None))]
pub fn create_openai_compatible_client(
    base_url: Option<String>,
    api_key: Option<String>,
    model: Option<String>,
    timeout_ms: Option<f64>,
    headers: Option<std::collections::HashMap<String, String>>,
) -> PyHttpClient {
    let client = phaseo_agent::OpenAICompatibleClient::from_options(&http_options(
        api_key, base_url, model, timeout_ms, headers,
    ));
    let label = format!(
        "OpenAICompatibleClient(base_url={:?})",
        client.base_url_str()
    );
    PyHttpClient {
        client: Arc::new(client),
        label,
    }
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
    let generate = obj.getattr("generate").map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(
            "client must be ScriptedClient, TestClient or an object with generate(request)",
        )
    })?;
    Ok(Arc::new(HostModel(HostFn::new(generate.unbind(), false))))
}
