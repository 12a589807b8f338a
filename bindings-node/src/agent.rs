//! Agents, clients, cancellation and streams as napi classes.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use phaseo_agent::{
    create_agent, Agent, AgentError, AgentStream, CancellationToken, ContinueOptions, EventCursor,
    JsonSchema, Message, ModelClient, RunOptions, RunResult, ScriptedClient, StreamItem,
    TestClient, Value,
};
use tokio::sync::Mutex;

use crate::adapters::{JsListener, JsModel};
use crate::errors::{no_panic, to_napi};
use crate::host::HostFn;
use crate::spec::{self, AgentSpec, DecisionSpec, OutputSpec, OverridesSpec, ToolSpec};

/// Checks a tool definition (throws `AgentDefinitionError` data when invalid).
#[napi(js_name = "checkTool")]
pub fn check_tool(spec: ToolSpec) -> napi::Result<Value> {
    no_panic(|| {
        let tool = spec::tool(spec).map_err(to_napi)?;
        Ok(tool.parameters_schema().clone())
    })
}

/// A JSON Schema compiled by the core.
#[napi]
pub struct NativeJsonSchema {
    schema: JsonSchema,
}

#[napi]
impl NativeJsonSchema {
    /// Compiles a schema (throws a definition error naming the problem).
    #[napi(constructor)]
    pub fn new(schema: Value) -> napi::Result<Self> {
        JsonSchema::compile(&schema)
            .map(|schema| Self { schema })
            .map_err(|e| {
                to_napi(AgentError::definition_invalid(format!(
                    "Invalid JSON Schema: {e}"
                )))
            })
    }

    /// `null` when valid, else `"<pointer>: <reason>"`.
    #[napi]
    pub fn check(&self, value: Value) -> Option<String> {
        self.schema.check(&value).err()
    }
}

/// Cancels runs it is given to.
#[napi]
#[derive(Default)]
pub struct NativeCancelToken {
    token: CancellationToken,
}

#[napi]
impl NativeCancelToken {
    #[napi(constructor)]
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels.
    #[napi]
    pub fn cancel(&self) {
        self.token.cancel();
    }
}

/// A model client implemented in Rust: scripted, test, gateway or OpenAI-compatible.
#[napi]
pub struct NativeModelClient {
    client: Arc<dyn ModelClient>,
    scripted: Option<Arc<ScriptedClient>>,
}

/// Options of the HTTP clients (unset fields come from the environment).
#[napi(object)]
pub struct HttpClientSpec {
    pub api_key: Option<String>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub timeout_ms: Option<f64>,
    pub headers: Option<std::collections::HashMap<String, String>>,
}

fn http_options(spec: HttpClientSpec) -> phaseo_agent::HttpClientOptions {
    let mut headers: Vec<(String, String)> = spec.headers.unwrap_or_default().into_iter().collect();
    headers.push(("X-Phaseo-Client".into(), "phaseo-agent-node".into()));
    phaseo_agent::HttpClientOptions {
        api_key: spec.api_key,
        base_url: spec.base_url,
        model: spec.model,
        timeout_ms: spec.timeout_ms,
        headers,
    }
}

#[napi]
impl NativeModelClient {
    /// Responses in the short scripted form; `used` of them already consumed.
    #[napi(factory)]
    pub fn scripted(responses: Vec<Value>, used: Option<u32>) -> napi::Result<Self> {
        let client = ScriptedClient::from_script(&responses).map_err(|e| {
            to_napi(AgentError::definition_invalid(format!(
                "ScriptedClient: {e}"
            )))
        })?;
        let client = Arc::new(client.skipping(used.unwrap_or(0) as usize));
        Ok(Self {
            client: client.clone(),
            scripted: Some(client),
        })
    }

    /// The offline test client.
    #[napi(factory)]
    pub fn test() -> Self {
        Self {
            client: Arc::new(TestClient::new()),
            scripted: None,
        }
    }

    /// The Phaseo gateway client (Responses API).
    #[napi(factory)]
    pub fn gateway(spec: HttpClientSpec) -> Self {
        Self {
            client: Arc::new(phaseo_agent::GatewayClient::from_options(&http_options(
                spec,
            ))),
            scripted: None,
        }
    }

