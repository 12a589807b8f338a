//! PHP binding of the Phaseo Agent SDK: the native extension `phaseo_agent`, a small
//! low-level API of `phaseo_*` functions (declared in `php/phaseo_agent.stub.php`). The
//! public API is the PHP layer (`php/src`, namespace `Phaseo\AgentSdk`); this crate only
//! turns definitions (JSON text) into core values, adapts PHP callables (see [`host`]: one
//! queue the PHP thread pumps) and converts values. Errors are thrown as `\Exception`s
//! whose message is the error's JSON (see [`error`]).
//!
//! Values cross only as JSON text: the PHP layer writes them (refusing, before PHP's own
//! recursive `json_encode` runs, a value nested too deep or holding a cycle) and this
//! crate reads them with the core's [`phaseo_agent::parse_json_text`], which scans the
//! nesting first, so no PHP value is walked here and no text can nest the reader deeper than
//! the core's 64 levels. Text a host gives (a state, a run id, an exception's message) is
//! taken as bytes: PHP strings need not be UTF-8, and a refused conversion would surface as
//! PHP's `TypeError` instead of the SDK's error.
#![cfg_attr(windows, feature(abi_vectorcall))]

mod adapters;
mod client;
mod drive;
mod error;
mod handles;
mod host;
mod run;
mod store;
mod tracing;

use std::time::Duration;

use ext_php_rs::binary::Binary;
use ext_php_rs::prelude::*;

use crate::error::NativeError;
use crate::handles::{AGENTS, CLIENTS, SCHEMAS, SERVERS, STORES};

#[global_allocator]
static GLOBAL: phaseo_agent::allocator::MiMalloc = phaseo_agent::allocator::MiMalloc;

/// Creates an agent from its definition's JSON text (callables as `{"$callback": id}`).
#[php_function]
pub fn phaseo_agent_new(definition: String, store: i64) -> PhpResult<i64> {
    let host = std::sync::Arc::new(host::Host);
    let mut def = phaseo_agent::spec::agent_definition_text(&host::callbacks(&host), &definition)
        .map_err(NativeError::from)?;
    if store != 0 {
        def = def.store(STORES.get(store)?);
    }
    let agent = phaseo_agent::create_agent(def).map_err(NativeError::from)?;
    Ok(AGENTS.insert(agent))
}

/// Frees an agent handle (runs in flight keep what they use).
#[php_function]
pub fn phaseo_agent_free(agent: i64) {
    AGENTS.remove(agent);
}

/// Starts a run (`mode`: run, continue, recover, stream, continueStream); its handle.
#[php_function]
#[allow(clippy::too_many_arguments)]
pub fn phaseo_run_start(
    mode: String,
    agent: i64,
    options: Option<String>,
    state: Option<Binary<u8>>,
    run_id: Option<Binary<u8>>,
    client: i64,
    store: i64,
    events: bool,
) -> PhpResult<i64> {
    let state = state.map(|bytes| state_text(bytes.into()));
    let run_id = run_id.map(|bytes| lossy(bytes.into()));
    Ok(run::start(run::Start {
        mode: &mode,
        agent,
        options: options.as_deref(),
        state,
        run_id: run_id.as_deref(),
        client,
        store,
        events,
    })?)
}

/// Cancels a run.
/// The identity of a PHP array's storage (0 for any other value): two arrays with the same
/// identity share one hash table, so an array whose own storage is found again inside it
/// holds itself (a cycle through a reference no variable holds any more).
#[php_function]
pub fn phaseo_array_id(value: &ext_php_rs::types::Zval) -> i64 {
    value
        .array()
        .map(|table| table as *const ext_php_rs::types::ZendHashTable as i64)
        .unwrap_or(0)
}

#[php_function]
pub fn phaseo_run_cancel(run: i64) {
    run::cancel(run);
}

/// The state of a run that ended (its `done` message said so), taken once.
#[php_function]
pub fn phaseo_run_state(run: i64) -> PhpResult<String> {
    run::take_state(run).ok_or_else(|| {
        NativeError::argument(format!(
            "run {run} has no state to take (not ended, or taken)"
        ))
        .into()
    })
}

/// Lets go of the state of a run that ended whose text was not taken (a result that was
/// never read whole); nothing for a run that has none.
#[php_function]
pub fn phaseo_run_state_free(run: i64) {
    run::drop_state(run);
}

/// The next message for the PHP thread (JSON text), waiting up to `wait_ms`; null if none.
#[php_function]
pub fn phaseo_poll(wait_ms: i64) -> Option<String> {
    host::poll(Duration::from_millis(wait_ms.max(0) as u64))
}

