//! The host side: [`PhaseoHost`] (function pointers + `user_data`), the call handle
//! [`PhaseoCall`] a callback receives, and its asynchronous completion.
//!
//! The core never waits on a host thread: it hands a call to `invoke` and awaits the
//! answer, which the host gives later, from any thread, with `phaseo_call_complete`.

use std::ffi::{c_char, c_void, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use phaseo_agent::json_host::{call_cancelled, CallKind, JsonArgs, JsonCallbacks, JsonHostFn};
use phaseo_agent::{async_trait, HostStreamSender, ToolError, ToolRuntime, Value};
use serde::Serialize;
use tokio::sync::oneshot;

use crate::error::{guard, read_opt_str, read_str, CError, PhaseoStatus};

/// Receives a call: `call` belongs to the host until it passes it to
/// `phaseo_call_complete` (exactly once). Called from a core thread; return promptly.
pub type PhaseoInvokeFn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, call: *mut PhaseoCall)>;

/// Receives an event's JSON text (valid during the call only), synchronously and in order.
pub type PhaseoEventFn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, event_json: *const c_char)>;

/// A notification carrying only the `user_data` (run done, release, cancellation).
pub type PhaseoNotifyFn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// The host's callbacks. Every field may be NULL when unused. `user_data` is passed back
/// unchanged to each; it must be usable from any thread. `release` is called once, when
/// the SDK no longer holds the host (the agent, client or run that received it is freed and
/// nothing of it runs any more).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct PhaseoHost {
    /// Passed back to every callback.
    pub user_data: *mut c_void,
    /// Callbacks named by `{"$callback": id}` in definitions, and host model clients.
    pub invoke: PhaseoInvokeFn,
    /// The event listener of a run.
    pub on_event: PhaseoEventFn,
    /// A run ended (its result can be taken with `phaseo_run_wait` without blocking).
    pub on_done: PhaseoNotifyFn,
    /// The SDK no longer uses `user_data`.
    pub release: PhaseoNotifyFn,
}

/// A [`PhaseoHost`] held by the SDK; `release` runs when the last holder drops it.
pub struct Host(PhaseoHost);

// SAFETY: the ABI contract requires `user_data` and the callbacks to be usable from any
// thread (documented on `PhaseoHost`).
unsafe impl Send for Host {}
unsafe impl Sync for Host {}

impl Host {
    /// Takes over a host value.
    pub fn new(raw: PhaseoHost) -> Arc<Self> {
        Arc::new(Self(raw))
    }

    /// Delivers an event.
    pub fn event(&self, json: &str) {
        if let Some(f) = self.0.on_event {
            if let Ok(text) = CString::new(json) {
                // SAFETY: ABI contract (see `PhaseoHost`).
                unsafe { f(self.0.user_data, text.as_ptr()) };
            }
        }
    }

    /// Says that a run is done.
    pub fn done(&self) {
        if let Some(f) = self.0.on_done {
            // SAFETY: ABI contract.
            unsafe { f(self.0.user_data) };
        }
    }

    /// Whether the host has an event listener.
    pub fn has_listener(&self) -> bool {
        self.0.on_event.is_some()
    }

    /// The host's `user_data` as a run's host tag (`None` when NULL): a tool call of the
    /// run gives it back with `phaseo_call_run_user_data`.
    pub fn tag(&self) -> Option<u64> {
        (!self.0.user_data.is_null()).then_some(self.0.user_data as usize as u64)
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if let Some(f) = self.0.release {
            // SAFETY: ABI contract; called once, when the last holder lets go.
            unsafe { f(self.0.user_data) };
        }
    }
}

