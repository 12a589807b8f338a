//! The core's host traits implemented by Ruby callables. A callable is named by its id in
//! the Ruby layer's registry (`PhaseoAgentSdk::Internal::REGISTRY`); every call is a job
//! of [`crate::host`], run on a Ruby thread.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use magnus::value::ReprValue;
use magnus::IntoValue;
use magnus::{Error, Module, RArray, RModule, Ruby, Value as RValue};
use phaseo_agent::json_host::{CallKind, JsonArgs, JsonHostFn};
use phaseo_agent::{
    async_trait, AgentEvent, EventListener, HostStreamSender, ToolError, ToolRuntime, Value,
};
use tokio::sync::oneshot;

use crate::convert::{to_ruby, MAX_DEPTH, WRAPPED_DEPTH};
use crate::host::post;
use crate::runtime::{Answer, RbToolRuntime};

/// `PhaseoAgentSdk::Internal`, the Ruby half of the bridge.
pub fn internal(ruby: &Ruby) -> Result<RModule, Error> {
    ruby.define_module("PhaseoAgentSdk")?
        .define_module("Internal")
}

/// A Ruby exception's message (its class name when the message is empty or cannot be
/// read); text that is not valid UTF-8 has its bad bytes replaced.
pub fn error_message(ruby: &Ruby, e: &Error) -> String {
    match e.error_type() {
        magnus::error::ErrorType::Exception(exc) => {
            let message = exc
                .funcall::<_, _, RValue>("message", ())
                .ok()
                .and_then(magnus::RString::from_value)
                .map(|s| {
                    crate::convert::text(ruby, s)
                        .unwrap_or_else(|_| unsafe { s.to_string_lossy() }.into_owned())
                });
            match message {
                Some(m) if !m.is_empty() => m,
                _ => unsafe { exc.classname() }.into_owned(),
            }
        }
        magnus::error::ErrorType::Error(_, message) => message.to_string(),
        magnus::error::ErrorType::Jump(_) => "the callable jumped (break or throw)".to_string(),
    }
}

/// A Ruby callable by id.
#[derive(Clone, Copy)]
pub struct HostFn(pub u64);

/// Pushes the call's arguments onto the array (built in place: Ruby values must not sit
/// in Rust heap memory the GC does not see).
pub type Args = Box<dyn FnOnce(&Ruby, RArray) -> Result<(), Error> + Send>;

impl HostFn {
    /// Calls the callable on a Ruby thread of its own with the arguments `args` builds;
    /// its answer is JSON nested at most [`MAX_DEPTH`] levels.
    pub async fn call(self, args: Args) -> Result<Value, ToolError> {
        self.call_within(args, MAX_DEPTH, "the callable's answer")
            .await
    }

    /// [`HostFn::call`] for an answer that wraps values (a model response, named `what`):
    /// nested at most `max` levels, the values inside checked by the core.
    pub async fn call_within(
        self,
        args: Args,
        max: usize,
        what: &'static str,
    ) -> Result<Value, ToolError> {
        on_thread(
            self,
            args,
            Answer::Callback { max, what },
            "the Ruby callable's thread ended without an answer",
        )
        .await
    }

    /// Calls with JSON arguments.
    pub async fn call_values(self, values: Vec<Value>) -> Result<Value, ToolError> {
        self.call(Box::new(move |ruby, array| {
            for v in &values {
                array.push(to_ruby(ruby, v))?;
            }
            Ok(())
        }))
        .await
    }
}

static NEXT_KEY: AtomicU64 = AtomicU64::new(1);

/// Asks the call's Ruby thread to stop (Timeout::Error raised in it) when the core
/// abandons the call (timeout, run cancellation) before it answered.
struct StopOnDrop {
    key: u64,
    answered: bool,
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        let key = self.key;
        post(Box::new(move |ruby| {
            if let Ok(internal) = internal(ruby) {
                let _: Result<RValue, _> = internal.funcall("cancel_call", (key,));
            }
        }));
    }
}

/// Calls `id` with the arguments `args` builds, on a Ruby thread of its own
/// (`Internal.start_call`), and waits for its answer; when the core abandons the call
/// before it answered (a tool's timeout, the run's cancellation), the thread is stopped
/// (`Internal.cancel_call`). Every callable but an event listener runs this way: the thread
/// serving the run only starts threads, so a callable that blocks never keeps a cancelled
/// run from returning.
pub async fn on_thread(
    id: HostFn,
    args: Args,
    answer: Answer,
    lost: &'static str,
) -> Result<Value, ToolError> {
    let (tx, rx) = oneshot::channel();
    let key = NEXT_KEY.fetch_add(1, Ordering::Relaxed);
    let mut guard = StopOnDrop {
        key,
        answered: false,
    };
    post(Box::new(move |ruby| {
        let completion = crate::runtime::Completion::new(tx, answer);
        let started = (|| {
            let array = ruby.ary_new();
            args(ruby, array)?;
            let call = (
                id.0,
                array,
                magnus::IntoValue::into_value_with(completion.clone(), ruby),
                key,
            );
            let _: RValue = internal(ruby)?.funcall("start_call", call)?;
            Ok::<_, Error>(())
        })();
        if let Err(e) = started {
            crate::host::defer_if_interrupt(ruby, &e);
            completion.finish(Err(ToolError::new(error_message(ruby, &e))));
        }
    }));
    let outcome = rx.await.unwrap_or_else(|_| Err(ToolError::new(lost)));
    guard.answered = true;
    outcome
}