/// Answers a call: `value` (JSON text) or `error` (a message, any bytes: what a PHP
/// exception says need not be UTF-8); `invalid` says the value could not be converted (the
/// message says why).
#[php_function]
pub fn phaseo_respond(call: i64, value: Option<String>, error: Option<Binary<u8>>, invalid: bool) {
    let error = error.map(|bytes| lossy(bytes.into()));
    let answer = match (value, error) {
        (_, Some(message)) if invalid => host::Answer::Invalid(message),
        (_, Some(message)) => host::Answer::Thrown(message),
        (Some(text), None) => match phaseo_agent::parse_json_text(&text) {
            Ok(v) => host::Answer::Value(v),
            Err(e) => host::Answer::Invalid(e.to_string()),
        },
        (None, None) => host::Answer::Value(phaseo_agent::Value::Null),
    };
    host::respond(call as u64, answer);
}

/// Whether the core stopped waiting for a call (timeout, cancellation).
#[php_function]
pub fn phaseo_call_cancelled(call: i64) -> bool {
    host::is_cancelled(call as u64)
}

/// Emits a progress value (JSON text; `invalid` = the message of a value PHP could not
/// convert) of an executor call.
#[php_function]
pub fn phaseo_call_progress(call: i64, value: Binary<u8>, invalid: bool) -> PhpResult<()> {
    let value = lossy(value.into());
    host::with_runtime(call as u64, |rt| {
        if invalid {
            return rt.reject_progress(value);
        }
        match phaseo_agent::parse_json_text(&value) {
            Ok(v) => rt.emit_progress(v),
            Err(e) => rt.reject_progress(e.to_string()),
        }
    })
    .ok_or_else(|| NativeError::argument("the call is not a running tool call"))?;
    Ok(())
}

/// Replaces the application context (JSON text) from an executor call.
#[php_function]
pub fn phaseo_call_set_context(call: i64, value: String) -> PhpResult<()> {
    let value = phaseo_agent::parse_json_text(&value)
        .map_err(|e| NativeError::argument(format!("the context is not valid JSON: {e}")))?;
    host::with_runtime(call as u64, |rt| rt.set_context(value))
        .ok_or_else(|| NativeError::argument("the call is not a running tool call"))?
        .map_err(|e| NativeError::argument(e.to_string()))?;
    Ok(())
}

/// A scripted client over entries (JSON array), skipping the first `used`.
#[php_function]
pub fn phaseo_client_scripted(entries: String, used: i64) -> PhpResult<i64> {
    Ok(client::scripted(&entries, used.max(0) as usize)?)
}

/// How many scripted entries a scripted client consumed.
#[php_function]
pub fn phaseo_client_cursor(client: i64) -> i64 {
    client::cursor(client) as i64
}

/// The test client (echoes).
#[php_function]
pub fn phaseo_client_test() -> i64 {
    client::test()
}

/// An HTTP client: `kind` gateway or openai-compatible, options JSON.
#[php_function]
pub fn phaseo_client_http(kind: String, options: Option<String>) -> PhpResult<i64> {
    Ok(client::http(&kind, options.as_deref())?)
}

/// A client whose `generate(request)` is the PHP callable `callback` and, when `stream` is
/// not 0, whose `stream(request)` (used when the run is streamed) is that callable.
#[php_function]
pub fn phaseo_client_host(callback: i64, stream: i64) -> i64 {
    client::host(callback as u64, stream.max(0) as u64)
}

/// Passes one event (JSON) a PHP model client's `stream` yielded; throws with what is
/// wrong with it, or when the attempt is over.
#[php_function]
pub fn phaseo_call_stream(call: i64, event: String) -> PhpResult<()> {
    let event = phaseo_agent::parse_json_text(&event)
        .map_err(|e| NativeError::argument(format!("the stream event is not valid JSON: {e}")))?;
    host::stream_event(call as u64, &event).map_err(NativeError::argument)?;
    Ok(())
}

/// Starts an MCP server from its options' JSON text (docs/behaviour.md §19; callables as
/// `{"$callback": id}`); `client` (0: none) is the model client a served agent runs on.
/// The tools' calls reach PHP through the queue, served while PHP waits on the server.
#[php_function]
pub fn phaseo_mcp_serve(options: String, client: i64) -> PhpResult<i64> {
    let host = std::sync::Arc::new(host::Host);
    let (tools, mut opts) =
        phaseo_agent::spec::serve_options_text(&host::callbacks(&host), &options)
            .map_err(NativeError::from)?;
    if client != 0 {
        opts = opts.client(CLIENTS.get(client)?.client);
    }
    let server = phaseo_agent::exec::runtime()
        .block_on(phaseo_agent::mcp_server::serve_mcp(tools, opts))
        .map_err(NativeError::from)?;
    Ok(SERVERS.insert(std::sync::Arc::new(server)))
}

/// A served MCP server's URL (null on stdio).
#[php_function]
pub fn phaseo_mcp_server_url(server: i64) -> PhpResult<Option<String>> {
    Ok(SERVERS.get(server)?.url().map(str::to_owned))
}