/// What a call is for: tells the host which of its functions `phaseo_call_callback` names
/// and what `phaseo_call_args` holds (a JSON array of arguments).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PhaseoCallKind {
    /// A tool executor: args `[input, runtime]`; answer the result. The call supports
    /// `phaseo_call_emit_progress`, `phaseo_call_set_context` and cancellation.
    Execute = 0,
    /// A validator: args `[value]`; answer the (possibly transformed) value or an error.
    Validate = 1,
    /// An approval predicate: args `[input, runtime]` (tool level) or `[toolCall, runtime]`
    /// (agent level); answer a boolean.
    Approve = 2,
    /// `onToolCalled`: args `[input, runtime]`; answer the result (null included) or pause
    /// (hitl) with `phaseo_call_pause`.
    ToolCalled = 3,
    /// `onResponseReceived`: args `[output, runtime]`; answer the output to use.
    ResponseReceived = 4,
    /// A `nextTurnParams` function: args `[input, runtime]`; answer an overrides object.
    NextTurn = 5,
    /// A stop condition: args `[stopState]`; answer false/null, true or a reason string.
    Stop = 6,
    /// The human-review hook: args `[reviewContext]`; answer null or `{reason, payload}`.
    Review = 7,
    /// A per-turn value (instructions, model, temperature, …): args `[turn]`; answer it.
    Turn = 8,
    /// A host model client: args `[request]`; answer a response
    /// `{text?, toolCalls?, usage?, finishReason?}`.
    Generate = 9,
    /// An MCP server's tool filter: args `[{name, description, annotations}]`; answer a
    /// boolean (keep the tool).
    McpFilter = 10,
    /// An MCP server's elicitation handler: args `[request, {server}]`; answer an MCP
    /// `ElicitResult` `{action, content?}`.
    McpElicit = 11,
    /// A state accessor's load: args `[runId]`; answer the state's JSON text as a JSON
    /// string, or null when the run is unknown.
    StoreLoad = 12,
    /// A state accessor's save: args `[runId, stateJson]` (the state's JSON text as a
    /// string); answer null.
    StoreSave = 13,
    /// A streaming host model client: args `[request]`; pass each event to
    /// `phaseo_call_stream_event` as it comes, then complete the call with null (or an
    /// error).
    Stream = 14,
}

/// The host's answer.
enum Answer {
    Value(Value),
    Thrown(String),
    Invalid(String),
    /// An interactive hook's "not completed": the call pauses for a person.
    Pause,
}

/// The host's `on_cancel` registration.
struct CancelHook {
    f: unsafe extern "C" fn(*mut c_void),
    user_data: *mut c_void,
}

// SAFETY: ABI contract: `user_data` is usable from any thread.
unsafe impl Send for CancelHook {}

struct CallState {
    answer: Option<oneshot::Sender<Answer>>,
    hook: Option<CancelHook>,
    fired: bool,
}

/// One callback invocation, owned by the host from `invoke` until `phaseo_call_complete`.
pub struct PhaseoCall {
    kind: PhaseoCallKind,
    callback: u64,
    args: CString,
    /// The call's runtime: a call with one is cancelled with it (a timeout, the run
    /// cancelled), any call when the core abandons it (`abandoned`). The call makes no
    /// cancellation token: one locks its parent's node when it is made and again when it is
    /// dropped, and the runtime makes its own only when asked.
    runtime: Option<ToolRuntime>,
    abandoned: AtomicBool,
    state: Mutex<CallState>,
    /// Where a `Stream` call's events go.
    stream: Option<HostStreamSender>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A host function: a callback id of a host.
#[derive(Clone)]
pub struct HostFn {
    /// The host serving it.
    pub host: Arc<Host>,
    /// The id written as `{"$callback": id}`.
    pub id: u64,
}

impl PhaseoCall {
    /// Whether the core stopped waiting for the call.
    fn is_cancelled(&self) -> bool {
        self.abandoned.load(Ordering::Acquire)
            || self.runtime.as_ref().is_some_and(ToolRuntime::is_cancelled)
    }

    /// Calls the host's `on_cancel` once, if registered and the call is still unanswered
    /// (under the state lock, so never after `phaseo_call_complete`).
    fn fire_hook(&self) {
        let mut state = lock(&self.state);
        if state.answer.is_some() && !state.fired {
            if let Some((f, user_data)) = state.hook.as_ref().map(|h| (h.f, h.user_data)) {
                state.fired = true;
                // SAFETY: ABI contract.
                unsafe { f(user_data) };
            }
        }
    }
}

/// Cancels the call (token and host hook) when the core stops waiting (timeout,
/// cancellation, a sibling's fatal error) before the host answered.
struct Abandon(Arc<PhaseoCall>, bool);

impl Drop for Abandon {
    fn drop(&mut self) {
        if self.1 {
            self.0.abandoned.store(true, Ordering::Release);
            self.0.fire_hook();
        }
    }
}

impl HostFn {
    /// Calls the host with these arguments (a JSON array)
    /// and waits for its answer.
    pub async fn call<A: Serialize + ?Sized>(
        &self,
        kind: PhaseoCallKind,
        args: &A,
        runtime: Option<&ToolRuntime>,
    ) -> Result<Value, ToolError> {
        // Written before the first await: the future does not hold `args`.
        let text = phaseo_agent::json::to_canonical_string(args);
        self.call_with(kind, text, runtime, None)
            .await?
            .ok_or_else(|| ToolError::new("the host answered pause to a call that cannot pause"))
    }

