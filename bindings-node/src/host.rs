//! The bridge to JavaScript: ONE weak threadsafe function (the dispatcher registered by
//! the JS layer) tells JS that calls are queued (the outbox); JS takes them in batches and
//! answers in batches through `completeMany`. Callables live in a JS-side registry and are
//! named by numeric ids.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use napi::bindgen_prelude::FnArgs;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use napi_derive::napi;
use phaseo_agent::json_host::{CallKind, JsonArgs, JsonHostFn};
use phaseo_agent::{async_trait, HostStreamSender, ToolError, ToolRuntime, Value};

use crate::values::parse_value;
use tokio::sync::oneshot;

/// Operations the dispatcher understands (mirrored in `lib/bridge.js`).
pub mod op {
    /// Run a tool executor: entry `[0, callable, request, input, callId, toolName,
    /// toolCallInput]`, with the runtime data of the last PHASE entry of the batch.
    pub const EXECUTE: u32 = 0;
    /// Call a callable with the JSON array of arguments in the payload; answer its value.
    pub const CALL: u32 = 1;
    /// Abort the in-flight request named by the request id (timeout, cancellation).
    pub const ABORT: u32 = 2;
    /// Deliver an event (payload) to a listener; no answer.
    pub const EVENT: u32 = 3;
    /// Call a model client's `stream(request)` (payload: the request) and drain what it
    /// returns, handing each event to `modelStreamEvent`; answer null when it ends.
    pub const STREAM: u32 = 4;
    /// Call a model client's `generate(request)` (payload: the request, which gets a
    /// `signal` aborted when the attempt is abandoned); answer its response.
    pub const GENERATE: u32 = 5;
    /// The runtime data shared by the EXECUTE entries that follow it in a batch (one tool
    /// phase): `{runId, agentId, stepIndex, context, contextText?}` (`contextText`, the
    /// context's JSON text, when it is an object or array: each call gets its own copy).
    pub const PHASE: u32 = 8;
    /// Queued calls are waiting: take them with `takeOutbox`.
    pub const DRAIN: u32 = 9;
    /// Poll the run driven on the JS thread whose id is the callable id (`pollRun`).
    pub const POLL: u32 = 10;
}

