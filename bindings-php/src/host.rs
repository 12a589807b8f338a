//! The PHP side of every call: one process-wide queue of messages for the PHP thread.
//!
//! PHP (NTS) has one thread and its engine must only be touched from it. Whenever the core
//! needs a PHP function (a tool, a hook, a validator, a model client) it pushes a `call`
//! message here and awaits the answer, from a run the PHP thread drives itself
//! ([`crate::drive`]) or from a core thread (streams, served MCP tools). The PHP layer
//! pumps the queue (`phaseo_poll`) while it waits for a run, runs each call in a `Fiber`,
//! and answers with `phaseo_respond`. Events, cancellations of calls and the end of runs
//! travel through the same queue, so they reach PHP in the order they happened and calls
//! start in call order (one FIFO, pushed synchronously when the core starts the call).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use phaseo_agent::json_host::{call_cancelled, CallKind, JsonArgs, JsonCallbacks, JsonHostFn};
use phaseo_agent::{async_trait, HostStreamSender, ToolError, ToolRuntime, Value};
use tokio::sync::oneshot;

/// The host's answer to a call.
pub enum Answer {
    /// The returned value.
    Value(Value),
    /// What the PHP function threw (its message).
    Thrown(String),
    /// A value PHP could not turn into JSON (`tool_output_invalid` for an executor and the
    /// hooks whose answer is the result).
    Invalid(String),
}

/// A call waiting for its answer from PHP.
struct Pending {
    answer: oneshot::Sender<Answer>,
    /// The call's runtime, whatever its kind: the call is cancelled with it (a call without
    /// one only when the core abandons it, `abandoned`), and an executor call's progress
    /// and context go through it (`with_runtime`). No cancellation token: making and
    /// dropping one per call locks its parent's node twice.
    runtime: Option<ToolRuntime>,
    /// Whether the call is an executor's.
    executes: bool,
    abandoned: bool,
    /// Where a host model client's `stream` call sends the events it yields.
    stream: Option<HostStreamSender>,
}

/// The queue and the calls in flight.
struct Queue {
    messages: Mutex<VecDeque<String>>,
    ready: Condvar,
    /// Whether the PHP thread waits on `ready` (changed with `messages` locked): a message
    /// pushed while it does not wait needs no wake-up (a system call each).
    waiting: AtomicBool,
    /// Whether a driven run was woken on the PHP thread (see [`crate::drive`]): the pump
    /// polls it before it takes or waits for a message.
    driven: AtomicBool,
    calls: Mutex<HashMap<u64, Pending>>,
    next_call: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn queue() -> &'static Queue {
    static Q: OnceLock<Queue> = OnceLock::new();
    Q.get_or_init(|| Queue {
        messages: Mutex::new(VecDeque::new()),
        ready: Condvar::new(),
        waiting: AtomicBool::new(false),
        driven: AtomicBool::new(false),
        calls: Mutex::new(HashMap::new()),
        next_call: AtomicU64::new(1),
    })
}

/// Appends a message for the PHP thread.
pub fn push(message: Value) {
    push_text(phaseo_agent::json::to_canonical_string(&message));
}

/// Appends a message (its JSON text) for the PHP thread.
fn push_text(text: String) {
    let q = queue();
    let mut messages = lock(&q.messages);
    messages.push_back(text);
    let waiting = q.waiting.load(Ordering::SeqCst);
    drop(messages);
    if waiting {
        q.ready.notify_all();
    }
}

/// Tells the pump that a driven run was woken on the PHP thread.
pub fn driven_woken() {
    queue().driven.store(true, Ordering::SeqCst);
}

/// The next message, waiting up to `wait` for one; the runs the PHP thread drives are
/// polled first (on the PHP thread: this is its pump).
pub fn poll(wait: Duration) -> Option<String> {
    crate::drive::mark_php_thread();
    let q = queue();
    let mut deadline = None;
    loop {
        if q.driven.swap(false, Ordering::SeqCst) {
            crate::drive::drive_woken();
        }
        let mut messages = lock(&q.messages);
        if let Some(message) = messages.pop_front() {
            return Some(message);
        }
        if q.driven.load(Ordering::SeqCst) {
            continue; // a run polled just now woke itself
        }
        if wait.is_zero() {
            return None;
        }
        let until = *deadline.get_or_insert_with(|| Instant::now() + wait);
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        // Only this thread sets `driven`: while it waits, a message is what can come.
        q.waiting.store(true, Ordering::SeqCst);
        messages = q
            .ready
            .wait_timeout_while(messages, left, |m| m.is_empty())
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .0;
        q.waiting.store(false, Ordering::SeqCst);
        if let Some(message) = messages.pop_front() {
            return Some(message);
        }
    }
}

