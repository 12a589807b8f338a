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
    /// Queued calls are waiting: take them with `takeOutbox`.
    pub const DRAIN: u32 = 9;
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

/// Calls waiting for JavaScript, in order. Many calls made at once (a fan-out) cross the
/// thread boundary as ONE dispatcher call: the first queued call schedules a drain, and JS
/// takes the whole batch with `takeOutbox`.
struct Outbox {
    /// The batch as JSON text: `[op, callable, request, payload],…` (without brackets).
    text: String,
    drain_scheduled: bool,
}

fn outbox() -> &'static Mutex<Outbox> {
    static OUTBOX: OnceLock<Mutex<Outbox>> = OnceLock::new();
    OUTBOX.get_or_init(|| {
        Mutex::new(Outbox {
            text: String::new(),
            drain_scheduled: false,
        })
    })
}

fn send(op: u32, callable: u32, request: u64, payload: String) -> bool {
    let Some(dispatcher) = DISPATCHER.get() else {
        return false;
    };
    let schedule = {
        let mut out = outbox().lock().unwrap_or_else(|e| e.into_inner());
        if !out.text.is_empty() {
            out.text.push(',');
        }
        // `payload` is JSON text already: it is embedded as is (no re-encoding).
        let payload = if payload.is_empty() {
            "null"
        } else {
            payload.as_str()
        };
        out.text
            .push_str(&format!("[{op},{callable},{request},{payload}]"));
        !std::mem::replace(&mut out.drain_scheduled, true)
    };
    if schedule {
        dispatcher.call(
            (op::DRAIN, 0, 0.0, String::new()).into(),
            ThreadsafeFunctionCallMode::NonBlocking,
        ) == Status::Ok
    } else {
        true
    }
}

/// Takes the queued calls as the JSON text of an array `[[op, callable, request, payload], …]`.
#[napi(js_name = "takeOutbox")]
pub fn take_outbox() -> String {
    let mut out = outbox().lock().unwrap_or_else(|e| e.into_inner());
    out.drain_scheduled = false;
    let text = std::mem::take(&mut out.text);
    format!("[{text}]")
}

/// Answers many requests at once (see `complete`).
#[napi(js_name = "completeMany")]
pub fn complete_many(request_ids: Vec<f64>, oks: Vec<bool>, payloads: Vec<String>) {
    let senders: Vec<_> = {
        let mut pending = pending().lock().unwrap_or_else(|e| e.into_inner());
        request_ids
            .iter()
            .map(|id| pending.remove(&(*id as u64)))
            .collect()
    };
    for ((sender, ok), payload) in senders.into_iter().zip(oks).zip(payloads) {
        if let Some(sender) = sender {
            let _ = sender.send(if ok { Ok(payload) } else { Err(payload) });
        }
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
        let payload = serde_json::to_string(&(&value, RuntimeData::of(rt))).expect("JSON");
        request(op::CALL, self.id, payload, Some(rt.clone())).await
    }
}

/// The runtime data a JS tool context is built from, serialized without copies.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeData<'a> {
    run_id: &'a str,
    agent_id: &'a str,
    step_index: usize,
    context: &'a Value,
    tool_call: &'a phaseo_agent::ToolCall,
}

impl<'a> RuntimeData<'a> {
    /// The data of a runtime.
    pub fn of(rt: &'a ToolRuntime) -> Self {
        Self {
            run_id: rt.run_id(),
            agent_id: rt.agent_id(),
            step_index: rt.step_index(),
            context: rt.context(),
            tool_call: rt.tool_call(),
        }
    }
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