    /// A `Stream` call: the host passes its events to `events` (with
    /// `phaseo_call_stream_event`) until it completes the call.
    pub async fn call_streaming<A: Serialize + ?Sized>(
        &self,
        args: &A,
        events: HostStreamSender,
    ) -> Result<Value, ToolError> {
        let text = phaseo_agent::json::to_canonical_string(args);
        self.call_with(PhaseoCallKind::Stream, text, None, Some(events))
            .await?
            .ok_or_else(|| ToolError::new("the host answered pause to a call that cannot pause"))
    }

    async fn call_with(
        &self,
        kind: PhaseoCallKind,
        text: String,
        runtime: Option<&ToolRuntime>,
        stream: Option<HostStreamSender>,
    ) -> Result<Option<Value>, ToolError> {
        let Some(invoke) = self.host.0.invoke else {
            return Err(ToolError::new(format!(
                "the host gave no invoke function for callback {}",
                self.id
            )));
        };
        let args = CString::new(text).map_err(|e| ToolError::new(e.to_string()))?;
        let (tx, rx) = oneshot::channel();
        let call = Arc::new(PhaseoCall {
            kind,
            callback: self.id,
            args,
            runtime: runtime.cloned(),
            abandoned: AtomicBool::new(false),
            state: Mutex::new(CallState {
                answer: Some(tx),
                hook: None,
                fired: false,
            }),
            stream,
        });
        let mut abandon = Abandon(call.clone(), true);
        // SAFETY: ABI contract; the host owns this reference until `phaseo_call_complete`.
        unsafe {
            invoke(
                self.host.0.user_data,
                Arc::into_raw(call.clone()).cast_mut(),
            )
        };
        // The runtime can be cancelled while the call is still awaited (a timeout, the run
        // cancelled): the host hears of it at once, with no task of its own per call.
        let mut rx = rx;
        let cancelled = call_cancelled(call.runtime.as_ref());
        tokio::pin!(cancelled);
        let mut cancel_seen = false;
        let answer = loop {
            tokio::select! {
                biased;
                answer = &mut rx => break answer,
                () = &mut cancelled, if !cancel_seen => {
                    cancel_seen = true;
                    call.fire_hook();
                }
            }
        };
        abandon.1 = false;
        match answer {
            Ok(Answer::Value(v)) => Ok(Some(v)),
            Ok(Answer::Pause) => Ok(None),
            Ok(Answer::Thrown(m)) => Err(ToolError::new(m)),
            Ok(Answer::Invalid(m)) if kind == PhaseoCallKind::Execute => {
                Err(ToolError::invalid_output(m))
            }
            Ok(Answer::Invalid(m)) => Err(ToolError::new(m)),
            Err(_) => Err(ToolError::new(
                "the host dropped the call without answering",
            )),
        }
    }
}

impl From<CallKind> for PhaseoCallKind {
    fn from(kind: CallKind) -> Self {
        match kind {
            CallKind::Execute => Self::Execute,
            CallKind::Validate => Self::Validate,
            // The ABI has one approval kind: the arguments tell the two levels apart.
            CallKind::Approve | CallKind::AgentApprove => Self::Approve,
            CallKind::ToolCalled => Self::ToolCalled,
            CallKind::ResponseReceived => Self::ResponseReceived,
            CallKind::NextTurn => Self::NextTurn,
            CallKind::Stop => Self::Stop,
            CallKind::Review => Self::Review,
            CallKind::Turn => Self::Turn,
            CallKind::Generate => Self::Generate,
            CallKind::Stream => Self::Stream,
            CallKind::McpFilter => Self::McpFilter,
            CallKind::McpElicit => Self::McpElicit,
        }
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
        // Written before the first await: the future does not hold `args`.
        let text = args.to_canonical_text();
        self.call_with(kind.into(), text, runtime, None)
            .await?
            .ok_or_else(|| ToolError::new("the host answered pause to a call that cannot pause"))
    }