/// Completes a call (a late answer to an abandoned call is dropped).
pub fn respond(call: u64, answer: Answer) {
    // The answer wakes the run here: a driven run is then polled by this thread's pump.
    crate::drive::mark_php_thread();
    if let Some(p) = lock(&queue().calls).remove(&call) {
        let _ = p.answer.send(answer);
    }
}

/// Runs `f` with the tool runtime of an executor call still in flight.
pub fn with_runtime<T>(call: u64, f: impl FnOnce(&ToolRuntime) -> T) -> Option<T> {
    let calls = lock(&queue().calls);
    calls
        .get(&call)
        .filter(|p| p.executes)
        .and_then(|p| p.runtime.as_ref())
        .map(f)
}

/// Passes one event a PHP model client's stream yielded to the run (`Err`: what is wrong
/// with it, or that the attempt is over).
pub fn stream_event(call: u64, event: &Value) -> Result<(), String> {
    let calls = lock(&queue().calls);
    let sender = calls
        .get(&call)
        .and_then(|p| p.stream.as_ref())
        .ok_or_else(|| "the call is not a running model stream".to_owned())?;
    sender.send(event)
}

/// Whether the core stopped waiting for the call (or it is no longer in flight).
pub fn is_cancelled(call: u64) -> bool {
    lock(&queue().calls)
        .get(&call)
        .is_none_or(|p| p.abandoned || p.runtime.as_ref().is_some_and(ToolRuntime::is_cancelled))
}

/// The host: PHP's functions are named by ids of the PHP layer's registry.
pub struct Host;

/// A host function: a callback id of the PHP layer.
#[derive(Clone)]
pub struct HostFn {
    /// The host serving it (one PHP thread per process: kept for the reader's signature,
    /// which the C ABI shares, where hosts differ).
    #[allow(dead_code)]
    pub host: Arc<Host>,
    /// The id written as `{"$callback": id}`.
    pub id: u64,
}

/// Marks the call abandoned (and tells PHP) when the core stops waiting before PHP
/// answered: a timeout, the run's cancellation, a sibling's fatal error.
struct Abandon {
    call: u64,
    armed: bool,
}

impl Drop for Abandon {
    fn drop(&mut self) {
        if self.armed {
            if let Some(p) = lock(&queue().calls).get_mut(&self.call) {
                p.abandoned = true;
            }
            push(serde_json::json!({"t": "cancel", "id": self.call}));
        }
    }
}

impl HostFn {
    /// Calls the PHP function with these arguments and waits for its answer.
    pub async fn call(
        &self,
        kind: &'static str,
        args: Value,
        runtime: Option<&ToolRuntime>,
    ) -> Result<Value, ToolError> {
        self.call_streaming(kind, Args::Value(args), runtime, None)
            .await
    }