/// Whether a served MCP server has stopped.
#[php_function]
pub fn phaseo_mcp_server_closed(server: i64) -> PhpResult<bool> {
    Ok(SERVERS.get(server)?.is_closed())
}

/// Stops a served MCP server (calls in flight are cancelled).
#[php_function]
pub fn phaseo_mcp_server_close(server: i64) {
    if let Ok(s) = SERVERS.get(server) {
        s.close_now();
    }
}

/// Stops a served MCP server and forgets its handle.
#[php_function]
pub fn phaseo_mcp_server_free(server: i64) {
    phaseo_mcp_server_close(server);
    SERVERS.remove(server);
}

/// Frees a client handle.
#[php_function]
pub fn phaseo_client_free(client: i64) {
    CLIENTS.remove(client);
}

/// A run store: `kind` memory, sqlite (`target` = path) or postgres (`target` = URL).
#[php_function]
pub fn phaseo_store_new(kind: String, target: Option<String>) -> PhpResult<i64> {
    Ok(store::open(&kind, target.as_deref())?)
}

/// A store over PHP's `load(runId)` / `save(runId, stateJson)` callables (registry ids).
#[php_function]
pub fn phaseo_store_accessor(load: i64, save: i64) -> i64 {
    store::accessor(load as u64, save as u64)
}

/// A stored run's row (JSON text) or null (also for an id that is not UTF-8: no run has one).
#[php_function]
pub fn phaseo_store_load(store: i64, run_id: Binary<u8>) -> PhpResult<Option<String>> {
    match String::from_utf8(run_id.into()) {
        Ok(run_id) => Ok(store::load(store, run_id)?),
        Err(_) => Ok(None),
    }
}

/// A page of stored runs (query JSON: statuses, agentId, limit, cursor).
#[php_function]
pub fn phaseo_store_list(store: i64, query: Option<String>) -> PhpResult<String> {
    Ok(store::list(store, query.as_deref())?)
}

/// Deletes a stored run; whether it existed (never for an id that is not UTF-8).
#[php_function]
pub fn phaseo_store_delete(store: i64, run_id: Binary<u8>) -> PhpResult<bool> {
    match String::from_utf8(run_id.into()) {
        Ok(run_id) => Ok(store::delete(store, run_id)?),
        Err(_) => Ok(false),
    }
}

/// Deletes the stored runs of `statuses` last updated before `older_than_ms` (ms since the
/// epoch); how many.
#[php_function]
pub fn phaseo_store_prune(store: i64, statuses: Vec<String>, older_than_ms: i64) -> PhpResult<i64> {
    let count = store::prune(store, statuses, older_than_ms)?;
    Ok(i64::try_from(count).unwrap_or(i64::MAX))
}

/// Frees a store handle.
#[php_function]
pub fn phaseo_store_free(store: i64) {
    STORES.remove(store);
}

/// Compiles a JSON Schema (JSON text) for the validator helper.
#[php_function]
pub fn phaseo_schema_new(schema: String) -> PhpResult<i64> {
    let value = phaseo_agent::parse_json_text(&schema)
        .map_err(|e| NativeError::definition(format!("Invalid JSON Schema: {e}")))?;
    let compiled = phaseo_agent::JsonSchema::compile(&value)
        .map_err(|e| NativeError::definition(format!("Invalid JSON Schema: {e}")))?;
    Ok(SCHEMAS.insert(std::sync::Arc::new(compiled)))
}

/// Checks a value (JSON text) against a compiled schema: null when valid, else the
/// core's message.
#[php_function]
pub fn phaseo_schema_check(schema: i64, value: String) -> PhpResult<Option<String>> {
    let schema = SCHEMAS.get(schema)?;
    let value = phaseo_agent::parse_json_text(&value)
        .map_err(|e| NativeError::argument(format!("the value is not valid JSON: {e}")))?;
    Ok(schema.check(&value).err())
}

/// The strict form of a JSON Schema (JSON text in, JSON text out; the core's `make_strict`,
/// docs/behaviour.md §20): every object closed, every property required, optional ones
/// nullable.
#[php_function]
pub fn phaseo_schema_strict(schema: String) -> PhpResult<String> {
    let value = phaseo_agent::parse_json_text(&schema)
        .map_err(|e| NativeError::argument(format!("the schema is not valid JSON: {e}")))?;
    Ok(phaseo_agent::make_strict(&value).to_string())
}

/// Frees a schema handle.
#[php_function]
pub fn phaseo_schema_free(schema: i64) {
    SCHEMAS.remove(schema);
}