    /// An OpenAI-compatible chat-completions client.
    #[napi(factory)]
    pub fn openai(spec: HttpClientSpec) -> Self {
        Self {
            client: Arc::new(phaseo_agent::OpenAICompatibleClient::from_options(
                &http_options(spec),
            )),
            scripted: None,
        }
    }

    /// Responses a scripted client consumed so far (0 for other clients).
    #[napi(getter)]
    pub fn cursor(&self) -> u32 {
        self.scripted
            .as_ref()
            .map(|s| s.cursor() as u32)
            .unwrap_or(0)
    }
}

/// Which model client a run uses.
#[napi(object)]
pub struct ClientSpec {
    pub kind: String,
    pub generate: Option<u32>,
}

/// Options of a run.
#[napi(object)]
pub struct RunSpec {
    pub input: Value,
    pub context: Option<Value>,
    pub messages: Option<Value>,
    pub overrides: Option<OverridesSpec>,
    pub on_event: Option<u32>,
}

/// Options of a continue.
#[napi(object)]
pub struct ContinueSpec {
    pub approvals: Option<Vec<DecisionSpec>>,
    pub rejections: Option<Vec<DecisionSpec>>,
    pub tool_outputs: Option<Vec<OutputSpec>>,
    pub human_input: Option<String>,
    pub context: Option<Value>,
    pub overrides: Option<OverridesSpec>,
    pub on_event: Option<u32>,
}

fn client(
    spec: &ClientSpec,
    native_client: Option<&NativeModelClient>,
) -> napi::Result<Arc<dyn ModelClient>> {
    match (spec.kind.as_str(), native_client, spec.generate) {
        ("native", Some(n), _) => Ok(n.client.clone()),
        ("host", _, Some(id)) => Ok(Arc::new(JsModel(HostFn { id }))),
        _ => Err(napi::Error::from_reason(
            "client must be a ScriptedClient, a TestClient or an object with generate(request)",
        )),
    }
}

fn state_json(result: std::result::Result<RunResult, AgentError>) -> napi::Result<String> {
    result.map(|r| r.to_json()).map_err(to_napi)
}

/// An agent.
#[napi]
pub struct NativeAgent {
    agent: Agent,
}

impl NativeAgent {
    fn run_options(
        &self,
        spec: RunSpec,
        client: Arc<dyn ModelClient>,
        cancel: Option<&NativeCancelToken>,
    ) -> napi::Result<RunOptions> {
        let mut options = RunOptions::new(spec.input, client)
            .context(spec.context.unwrap_or(Value::Null))
            .overrides(spec::overrides(spec.overrides).map_err(to_napi)?)
            .cancel(cancel.map(|c| c.token.child_token()).unwrap_or_default());
        if let Some(m) = spec.messages.filter(|m| !m.is_null()) {
            let messages: Vec<Message> = serde_json::from_value(m)
                .map_err(|e| napi::Error::from_reason(format!("messages: {e}")))?;
            options = options.messages(messages);
        }
        if let Some(id) = spec.on_event {
            options = options.on_event(Arc::new(JsListener(id)));
        }
        Ok(options)
    }

    fn continue_options(
        &self,
        spec: ContinueSpec,
        client: Arc<dyn ModelClient>,
        cancel: Option<&NativeCancelToken>,
    ) -> napi::Result<ContinueOptions> {
        let mut options = ContinueOptions::new(client)
            .overrides(spec::overrides(spec.overrides).map_err(to_napi)?)
            .cancel(cancel.map(|c| c.token.child_token()).unwrap_or_default());
        options.approvals = spec::decisions(spec.approvals);
        options.rejections = spec::decisions(spec.rejections);
        options.tool_outputs = spec::outputs(spec.tool_outputs);
        options.human_input = spec.human_input;
        options.context = spec.context;
        if let Some(id) = spec.on_event {
            options = options.on_event(Arc::new(JsListener(id)));
        }
        Ok(options)
    }
}

fn parse_state(text: &str) -> napi::Result<RunResult> {
    RunResult::from_json(text).map_err(to_napi)
}

#[napi]
impl NativeAgent {
    /// Defines an agent (throws definition errors).
    #[napi(constructor)]
    pub fn new(spec: AgentSpec) -> napi::Result<Self> {
        no_panic(|| {
            let def = spec::agent(spec).map_err(to_napi)?;
            Ok(Self {
                agent: create_agent(def).map_err(to_napi)?,
            })
        })
    }

