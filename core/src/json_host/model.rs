//! Host model clients: a `generate` host function, a `stream` one, or both.

use async_trait::async_trait;

use super::{CallKind, JsonArgs, JsonHostFn};
use crate::{
    host_stream, CancellationToken, DeltaSink, ModelClient, ModelError, ModelRequest, ModelResponse,
};

/// A model client whose `generate(request)` answers a response object.
pub struct JsonModel<H>(pub H);

/// Calls `generate` and reads its answer as a response.
async fn generate_with<H: JsonHostFn>(
    generate: &H,
    request: &ModelRequest<'_>,
) -> Result<ModelResponse, ModelError> {
    // Dropping this future (cancellation) cancels the call's token, which the host sees.
    let args = JsonArgs::List(vec![request.to_value()]);
    let v = generate
        .call(CallKind::Generate, args, None)
        .await
        .map_err(|e| ModelError::new(e.message))?;
    ModelResponse::from_script_entry(&v).map_err(ModelError::new)?
}

#[async_trait]
impl<H: JsonHostFn> ModelClient for JsonModel<H> {
    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        _cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        generate_with(&self.0, request).await
    }
}

/// A model client with a `generate` host function, a `stream` one, or both (SPEC §8). A
/// streamed run hears the `stream` call's events live; a run that is not streamed uses
/// `generate`, or drains `stream` without deltas; with only `generate`, streamed runs get
/// no deltas.
pub struct JsonStreamingModel<H> {
    /// `generate(request)`.
    pub generate: Option<H>,
    /// `stream(request)`.
    pub stream: Option<H>,
}

/// Ignores deltas (a stream-only client drained for a run that is not streamed).
struct NoDeltas;

impl DeltaSink for NoDeltas {
    fn text_delta(&self, _delta: &str) {}
    fn reasoning_delta(&self, _delta: &str) {}
}

#[async_trait]
impl<H: JsonHostFn> ModelClient for JsonStreamingModel<H> {
    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        match &self.generate {
            Some(generate) => generate_with(generate, request).await,
            None => self.stream(request, cancel, &NoDeltas).await,
        }
    }

    async fn stream(
        &self,
        request: &ModelRequest<'_>,
        cancel: &CancellationToken,
        deltas: &dyn DeltaSink,
    ) -> Result<ModelResponse, ModelError> {
        let Some(stream) = &self.stream else {
            return self.generate(request, cancel).await;
        };
        let (events, receiver) = host_stream();
        let args = JsonArgs::List(vec![request.to_value()]);
        let host = async move {
            stream
                .call_streaming(args, events)
                .await
                .map(drop)
                .map_err(|e| ModelError::new(e.message))
        };
        receiver.run(host, deltas).await
    }
}
