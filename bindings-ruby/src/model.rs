//! Model clients written in Ruby (docs/behaviour.md §8): an object with `generate(request)` and/or
//! `stream(request) { |event| ... }`. The Ruby layer (`ModelBridge`) hands the client the
//! product's `ModelRequest` and turns its answer into the core's JSON; this module adapts
//! the two callables to [`phaseo_agent::ModelClient`].
//!
//! `generate` and `stream` run on a Ruby thread of their own (as every callable but an event
//! listener), so the events a stream yields reach the run — and a reader of `agent.stream`
//! on the serving thread — while the client is still streaming, and an abandoned attempt
//! (cancellation) stops the thread as a timed-out tool's.

use magnus::{Error, Module, Ruby};
use phaseo_agent::HostStreamSender;

use crate::convert::{to_json_within, WRAPPED_DEPTH};

/// Where a streaming client's events go: `push(event)` hands one event to the run at once
/// (raising `ArgumentError` for a malformed event or once the attempt is over).
#[magnus::wrap(
    class = "PhaseoAgentSdk::Internal::ModelStreamSink",
    free_immediately,
    size
)]
pub struct StreamSink(HostStreamSender);

impl StreamSink {
    /// The sink of one streamed attempt.
    pub fn new(events: HostStreamSender) -> Self {
        Self(events)
    }

    fn push(ruby: &Ruby, rb_self: &Self, event: magnus::Value) -> Result<(), Error> {
        let value = to_json_within(ruby, event, "model stream event", WRAPPED_DEPTH)?;
        rb_self
            .0
            .send(&value)
            .map_err(|e| Error::new(ruby.exception_arg_error(), e))
    }

    fn is_closed(&self) -> bool {
        self.0.is_closed()
    }
}

/// Defines `PhaseoAgentSdk::Internal::ModelStreamSink`.
pub fn init(ruby: &Ruby, module: magnus::RModule) -> Result<(), Error> {
    use magnus::method;
    let internal = module.define_module("Internal")?;
    let sink = internal.define_class("ModelStreamSink", ruby.class_object())?;
    sink.define_method("push", method!(StreamSink::push, 1))?;
    sink.define_method("closed?", method!(StreamSink::is_closed, 0))?;
    Ok(())
}
