//! `PhaseoAgentSdk::Native::Agent`: runs and continues, blocking the calling Ruby thread
//! (without the GVL while Rust waits) and serving its callbacks meanwhile.

use std::sync::Arc;
use std::time::Duration;

use magnus::{Error, Module, Object, RArray, Ruby, Value as RValue};
use phaseo_agent::{
    create_agent, Agent, AgentError, CancellationToken, ModelClient, RunResult, ScriptedClient,
    TestClient, Value,
};

use crate::adapters::{HostFn, RbListener};
use crate::convert::{to_json, to_ruby};
use crate::host::{serve_until, Slot};
use crate::spec::{self, ruby_names, CallSpec, RbCallbacks};

/// A defined agent.
#[magnus::wrap(class = "PhaseoAgentSdk::Native::Agent", free_immediately, size)]
pub struct NativeAgent(Agent);

/// The outcome handed to Ruby: `["ok", state_json, cursor]` or `["error", error_json, cursor]`.
fn outcome(ruby: &Ruby, result: Result<RunResult, AgentError>, cursor: usize) -> RArray {
    let a = ruby.ary_new();
    match result {
        Ok(state) => {
            let _ = a.push("ok");
            let _ = a.push(state.to_json());
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

struct Client {
    client: Arc<dyn ModelClient>,
    scripted: Option<Arc<ScriptedClient>>,
}

fn client(spec: &Value) -> Result<Client, AgentError> {
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
                client: Arc::new(crate::model::RbModel {
                    generate: id("generate"),
                    stream: id("stream"),
                }),
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
            let spec = to_json(ruby, spec, "agent definition")?;
            let mut def = phaseo_agent::spec::agent_definition(&RbCallbacks, spec)
                .map_err(|e| raise(ruby, ruby_names(e)))?;
            if let Some(s) = store {
                def = def.store(s.0.clone());
            }
            Ok(Self(create_agent(def).map_err(|e| raise(ruby, e))?))
        })
    }

    /// `run(spec)` or (with a state) `continue_run(spec)`; `http` an HTTP model client
    /// (used instead of `spec.client`).
    fn call(
        ruby: &Ruby,
        rb_self: &Self,
        spec: RValue,
        token: Option<&NativeCancelToken>,
        http: Option<&NativeHttpClient>,
    ) -> Result<RArray, Error> {
        let spec: CallSpec = no_panic(ruby, || {
            spec::parse(to_json(ruby, spec, "run options")?, "run options")
                .map_err(|e| raise(ruby, e))
        })?;
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
            phaseo_agent::spec::continue_options(&RbCallbacks, options)
                .map(|o| o.into_continue_options(client.client.clone()))
                .map_err(|e| raise(ruby, ruby_names(e)))
        };
        let agent = rb_self.0.clone();
        let slot = Slot::<Result<RunResult, AgentError>>::new();
        let future: futures::future::BoxFuture<'static, Result<RunResult, AgentError>> =
            match (spec.state, spec.run_id) {
                (None, Some(run_id)) => {
                    let mut options = continued(options)?.cancel(cancel.clone());
                    if let Some(id) = spec.on_event {
                        options = options.on_event(Arc::new(RbListener(HostFn(id))));
                    }
                    if spec.recover {
                        Box::pin(async move { agent.recover(&run_id, options).await })
                    } else {
                        Box::pin(async move { agent.continue_by_id(run_id, options).await })
                    }
                }
                (None, None) => {
                    let mut options = phaseo_agent::spec::run_options(&RbCallbacks, options)
                        .map_err(|e| raise(ruby, ruby_names(e)))?
                        .into_run_options(client.client.clone())
                        .cancel(cancel.clone());
                    if let Some(id) = spec.on_event {
                        options = options.on_event(Arc::new(RbListener(HostFn(id))));
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
                (Some(text), run_id) => {
                    let state = std::panic::catch_unwind(|| RunResult::from_json(&text))
                        .unwrap_or_else(|p| {
                            Err(AgentError::state_invalid(format!(
                                "Invalid state: {}",
                                phaseo_agent::panic_message(p.as_ref())
                            )))
                        })
                        .map_err(|e| raise(ruby, e))?;
                    let mut options = continued(options)?.cancel(cancel.clone());
                    if let Some(id) = spec.on_event {
                        options = options.on_event(Arc::new(RbListener(HostFn(id))));
                    }
                    // Given both, the core checks that they agree (SPEC §10).
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
        serve_until(
            ruby,
            slot.as_ref(),
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
pub struct NativeHttpClient(Arc<dyn ModelClient>);

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

/// Parses state text and writes it back canonically (raises `state_invalid`).
fn canonical_state(ruby: &Ruby, text: String) -> Result<String, Error> {
    RunResult::from_json(&text)
        .map(|s| s.to_json())
        .map_err(|e| raise(ruby, e))
}

/// The JSON value of a Ruby value, as text (the layer's strict serializer).
fn to_json_text(ruby: &Ruby, value: RValue) -> Result<String, Error> {
    Ok(to_json(ruby, value, "value")?.to_string())
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
    agent.define_method("call", method!(NativeAgent::call, 3))?;
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
    native.define_singleton_method("canonical_state", function!(canonical_state, 1))?;
    native.define_singleton_method("to_json", function!(to_json_text, 1))?;
    native.define_singleton_method("parse_json", function!(parse_json, 1))?;
    native.const_set("STATE_VERSION", phaseo_agent::STATE_VERSION)?;
    Ok(())
}
