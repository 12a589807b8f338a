//! `PhaseoAgentSdk::Native::Agent`: runs and continues, blocking the calling Ruby thread
//! (without the GVL while Rust waits) and serving its callbacks meanwhile.

use std::sync::Arc;
use std::time::Duration;

use magnus::r_hash::ForEach;
use magnus::value::ReprValue;
use magnus::{Error, Module, Object, RArray, RHash, RString, Ruby, Value as RValue};
use phaseo_agent::{
    create_agent, Agent, AgentError, CancellationToken, ModelClient, RunResult, ScriptedClient,
    TestClient, Value,
};

use crate::adapters::{HostFn, RbListener};
use crate::convert::{
    read, text, to_json, to_json_within, to_ruby, MAX_DEPTH, STATE_DEPTH, WRAPPED_DEPTH,
};
use crate::host::{serve_run, serve_until, Slot};
use crate::spec::{self, ruby_keyword, ruby_names, CallSpec, RB_CALLBACKS};

/// A defined agent.
#[magnus::wrap(class = "PhaseoAgentSdk::Native::Agent", free_immediately, size)]
pub struct NativeAgent(Agent);

/// The outcome handed to Ruby: `["ok", state, cursor]` (a `Native::State`) or
/// `["error", error_json, cursor]`.
fn outcome(ruby: &Ruby, result: Result<RunResult, AgentError>, cursor: usize) -> RArray {
    let a = ruby.ary_new();
    match result {
        Ok(state) => {
            let _ = a.push("ok");
            let _ = a.push(crate::state::NativeState::new(ruby, state));
        }
        Err(e) => {
            let _ = a.push("error");
            let _ = a.push(e.to_json());
        }
    }
    let _ = a.push(cursor);
    a
}

/// A core error raised in Ruby (the Ruby layer turns it into its AgentError subclass).
pub fn raise(ruby: &Ruby, e: AgentError) -> Error {
    Error::new(
        ruby.exception_arg_error(),
        format!("\u{1}phaseo:{}", e.to_json()),
    )
}

fn no_panic<T>(ruby: &Ruby, f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        Err(raise(
            ruby,
            AgentError::definition_invalid(format!(
                "internal error: {}",
                phaseo_agent::panic_message(p.as_ref())
            )),
        ))
    })
}

/// A model client of a run, with the scripted client whose cursor the Ruby side reads back.
pub(crate) struct Client {
    pub(crate) client: Arc<dyn ModelClient>,
    scripted: Option<Arc<ScriptedClient>>,
}

/// A model client from its native description (`"test"`, `[responses, used]` or the ids of
/// a Ruby client's functions `{"generate", "stream"}`).
pub(crate) fn client(spec: &Value) -> Result<Client, AgentError> {
    match spec {
        Value::String(s) if s == "test" => Ok(Client {
            client: Arc::new(TestClient::new()),
            scripted: None,
        }),
        Value::Array(parts) if parts.len() == 2 => {
            let responses = parts[0].as_array().cloned().unwrap_or_default();
            let used = parts[1].as_u64().unwrap_or(0) as usize;
            let c = ScriptedClient::from_script(&responses)
                .map_err(|e| AgentError::definition_invalid(format!("ScriptedClient: {e}")))?;
            let c = Arc::new(c.skipping(used));
            Ok(Client {
                client: c.clone(),
                scripted: Some(c),
            })
        }
        Value::Object(o)
            if o.get("generate").and_then(Value::as_u64).is_some()
                || o.get("stream").and_then(Value::as_u64).is_some() =>
        {
            let id = |k: &str| o.get(k).and_then(Value::as_u64).map(HostFn);
            Ok(Client {
                client: Arc::new(
                    phaseo_agent::json_host::JsonModelFunctions {
                        generate: id("generate"),
                        stream: id("stream"),
                    }
                    .into_client(),
                ),
                scripted: None,
            })
        }
        _ => Err(AgentError::definition_invalid(
            "client must be a ScriptedClient, a TestClient or an object with generate(request)"
                .to_string(),
        )),
    }
}

