//! Agents, clients, cancellation and streams as napi classes.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use phaseo_agent::json::to_canonical_string;
use phaseo_agent::json_host::JsonModelFunctions;
use phaseo_agent::{
    create_agent, Agent, AgentError, AgentStream, CancellationToken, ContinueOptions, EventCursor,
    JsonSchema, ModelClient, RunOptions, RunResult, ScriptedClient, StreamItem, TestClient, Value,
};
use tokio::sync::Mutex;

use crate::adapters::JsListener;
use crate::errors::{no_panic, to_napi};
use crate::host::HostFn;
use crate::spec::{spec_value, JS_CALLBACKS};
use crate::store::NativeRunStore;

/// Checks a tool definition (throws `AgentDefinitionError` data when invalid).
#[napi(js_name = "checkTool")]
pub fn check_tool(spec: Value) -> napi::Result<String> {
    no_panic(|| {
        let tool = phaseo_agent::spec::tool(&JS_CALLBACKS, spec_value(spec)?).map_err(to_napi)?;
        // As text: a schema holding an integer beyond 2^53 keeps its digits (the JS layer
        // reads it exactly).
        Ok(to_canonical_string(tool.parameters_schema()))
    })
}

/// `"<JSON pointer>: <reason>"` for a validator's issue at `path` (keys and indices): the
/// message after `Invalid tool input: ` (docs/behaviour.md §20).
#[napi(js_name = "inputProblem")]
pub fn input_problem(path: Value, reason: String) -> napi::Result<String> {
    no_panic(|| {
        let steps = path.as_array().map(Vec::as_slice).unwrap_or_default();
        Ok(phaseo_agent::input_problem(steps, &reason))
    })
}