thread_local! {
    /// A run is being polled on this (the JS) thread: queued calls are taken by the JS
    /// caller of `pollRun` right after the poll, without a dispatcher call.
    static POLLING_ON_JS_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks the current thread as polling a run for JS until dropped.
pub struct JsThreadPoll(bool);

impl JsThreadPoll {
    pub fn enter() -> Self {
        Self(POLLING_ON_JS_THREAD.with(|p| p.replace(true)))
    }
}

impl Drop for JsThreadPoll {
    fn drop(&mut self) {
        POLLING_ON_JS_THREAD.with(|p| p.set(self.0));
    }
}

/// Whether calls are queued (see `pollRun`). JS takes them right away even when a DRAIN
/// is already on its way (it then finds the outbox empty): the events of a driven run must
/// reach their listener before its promise settles, which does not wait for that DRAIN.
pub fn outbox_waiting() -> bool {
    lock(outbox()).entries > 0
}

/// Asks JS to poll run `driver` (from any thread).
pub fn request_poll(driver: u32) -> bool {
    DISPATCHER.get().is_some_and(|d| {
        d.call(
            (op::POLL, driver, 0.0, String::new()).into(),
            ThreadsafeFunctionCallMode::NonBlocking,
        ) == Status::Ok
    })
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

/// An answer from JS: the value's JSON text (a slice of the text of a batch of answers,
/// shared: one allocation per batch, not per answer), or why there is none.
type Answer = Result<Json, Failure>;

/// Why JS has no value for a request.
enum Failure {
    /// The callable threw or rejected: the message.
    Thrown(String),
    /// It returned a value that cannot cross (a cycle, an integer beyond 64 bits, a value
    /// whose getters throw…): the message.
    Invalid(String),
}

/// A host result that cannot be converted: the executor's `tool_output_invalid`.
fn invalid_output(message: String) -> ToolError {
    ToolError::invalid_output(message)
}

/// `text[range]`: JSON text.
struct Json {
    text: Arc<str>,
    range: std::ops::Range<usize>,
}

impl Json {
    fn as_str(&self) -> &str {
        &self.text[self.range.clone()]
    }
}

/// Request ids are sequential: hashing them is a multiplication.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8 | u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// An in-flight request: where its answer goes, the runtime of a tool call (for
/// `emitProgress` / `setContext` while it runs), and where a streaming model client's
/// events go (`modelStreamEvent`).
struct Slot {
    answer: oneshot::Sender<Answer>,
    runtime: Option<ToolRuntime>,
    stream: Option<HostStreamSender>,
}

type Slots = HashMap<u64, Slot, BuildHasherDefault<IdHasher>>;

fn slots() -> &'static Mutex<Slots> {
    static SLOTS: OnceLock<Mutex<Slots>> = OnceLock::new();
    SLOTS.get_or_init(Default::default)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers the JS dispatcher `(op, callableId, requestId, payload) => void` (once).
/// The bridge is per process: a second JS environment (a `worker_threads` worker while
/// another thread uses the SDK) gets a clear error instead of calls reaching the wrong
/// thread's functions.
#[napi(js_name = "registerHost")]
pub fn register_host(dispatcher: Dispatcher) -> napi::Result<()> {
    DISPATCHER.set(dispatcher).map_err(|_| {
        napi::Error::from_reason(
            "@phaseo/agent-sdk is already loaded by another JavaScript thread of this process \
             (worker_threads): use it from one thread per process",
        )
    })
}

fn deliver(slot: Option<Slot>, answer: Answer) {
    if let Some(slot) = slot {
        let _ = slot.answer.send(answer);
    }
}

/// Answers requests: `answers` holds one line per answer,
/// `<requestId> <1|0|2><payload>\n`: `1` and the JSON text of the value, `0` and the error
/// message as a JSON string, or `2` and the message (a JSON string) of a value that could
/// not be converted (JSON text never holds a raw line break).
#[napi(js_name = "completeMany")]
pub fn complete_many(answers: String) -> napi::Result<()> {
    crate::errors::no_panic(|| {
        complete_lines(answers);
        Ok(())
    })
}

fn complete_lines(answers: String) {
    let text: Arc<str> = answers.into();
    let mut parsed = Vec::new();
    let mut at = 0;
    for line in text.split_terminator('\n') {
        let start = at;
        at += line.len() + 1;
        let Some((id, rest)) = line.split_once(' ') else {
            continue;
        };
        let Ok(id) = id.parse::<u64>() else { continue };
        let answer = match rest.strip_prefix('1') {
            Some(json) => {
                let from = start + line.len() - json.len();
                Ok(Json {
                    text: text.clone(),
                    range: from..from + json.len(),
                })
            }
            None => {
                let (invalid, message) = match rest.strip_prefix('2') {
                    Some(m) => (true, m),
                    None => (false, rest.strip_prefix('0').unwrap_or(rest)),
                };
                let message =
                    serde_json::from_str::<String>(message).unwrap_or_else(|_| message.to_owned());
                Err(if invalid {
                    Failure::Invalid(message)
                } else {
                    Failure::Thrown(message)
                })
            }
        };
        parsed.push((id, answer));
    }
    let slots: Vec<_> = {
        let mut map = lock(slots());
        parsed
            .into_iter()
            .map(|(id, a)| (map.remove(&id), a))
            .collect()
    };
    for (slot, answer) in slots {
        deliver(slot, answer);
    }
}

fn with_runtime(request_id: f64, f: impl FnOnce(&ToolRuntime)) {
    if let Some(rt) = lock(slots())
        .get(&(request_id as u64))
        .and_then(|s| s.runtime.as_ref())
    {
        f(rt);
    }
}

/// `emitProgress` of an executing tool call: `json` is the value's JSON text, or `invalid`
/// the message of a value the JS layer could not convert (the call fails with
/// `tool_event_invalid`).
#[napi(js_name = "emitProgress")]
pub fn emit_progress(request_id: f64, json: String, invalid: Option<String>) -> napi::Result<()> {
    crate::errors::no_panic(|| {
        let value = match invalid {
            Some(message) => Err(message),
            None => parse_value(&json),
        };
        match value {
            Ok(value) => with_runtime(request_id, |rt| rt.emit_progress(value)),
            Err(message) => with_runtime(request_id, |rt| rt.reject_progress(message)),
        }
        Ok(())
    })
}

/// One event a host model client's stream yielded (`json`: its JSON text), for the
/// streamed attempt `request_id`. Throws the message of an event that is not one the
/// core reads, or when the attempt is over (timed out, cancelled): JS then stops reading.
#[napi(js_name = "modelStreamEvent")]
pub fn model_stream_event(request_id: f64, json: String) -> napi::Result<()> {
    crate::errors::no_panic(|| {
        let value = parse_value(&json).map_err(napi::Error::from_reason)?;
        let sender = lock(slots())
            .get(&(request_id as u64))
            .and_then(|s| s.stream.clone());
        match sender {
            Some(sender) => sender.send(&value).map_err(napi::Error::from_reason),
            None => Err(napi::Error::from_reason(
                "the model request is over (cancelled or timed out)",
            )),
        }
    })
}

/// `setContext` of an executing tool call or hook (throws the message of a value that
/// cannot be stored).
#[napi(js_name = "setContext")]
pub fn set_context(request_id: f64, json: String) -> napi::Result<()> {
    crate::errors::no_panic(|| {
        let value = parse_value(&json).map_err(napi::Error::from_reason)?;
        let mut outcome = Ok(());
        with_runtime(request_id, |rt| {
            outcome = rt.set_context(value).map_err(|e| e.to_string())
        });
        outcome.map_err(napi::Error::from_reason)
    })
}

/// Calls waiting for JavaScript, in order. Many calls made at once (a fan-out) cross the
/// thread boundary in few dispatcher calls: JS takes whatever is queued with `takeOutbox`.
struct Outbox {
    /// The batch as JSON text: `[op, callable, request, payload…],…` (without brackets).
    text: String,
    /// Entries queued since the last take.
    entries: usize,
    /// The batch holds an integer beyond ±(2^53 − 1) (see `takeOutbox`).
    big: bool,
    /// The dispatcher was called and JS has not taken the batch yet.
    signaled: bool,
    /// A task that calls the dispatcher is spawned and has not run yet.
    deferred: bool,
    /// The runtime whose phase data the batch's last PHASE entry carries (held, so that
    /// the context it points to stays the same allocation).
    phase: Option<ToolRuntime>,
}

/// Calls queued in one go that JS starts on before the rest are queued.
const CHUNK: usize = 128;

fn outbox() -> &'static Mutex<Outbox> {
    static OUTBOX: OnceLock<Mutex<Outbox>> = OnceLock::new();
    OUTBOX.get_or_init(|| {
        Mutex::new(Outbox {
            text: String::new(),
            entries: 0,
            big: false,
            signaled: false,
            deferred: false,
            phase: None,
        })
    })
}

/// Whether two runtimes belong to the same tool phase (same run, step and context).
fn same_phase(a: &ToolRuntime, b: &ToolRuntime) -> bool {
    std::ptr::eq(a.context(), b.context())
        && a.step_index() == b.step_index()
        && a.run_id() == b.run_id()
        && a.agent_id() == b.agent_id()
}

/// Writes the PHASE entry of `rt`; returns whether it holds a big integer.
fn push_phase(text: &mut String, rt: &ToolRuntime) -> bool {
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Phase<'a> {
        run_id: &'a str,
        agent_id: &'a str,
        step_index: usize,
        context: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        context_text: Option<String>,
        /// `context_text` holds an integer beyond 2^53.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        context_big: bool,
    }
    // An object or array context crosses as text only: JS parses a copy per call.
    let context = rt.context();
    let structured = matches!(context, Value::Object(_) | Value::Array(_));
    let (context_text, context_big) = match structured.then(|| json_text(context)) {
        Some(written) => (Some(written.text), written.big),
        None => (None, false),
    };
    let phase = Phase {
        run_id: rt.run_id(),
        agent_id: rt.agent_id(),
        step_index: rt.step_index(),
        context: if structured { &Value::Null } else { context },
        context_text,
        context_big,
    };
    let phase = json_text(&phase);
    let _ = write!(text, "[{},0,0,{}]", op::PHASE, phase.text);
    phase.big
}

