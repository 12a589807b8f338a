//! Host model clients (docs/behaviour.md §8): a host's client has a `generate(request)`
//! function, a `stream(request)` function, or both. The rule for which one a run calls is
//! written here once, for every binding: a streamed run calls `stream` (else `generate`,
//! with no deltas to report); a run that is not streamed calls `generate` (else drains
//! `stream` without reporting its deltas).

use async_trait::async_trait;

use crate::host_stream::{host_stream, HostStreamSender};
use crate::model::{DeltaSink, ModelClient, ModelError, ModelRequest, ModelResponse, NoDeltas};
use crate::CancellationToken;

/// How a binding reaches the two functions of a host's model client.
#[async_trait]
pub trait HostModelFunctions: Send + Sync {
    /// Whether the client has `generate(request)`.
    fn has_generate(&self) -> bool;

    /// Whether the client has `stream(request)`.
    fn has_stream(&self) -> bool;

    /// Calls `generate(request)` and reads its answer as a response; only called when
    /// [`has_generate`](Self::has_generate) is true.
    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError>;

    /// Calls `stream(request)`, passing each event the host yields to `events`, and
    /// returns when the host's stream ends; only called when
    /// [`has_stream`](Self::has_stream) is true.
    async fn stream(
        &self,
        request: &ModelRequest<'_>,
        cancel: &CancellationToken,
        events: HostStreamSender,
    ) -> Result<(), ModelError>;
}

/// The core's [`ModelClient`] over a host's model functions.
pub struct HostModel<F>(pub F);

impl<F: HostModelFunctions> HostModel<F> {
    /// Calls the host's `stream`, handing its events to `deltas` live; the last
    /// `response` event is the answer.
    async fn drain(
        &self,
        request: &ModelRequest<'_>,
        cancel: &CancellationToken,
        deltas: &dyn DeltaSink,
    ) -> Result<ModelResponse, ModelError> {
        let (events, receiver) = host_stream();
        receiver
            .run(self.0.stream(request, cancel, events), deltas)
            .await
    }
}

#[async_trait]
impl<F: HostModelFunctions> ModelClient for HostModel<F> {
    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        if self.0.has_generate() || !self.0.has_stream() {
            self.0.generate(request, cancel).await
        } else {
            self.drain(request, cancel, &NoDeltas).await
        }
    }

    async fn stream(
        &self,
        request: &ModelRequest<'_>,
        cancel: &CancellationToken,
        deltas: &dyn DeltaSink,
    ) -> Result<ModelResponse, ModelError> {
        if self.0.has_stream() {
            self.drain(request, cancel, deltas).await
        } else {
            self.0.generate(request, cancel).await
        }
    }
}