impl NativeAgent {
    fn new(
        ruby: &Ruby,
        spec: RValue,
        store: Option<&crate::store::NativeRunStore>,
    ) -> Result<Self, Error> {
        no_panic(ruby, || {
            // The definition wraps values (a tool's `inputExamples[i]` is 4 levels down).
            let spec = to_json_within(ruby, spec, "agent definition", WRAPPED_DEPTH)?;
            let mut def = phaseo_agent::spec::agent_definition(&RB_CALLBACKS, spec)
                .map_err(|e| raise(ruby, ruby_names(e)))?;
            if let Some(s) = store {
                def = def.store(s.0.clone());
            }
            Ok(Self(create_agent(def).map_err(|e| raise(ruby, e))?))
        })
    }

    /// `run(spec)` or (with a state) `continue_run(spec)`; `http` an HTTP model client
    /// (used instead of `spec.client`); `state` the state to continue (its JSON text or a
    /// Hash), or nil.
    fn call(
        ruby: &Ruby,
        rb_self: &Self,
        spec: RValue,
        token: Option<&NativeCancelToken>,
        http: Option<&NativeHttpClient>,
        state: Option<RValue>,
    ) -> Result<RArray, Error> {
        let spec: CallSpec = no_panic(ruby, || {
            spec::parse(read_spec(ruby, spec)?, "run options").map_err(|e| raise(ruby, e))
        })?;
        let state = match state {
            Some(state) => Some(state_of(ruby, state).map_err(|e| raise(ruby, e))?),
            None => None,
        };
        let client = match http {
            Some(h) => Client {
                client: h.0.clone(),
                scripted: None,
            },
            None => client(&spec.client).map_err(|e| raise(ruby, e))?,
        };
        let cancel = token.map(|t| t.0.child_token()).unwrap_or_default();
        let options = spec.options;
        let continued = |options| {
            phaseo_agent::spec::continue_options(&RB_CALLBACKS, options)
                .map(|o| o.into_continue_options(client.client.clone()))
                .map_err(|e| raise(ruby, ruby_names(e)))
        };
        let agent = rb_self.0.clone();
        let listener = spec.on_event.map(crate::adapters::Listener::new);
        let slot = Slot::<Result<RunResult, AgentError>>::new();
        let future: futures::future::BoxFuture<'static, Result<RunResult, AgentError>> =
            match (state, spec.run_id) {
                (None, Some(run_id)) => {
                    let mut options = continued(options)?.cancel(cancel.clone());
                    if let Some(l) = &listener {
                        options = options.on_event(Arc::new(RbListener(l.clone())));
                    }
                    if spec.recover {
                        Box::pin(async move { agent.recover(&run_id, options).await })
                    } else {
                        Box::pin(async move { agent.continue_by_id(run_id, options).await })
                    }
                }
                (None, None) => {
                    let mut options = phaseo_agent::spec::run_options(&RB_CALLBACKS, options)
                        .map_err(|e| raise(ruby, ruby_names(e)))?
                        .into_run_options(client.client.clone())
                        .cancel(cancel.clone());
                    if let Some(l) = &listener {
                        options = options.on_event(Arc::new(RbListener(l.clone())));
                    }
                    if spec.stream {
                        let stream = agent.stream(options);
                        let cursor = Arc::new(tokio::sync::Mutex::new(stream.cursor()));
                        let out = ruby.ary_new();
                        out.push("stream")?;
                        out.push(NativeStream { stream, cursor })?;
                        return Ok(out);
                    }
                    Box::pin(async move { agent.run(options).await })
                }
                (Some(state), run_id) => {
                    let mut options = continued(options)?.cancel(cancel.clone());
                    if let Some(l) = &listener {
                        options = options.on_event(Arc::new(RbListener(l.clone())));
                    }
                    // Given both, the core checks that they agree (docs/behaviour.md §10).
                    if let Some(id) = run_id {
                        options = options.run_id(id);
                    }
                    if spec.stream {
                        let stream = agent.continue_stream(&state, options);
                        let cursor = Arc::new(tokio::sync::Mutex::new(stream.cursor()));
                        let out = ruby.ary_new();
                        out.push("stream")?;
                        out.push(NativeStream { stream, cursor })?;
                        return Ok(out);
                    }
                    Box::pin(async move { agent.continue_run(&state, options).await })
                }
            };
        let filler = slot.clone();
        phaseo_agent::exec::runtime().spawn(async move {
            let r = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(future))
                .await
                .unwrap_or_else(|p| {
                    Err(AgentError::new(
                        phaseo_agent::ErrorCode::ToolFailed,
                        format!(
                            "internal error: {}",
                            phaseo_agent::panic_message(p.as_ref())
                        ),
                    ))
                });
            filler.fill(r);
        });
        let cancel_on_interrupt = cancel.clone();
        serve_run(
            ruby,
            slot.as_ref(),
            listener.as_deref(),
            &move || cancel_on_interrupt.cancel(),
            Duration::from_secs(2),
        )?;
        let result = slot.take().unwrap_or_else(|| {
            Err(AgentError::definition_invalid(
                "internal error: no outcome".to_string(),
            ))
        });
        let cursor = client.scripted.map(|s| s.cursor()).unwrap_or(0);
        Ok(outcome(ruby, result, cursor))
    }
}

