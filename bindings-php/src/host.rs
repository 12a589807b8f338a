//! The PHP side of every call: one process-wide queue of messages for the PHP thread.
//!
//! PHP (NTS) has one thread and its engine must only be touched from it. The core runs on
//! its own tokio threads; whenever it needs a PHP function (a tool, a hook, a validator, a
//! model client) it pushes a `call` message here and awaits the answer. The PHP layer
//! pumps the queue (`phaseo_poll`) while it waits for a run, runs each call in a `Fiber`,
//! and answers with `phaseo_respond`. Events, cancellations of calls and the end of runs
//! travel through the same queue, so they reach PHP in the order they happened and calls
//! start in call order (one FIFO, pushed synchronously when the core starts the call).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use phaseo_agent::json_host::{CallKind, JsonArgs, JsonHostFn};
use phaseo_agent::{
    async_trait, CancellationToken, HostStreamSender, ToolError, ToolRuntime, Value,
};
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
    runtime: Option<ToolRuntime>,
    token: CancellationToken,
    /// Where a host model client's `stream` call sends the events it yields.
    stream: Option<HostStreamSender>,
}

/// The queue and the calls in flight.
struct Queue {
    messages: Mutex<VecDeque<String>>,
    ready: Condvar,
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
        calls: Mutex::new(HashMap::new()),
        next_call: AtomicU64::new(1),
    })
}

/// Appends a message (JSON text) for the PHP thread.
pub fn push(message: Value) {
    let q = queue();
    lock(&q.messages).push_back(phaseo_agent::json::to_canonical_string(&message));
    q.ready.notify_all();
}

/// The next message, waiting up to `wait` for one.
pub fn poll(wait: Duration) -> Option<String> {
    let q = queue();
    let mut messages = lock(&q.messages);
    if messages.is_empty() && !wait.is_zero() {
        messages = q
            .ready
            .wait_timeout_while(messages, wait, |m| m.is_empty())
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .0;
    }
    messages.pop_front()
}

/// Completes a call (a late answer to an abandoned call is dropped).
pub fn respond(call: u64, answer: Answer) {
    if let Some(p) = lock(&queue().calls).remove(&call) {
        let _ = p.answer.send(answer);
    }
}

/// Runs `f` with the tool runtime of an executor call still in flight.
pub fn with_runtime<T>(call: u64, f: impl FnOnce(&ToolRuntime) -> T) -> Option<T> {
    let calls = lock(&queue().calls);
    calls.get(&call).and_then(|p| p.runtime.as_ref()).map(f)
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
        .is_none_or(|p| p.token.is_cancelled())
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

/// Cancels the call (its token, and tells PHP) when the core stops waiting before PHP
/// answered: a timeout, the run's cancellation, a sibling's fatal error.
struct Abandon {
    call: u64,
    token: CancellationToken,
    armed: bool,
}

impl Drop for Abandon {
    fn drop(&mut self) {
        if self.armed {
            self.token.cancel();
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
        self.call_streaming(kind, args, runtime, None).await
    }

    /// [`HostFn::call`], with the sender a model client's `stream` call yields events to.
    pub async fn call_streaming(
        &self,
        kind: &'static str,
        args: Value,
        runtime: Option<&ToolRuntime>,
        stream: Option<HostStreamSender>,
    ) -> Result<Value, ToolError> {
        let q = queue();
        let token = runtime.map_or_else(CancellationToken::new, |rt| {
            rt.cancellation_token().child_token()
        });
        let id = q.next_call.fetch_add(1, Ordering::Relaxed);
        let (tx, mut rx) = oneshot::channel();
        lock(&q.calls).insert(
            id,
            Pending {
                answer: tx,
                runtime: runtime.filter(|_| kind == "execute").cloned(),
                token: token.clone(),
                stream,
            },
        );
        let mut abandon = Abandon {
            call: id,
            token: token.clone(),
            armed: true,
        };
        let mut args = args;
        mark_big_integers(&mut args);
        push(serde_json::json!({"t": "call", "id": id, "kind": kind, "cb": self.id, "args": args}));
        let mut cancel_seen = false;
        let answer = loop {
            tokio::select! {
                biased;
                answer = &mut rx => break answer,
                () = token.cancelled(), if !cancel_seen => {
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
        HostFn::call(self, kind.name(), args.into_value(), runtime).await
    }

    async fn call_streaming(
        &self,
        args: JsonArgs<'_>,
        events: HostStreamSender,
    ) -> Result<Value, ToolError> {
        let name = CallKind::Stream.name();
        HostFn::call_streaming(self, name, args.into_value(), None, Some(events)).await
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