/// Queues one entry (`write` appends `op, callable, request, payload…` without brackets,
/// after the PHASE entry `phase` needs) and makes sure JS will take it.
///
/// On a runtime thread, JS is called by a task that runs once the current task yields: a
/// task that queues many calls in one poll (the calls of a fan-out) hands them over in
/// batches (JS starts on the first CHUNK while the rest are queued), instead of JS taking
/// them a few at a time, each time paying a thread wake-up on both sides.
fn send(phase: Option<&ToolRuntime>, big: bool, write: impl FnOnce(&mut String)) -> bool {
    if DISPATCHER.get().is_none() {
        return false;
    }
    let on_js_thread = POLLING_ON_JS_THREAD.with(|p| p.get());
    let runtime = tokio::runtime::Handle::try_current().ok();
    let call_now = {
        let mut guard = lock(outbox());
        let out = &mut *guard;
        if let Some(rt) = phase {
            if !out.phase.as_ref().is_some_and(|p| same_phase(p, rt)) {
                if !out.text.is_empty() {
                    out.text.push(',');
                }
                out.big |= push_phase(&mut out.text, rt);
                out.phase = Some(rt.clone());
            }
        }
        if !out.text.is_empty() {
            out.text.push(',');
        }
        out.text.push('[');
        write(&mut out.text);
        out.text.push(']');
        out.entries += 1;
        out.big |= big;
        if out.signaled || on_js_thread {
            // JS takes the batch after the poll (see `pollRun`).
            false
        } else if out.entries >= CHUNK || runtime.is_none() {
            out.signaled = true;
            true
        } else {
            if !std::mem::replace(&mut out.deferred, true) {
                if let Some(runtime) = &runtime {
                    runtime.spawn(async { signal_deferred() });
                }
            }
            false
        }
    };
    !call_now || call_dispatcher()
}

