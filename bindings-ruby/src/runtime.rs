//! What a Ruby tool sees of its run (`runtime`), and the completion a call's thread answers on.

use std::sync::{Arc, Mutex};

use magnus::{Error, IntoValue, Ruby, Value as RValue};
use phaseo_agent::{ToolError, ToolRuntime, Value};
use tokio::sync::oneshot;

use crate::convert::{read, text, to_json, to_ruby, MAX_DEPTH};

/// `PhaseoAgentSdk::ToolRuntime` (the Ruby layer adds `emit_progress`/`set_context` procs).
#[magnus::wrap(class = "PhaseoAgentSdk::ToolRuntime", free_immediately, size)]
pub struct RbToolRuntime(ToolRuntime);

impl RbToolRuntime {
    /// The runtime as a Ruby object.
    pub fn wrap(ruby: &Ruby, rt: ToolRuntime) -> Result<RValue, Error> {
        Ok(RbToolRuntime(rt).into_value_with(ruby))
    }

    fn run_id(&self) -> String {
        self.0.run_id().to_owned()
    }

    fn agent_id(&self) -> String {
        self.0.agent_id().to_owned()
    }

    fn step_index(&self) -> usize {
        self.0.step_index()
    }

    fn context(ruby: &Ruby, rb_self: &Self) -> RValue {
        to_ruby(ruby, rb_self.0.context())
    }

    fn tool_call(ruby: &Ruby, rb_self: &Self) -> RValue {
        to_ruby(
            ruby,
            &serde_json::to_value(rb_self.0.tool_call()).unwrap_or(Value::Null),
        )
    }

    fn tool_annotations(ruby: &Ruby, rb_self: &Self) -> RValue {
        match rb_self.0.tool_annotations() {
            Some(a) => to_ruby(ruby, a),
            None => ruby.qnil().into_value_with(ruby),
        }
    }

    /// Which attempt this is (1 for the first; a tool with `retry:` runs again with 2, 3…).
    fn attempt(&self) -> u32 {
        self.0.attempt()
    }

    /// `"<run_id>:<tool_call_id>"`: the same for every attempt, for a call approved on
    /// continue and for one run again by `recover` (docs/behaviour.md §15).
    fn idempotency_key(&self) -> String {
        self.0.idempotency_key()
    }

    fn is_cancelled(&self) -> bool {
        self.0.is_cancelled()
    }

    fn native_emit_progress(ruby: &Ruby, rb_self: &Self, value: RValue) -> Result<(), Error> {
        match read(ruby, value, MAX_DEPTH) {
            Ok(v) => {
                rb_self.0.emit_progress(v);
                Ok(())
            }
            Err(problem) => {
                rb_self.0.reject_progress(problem.message.clone());
                Err(problem.into_error(ruby, "emit_progress"))
            }
        }
    }

    fn native_set_context(ruby: &Ruby, rb_self: &Self, value: RValue) -> Result<(), Error> {
        let v = to_json(ruby, value, "set_context")?;
        rb_self
            .0
            .set_context(v)
            .map_err(|e| Error::new(ruby.exception_arg_error(), format!("set_context: {e}")))
    }
}

/// Where a call's outcome goes.
type Sender = oneshot::Sender<Result<Value, ToolError>>;

/// What a Ruby thread's answer is to the core.
#[derive(Clone, Copy)]
pub enum Answer {
    /// A tool's result: one that is not JSON (or beyond the limits) is an invalid output
    /// whatever `on_error` says, as in every binding.
    ToolResult,
    /// Another callable's answer, nested at most `max` levels; one that is not JSON is the
    /// callable's error (`what: problem`).
    Callback { max: usize, what: &'static str },
}

/// The answer channel of one call, answered once by its Ruby thread.
#[derive(Clone)]
#[magnus::wrap(class = "PhaseoAgentSdk::Internal::Completion", free_immediately, size)]
pub struct Completion(Arc<Mutex<Option<Sender>>>, Answer);

impl Completion {
    /// A completion answering on `tx`.
    pub fn new(tx: Sender, answer: Answer) -> Self {
        Self(Arc::new(Mutex::new(Some(tx))), answer)
    }

    /// Delivers the outcome (the first one wins).
    pub fn finish(&self, outcome: Result<Value, ToolError>) {
        if let Some(tx) = self.0.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = tx.send(outcome);
        }
    }

    fn ok(ruby: &Ruby, rb_self: &Self, value: RValue) {
        let outcome = match rb_self.1 {
            Answer::ToolResult => {
                read(ruby, value, MAX_DEPTH).map_err(|p| ToolError::invalid_output(p.message))
            }
            Answer::Callback { max, what } => {
                read(ruby, value, max).map_err(|p| ToolError::new(format!("{what}: {}", p.message)))
            }
        };
        rb_self.finish(outcome);
    }

    fn err(ruby: &Ruby, rb_self: &Self, message: RValue) {
        let text = magnus::RString::from_value(message)
            .map(|s| text(ruby, s).unwrap_or_else(|_| unsafe { s.to_string_lossy() }.into_owned()))
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "the Ruby callable raised".into());
        rb_self.finish(Err(ToolError::new(text)));
    }
}

/// Defines the classes of this module.
pub fn init(ruby: &Ruby, module: magnus::RModule) -> Result<(), Error> {
    use magnus::{method, Module, Object};
    let rt = module.define_class("ToolRuntime", ruby.class_object())?;
    rt.define_method("run_id", method!(RbToolRuntime::run_id, 0))?;
    rt.define_method("agent_id", method!(RbToolRuntime::agent_id, 0))?;
    rt.define_method("step_index", method!(RbToolRuntime::step_index, 0))?;
    rt.define_method("context", method!(RbToolRuntime::context, 0))?;
    rt.define_method("tool_call", method!(RbToolRuntime::tool_call, 0))?;
    rt.define_method(
        "tool_annotations",
        method!(RbToolRuntime::tool_annotations, 0),
    )?;
    rt.define_method("attempt", method!(RbToolRuntime::attempt, 0))?;
    rt.define_method(
        "idempotency_key",
        method!(RbToolRuntime::idempotency_key, 0),
    )?;
    rt.define_method("cancelled?", method!(RbToolRuntime::is_cancelled, 0))?;
    rt.define_method(
        "native_emit_progress",
        method!(RbToolRuntime::native_emit_progress, 1),
    )?;
    rt.define_method(
        "native_set_context",
        method!(RbToolRuntime::native_set_context, 1),
    )?;
    let internal = module.define_module("Internal")?;
    let c = internal.define_class("Completion", ruby.class_object())?;
    c.define_method("ok", method!(Completion::ok, 1))?;
    c.define_method("err", method!(Completion::err, 1))?;
    let _ = c.singleton_class();
    Ok(())
}
