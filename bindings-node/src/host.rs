//! The bridge to JavaScript: ONE weak threadsafe function (the dispatcher registered by
//! the JS layer) carries every call into JS; JS answers through `complete`. Callables
//! live in a JS-side registry and are named by numeric ids.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use napi::bindgen_prelude::FnArgs;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use napi_derive::napi;
use phaseo_agent::{ToolError, ToolRuntime, Value};
use tokio::sync::oneshot;

/// Operations the dispatcher understands (mirrored in `index.js`).
pub mod op {
    /// Run a tool executor: payload `{input, runtime}`; answer the result.
    pub const EXECUTE: u32 = 0;
    /// Call a callable with the JSON array of arguments in the payload; answer its value.
    pub const CALL: u32 = 1;
    /// Abort the in-flight request named by the request id (timeout, cancellation).
    pub const ABORT: u32 = 2;
    /// Deliver an event (payload) to a listener; no answer.
    pub const EVENT: u32 = 3;
}

type Dispatcher = ThreadsafeFunction<
    FnArgs<(u32, u32, f64, String)>,
    (),
    FnArgs<(u32, u32, f64, String)>,
    Status,
    false,
    true,
>;

static DISPATCHER: OnceLock<Dispatcher> = OnceLock::new();
static NEXT_REQUEST: AtomicU64 = AtomicU64::new(1);

type Answer = Result<String, String>;

fn pending() -> &'static Mutex<HashMap<u64, oneshot::Sender<Answer>>> {
    static PENDING: OnceLock<Mutex<HashMap<u64, oneshot::Sender<Answer>>>> = OnceLock::new();
    PENDING.get_or_init(Default::default)
}

fn runtimes() -> &'static Mutex<HashMap<u64, ToolRuntime>> {
    static RUNTIMES: OnceLock<Mutex<HashMap<u64, ToolRuntime>>> = OnceLock::new();
    RUNTIMES.get_or_init(Default::default)
}

/// Registers the JS dispatcher `(op, callableId, requestId, payload) => void` (once).
#[napi(js_name = "registerHost")]
pub fn register_host(dispatcher: Dispatcher) {
    let _ = DISPATCHER.set(dispatcher);
}

/// Answers request `requestId`: `ok` with the JSON text of the value, or the error message.
#[napi]
pub fn complete(request_id: f64, ok: bool, payload: String) {
    let sender = pending()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(request_id as u64));
    if let Some(sender) = sender {
        let _ = sender.send(if ok { Ok(payload) } else { Err(payload) });
    }
}

/// `emitProgress` of an executing tool call.
#[napi(js_name = "emitProgress")]
pub fn emit_progress(request_id: f64, json: String) -> napi::Result<()> {
    let value = parse(&json)?;
    if let Some(rt) = runtimes()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(request_id as u64))
    {
        rt.emit_progress(value);
    }
    Ok(())
}

/// `setContext` of an executing tool call or hook.
#[napi(js_name = "setContext")]
pub fn set_context(request_id: f64, json: String) -> napi::Result<()> {
    let value = parse(&json)?;
    if let Some(rt) = runtimes()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(request_id as u64))
    {
        rt.set_context(value);
    }
    Ok(())
}

fn parse(json: &str) -> napi::Result<Value> {
    serde_json::from_str(json)
        .map_err(|e| napi::Error::from_reason(format!("value is not JSON-compatible: {e}")))
}

fn send(op: u32, callable: u32, request: u64, payload: String) -> bool {
    match DISPATCHER.get() {
        Some(d) => {
            d.call(
                (op, callable, request as f64, payload).into(),
                ThreadsafeFunctionCallMode::NonBlocking,
            ) == Status::Ok
        }
        None => false,
    }
}

/// Delivers an event to a JS listener (fire and forget; the queue keeps the order).
pub fn post_event(listener: u32, payload: String) {
    send(op::EVENT, listener, 0, payload);
}

/// An in-flight request: aborted in JS and forgotten if dropped before its answer.
struct InFlight {
    id: u64,
    answered: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        runtimes()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
        if !self.answered {
            pending()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&self.id);
            send(op::ABORT, 0, self.id, String::new());
        }
    }
}

/// Calls into JS and waits for the answer (the value's JSON text).
pub async fn request(
    op: u32,
    callable: u32,
    payload: String,
    runtime: Option<ToolRuntime>,
) -> Result<Value, ToolError> {
    let id = NEXT_REQUEST.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = oneshot::channel();
    pending()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id, tx);
    if let Some(rt) = runtime {
        runtimes()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, rt);
    }
    let mut guard = InFlight {
        id,
        answered: false,
    };
    if !send(op, callable, id, payload) {
        guard.answered = true;
        pending()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
        return Err(ToolError::new("the JavaScript host is not available"));
    }
    let answer = rx.await;
    guard.answered = true;
    match answer {
        Ok(Ok(json)) => serde_json::from_str(&json)
            .map_err(|e| ToolError::new(format!("value is not JSON-compatible: {e}"))),
        Ok(Err(message)) => Err(ToolError::new(message)),
        Err(_) => Err(ToolError::new("the JavaScript host dropped the call")),
    }
}

/// A JS callable by id (the JS layer owns the registry and its lifetime).
pub struct HostFn {
    pub id: u32,
}

impl HostFn {
    /// Calls it with JSON arguments.
    pub async fn call(&self, args: Vec<Value>) -> Result<Value, ToolError> {
        let payload = serde_json::to_string(&args).expect("arguments are JSON");
        request(op::CALL, self.id, payload, None).await
    }

    /// Calls it with `(value, runtime)` where `runtime` is the call's runtime data.
    pub async fn call_with_runtime(
        &self,
        value: Value,
        rt: &ToolRuntime,
    ) -> Result<Value, ToolError> {
        let payload =
            serde_json::to_string(&serde_json::json!([value, runtime_value(rt)])).expect("JSON");
        request(op::CALL, self.id, payload, Some(rt.clone())).await
    }
}

/// The runtime data a JS tool context is built from.
pub fn runtime_value(rt: &ToolRuntime) -> Value {
    serde_json::json!({
        "runId": rt.run_id(),
        "agentId": rt.agent_id(),
        "stepIndex": rt.step_index(),
        "context": rt.context(),
        "toolCall": rt.tool_call(),
    })
}

/// Resolves once every call queued before it has reached JavaScript (the dispatcher queue
/// is first in, first out): the JS layer awaits it so no event arrives after a result.
#[napi(ts_return_type = "Promise<void>")]
pub fn barrier(env: &napi::Env) -> napi::Result<napi::bindgen_prelude::PromiseRaw<'_, ()>> {
    env.spawn_future(async {
        let _ = request(op::CALL, 0, "[]".to_owned(), None).await;
        Ok(())
    })
}
