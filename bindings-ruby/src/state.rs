//! A run's state held natively: Ruby receives the state's head (its JSON without the
//! conversation, steps and step results, where the status, output and usage are) and the
//! whole text only when something asks for it (`lib/phaseo_agent_sdk/result.rb`). A
//! 1,000-call turn's state is about 380 KB of text: a caller that reads only the status
//! and output never has it written nor parsed into Ruby objects.

use magnus::{Error, Module, Ruby};
use phaseo_agent::RunResult;

/// A run's state, with its head written once.
#[magnus::wrap(class = "PhaseoAgentSdk::Native::State", free_immediately, size)]
pub struct NativeState {
    state: RunResult,
    head: String,
    /// Bytes counted as memory this object holds by Ruby's collector (so that dropped
    /// results are collected in time), given back when it is freed.
    reported: isize,
}

impl NativeState {
    /// Holds `state`; called on a Ruby thread.
    pub fn new(ruby: &Ruby, mut state: RunResult) -> Self {
        let head = state.head_json();
        let reported = isize::try_from(state.estimated_size()).unwrap_or(isize::MAX / 2);
        ruby.gc_adjust_memory_usage(reported);
        Self {
            state,
            head,
            reported,
        }
    }

    /// The state's canonical JSON text with `run.messages`, `steps` and `stepResults` empty
    /// (`items` holding only the output's entry).
    fn head(&self) -> String {
        self.head.clone()
    }

    /// The state's whole canonical JSON text.
    fn to_json(&self) -> String {
        self.state.to_json()
    }
}

impl Drop for NativeState {
    fn drop(&mut self) {
        // Freed by Ruby's collector on a Ruby thread; this only lowers its count of memory.
        if let Ok(ruby) = Ruby::get() {
            ruby.gc_adjust_memory_usage(-self.reported);
        }
    }
}

/// Defines `PhaseoAgentSdk::Native::State`.
pub fn init(ruby: &Ruby, module: magnus::RModule) -> Result<(), Error> {
    use magnus::method;
    let native = module.define_module("Native")?;
    let state = native.define_class("State", ruby.class_object())?;
    state.define_method("head", method!(NativeState::head, 0))?;
    state.define_method("to_json", method!(NativeState::to_json, 0))?;
    Ok(())
}