/// The core's `json_host` adapters call a Ruby callable through this: each call runs on a
/// Ruby thread of its own ([`on_thread`]); `(value, runtime)` arguments hand the callable the
/// live `ToolRuntime`, and an agent's (or MCP server's) approval predicate gets the call as
/// a `PhaseoAgentSdk::ToolCall`, as in the product.
#[async_trait]
impl JsonHostFn for HostFn {
    async fn call(
        &self,
        kind: CallKind,
        args: JsonArgs<'_>,
        _runtime: Option<&ToolRuntime>,
    ) -> Result<Value, ToolError> {
        let args = ruby_args(args, kind == CallKind::AgentApprove);
        match kind {
            CallKind::Execute => {
                on_thread(
                    *self,
                    args,
                    Answer::ToolResult,
                    "the tool's Ruby thread ended without an answer",
                )
                .await
            }
            CallKind::Generate => {
                self.call_within(args, WRAPPED_DEPTH, "model response")
                    .await
            }
            _ => HostFn::call(*self, args).await,
        }
    }

    async fn call_streaming(
        &self,
        args: JsonArgs<'_>,
        events: HostStreamSender,
    ) -> Result<Value, ToolError> {
        let request = match args {
            JsonArgs::List(mut items) if !items.is_empty() => items.swap_remove(0),
            other => other.into_value(),
        };
        on_thread(
            *self,
            Box::new(move |ruby, array| {
                array.push(to_ruby(ruby, &request))?;
                array.push(crate::model::StreamSink::new(events).into_value_with(ruby))
            }),
            Answer::Callback {
                max: MAX_DEPTH,
                what: "the model client's stream",
            },
            "the model client's stream thread ended without an answer",
        )
        .await
    }
}

/// Builds a call's Ruby arguments: the values as Ruby data, a runtime as the live
/// `ToolRuntime` object, and (for an agent-level predicate) the call as a `ToolCall`.
fn ruby_args(args: JsonArgs<'_>, tool_call_first: bool) -> Args {
    match args {
        JsonArgs::List(values) => Box::new(move |ruby, array| {
            for v in &values {
                array.push(to_ruby(ruby, v))?;
            }
            Ok(())
        }),
        JsonArgs::WithRuntime(value, rt) => {
            let (value, rt) = (value.clone(), rt.clone());
            Box::new(move |ruby, array| {
                let first = to_ruby(ruby, &value);
                let first = match tool_call_first {
                    true => internal(ruby)?.funcall("tool_call", (first,))?,
                    false => first,
                };
                array.push(first)?;
                array.push(RbToolRuntime::wrap(ruby, rt)?)
            })
        }
    }
}

/// `on_event: ->(event)`: the run's events, kept in order for the thread that called
/// `run`, which delivers them itself while it waits (`host::serve_run`): a listener runs
/// only on its own run's caller thread, never on another run's, so one that blocks holds
/// only its own run's caller (where Ctrl-C, `Thread#raise` and `Timeout.timeout` reach it).
pub struct RbListener(pub Arc<Listener>);

/// A run's listener and the events it has not seen yet.
pub struct Listener {
    id: u64,
    events: std::sync::Mutex<std::collections::VecDeque<Value>>,
}

impl Listener {
    /// The listener of registry id `id`.
    pub fn new(id: u64) -> Arc<Self> {
        Arc::new(Self {
            id,
            events: std::sync::Mutex::new(std::collections::VecDeque::new()),
        })
    }

    /// Delivers the oldest pending event, if any: `Some(Err)` when the delivery was
    /// interrupted (an interrupt or a `throw`, `Thread#kill` in the listener's thread).
    pub fn deliver_one(&self, ruby: &Ruby) -> Option<Result<(), Error>> {
        let event = self
            .events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front()?;
        let internal = match internal(ruby) {
            Ok(i) => i,
            Err(e) => return Some(Err(e)),
        };
        let args = ruby.ary_new();
        let _ = args.push(to_ruby(ruby, &event));
        Some(
            internal
                .funcall::<_, _, RValue>("call_listener", (self.id, args))
                .map(|_| ()),
        )
    }
}

impl Listener {
    /// Whether events wait for delivery.
    pub fn pending(&self) -> bool {
        !self
            .events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }
}

impl EventListener for RbListener {
    fn on_event(&self, event: &AgentEvent) {
        self.0
            .events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(event.to_value());
        crate::host::wake_all();
    }
}
