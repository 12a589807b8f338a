//! `PhaseoStream`: a streamed run whose events the host pulls one at a time.

use std::ffi::c_char;
use std::sync::{Arc, Mutex};

use phaseo_agent::{AgentStream, CancellationToken, EventCursor};

use crate::agent::{agent_ref, continue_options, read_state, run_options, PhaseoAgent};
use crate::client::PhaseoClient;
use crate::error::{guard, read_str, write_out, CError, PhaseoStatus};
use crate::host::{Host, PhaseoHost};
use crate::store::PhaseoStore;

/// A streamed run. Freeing it does not cancel the run (use `phaseo_stream_cancel`).
pub struct PhaseoStream {
    stream: AgentStream,
    cursor: Mutex<EventCursor>,
    /// The run's host, held with the handle: its `user_data` is the run's tag, which the
    /// run's tool calls give back (`phaseo_call_run_user_data`).
    _host: Arc<Host>,
}

unsafe fn out_stream(
    out: *mut *mut PhaseoStream,
    stream: AgentStream,
    host: Arc<Host>,
) -> Result<PhaseoStatus, CError> {
    if out.is_null() {
        return Err(CError::argument("out_stream is NULL"));
    }
    let cursor = Mutex::new(stream.cursor());
    *out = Box::into_raw(Box::new(PhaseoStream {
        stream,
        cursor,
        _host: host,
    }));
    Ok(PhaseoStatus::Ok)
}

/// Starts a streamed run (arguments as `phaseo_agent_run`; `host.on_event` also receives
/// the events, `host.on_done` is not called; the stream handle holds the host until it is
/// freed).
#[no_mangle]
pub unsafe extern "C" fn phaseo_agent_stream(
    agent: *const PhaseoAgent,
    options_json: *const c_char,
    client: *const PhaseoClient,
    store: *const PhaseoStore,
    host: PhaseoHost,
    out_stream_ptr: *mut *mut PhaseoStream,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    let host = Host::new(host);
    guard(out_error, || {
        let agent = agent_ref(agent)?;
        let cancel = CancellationToken::new();
        let options = run_options(options_json, client, store, &host, &cancel)?;
        let _enter = phaseo_agent::exec::runtime().enter();
        out_stream(out_stream_ptr, agent.agent.stream(options), host.clone())
    })
}

/// Continues a paused run as a stream (arguments as `phaseo_agent_continue`).
#[no_mangle]
pub unsafe extern "C" fn phaseo_agent_continue_stream(
    agent: *const PhaseoAgent,
    state_json: *const c_char,
    run_id: *const c_char,
    options_json: *const c_char,
    client: *const PhaseoClient,
    store: *const PhaseoStore,
    host: PhaseoHost,
    out_stream_ptr: *mut *mut PhaseoStream,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    let host = Host::new(host);
    guard(out_error, || {
        let agent = agent_ref(agent)?;
        let cancel = CancellationToken::new();
        let options = continue_options(options_json, client, store, &host, &cancel)?;
        let _enter = phaseo_agent::exec::runtime().enter();
        let stream = match read_state(state_json)? {
            Some(state) => agent.agent.continue_stream(&state, options),
            None => {
                let id = read_str(run_id, "run_id (state_json is NULL)")?;
                agent.agent.continue_stream_by_id(id, options)
            }
        };
        out_stream(out_stream_ptr, stream, host.clone())
    })
}

unsafe fn stream_ref<'a>(stream: *const PhaseoStream) -> Result<&'a PhaseoStream, CError> {
    stream
        .as_ref()
        .ok_or_else(|| CError::argument("the stream handle is NULL"))
}

/// The next event's JSON text in `out_json` (`PHASEO_STATUS_OK`), or `PHASEO_STATUS_END`
/// once the run has ended (its result or error: `phaseo_stream_result`). Blocks.
#[no_mangle]
pub unsafe extern "C" fn phaseo_stream_next(
    stream: *const PhaseoStream,
    out_json: *mut *mut c_char,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let stream = stream_ref(stream)?;
        let mut cursor = stream
            .cursor
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match phaseo_agent::exec::block_on(cursor.next_event()) {
            Some(Ok(event)) => {
                write_out(out_json, event.to_json());
                Ok(PhaseoStatus::Ok)
            }
            Some(Err(_)) | None => Ok(PhaseoStatus::End),
        }
    })
}

/// Waits for the streamed run's result (as `phaseo_run_wait`). Blocks.
#[no_mangle]
pub unsafe extern "C" fn phaseo_stream_result(
    stream: *const PhaseoStream,
    out_json: *mut *mut c_char,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let stream = stream_ref(stream)?;
        let result = phaseo_agent::exec::block_on(stream.stream.result())?;
        write_out(out_json, result.to_json());
        Ok(PhaseoStatus::Ok)
    })
}

/// Cancels the streamed run (it ends `cancelled`). Any thread.
#[no_mangle]
pub unsafe extern "C" fn phaseo_stream_cancel(stream: *const PhaseoStream) {
    if let Some(s) = stream.as_ref() {
        s.stream.cancel(None);
    }
}

/// Frees a stream handle. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn phaseo_stream_free(stream: *mut PhaseoStream) {
    if !stream.is_null() {
        drop(Box::from_raw(stream));
    }
}
