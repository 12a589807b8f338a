//! Host model clients that stream (docs/behaviour.md §8): a `generate` callback, a `stream` callback, or
//! both. A streamed run hears a `Stream` call's events live (`phaseo_call_stream_event`);
//! a run that is not streamed uses `generate`, or drains `stream` without deltas (the
//! core's [`phaseo_agent::json_host::JsonStreamingModel`]).

use std::ffi::c_char;
use std::sync::Arc;

use phaseo_agent::json_host::JsonModelFunctions;

use crate::client::{out_client, PhaseoClient};
use crate::error::{guard, CError, PhaseoStatus};
use crate::host::{Host, HostFn, PhaseoHost};

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
            Arc::new(JsonModelFunctions { generate, stream }.into_client()),
            None,
        )
    })
}