    async fn call_streaming(
        &self,
        args: JsonArgs<'_>,
        events: HostStreamSender,
    ) -> Result<Value, ToolError> {
        HostFn::call_streaming(self, &args, events).await
    }

    /// The host answers "pause" with `phaseo_call_pause`, so a completed call may have a
    /// null result.
    async fn call_tool_called(
        &self,
        args: JsonArgs<'_>,
        runtime: &ToolRuntime,
    ) -> Result<Option<Value>, ToolError> {
        let text = args.to_canonical_text();
        self.call_with(PhaseoCallKind::ToolCalled, text, Some(runtime), None)
            .await
    }
}

unsafe fn call_ref<'a>(call: *const PhaseoCall) -> Result<&'a PhaseoCall, CError> {
    call.as_ref()
        .ok_or_else(|| CError::argument("the call handle is NULL"))
}

/// The kind of a call.
#[no_mangle]
pub unsafe extern "C" fn phaseo_call_kind(call: *const PhaseoCall) -> PhaseoCallKind {
    call.as_ref().map_or(PhaseoCallKind::Execute, |c| c.kind)
}

/// The callback id the call is for (the `{"$callback": id}` of the definition, or the id
/// given to `phaseo_client_host`).
#[no_mangle]
pub unsafe extern "C" fn phaseo_call_callback(call: *const PhaseoCall) -> u64 {
    call.as_ref().map_or(0, |c| c.callback)
}

/// The call's arguments: a JSON array (see `PhaseoCallKind`). Owned by the call: valid
/// until `phaseo_call_complete`.
#[no_mangle]
pub unsafe extern "C" fn phaseo_call_args(call: *const PhaseoCall) -> *const c_char {
    call.as_ref().map_or(std::ptr::null(), |c| c.args.as_ptr())
}

/// What a host needs to start a call, read in one step (`phaseo_call_read`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PhaseoCallInfo {
    /// As `phaseo_call_kind`.
    pub kind: PhaseoCallKind,
    /// As `phaseo_call_callback`.
    pub callback: u64,
    /// As `phaseo_call_args` (owned by the call: valid until `phaseo_call_complete`).
    pub args: *const c_char,
    /// The length of `args` in bytes, its NUL left out.
    pub args_len: usize,
}

/// Writes the call's kind, callback id and arguments (their text and its length) into
/// `*out_info`: what `phaseo_call_kind`, `phaseo_call_callback`, `phaseo_call_args` and
/// `phaseo_string_len` give, in one call (a host whose every foreign call has a cost of its
/// own reads a call once). `PHASEO_STATUS_ERROR` (and `*out_info` untouched) when `call` or
/// `out_info` is NULL.
#[no_mangle]
pub unsafe extern "C" fn phaseo_call_read(
    call: *const PhaseoCall,
    out_info: *mut PhaseoCallInfo,
) -> PhaseoStatus {
    let (Some(c), false) = (call.as_ref(), out_info.is_null()) else {
        return PhaseoStatus::Error;
    };
    out_info.write(PhaseoCallInfo {
        kind: c.kind,
        callback: c.callback,
        args: c.args.as_ptr(),
        args_len: c.args.as_bytes().len(),
    });
    PhaseoStatus::Ok
}

/// The `user_data` of the host given to the run this call belongs to (`phaseo_agent_run`,
/// `phaseo_agent_continue`, `phaseo_agent_recover`, a stream; a nested agent run's calls
/// give their parent run's), so a host can serve a tool call with what its caller passed
/// to that run (Go: the run's `context.Context`). NULL for a call outside a run's tool
/// calls (a model client's, a stop condition's). The host may have released it already
/// when the run ended before the call was taken.
#[no_mangle]
pub unsafe extern "C" fn phaseo_call_run_user_data(call: *const PhaseoCall) -> *mut c_void {
    call.as_ref()
        .and_then(|c| c.runtime.as_ref())
        .and_then(ToolRuntime::host_tag)
        .map_or(std::ptr::null_mut(), |tag| tag as usize as *mut c_void)
}

/// Whether the core stopped waiting for this call (timeout, run cancelled, a sibling
/// failed): the host should stop its work; its answer will be discarded.
#[no_mangle]
pub unsafe extern "C" fn phaseo_call_is_cancelled(call: *const PhaseoCall) -> bool {
    call.as_ref().is_some_and(PhaseoCall::is_cancelled)
}