/// The deferred call of the dispatcher (see `send`).
fn signal_deferred() {
    let call_now = {
        let mut out = lock(outbox());
        out.deferred = false;
        !out.text.is_empty() && !std::mem::replace(&mut out.signaled, true)
    };
    if call_now {
        call_dispatcher();
    }
}

/// Tells JS that calls are queued (a failed call leaves the next entry to try again).
fn call_dispatcher() -> bool {
    let ok = DISPATCHER.get().is_some_and(|d| {
        d.call(
            (op::DRAIN, 0, 0.0, String::new()).into(),
            ThreadsafeFunctionCallMode::NonBlocking,
        ) == Status::Ok
    });
    if !ok {
        lock(outbox()).signaled = false;
    }
    ok
}

/// Queues `[op, callable, request, payload]` (`payload`: JSON text, empty for null).
fn send_simple(op: u32, callable: u32, request: u64, payload: &str, big: bool) -> bool {
    send(None, big, |text| {
        push_head(text, op, callable, request);
        text.push_str(if payload.is_empty() { "null" } else { payload });
    })
}

/// Takes the queued calls as the JSON text of an array `[[op, callable, request, …], …]`,
/// prefixed with `B` when it holds an integer beyond ±(2^53 − 1) (JS then parses it
/// exactly, as BigInt; the common batch takes `JSON.parse`).
#[napi(js_name = "takeOutbox")]
pub fn take_outbox() -> String {
    let mut out = lock(outbox());
    out.signaled = false;
    out.entries = 0;
    out.phase = None;
    let mut text = String::with_capacity(out.text.len() + 3);
    if std::mem::take(&mut out.big) {
        text.push('B');
    }
    text.push('[');
    text.push_str(&out.text);
    text.push(']');
    out.text.clear();
    // Keep a buffer for the next batch, not the memory of an exceptionally large one.
    out.text.shrink_to(1 << 16);
    text
}

/// Delivers an event to a JS listener (fire and forget; the queue keeps the order).
pub fn post_event(listener: u32, payload: String) {
    let big = has_long_digits(&payload);
    send_simple(op::EVENT, listener, 0, &payload, big);
}

/// An in-flight request: aborted in JS and forgotten if dropped before its answer.
struct InFlight {
    id: u64,
    answered: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if !self.answered {
            let slot = lock(slots()).remove(&self.id);
            // Still waiting (not answered meanwhile): JS aborts the call.
            if slot.is_some() {
                send_simple(op::ABORT, 0, self.id, "", false);
            }
        }
    }
}