impl NativeAgent {
    /// Stops the agent's MCP servers (waits, serving callbacks, until they are down).
    fn close(ruby: &Ruby, rb_self: &Self) -> Result<(), Error> {
        let agent = rb_self.0.clone();
        crate::store::block_on(ruby, async move {
            agent.close().await;
            Ok(())
        })
    }
}

/// A streamed run: a replayable history of events, then the result.
#[magnus::wrap(class = "PhaseoAgentSdk::Native::Stream", free_immediately, size)]
pub struct NativeStream {
    stream: phaseo_agent::AgentStream,
    cursor: Arc<tokio::sync::Mutex<phaseo_agent::EventCursor>>,
}

impl NativeStream {
    /// The next item as `["event", json]`, `["result", state_json]`, `["error",
    /// error_json]`, or nil after the end; serves the run's callbacks while it waits.
    fn next_item(ruby: &Ruby, rb_self: &Self) -> Result<Option<RArray>, Error> {
        let cursor = rb_self.cursor.clone();
        let slot = Slot::new();
        let filler = slot.clone();
        let task = phaseo_agent::exec::runtime().spawn(async move {
            let item = cursor.lock().await.next_item().await;
            filler.fill(item);
        });
        let abort = task.abort_handle();
        let stream = &rb_self.stream;
        serve_until(
            ruby,
            slot.as_ref(),
            &move || {
                abort.abort();
                stream.cancel(Some("interrupted".into()));
            },
            Duration::ZERO,
        )?;
        let Some(item) = slot.take().flatten() else {
            return Ok(None);
        };
        let out = ruby.ary_new();
        match item {
            Ok(phaseo_agent::StreamItem::Event(e)) => {
                out.push("event")?;
                out.push(e.to_json())?;
            }
            Ok(phaseo_agent::StreamItem::Result(r)) => {
                out.push("result")?;
                out.push(r.to_json())?;
            }
            Err(e) => {
                out.push("error")?;
                out.push(e.to_json())?;
            }
        }
        Ok(Some(out))
    }

    fn cancel(&self) {
        self.stream.cancel(None);
    }
}

/// An HTTP model client of the core (the Phaseo gateway or an OpenAI-compatible server).
#[magnus::wrap(class = "PhaseoAgentSdk::Native::HttpClient", free_immediately, size)]
pub struct NativeHttpClient(pub(crate) Arc<dyn ModelClient>);

impl NativeHttpClient {
    /// `kind`: "gateway" or "openai-compatible"; `options` in the core's format (the Ruby
    /// layer spells the keywords as the format does).
    fn new(ruby: &Ruby, kind: String, options: RValue) -> Result<Self, Error> {
        no_panic(ruby, || {
            let client = to_json(ruby, options, "HTTP client options").and_then(|options| {
                let mut options = phaseo_agent::spec::http_client_options(options)
                    .map_err(|e| raise(ruby, ruby_names(e)))?;
                options
                    .headers
                    .push(("X-Phaseo-Client".into(), "phaseo-agent-ruby".into()));
                phaseo_agent::spec::http_client(&kind, &options).map_err(|e| raise(ruby, e))
            })?;
            Ok(Self(client))
        })
    }
}