/// Registers `on_cancel(user_data)`, called at most once when the call is cancelled: from
/// a core thread, or at once from inside this function when the call already is. Never
/// after `phaseo_call_complete` returned (the two are serialized). `on_cancel` must return
/// promptly and must not complete the call itself. One registration per call.
#[no_mangle]
pub unsafe extern "C" fn phaseo_call_on_cancel(
    call: *mut PhaseoCall,
    on_cancel: PhaseoNotifyFn,
    user_data: *mut c_void,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let call = call_ref(call)?;
        let Some(f) = on_cancel else {
            return Err(CError::argument("on_cancel is NULL"));
        };
        {
            let mut state = lock(&call.state);
            if state.hook.is_some() {
                return Err(CError::argument("the call already has an on_cancel"));
            }
            state.hook = Some(CancelHook { f, user_data });
        }
        if call.is_cancelled() {
            call.fire_hook();
        }
        Ok(PhaseoStatus::Ok)
    })
}

/// Publishes a progress value (JSON text) of an `Execute` call: checked by the tool's
/// `eventSchema`, emitted as `tool.preliminary_result`. A value that is not JSON or breaks
/// the value limits fails the call as an invalid event.
#[no_mangle]
pub unsafe extern "C" fn phaseo_call_emit_progress(
    call: *mut PhaseoCall,
    value_json: *const c_char,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let call = call_ref(call)?;
        let rt = call
            .runtime
            .as_ref()
            .filter(|_| call.kind == PhaseoCallKind::Execute)
            .ok_or_else(|| CError::argument("only an Execute call has progress"))?;
        match read_str(value_json, "value_json") {
            Ok(text) => match phaseo_agent::parse_json_text(text) {
                Ok(value) => rt.emit_progress(value),
                Err(message) => rt.reject_progress(message),
            },
            Err(e) => return Err(e),
        }
        Ok(PhaseoStatus::Ok)
    })
}

/// Reports a progress value of an `Execute` call that the host could not turn into JSON
/// (`message` says why): the call fails as an invalid event (`tool_event_invalid`).
#[no_mangle]
pub unsafe extern "C" fn phaseo_call_reject_progress(
    call: *mut PhaseoCall,
    message: *const c_char,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let call = call_ref(call)?;
        let rt = call
            .runtime
            .as_ref()
            .filter(|_| call.kind == PhaseoCallKind::Execute)
            .ok_or_else(|| CError::argument("only an Execute call has progress"))?;
        rt.reject_progress(read_str(message, "message")?);
        Ok(PhaseoStatus::Ok)
    })
}

/// Replaces the application context (JSON text) from an `Execute` call (applied after the
/// tool phase, in call order).
#[no_mangle]
pub unsafe extern "C" fn phaseo_call_set_context(
    call: *mut PhaseoCall,
    value_json: *const c_char,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let call = call_ref(call)?;
        let rt = call
            .runtime
            .as_ref()
            .filter(|_| call.kind == PhaseoCallKind::Execute)
            .ok_or_else(|| CError::argument("only an Execute call can set the context"))?;
        let text = read_str(value_json, "value_json")?;
        let value = phaseo_agent::parse_json_text(text)
            .map_err(|e| CError::argument(format!("the context is not valid JSON: {e}")))?;
        rt.set_context(value)
            .map_err(|e| CError::argument(e.to_string()))?;
        Ok(PhaseoStatus::Ok)
    })
}

/// Passes one event (JSON text) of a `Stream` call to the run, at once: `{"type":
/// "text-delta", "delta"}`, `{"type": "reasoning-delta", "delta"}`, `{"type":
/// "tool-input-start", "toolCallId", "toolName"}`, `{"type": "tool-input-delta",
/// "toolCallId", "delta"}` (docs/behaviour.md §16), `{"type": "item", "item"}` or `{"type":
/// "response", "response"}` (the last `response` is the answer; the product's
/// `response.output_text.delta`, `response.reasoning.delta`, `tool.input_started`,
/// `tool.input_delta`, `response.item` and `response.completed` are accepted too). `PHASEO_STATUS_ERROR` names what is wrong with
/// the event (the host should then fail the call with that message), or says the model
/// request is over (cancelled or timed out: the host should stop reading its stream).
/// Only before `phaseo_call_complete`.
#[no_mangle]
pub unsafe extern "C" fn phaseo_call_stream_event(
    call: *mut PhaseoCall,
    event_json: *const c_char,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let call = call_ref(call)?;
        let events = call
            .stream
            .as_ref()
            .ok_or_else(|| CError::argument("only a Stream call takes stream events"))?;
        let text = read_str(event_json, "event_json")?;
        let event = phaseo_agent::parse_json_text(text)
            .map_err(|e| CError::argument(format!("the stream event is not valid JSON: {e}")))?;
        events.send(&event).map_err(CError::argument)?;
        Ok(PhaseoStatus::Ok)
    })
}

