//! What a Ruby tool sees of its run (`runtime`), and the completion its thread answers on.

use std::sync::{Arc, Mutex};

use magnus::{Error, IntoValue, Ruby, Value as RValue};
use phaseo_agent::{ToolError, ToolRuntime, Value};
use tokio::sync::oneshot;

use crate::convert::{to_json, to_json_bare, to_ruby};

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

    fn is_cancelled(&self) -> bool {
        self.0.is_cancelled()
    }

    fn native_emit_progress(ruby: &Ruby, rb_self: &Self, value: RValue) -> Result<(), Error> {
        match to_json_bare(ruby, value, "emit_progress") {
            Ok(v) => {
                rb_self.0.emit_progress(v);
                Ok(())
            }
            Err((e, problem)) => {
                rb_self.0.reject_progress(problem);
                Err(e)
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

/// Where a tool call's outcome goes.
type Answer = oneshot::Sender<Result<Value, ToolError>>;

/// The answer channel of one tool call, answered once by its Ruby thread.
#[derive(Clone)]
#[magnus::wrap(class = "PhaseoAgentSdk::Internal::Completion", free_immediately, size)]
pub struct Completion(Arc<Mutex<Option<Answer>>>);

impl Completion {
    /// A completion answering on `tx`.
    pub fn new(tx: Answer) -> Self {
        Self(Arc::new(Mutex::new(Some(tx))))
    }

    /// Delivers the outcome (the first one wins).
    pub fn finish(&self, outcome: Result<Value, ToolError>) {
        if let Some(tx) = self.0.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = tx.send(outcome);
        }
    }

    fn ok(ruby: &Ruby, rb_self: &Self, value: RValue) {
        // A result that is not JSON (or beyond the limits) is an invalid output whatever
        // `on_error` says, as in every binding.
        let outcome = to_json_bare(ruby, value, "the tool's result")
            .map_err(|(_, problem)| ToolError::invalid_output(problem));
        rb_self.finish(outcome);
    }

    fn err(ruby: &Ruby, rb_self: &Self, message: RValue) {
        let text = magnus::RString::from_value(message)
            .and_then(|s| s.to_string().ok())
            .unwrap_or_else(|| "the tool raised".into());
        let _ = ruby;
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