/// Checks an MCP server declaration (throws `AgentDefinitionError` data when invalid).
#[napi(js_name = "checkMcpServer")]
pub fn check_mcp_server(spec: Value) -> napi::Result<()> {
    no_panic(|| {
        phaseo_agent::spec::mcp_server(&JS_CALLBACKS, spec_value(spec)?).map_err(to_napi)?;
        Ok(())
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
        no_panic(|| {
            JsonSchema::compile(&spec_value(schema)?)
                .map(|schema| Self { schema })
                .map_err(|e| {
                    to_napi(AgentError::definition_invalid(format!(
                        "Invalid JSON Schema: {e}"
                    )))
                })
        })
    }

    /// `null` when valid, else `"<pointer>: <reason>"` (`json`: the value's JSON text).
    #[napi]
    pub fn check(&self, json: String) -> napi::Result<Option<String>> {
        no_panic(|| match crate::values::parse_value(&json) {
            Ok(value) => Ok(self.schema.check(&value).err()),
            Err(message) => Ok(Some(message)),
        })
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

/// The HTTP client of `kind` (`"gateway"` or `"openai-compatible"`) from its options in the
/// core's format, except `bodyDefaults`, which crosses as checked JSON text (`lib/clients.js`
/// has already refused what JSON cannot hold, naming the option).
/// An HTTP client of `kind` from its options' JSON text, read by the core.
fn http_client(kind: &str, text: &str) -> napi::Result<Arc<dyn ModelClient>> {
    let value = crate::values::parse_value(text).map_err(|e| {
        to_napi(AgentError::definition_invalid(format!(
            "Invalid HTTP client options: {e}"
        )))
    })?;
    let mut options = phaseo_agent::spec::http_client_options(value).map_err(to_napi)?;
    options
        .headers
        .push(("X-Phaseo-Client".into(), "phaseo-agent-node".into()));
    phaseo_agent::spec::http_client(kind, &options).map_err(to_napi)
}

#[napi]
impl NativeModelClient {
    /// Responses in the short scripted form (the JSON text of their array); `used` of
    /// them already consumed.
    #[napi(factory)]
    pub fn scripted(responses: String, used: Option<u32>) -> napi::Result<Self> {
        no_panic(|| {
            let responses: Vec<Value> = serde_json::from_str(&responses).map_err(|e| {
                to_napi(AgentError::definition_invalid(format!(
                    "ScriptedClient: responses must be an array ({e})"
                )))
            })?;
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

    /// The gateway (`"gateway"`) or an OpenAI-compatible (`"openai-compatible"`) client,
    /// from its options' JSON text.
    #[napi(factory)]
    pub fn http(kind: String, options: String) -> napi::Result<Self> {
        no_panic(|| {
            Ok(Self {
                client: http_client(&kind, &options)?,
                scripted: None,
            })
        })
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
    pub stream: Option<u32>,
}

/// Options of a run: the caller's values as JSON text (written by the JS layer's
/// serializer), the rest in the core's canonical format.
#[napi(object)]
pub struct RunSpec {
    pub input: String,
    pub context: Option<String>,
    pub messages: Option<String>,
    /// The overrides (canonical format).
    pub options: Option<Value>,
    pub on_event: Option<u32>,
    /// The host's current span (`@opentelemetry/api`), when tracing is on.
    pub traceparent: Option<String>,
}

/// An output for a pending call.
#[napi(object)]
pub struct OutputSpec {
    pub tool_call_id: String,
    /// The output's JSON text (written by the JS layer's serializer).
    pub output: String,
}

/// Options of a continue: the caller's values as JSON text, the rest (decisions,
/// `humanInput`, overrides) in the core's canonical format.
#[napi(object)]
pub struct ContinueSpec {
    pub tool_outputs: Option<Vec<OutputSpec>>,
    /// People's answers in place of approval-gated calls (docs/behaviour.md §14).
    pub responses: Option<Vec<OutputSpec>>,
    /// JSON text.
    pub context: Option<String>,
    /// Decisions, `humanInput` and the overrides (canonical format).
    pub options: Option<Value>,
    pub on_event: Option<u32>,
    /// The host's current span (`@opentelemetry/api`), when tracing is on.
    pub traceparent: Option<String>,
}

/// The canonical options object the JS layer wrote, to which the values that crossed as
/// text are added.
fn canonical(
    options: Option<Value>,
    traceparent: Option<String>,
) -> napi::Result<serde_json::Map<String, Value>> {
    let mut obj = match options {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(obj)) => obj,
        Some(_) => return Err(napi::Error::from_reason("options must be an object")),
    };
    if let Some(t) = traceparent {
        obj.insert("traceparent".into(), Value::String(t));
    }
    Ok(obj)
}

/// The model client a run (or a served agent) uses.
pub(crate) fn client(
    spec: &ClientSpec,
    native_client: Option<&NativeModelClient>,
) -> napi::Result<Arc<dyn ModelClient>> {
    match (spec.kind.as_str(), native_client) {
        ("native", Some(n)) => Ok(n.client.clone()),
        ("host", _) if spec.generate.is_some() || spec.stream.is_some() => Ok(Arc::new(
            JsonModelFunctions {
                generate: spec.generate.map(|id| HostFn { id }),
                stream: spec.stream.map(|id| HostFn { id }),
            }
            .into_client(),
        )),
        _ => Err(napi::Error::from_reason(
            "client must be a ScriptedClient, a TestClient or an object with generate(request)",
        )),
    }
}

/// The parts of a state that grow with the run (`run.messages`, `steps`, `stepResults`,
/// `items`), in the order of [`NativeState::part`].
const PART_MESSAGES: u32 = 0;
const PART_STEPS: u32 = 1;
const PART_STEP_RESULTS: u32 = 2;
const PART_ITEMS: u32 = 3;

/// A run's result, held natively. JS receives the small "head" of the state (its JSON with
/// the growing parts empty) at once and each growing part as JSON text when first read
/// (`lib/state.js` turns them into lazily parsed properties): a run whose caller only reads its
/// status and output never serializes nor parses its history. V8 is told the (estimated)
/// size of the state while JS holds it, so that it collects dropped results in time.
#[napi(custom_finalize)]
pub struct NativeState {
    state: RunResult,
    head: String,
    /// Bytes reported to V8 as external memory (0 until `head` is taken).
    reported: i64,
}

impl NativeState {
    pub(crate) fn new(mut state: RunResult) -> Self {
        let head = state.head_json();
        Self {
            state,
            head,
            reported: 0,
        }
    }
}

impl ObjectFinalize for NativeState {
    fn finalize(self, env: Env) -> napi::Result<()> {
        if self.reported > 0 {
            env.adjust_external_memory(-self.reported)?;
        }
        Ok(())
    }
}

#[napi]
impl NativeState {
    /// The canonical JSON text of the state with `run.messages`, `steps` and `stepResults`
    /// empty, `items` holding only the output's entry (`RunResult::head_json`); the JS
    /// layer fills them in from `part`.
    #[napi]
    pub fn head(&mut self, env: Env) -> String {
        if self.reported == 0 {
            let size = i64::try_from(self.state.estimated_size()).unwrap_or(i64::MAX);
            if env.adjust_external_memory(size).is_ok() {
                self.reported = size;
            }
        }
        std::mem::take(&mut self.head)
    }

    /// The canonical JSON text of one growing part: 0 `run.messages`, 1 `steps`,
    /// 2 `stepResults`, 3 `items`.
    #[napi]
    pub fn part(&self, which: u32) -> napi::Result<String> {
        let s = &self.state;
        Ok(match which {
            PART_MESSAGES => to_canonical_string(&s.run.messages),
            PART_STEPS => to_canonical_string(&s.steps),
            PART_STEP_RESULTS => to_canonical_string(&s.step_results),
            PART_ITEMS => to_canonical_string(&s.items()),
            _ => return Err(napi::Error::from_reason("no such state part")),
        })
    }

    /// The whole state's canonical JSON text.
    #[napi(js_name = "toJson")]
    pub fn to_json(&self) -> String {
        self.state.to_json()
    }
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
        let mut obj = canonical(spec.options, spec.traceparent)?;
        obj.insert("input".into(), argument(&spec.input, "input")?);
        if let Some(c) = spec.context {
            obj.insert("context".into(), argument(&c, "context")?);
        }
        if let Some(m) = spec.messages {
            obj.insert("messages".into(), argument(&m, "messages")?);
        }
        let mut options = phaseo_agent::spec::run_options(&JS_CALLBACKS, Value::Object(obj))
            .map_err(to_napi)?
            .into_run_options(client)
            .cancel(cancel.map(|c| c.token.child_token()).unwrap_or_default());
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
        let mut obj = canonical(spec.options, spec.traceparent)?;
        if let Some(c) = spec.context {
            obj.insert("context".into(), argument(&c, "context")?);
        }
        for (key, outputs) in [
            ("toolOutputs", spec.tool_outputs),
            ("responses", spec.responses),
        ] {
            if let Some(outputs) = outputs {
                let outputs = outputs
                    .into_iter()
                    .map(|o| {
                        let output = argument(&o.output, key)?;
                        Ok(serde_json::json!({"toolCallId": o.tool_call_id, "output": output}))
                    })
                    .collect::<napi::Result<Vec<_>>>()?;
                obj.insert(key.into(), Value::Array(outputs));
            }
        }
        let mut options = phaseo_agent::spec::continue_options(&JS_CALLBACKS, Value::Object(obj))
            .map_err(to_napi)?
            .into_continue_options(client)
            .cancel(cancel.map(|c| c.token.child_token()).unwrap_or_default());
        if let Some(id) = spec.on_event {
            options = options.on_event(Arc::new(JsListener(id)));
        }
        Ok(options)
    }
}

/// A caller's argument from its JSON text (the JS layer checked it already: this refusal
/// is the backstop).
fn argument(text: &str, what: &str) -> napi::Result<Value> {
    crate::values::parse_value(text).map_err(|m| napi::Error::from_reason(format!("{what}: {m}")))
}

/// Reads state text: whatever is wrong with it (a panic of the reader included) is
/// `state_invalid`.
fn parse_state(text: &str) -> napi::Result<RunResult> {
    std::panic::catch_unwind(|| RunResult::from_json(text))
        .unwrap_or_else(|p| {
            Err(AgentError::state_invalid(format!(
                "Invalid state: {}",
                phaseo_agent::panic_message(p.as_ref())
            )))
        })
        .map_err(to_napi)
}

#[napi]
impl NativeAgent {
    /// Defines an agent (throws definition errors).
    #[napi(constructor)]
    pub fn new(spec: Value, store: Option<&NativeRunStore>) -> napi::Result<Self> {
        no_panic(|| {
            let mut def = phaseo_agent::spec::agent_definition(&JS_CALLBACKS, spec_value(spec)?)
                .map_err(to_napi)?;
            if let Some(s) = store {
                def = def.store(s.store.clone());
            }
            Ok(Self {
                agent: create_agent(def).map_err(to_napi)?,
            })
        })
    }

    /// Stops the agent's MCP servers; resolves when they are stopped.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let agent = self.agent.clone();
        env.spawn_future(async move {
            agent.close().await;
            Ok(())
        })
    }

    /// Runs as run `driver` polled on the JS thread (JS calls `pollRun(driver)` first);
    /// resolves with the state.
    #[napi(ts_return_type = "Promise<NativeState>")]
    #[allow(clippy::too_many_arguments)]
    pub fn run<'env>(
        &self,
        env: &'env Env,
        driver: u32,
        spec: RunSpec,
        client_spec: ClientSpec,
        native_client: Option<&NativeModelClient>,
        cancel: Option<&NativeCancelToken>,
        store: Option<&NativeRunStore>,
    ) -> napi::Result<Object<'env>> {
        no_panic(|| {
            let mut options =
                self.run_options(spec, client(&client_spec, native_client)?, cancel)?;
            if let Some(s) = store {
                options = options.store(s.store.clone());
            }
            let agent = self.agent.clone();
            crate::driver::drive(env, driver, async move { agent.run(options).await })
        })
    }

    /// Continues a paused state (JSON text), or with `state` null the stored run
    /// `run_id`, as run `driver` polled on the JS thread; resolves with the new state.
    #[napi(ts_return_type = "Promise<NativeState>")]
    #[allow(clippy::too_many_arguments)]
    pub fn continue_run<'env>(
        &self,
        env: &'env Env,
        driver: u32,
        state: Option<String>,
        spec: ContinueSpec,
        client_spec: ClientSpec,
        native_client: Option<&NativeModelClient>,
        cancel: Option<&NativeCancelToken>,
        run_id: Option<String>,
        store: Option<&NativeRunStore>,
    ) -> napi::Result<Object<'env>> {
        no_panic(|| {
            let state = state.map(|s| parse_state(&s)).transpose()?;
            let mut options =
                self.continue_options(spec, client(&client_spec, native_client)?, cancel)?;
            if let Some(s) = store {
                options = options.store(s.store.clone());
            }
            let agent = self.agent.clone();
            // Given both, the core checks that they agree (docs/behaviour.md §10).
            match (state, run_id) {
                (Some(state), run_id) => {
                    if let Some(id) = run_id {
                        options = options.run_id(id);
                    }
                    crate::driver::drive(env, driver, async move {
                        agent.continue_run(&state, options).await
                    })
                }
                (None, Some(run_id)) => crate::driver::drive(env, driver, async move {
                    agent.continue_by_id(run_id, options).await
                }),
                (None, None) => Err(to_napi(AgentError::continue_invalid(
                    "Invalid continue: pass a state or a run id",
                ))),
            }
        })
    }

    /// Recovers the stored run `run_id` whose worker died, as run `driver`.
    #[napi(ts_return_type = "Promise<NativeState>")]
    #[allow(clippy::too_many_arguments)]
    pub fn recover<'env>(
        &self,
        env: &'env Env,
        driver: u32,
        run_id: String,
        spec: ContinueSpec,
        client_spec: ClientSpec,
        native_client: Option<&NativeModelClient>,
        cancel: Option<&NativeCancelToken>,
        store: Option<&NativeRunStore>,
    ) -> napi::Result<Object<'env>> {
        no_panic(|| {
            let mut options =
                self.continue_options(spec, client(&client_spec, native_client)?, cancel)?;
            if let Some(s) = store {
                options = options.store(s.store.clone());
            }
            let agent = self.agent.clone();
            crate::driver::drive(
                env,
                driver,
                async move { agent.recover(&run_id, options).await },
            )
        })
    }

    /// Starts a streamed run.
    #[napi]
    pub fn stream(
        &self,
        spec: RunSpec,
        client_spec: ClientSpec,
        native_client: Option<&NativeModelClient>,
        cancel: Option<&NativeCancelToken>,
        store: Option<&NativeRunStore>,
    ) -> napi::Result<NativeStream> {
        no_panic(|| {
            let mut options =
                self.run_options(spec, client(&client_spec, native_client)?, cancel)?;
            if let Some(s) = store {
                options = options.store(s.store.clone());
            }
            let (stream, driver) = self.agent.stream_deferred(options);
            napi::bindgen_prelude::spawn(driver);
            Ok(NativeStream { stream })
        })
    }

    /// Continues a paused state (or with `state` null the stored run `run_id`) as a
    /// stream.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn continue_stream(
        &self,
        state: Option<String>,
        spec: ContinueSpec,
        client_spec: ClientSpec,
        native_client: Option<&NativeModelClient>,
        cancel: Option<&NativeCancelToken>,
        run_id: Option<String>,
        store: Option<&NativeRunStore>,
    ) -> napi::Result<NativeStream> {
        no_panic(|| {
            let state = state.map(|s| parse_state(&s)).transpose()?;
            let mut options =
                self.continue_options(spec, client(&client_spec, native_client)?, cancel)?;
            if let Some(s) = store {
                options = options.store(s.store.clone());
            }
            let (stream, driver) = match (state, run_id) {
                (Some(state), run_id) => {
                    if let Some(id) = run_id {
                        options = options.run_id(id);
                    }
                    self.agent.continue_stream_deferred(&state, options)
                }
                (None, Some(run_id)) => self.agent.continue_stream_deferred_by_id(run_id, options),
                (None, None) => {
                    return Err(to_napi(AgentError::continue_invalid(
                        "Invalid continue: pass a state or a run id",
                    )))
                }
            };
            napi::bindgen_prelude::spawn(driver);
            Ok(NativeStream { stream })
        })
    }
}

/// Validates state JSON text (throws `state_invalid` data); returns it canonicalized.
#[napi(js_name = "parseState")]
pub fn parse_state_text(text: String) -> napi::Result<String> {
    no_panic(|| parse_state(&text).map(|s| s.to_json()))
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
        let next = async move {
            match cursor.lock().await.next_item().await {
                None => Ok(None),
                Some(Err(e)) => Err(to_napi(e)),
                Some(Ok(StreamItem::Event(e))) => Ok(Some(e.to_json())),
                Some(Ok(StreamItem::Result(r))) => Ok(Some(format!(
                    "{{\"type\":\"result\",\"result\":{}}}",
                    r.to_json()
                ))),
            }
        };
        // A panic rejects the promise instead of leaving it pending (or worse).
        env.spawn_future(async move {
            use futures::FutureExt;
            std::panic::AssertUnwindSafe(next)
                .catch_unwind()
                .await
                .unwrap_or_else(|p| {
                    Err(to_napi(AgentError::new(
                        phaseo_agent::ErrorCode::ToolFailed,
                        format!(
                            "internal error: {}",
                            phaseo_agent::panic_message(p.as_ref())
                        ),
                    )))
                })
        })
    }
}