/// Answers a call and releases its handle (which must not be used afterwards). With
/// `is_error` false, `text` is the JSON text of the value (NULL = null); with `is_error`
/// true, it is the error message (UTF-8, NULL = a fixed text). An answer after the core
/// stopped waiting is discarded. Callable from any thread.
#[no_mangle]
pub unsafe extern "C" fn phaseo_call_complete(
    call: *mut PhaseoCall,
    text: *const c_char,
    is_error: bool,
) -> PhaseoStatus {
    if call.is_null() {
        return PhaseoStatus::Error;
    }
    let call = Arc::from_raw(call.cast_const());
    let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let text = read_opt_str(text, "the answer");
        match (is_error, text) {
            (true, Ok(Some(m))) => Answer::Thrown(m.to_owned()),
            (true, Ok(None)) => Answer::Thrown("the host callback failed".to_owned()),
            (false, Ok(None)) => Answer::Value(Value::Null),
            (false, Ok(Some(t))) => match phaseo_agent::parse_json_text(t) {
                Ok(v) => Answer::Value(v),
                // The limits' own text (docs/behaviour.md §7), as every binding reports it.
                Err(e) => Answer::Invalid(e),
            },
            (_, Err(e)) => Answer::Invalid(e.message().to_owned()),
        }
    }))
    .unwrap_or_else(|_| Answer::Thrown("internal error while reading the answer".into()));
    finish(&call, answer);
    PhaseoStatus::Ok
}

/// Answers an interactive hook's call (kind `PHASEO_CALL_KIND_TOOL_CALLED`) with "not
/// completed": the call pauses for a person (answering null completes it with a null
/// result). Any other call fails with a message saying it cannot pause. Releases the
/// handle, like `phaseo_call_complete`.
#[no_mangle]
pub unsafe extern "C" fn phaseo_call_pause(call: *mut PhaseoCall) -> PhaseoStatus {
    if call.is_null() {
        return PhaseoStatus::Error;
    }
    let call = Arc::from_raw(call.cast_const());
    let answer = if call.kind == PhaseoCallKind::ToolCalled {
        Answer::Pause
    } else {
        Answer::Thrown("only an interactive hook's call can pause".into())
    };
    finish(&call, answer);
    PhaseoStatus::Ok
}

/// Answers a call with a value the host could not turn into JSON (a cycle, NaN, a value of
/// a type JSON has no form for): `message` says why. An executor's call then fails with
/// `tool_output_invalid` (fatal whatever `onError` says, docs/behaviour.md §7), any other call with the
/// message. Releases the handle, like `phaseo_call_complete`.
#[no_mangle]
pub unsafe extern "C" fn phaseo_call_complete_invalid(
    call: *mut PhaseoCall,
    message: *const c_char,
) -> PhaseoStatus {
    if call.is_null() {
        return PhaseoStatus::Error;
    }
    let call = Arc::from_raw(call.cast_const());
    let message = match read_opt_str(message, "the message") {
        Ok(Some(m)) => m.to_owned(),
        _ => "the host value cannot be converted to JSON".to_owned(),
    };
    finish(&call, Answer::Invalid(message));
    PhaseoStatus::Ok
}

fn finish(call: &PhaseoCall, answer: Answer) {
    let mut state = lock(&call.state);
    state.hook = None;
    if let Some(tx) = state.answer.take() {
        let _ = tx.send(answer);
    }
}

/// The callbacks of one host, for the core's reader of definitions and options
/// ([`phaseo_agent::spec`]): every `{"$callback": id}` is served by its `invoke`.
pub fn callbacks(host: &Arc<Host>) -> JsonCallbacks<impl Fn(u64) -> HostFn + '_> {
    JsonCallbacks::new(move |id| HostFn {
        host: host.clone(),
        id,
    })
}