    /// [`HostFn::call`], with the sender a model client's `stream` call yields events to.
    pub async fn call_streaming(
        &self,
        kind: &'static str,
        args: Args<'_>,
        runtime: Option<&ToolRuntime>,
        stream: Option<HostStreamSender>,
    ) -> Result<Value, ToolError> {
        let q = queue();
        let id = q.next_call.fetch_add(1, Ordering::Relaxed);
        let (tx, mut rx) = oneshot::channel();
        lock(&q.calls).insert(
            id,
            Pending {
                answer: tx,
                runtime: runtime.cloned(),
                executes: kind == "execute",
                abandoned: false,
                stream,
            },
        );
        let mut abandon = Abandon {
            call: id,
            armed: true,
        };
        push_text(call_message(id, kind, self.id, args));
        let cancelled = call_cancelled(runtime);
        tokio::pin!(cancelled);
        let mut cancel_seen = false;
        let answer = loop {
            tokio::select! {
                biased;
                answer = &mut rx => break answer,
                () = &mut cancelled, if !cancel_seen => {
                    cancel_seen = true;
                    push(serde_json::json!({"t": "cancel", "id": id}));
                }
            }
        };
        abandon.armed = false;
        match answer {
            Ok(Answer::Value(v)) => Ok(v),
            Ok(Answer::Thrown(m)) => Err(ToolError::new(m)),
            // What an executor or a hook answering for it (`onToolCalled`,
            // `onResponseReceived`) gives is the call's result: unconvertible, it is an invalid
            // output (docs/behaviour.md §7), whatever the tool's `onError`.
            Ok(Answer::Invalid(m))
                if matches!(kind, "execute" | "toolCalled" | "responseReceived") =>
            {
                Err(ToolError::invalid_output(m))
            }
            Ok(Answer::Invalid(m)) => Err(ToolError::new(m)),
            Err(_) => Err(ToolError::new("the PHP host dropped the call")),
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
        self.call_streaming(kind.name(), Args::Json(args), runtime, None)
            .await
    }

    async fn call_streaming(
        &self,
        args: JsonArgs<'_>,
        events: HostStreamSender,
    ) -> Result<Value, ToolError> {
        let name = CallKind::Stream.name();
        HostFn::call_streaming(self, name, Args::Json(args), None, Some(events)).await
    }
}

/// The arguments of a call to PHP.
pub enum Args<'a> {
    /// As a value.
    Value(Value),
    /// As the core's adapters give them (written without being copied into a value).
    Json(JsonArgs<'a>),
}

/// The `call` message of a call (`{"t":"call","id","kind","cb","args"}`), its arguments'
/// big integers marked. Arguments without one (nearly all) are written straight from the
/// core's values; the others are copied into a value to be marked.
fn call_message(id: u64, kind: &str, callback: u64, args: Args<'_>) -> String {
    let mut args = match args {
        Args::Json(args) if !json_args_hold_big_integers(&args) => {
            let args = args.to_canonical_text();
            return format!(
                r#"{{"t":"call","id":{id},"kind":"{kind}","cb":{callback},"args":{args}}}"#
            );
        }
        Args::Json(args) => args.into_value(),
        Args::Value(args) => args,
    };
    mark_big_integers(&mut args);
    phaseo_agent::json::to_canonical_string(
        &serde_json::json!({"t": "call", "id": id, "kind": kind, "cb": callback, "args": args}),
    )
}

/// Whether a call's arguments hold an integer PHP's `int` cannot hold.
fn json_args_hold_big_integers(args: &JsonArgs<'_>) -> bool {
    match args {
        JsonArgs::List(items) => items.iter().any(holds_big_integer),
        JsonArgs::WithRuntime(value, rt) => {
            holds_big_integer(value)
                || holds_big_integer(rt.context())
                || holds_big_integer(&rt.tool_call().input)
                || rt.tool_annotations().is_some_and(holds_big_integer)
        }
    }
}

/// Whether a value holds an integer above `i64::MAX` (see [`mark_big_integers`]).
fn holds_big_integer(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.is_u64() && n.as_i64().is_none(),
        Value::Array(items) => items.iter().any(holds_big_integer),
        Value::Object(map) => map.values().any(holds_big_integer),
        _ => false,
    }
}

/// What marks an integer PHP's `int` cannot hold (above `i64::MAX`): PHP's layer turns
/// `"\u{1}phaseo:bigint:<digits>"` into a `BigInt` object and writes it back as the number.
pub const BIG_INTEGER_MARK: &str = "\u{1}phaseo:bigint:";

/// Replaces integers beyond PHP's `int` with their marked digits (see [`BIG_INTEGER_MARK`]).
pub fn mark_big_integers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_u64() && n.as_i64().is_none() => {
            *value = Value::String(format!("{BIG_INTEGER_MARK}{n}"));
        }
        Value::Array(items) => items.iter_mut().for_each(mark_big_integers),
        Value::Object(map) => map.values_mut().for_each(mark_big_integers),
        _ => {}
    }
}

/// The callbacks of the PHP layer, for the core's reader of definitions and options
/// ([`phaseo_agent::spec`]): every `{"$callback": id}` names a PHP callable of its registry.
pub fn callbacks(host: &Arc<Host>) -> JsonCallbacks<impl Fn(u64) -> HostFn + '_> {
    JsonCallbacks::new(move |id| HostFn {
        host: host.clone(),
        id,
    })
}