/// Cancels runs it was given to (from any Ruby thread, or a signal handler).
#[magnus::wrap(class = "PhaseoAgentSdk::Native::CancelToken", free_immediately, size)]
pub struct NativeCancelToken(CancellationToken);

impl NativeCancelToken {
    fn new() -> Self {
        Self(CancellationToken::new())
    }

    fn cancel(&self) {
        self.0.cancel();
    }

    fn is_cancelled(&self) -> bool {
        self.0.is_cancelled()
    }
}

/// Checks a JSON Schema value against a schema: nil when valid, else the message.
fn schema_check(ruby: &Ruby, schema: RValue, value: RValue) -> Result<Option<String>, Error> {
    let schema = to_json(ruby, schema, "schema")?;
    let value = to_json(ruby, value, "value")?;
    let compiled = phaseo_agent::JsonSchema::compile(&schema).map_err(|e| {
        raise(
            ruby,
            AgentError::definition_invalid(format!("Invalid JSON Schema: {e}")),
        )
    })?;
    Ok(compiled.check(&value).err())
}

/// The strict form of a JSON Schema Hash (the core's `make_strict`, docs/behaviour.md §20):
/// every object closed, every property required, optional ones nullable.
fn schema_strict(ruby: &Ruby, schema: RValue) -> Result<RValue, Error> {
    let schema = to_json(ruby, schema, "schema")?;
    Ok(to_ruby(ruby, &phaseo_agent::make_strict(&schema)))
}

/// Reads a state (its JSON text or a Hash) and writes it back canonically (raises
/// `state_invalid`).
fn canonical_state(ruby: &Ruby, state: RValue) -> Result<String, Error> {
    state_of(ruby, state)
        .map(|s| s.to_json())
        .map_err(|e| raise(ruby, e))
}

/// A state from Ruby: its JSON text (a String of any encoding that holds UTF-8 text) or a
/// Hash (nested at most as deep as a state may be). Whatever is wrong with it — text that
/// is not UTF-8, a member that is not JSON, a cycle, an integer beyond 64 bits, another
/// kind of object — is `state_invalid`, never a Ruby exception of another kind.
fn state_of(ruby: &Ruby, state: RValue) -> Result<RunResult, AgentError> {
    let invalid = |problem: String| AgentError::state_invalid(format!("Invalid state: {problem}"));
    let parsed = if let Some(s) = RString::from_value(state) {
        let text = text(ruby, s).map_err(invalid)?;
        std::panic::catch_unwind(|| RunResult::from_json(&text))
    } else if RHash::from_value(state).is_some() {
        let value = read(ruby, state, STATE_DEPTH).map_err(|p| invalid(p.message))?;
        std::panic::catch_unwind(|| RunResult::from_value(value))
    } else {
        return Err(invalid(format!(
            "expected a RunResult, its JSON text or a Hash, got a {}",
            unsafe { state.classname() }
        )));
    };
    parsed.unwrap_or_else(|p| Err(invalid(phaseo_agent::panic_message(p.as_ref()))))
}

/// Reads `call`'s spec. Each run or continue option is read on its own and named by its
/// Ruby keyword when refused: `input`, `context` and each of `tool_outputs` are values
/// limited to 64 levels (docs/behaviour.md §7); the others wrap values (`messages[i].tool_calls[j].input`
/// sits 4 levels down), which the core checks where it reads them. The rest (the client's
/// script) wraps values too.
fn read_spec(ruby: &Ruby, spec: RValue) -> Result<Value, Error> {
    let Some(hash) = RHash::from_value(spec) else {
        return to_json(ruby, spec, "run options");
    };
    members(ruby, hash, |key, value| {
        if key == "options" {
            if let Some(options) = RHash::from_value(value) {
                return members(ruby, options, |option, value| {
                    let max = match option {
                        "input" | "context" => MAX_DEPTH,
                        // `[{"toolCallId" => id, "output" => output}]`, as the layer writes it.
                        "toolOutputs" => MAX_DEPTH + 2,
                        _ => MAX_DEPTH + 4,
                    };
                    to_json_within(ruby, value, &ruby_keyword(option), max)
                });
            }
        }
        to_json_within(ruby, value, key, WRAPPED_DEPTH)
    })
}