/// Calls into JS (`write` queues the entry for request id `id`) and waits for the answer
/// (the value's JSON text).
async fn call_js(
    runtime: Option<ToolRuntime>,
    stream: Option<HostStreamSender>,
    phase: bool,
    big: bool,
    write: impl FnOnce(&mut String, u64),
) -> Result<Value, ToolError> {
    let id = NEXT_REQUEST.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = oneshot::channel();
    let phase_rt = if phase { runtime.clone() } else { None };
    lock(slots()).insert(
        id,
        Slot {
            answer: tx,
            runtime,
            stream,
        },
    );
    let mut guard = InFlight {
        id,
        answered: false,
    };
    if !send(phase_rt.as_ref(), big, |text| write(text, id)) {
        guard.answered = true;
        lock(slots()).remove(&id);
        return Err(ToolError::new("the JavaScript host is not available"));
    }
    let answer = rx.await;
    guard.answered = true;
    match answer {
        Ok(Ok(json)) => parse_value(json.as_str()).map_err(invalid_output),
        Ok(Err(Failure::Thrown(message))) => Err(ToolError::new(message)),
        Ok(Err(Failure::Invalid(message))) => Err(invalid_output(message)),
        Err(_) => Err(ToolError::new("the JavaScript host dropped the call")),
    }
}

/// Calls into JS with `[op, callable, request, payload]` and waits for the answer.
pub async fn request(
    op: u32,
    callable: u32,
    payload: JsonText,
    runtime: Option<ToolRuntime>,
) -> Result<Value, ToolError> {
    call_js(runtime, None, false, payload.big, |text, id| {
        push_head(text, op, callable, id);
        text.push_str(&payload.text);
    })
    .await
}

/// Runs tool executor `callable` on `input`: the call's runtime data travels once per
/// batch and tool phase (a PHASE entry), the call itself as
/// `[0, callable, request, input, callId, toolName, toolCallInput, attempt]` (JS makes the
/// idempotency key, `<runId>:<callId>`, from the phase's run id and the call's id).
pub async fn execute(callable: u32, input: &Value, rt: ToolRuntime) -> Result<Value, ToolError> {
    let call = rt.tool_call();
    let mut big = false;
    let mut tail = Vec::with_capacity(128);
    let own_input = std::ptr::eq(input, &*call.input);
    // The model's argument text, when it is already the input's canonical text, is copied
    // as it is (the same text the writer would make: compact, integers, plain strings).
    let mut written = match call.input_text().filter(|_| own_input) {
        Some(text) => {
            tail.extend_from_slice(text.as_bytes());
            big |= has_long_digits(text);
            true
        }
        None => write_json(&mut tail, input, &mut big),
    };
    let input_len = tail.len();
    tail.push(b',');
    written &= write_json(&mut tail, &call.id, &mut big);
    tail.push(b',');
    written &= write_json(&mut tail, &call.name, &mut big);
    tail.push(b',');
    if own_input {
        // The executor's input is the call's (the common case): its text again, which JS
        // parses into an object of its own.
        tail.extend_from_within(..input_len);
    } else {
        written &= write_json(&mut tail, &*call.input, &mut big);
    }
    tail.push(b',');
    tail.extend_from_slice(itoa::Buffer::new().format(rt.attempt()).as_bytes());
    let tail = match written.then(|| String::from_utf8(tail)) {
        Some(Ok(tail)) => tail,
        _ => "null,null,null,null,1".to_owned(),
    };
    call_js(Some(rt.clone()), None, true, big, |text, id| {
        push_head(text, op::EXECUTE, callable, id);
        text.push_str(&tail);
    })
    .await
}

/// Appends an entry's head, `op,callable,request,` (integers written without `fmt`, which
/// cost more than the rest of a call's entry).
fn push_head(text: &mut String, op: u32, callable: u32, request: u64) {
    let mut digits = itoa::Buffer::new();
    text.push_str(digits.format(op));
    text.push(',');
    text.push_str(digits.format(callable));
    text.push(',');
    text.push_str(digits.format(request));
    text.push(',');
}

/// Calls a model client's `stream(request)` (callable `callable`): each event it yields goes
/// to `events` while it runs; the answer (null) comes when its stream ends.
pub async fn stream(
    callable: u32,
    request: &Value,
    events: HostStreamSender,
) -> Result<Value, ToolError> {
    let payload = json_text(request);
    call_js(None, Some(events), false, payload.big, |text, id| {
        push_head(text, op::STREAM, callable, id);
        text.push_str(&payload.text);
    })
    .await
}

