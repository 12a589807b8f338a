//! Model clients written in Ruby (SPEC §8): an object with `generate(request)` and/or
//! `stream(request) { |event| ... }`. The Ruby layer (`ModelBridge`) hands the client the
//! product's `ModelRequest` and turns its answer into the core's JSON; this module adapts
//! the two callables to [`phaseo_agent::ModelClient`].
//!
//! `generate` and `stream` run on a Ruby thread of their own (as every callable but an event
//! listener), so the events a stream yields reach the run — and a reader of `agent.stream`
//! on the serving thread — while the client is still streaming, and an abandoned attempt
//! (cancellation) stops the thread as a timed-out tool's.

use magnus::{Error, IntoValue, Module, Ruby};
use phaseo_agent::{
    async_trait, host_stream, CancellationToken, DeltaSink, HostStreamSender, ModelClient,
    ModelError, ModelRequest, ModelResponse,
};

use crate::adapters::{on_thread, HostFn};
use crate::convert::{to_json_within, to_ruby, MAX_DEPTH, WRAPPED_DEPTH};
use crate::runtime::Answer;

/// A Ruby model client: the registry ids of its `generate` and `stream` callables.
pub struct RbModel {
    /// `->(request) { response }`.
    pub generate: Option<HostFn>,
    /// `->(request, sink) { ... }` (`ModelBridge.drain` bound to the client).
    pub stream: Option<HostFn>,
}

/// Where a streaming client's events go: `push(event)` hands one event to the run at once
/// (raising `ArgumentError` for a malformed event or once the attempt is over).
#[magnus::wrap(
    class = "PhaseoAgentSdk::Internal::ModelStreamSink",
    free_immediately,
    size
)]
pub struct StreamSink(HostStreamSender);

impl StreamSink {
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

struct NoDeltas;

impl DeltaSink for NoDeltas {
    fn text_delta(&self, _delta: &str) {}
    fn reasoning_delta(&self, _delta: &str) {}
}

impl RbModel {
    async fn call_stream(
        stream: HostFn,
        request: &ModelRequest<'_>,
        deltas: &dyn DeltaSink,
    ) -> Result<ModelResponse, ModelError> {
        let (sender, receiver) = host_stream();
        let request = request.to_value();
        let host = on_thread(
            stream,
            Box::new(move |ruby, array| {
                array.push(to_ruby(ruby, &request))?;
                array.push(StreamSink(sender).into_value_with(ruby))
            }),
            Answer::Callback {
                max: MAX_DEPTH,
                what: "the model client's stream",
            },
            "the model client's stream thread ended without an answer",
        );
        let host = async move {
            host.await
                .map(|_| ())
                .map_err(|e| ModelError::new(e.message))
        };
        receiver.run(host, deltas).await
    }
}

#[async_trait]
impl ModelClient for RbModel {
    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        _cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        let Some(generate) = self.generate else {
            // A client with only `stream`: read the stream without reporting its deltas.
            let stream = self.stream.expect("a client has generate or stream");
            return Self::call_stream(stream, request, &NoDeltas).await;
        };
        let request = request.to_value();
        let v = generate
            .call_within(
                Box::new(move |ruby, array| array.push(to_ruby(ruby, &request))),
                WRAPPED_DEPTH,
                "model response",
            )
            .await
            .map_err(|e| ModelError::new(e.message))?;
        ModelResponse::from_script_entry(&v).map_err(ModelError::new)?
    }

    async fn stream(
        &self,
        request: &ModelRequest<'_>,
        cancel: &CancellationToken,
        deltas: &dyn DeltaSink,
    ) -> Result<ModelResponse, ModelError> {
        match self.stream {
            Some(stream) => Self::call_stream(stream, request, deltas).await,
            None => self.generate(request, cancel).await,
        }
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