/// A Hash with String keys (the Ruby layer's own), each member read by `read`.
fn members(
    ruby: &Ruby,
    hash: RHash,
    mut read: impl FnMut(&str, RValue) -> Result<Value, Error>,
) -> Result<Value, Error> {
    let mut out = serde_json::Map::new();
    let mut failure = None;
    let walked = hash.foreach(|key: RValue, value: RValue| {
        let key = RString::from_value(key)
            .and_then(|k| text(ruby, k).ok())
            .unwrap_or_default();
        match read(&key, value) {
            Ok(v) => {
                out.insert(key, v);
                Ok(ForEach::Continue)
            }
            Err(e) => {
                failure = Some(e);
                Ok(ForEach::Stop)
            }
        }
    });
    match failure {
        Some(e) => Err(e),
        None => walked.map(|()| Value::Object(out)),
    }
}

/// The JSON text of a state (or another value the core gave) read back from plain Ruby.
fn to_json_text(ruby: &Ruby, value: RValue) -> Result<String, Error> {
    Ok(to_json_within(ruby, value, "value", STATE_DEPTH)?.to_string())
}

/// Checks that a caller's value is JSON within the limits, wrapped `levels` deep in the
/// SDK's own structure (raises the argument's TypeError/ArgumentError/RangeError naming
/// `what`).
fn check_value(ruby: &Ruby, value: RValue, what: String, levels: usize) -> Result<(), Error> {
    to_json_within(ruby, value, &what, MAX_DEPTH + levels).map(|_| ())
}

/// Parses JSON text into plain Ruby.
fn parse_json(ruby: &Ruby, text: String) -> Result<RValue, Error> {
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| Error::new(ruby.exception_arg_error(), format!("invalid JSON: {e}")))?;
    Ok(to_ruby(ruby, &v))
}

/// Defines `PhaseoAgentSdk::Native`.
pub fn init(ruby: &Ruby, module: magnus::RModule) -> Result<(), Error> {
    use magnus::{function, method};
    let native = module.define_module("Native")?;
    let agent = native.define_class("Agent", ruby.class_object())?;
    agent.define_singleton_method("new", function!(NativeAgent::new, 2))?;
    agent.define_method("call", method!(NativeAgent::call, 4))?;
    agent.define_method("close", method!(NativeAgent::close, 0))?;
    let stream = native.define_class("Stream", ruby.class_object())?;
    stream.define_method("next_item", method!(NativeStream::next_item, 0))?;
    stream.define_method("cancel", method!(NativeStream::cancel, 0))?;
    let http = native.define_class("HttpClient", ruby.class_object())?;
    http.define_singleton_method("new", function!(NativeHttpClient::new, 2))?;
    let token = native.define_class("CancelToken", ruby.class_object())?;
    token.define_singleton_method("new", function!(NativeCancelToken::new, 0))?;
    token.define_method("cancel", method!(NativeCancelToken::cancel, 0))?;
    token.define_method("cancelled?", method!(NativeCancelToken::is_cancelled, 0))?;
    native.define_singleton_method("schema_check", function!(schema_check, 2))?;
    native.define_singleton_method("schema_strict", function!(schema_strict, 1))?;
    native.define_singleton_method("canonical_state", function!(canonical_state, 1))?;
    native.define_singleton_method("to_json", function!(to_json_text, 1))?;
    native.define_singleton_method("parse_json", function!(parse_json, 1))?;
    native.define_singleton_method("check_value", function!(check_value, 3))?;
    native.const_set("MAX_DEPTH", MAX_DEPTH)?;
    native.const_set("STATE_DEPTH", STATE_DEPTH)?;
    native.const_set(
        "TOO_DEEP",
        phaseo_agent::ValueLimitError::TooDeep.to_string(),
    )?;
    native.const_set("CYCLE", phaseo_agent::ValueLimitError::Cycle.to_string())?;
    native.const_set("STATE_VERSION", phaseo_agent::STATE_VERSION)?;
    Ok(())
}