/// A state's canonical JSON text (throws `state_invalid` when it cannot be read, also when
/// the text is not UTF-8).
#[php_function]
pub fn phaseo_state_canonical(state: Binary<u8>) -> PhpResult<String> {
    let state = state_text(state.into()).map_err(NativeError::from)?;
    Ok(phaseo_agent::RunResult::from_json(&state)
        .map_err(NativeError::from)?
        .to_json())
}

/// A state's text: JSON is UTF-8, so other bytes are an invalid state (`state_invalid`).
fn state_text(bytes: Vec<u8>) -> Result<String, phaseo_agent::AgentError> {
    String::from_utf8(bytes).map_err(|e| {
        phaseo_agent::AgentError::state_invalid(format!(
            "Invalid state: text is not valid UTF-8 ({})",
            e.utf8_error()
        ))
    })
}

/// Host text as UTF-8, any byte that is not replaced by U+FFFD (a message must always arrive).
fn lossy(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// The SDK's version.
#[php_function]
pub fn phaseo_version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}

/// Turns tracing on (`{endpoint?, headers?, serviceName?, captureContent?}`; throws
/// `definition_invalid` naming a bad option).
#[php_function]
pub fn phaseo_tracing_enable(options: String) -> PhpResult<()> {
    Ok(tracing::enable(&options)?)
}

/// Exports every span ended so far and waits for the collector: null, or why it failed.
#[php_function]
pub fn phaseo_tracing_flush() -> Option<String> {
    phaseo_agent::telemetry::flush().err()
}

/// Exports what is left and turns tracing off: null, or why the export failed.
#[php_function]
pub fn phaseo_tracing_shutdown() -> Option<String> {
    phaseo_agent::telemetry::shutdown().err()
}

/// Whether tracing is on.
#[php_function]
pub fn phaseo_tracing_enabled() -> bool {
    phaseo_agent::telemetry::is_enabled()
}

/// Ends the process the way an unhandled Ctrl-C does: SIGINT at its default, sent to the
/// process (what `posix_kill` would do; the posix extension is not always loaded). Returns
/// only where there is no such signal.
#[php_function]
pub fn phaseo_interrupt() {
    #[cfg(unix)]
    // SAFETY: plain libc calls with valid constants; resetting SIGINT to its default and
    // signalling our own process is what an application's Ctrl-C handler may always do.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::kill(libc::getpid(), libc::SIGINT);
    }
}

/// Registers the extension's functions with PHP.
#[php_module]
pub fn module(module: ModuleBuilder) -> ModuleBuilder {
    module
        .name("phaseo_agent")
        .function(wrap_function!(phaseo_agent_new))
        .function(wrap_function!(phaseo_agent_free))
        .function(wrap_function!(phaseo_run_start))
        .function(wrap_function!(phaseo_run_cancel))
        .function(wrap_function!(phaseo_run_state))
        .function(wrap_function!(phaseo_run_state_free))
        .function(wrap_function!(phaseo_array_id))
        .function(wrap_function!(phaseo_poll))
        .function(wrap_function!(phaseo_respond))
        .function(wrap_function!(phaseo_call_cancelled))
        .function(wrap_function!(phaseo_call_progress))
        .function(wrap_function!(phaseo_call_set_context))
        .function(wrap_function!(phaseo_client_scripted))
        .function(wrap_function!(phaseo_client_cursor))
        .function(wrap_function!(phaseo_client_test))
        .function(wrap_function!(phaseo_client_http))
        .function(wrap_function!(phaseo_client_host))
        .function(wrap_function!(phaseo_call_stream))
        .function(wrap_function!(phaseo_client_free))
        .function(wrap_function!(phaseo_mcp_serve))
        .function(wrap_function!(phaseo_mcp_server_url))
        .function(wrap_function!(phaseo_mcp_server_closed))
        .function(wrap_function!(phaseo_mcp_server_close))
        .function(wrap_function!(phaseo_mcp_server_free))
        .function(wrap_function!(phaseo_store_new))
        .function(wrap_function!(phaseo_store_accessor))
        .function(wrap_function!(phaseo_store_load))
        .function(wrap_function!(phaseo_store_list))
        .function(wrap_function!(phaseo_store_delete))
        .function(wrap_function!(phaseo_store_prune))
        .function(wrap_function!(phaseo_store_free))
        .function(wrap_function!(phaseo_schema_new))
        .function(wrap_function!(phaseo_schema_check))
        .function(wrap_function!(phaseo_schema_strict))
        .function(wrap_function!(phaseo_schema_free))
        .function(wrap_function!(phaseo_state_canonical))
        .function(wrap_function!(phaseo_version))
        .function(wrap_function!(phaseo_tracing_enable))
        .function(wrap_function!(phaseo_tracing_flush))
        .function(wrap_function!(phaseo_tracing_shutdown))
        .function(wrap_function!(phaseo_tracing_enabled))
        .function(wrap_function!(phaseo_interrupt))
}