/// A JS callable by id (the JS layer owns the registry and its lifetime), called by the
/// core's `json_host` adapters: a tool's execution and a model client's calls take their
/// own bridge operations, every other kind is a plain call with its JSON arguments.
pub struct HostFn {
    pub id: u32,
}

impl HostFn {
    /// Calls it with JSON arguments (no runtime).
    pub async fn call_plain(&self, args: &[Value]) -> Result<Value, ToolError> {
        request(op::CALL, self.id, json_text(args), None).await
    }
}

/// The one value of a `[value]` argument list (a model request).
fn only_arg<'a>(args: &'a JsonArgs<'_>) -> &'a Value {
    match args {
        JsonArgs::List(items) => items.first().unwrap_or(&Value::Null),
        JsonArgs::WithRuntime(value, _) => value,
    }
}

#[async_trait]
impl JsonHostFn for HostFn {
    async fn call(
        &self,
        kind: CallKind,
        args: JsonArgs<'_>,
        runtime: Option<&ToolRuntime>,
    ) -> Result<Value, ToolError> {
        match (kind, &args) {
            (CallKind::Execute, JsonArgs::WithRuntime(input, rt)) => {
                execute(self.id, input, (*rt).clone()).await
            }
            (CallKind::Generate, _) => {
                request(op::GENERATE, self.id, json_text(only_arg(&args)), None).await
            }
            _ => request(op::CALL, self.id, json_text(&args), runtime.cloned()).await,
        }
    }

    async fn call_streaming(
        &self,
        args: JsonArgs<'_>,
        events: HostStreamSender,
    ) -> Result<Value, ToolError> {
        stream(self.id, only_arg(&args), events).await
    }
}

/// JSON text for JS, and whether it holds an integer beyond ±(2^53 − 1) (which JS must
/// read with its exact, slower parser).
pub struct JsonText {
    pub text: String,
    pub big: bool,
}

const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// The compact formatter, noting integers JS cannot hold in a number while it writes them:
/// finding them costs nothing on the common path.
struct Flagging<'a>(&'a mut bool);

impl serde_json::ser::Formatter for Flagging<'_> {
    fn write_u64<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: u64) -> std::io::Result<()> {
        *self.0 |= v > MAX_SAFE_INTEGER;
        serde_json::ser::CompactFormatter.write_u64(w, v)
    }

    fn write_i64<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: i64) -> std::io::Result<()> {
        *self.0 |= v.unsigned_abs() > MAX_SAFE_INTEGER;
        serde_json::ser::CompactFormatter.write_i64(w, v)
    }

    fn write_u128<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        v: u128,
    ) -> std::io::Result<()> {
        *self.0 |= v > u128::from(MAX_SAFE_INTEGER);
        serde_json::ser::CompactFormatter.write_u128(w, v)
    }

    fn write_i128<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        v: i128,
    ) -> std::io::Result<()> {
        *self.0 |= v.unsigned_abs() > u128::from(MAX_SAFE_INTEGER);
        serde_json::ser::CompactFormatter.write_i128(w, v)
    }
}

/// JSON text of data made of values (serializing a `Value` cannot fail; should a future
/// type fail, JS gets an unparseable payload and the call fails — never a panic).
pub fn json_text<T: serde::Serialize + ?Sized>(value: &T) -> JsonText {
    let mut big = false;
    let mut bytes = Vec::with_capacity(128);
    let text = if write_json(&mut bytes, value, &mut big) {
        String::from_utf8(bytes).unwrap_or_default()
    } else {
        String::new()
    };
    JsonText { text, big }
}

/// Appends the JSON text of `value` to `bytes`, setting `big` if it holds an integer beyond
/// ±(2^53 − 1); false if it could not be written (`bytes` may then hold part of it).
fn write_json<T: serde::Serialize + ?Sized>(
    bytes: &mut Vec<u8>,
    value: &T,
    big: &mut bool,
) -> bool {
    value
        .serialize(&mut serde_json::Serializer::with_formatter(
            bytes,
            Flagging(big),
        ))
        .is_ok()
}

/// Whether JSON text written elsewhere (an event) may hold an integer beyond 2^53: a run
/// of 16 digits (a false alarm only costs the exact parse).
fn has_long_digits(text: &str) -> bool {
    let mut run = 0;
    for b in text.bytes() {
        run = if b.is_ascii_digit() { run + 1 } else { 0 };
        if run >= 16 {
            return true;
        }
    }
    false
}
