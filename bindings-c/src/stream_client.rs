//! Host model clients that stream (SPEC §8): a `generate` callback, a `stream` callback, or
//! both. A streamed run hears a `Stream` call's events live (`phaseo_call_stream_event`);
//! a run that is not streamed uses `generate`, or drains `stream` without deltas.

use std::ffi::c_char;
use std::sync::Arc;

use phaseo_agent::{
    async_trait, host_stream, CancellationToken, DeltaSink, ModelClient, ModelError, ModelRequest,
    ModelResponse, Value,
};

use crate::client::{out_client, PhaseoClient};
use crate::error::{guard, CError, PhaseoStatus};
use crate::host::{Host, HostFn, PhaseoCallKind, PhaseoHost};

/// A host client with a `generate` callback, a `stream` callback, or both.
pub struct HostStreamingModel {
    generate: Option<HostFn>,
    stream: Option<HostFn>,
}

/// Ignores deltas (a stream-only client drained for a run that is not streamed).
struct NoDeltas;

impl DeltaSink for NoDeltas {
    fn text_delta(&self, _delta: &str) {}
    fn reasoning_delta(&self, _delta: &str) {}
}

#[async_trait]
impl ModelClient for HostStreamingModel {
    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        let Some(generate) = &self.generate else {
            return self.stream(request, cancel, &NoDeltas).await;
        };
        let args = Value::Array(vec![request.to_value()]);
        let v = generate
            .call(PhaseoCallKind::Generate, &args, None)
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
        let Some(stream) = &self.stream else {
            return self.generate(request, cancel).await;
        };
        let (events, receiver) = host_stream();
        let args = Value::Array(vec![request.to_value()]);
        let host = async move {
            stream
                .call_streaming(&args, events)
                .await
                .map(drop)
                .map_err(|e| ModelError::new(e.message))
        };
        receiver.run(host, deltas).await
    }
}

/// A host model client that may stream: `generate_callback` (0 = none) is called with a
/// `Generate` call per request of a run that is not streamed; `stream_callback` (0 =
/// none) with a `Stream` call, whose events the host passes to `phaseo_call_stream_event`
/// before completing the call with null. With only `stream`, runs that are not streamed
/// drain it; with only `generate`, streamed runs get no deltas. At least one is needed.
/// `host.release` runs when the client and every run using it are gone.
#[no_mangle]
pub unsafe extern "C" fn phaseo_client_host_stream(
    host: PhaseoHost,
    generate_callback: u64,
    stream_callback: u64,
    out_client_ptr: *mut *mut PhaseoClient,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    let host = Host::new(host);
    guard(out_error, || {
        let f = |id: u64| {
            (id != 0).then(|| HostFn {
                host: host.clone(),
                id,
            })
        };
        let (generate, stream) = (f(generate_callback), f(stream_callback));
        if generate.is_none() && stream.is_none() {
            return Err(CError::argument(
                "a host client needs a generate or a stream callback",
            ));
        }
        out_client(
            out_client_ptr,
            Arc::new(HostStreamingModel { generate, stream }),
            None,
        )
    })
}