    /// Runs; resolves with the state's JSON text.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn run<'env>(
        &self,
        env: &'env Env,
        spec: RunSpec,
        client_spec: ClientSpec,
        native_client: Option<&NativeModelClient>,
        cancel: Option<&NativeCancelToken>,
    ) -> napi::Result<PromiseRaw<'env, String>> {
        let options = self.run_options(spec, client(&client_spec, native_client)?, cancel)?;
        let agent = self.agent.clone();
        env.spawn_future(async move { state_json(agent.run(options).await) })
    }

    /// Continues a paused state (JSON text); resolves with the new state's JSON text.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn continue_run<'env>(
        &self,
        env: &'env Env,
        state: String,
        spec: ContinueSpec,
        client_spec: ClientSpec,
        native_client: Option<&NativeModelClient>,
        cancel: Option<&NativeCancelToken>,
    ) -> napi::Result<PromiseRaw<'env, String>> {
        let state = parse_state(&state)?;
        let options = self.continue_options(spec, client(&client_spec, native_client)?, cancel)?;
        let agent = self.agent.clone();
        env.spawn_future(async move { state_json(agent.continue_run(&state, options).await) })
    }

    /// Starts a streamed run.
    #[napi]
    pub fn stream(
        &self,
        spec: RunSpec,
        client_spec: ClientSpec,
        native_client: Option<&NativeModelClient>,
        cancel: Option<&NativeCancelToken>,
    ) -> napi::Result<NativeStream> {
        let options = self.run_options(spec, client(&client_spec, native_client)?, cancel)?;
        let (stream, driver) = self.agent.stream_deferred(options);
        napi::bindgen_prelude::spawn(driver);
        Ok(NativeStream { stream })
    }

    /// Continues a paused state as a stream.
    #[napi]
    pub fn continue_stream(
        &self,
        state: String,
        spec: ContinueSpec,
        client_spec: ClientSpec,
        native_client: Option<&NativeModelClient>,
        cancel: Option<&NativeCancelToken>,
    ) -> napi::Result<NativeStream> {
        let state = parse_state(&state)?;
        let options = self.continue_options(spec, client(&client_spec, native_client)?, cancel)?;
        let (stream, driver) = self.agent.continue_stream_deferred(&state, options);
        napi::bindgen_prelude::spawn(driver);
        Ok(NativeStream { stream })
    }
}

/// Validates state JSON text (throws `state_invalid` data); returns it canonicalized.
#[napi(js_name = "parseState")]
pub fn parse_state_text(text: String) -> napi::Result<String> {
    parse_state(&text).map(|s| s.to_json())
}

/// A streamed run.
#[napi]
pub struct NativeStream {
    stream: AgentStream,
}

#[napi]
impl NativeStream {
    /// A cursor from the start of the history.
    #[napi]
    pub fn cursor(&self) -> NativeCursor {
        NativeCursor {
            cursor: Arc::new(Mutex::new(self.stream.cursor())),
        }
    }

    /// Cancels the run (it ends `cancelled`).
    #[napi]
    pub fn cancel(&self, reason: Option<String>) {
        self.stream.cancel(reason);
    }
}

/// One consumer's position in a stream.
#[napi]
pub struct NativeCursor {
    cursor: Arc<Mutex<EventCursor>>,
}

#[napi]
impl NativeCursor {
    /// The next item as JSON text (an event, then `{"type":"result","result":state}`), or
    /// null at the end; rejects with the run's error if it failed.
    #[napi(ts_return_type = "Promise<string | null>")]
    pub fn next<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Option<String>>> {
        let cursor = self.cursor.clone();
        env.spawn_future(async move {
            match cursor.lock().await.next_item().await {
                None => Ok(None),
                Some(Err(e)) => Err(to_napi(e)),
                Some(Ok(StreamItem::Event(e))) => Ok(Some(e.to_json())),
                Some(Ok(StreamItem::Result(r))) => Ok(Some(format!(
                    "{{\"type\":\"result\",\"result\":{}}}",
                    r.to_json()
                ))),
            }
        })
    }
}
