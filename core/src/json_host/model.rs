//! Host model clients: a `generate` host function, a `stream` one, or both.

use async_trait::async_trait;

use super::{CallKind, JsonArgs, JsonHostFn};
use crate::host_model::{HostModel, HostModelFunctions};
use crate::{
    CancellationToken, HostStreamSender, ModelClient, ModelError, ModelRequest, ModelResponse,
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

/// The `generate` and `stream` host functions of a client (either may be absent); the
/// core's [`HostModel`] decides which one a run calls.
pub struct JsonModelFunctions<H> {
    /// `generate(request)`.
    pub generate: Option<H>,
    /// `stream(request)`.
    pub stream: Option<H>,
}

/// A model client with a `generate` host function, a `stream` one, or both.
pub type JsonStreamingModel<H> = HostModel<JsonModelFunctions<H>>;

impl<H: JsonHostFn> JsonModelFunctions<H> {
    /// The client over these functions.
    pub fn into_client(self) -> JsonStreamingModel<H> {
        HostModel(self)
    }
}

#[async_trait]
impl<H: JsonHostFn> HostModelFunctions for JsonModelFunctions<H> {
    fn has_generate(&self) -> bool {
        self.generate.is_some()
    }

    fn has_stream(&self) -> bool {
        self.stream.is_some()
    }

    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        _cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        match &self.generate {
            Some(generate) => generate_with(generate, request).await,
            None => Err(ModelError::new("the model client has no generate function")),
        }
    }

    async fn stream(
        &self,
        request: &ModelRequest<'_>,
        _cancel: &CancellationToken,
        events: HostStreamSender,
    ) -> Result<(), ModelError> {
        let Some(stream) = &self.stream else {
            return Err(ModelError::new("the model client has no stream function"));
        };
        let args = JsonArgs::List(vec![request.to_value()]);
        stream
            .call_streaming(args, events)
            .await
            .map(drop)
            .map_err(|e| ModelError::new(e.message))
    }
}
