//! `PhaseoMcpServer`: the application's tools (or one agent) served as an MCP server
//! (docs/behaviour.md §19). The core reads the options and runs the server; the tools'
//! functions are the host's callbacks, as in a run.

use std::ffi::c_char;
use std::sync::Arc;

use phaseo_agent::mcp_server::{serve_mcp, McpToolServer};

use crate::adapters::HostListener;
use crate::client::PhaseoClient;
use crate::error::{guard, read_str, write_out, CError, PhaseoStatus};
use crate::host::{callbacks, Host, PhaseoHost};

/// A running MCP server. Thread-safe. Freeing it stops the server.
pub struct PhaseoMcpServer {
    server: Arc<McpToolServer>,
    // Kept while the server runs: its tools' callbacks and events go to this host.
    _host: Arc<Host>,
}

unsafe fn server_ref<'a>(server: *const PhaseoMcpServer) -> Result<&'a PhaseoMcpServer, CError> {
    server
        .as_ref()
        .ok_or_else(|| CError::argument("the MCP server handle is NULL"))
}

/// Blocking waits block a host thread, never a core one.
fn refuse_core_thread(what: &str) -> Result<(), CError> {
    match tokio::runtime::Handle::try_current() {
        Ok(_) => Err(CError::argument(format!(
            "{what} was called from a callback (a core thread); call it elsewhere"
        ))),
        Err(_) => Ok(()),
    }
}

/// Starts an MCP server. `options_json` is `{"tools" | "agent", "name", "version"?,
/// "description"?, "transport"?, "toolExecution"?}` (tools as in an agent definition,
/// functions as `{"$callback": id}` served by `host.invoke`; `agent` an agent definition
/// served as one tool; `transport` `"stdio"` (default), `"http"` or `{"type": "http",
/// "host"?, "port"?, "path"?, "authToken"?, "allowedOrigins"?, "allowedHosts"?}`).
/// `client` (may be NULL) is the model client a served agent runs on. `host.on_event`
/// receives the `tool.*` events of every call. On success `*out_server` must be freed with
/// `phaseo_mcp_server_free`; `host.release` runs once the server is freed and stopped.
#[no_mangle]
pub unsafe extern "C" fn phaseo_serve_mcp(
    options_json: *const c_char,
    client: *const PhaseoClient,
    host: PhaseoHost,
    out_server: *mut *mut PhaseoMcpServer,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    let host = Host::new(host);
    guard(out_error, || {
        if out_server.is_null() {
            return Err(CError::argument("out_server is NULL"));
        }
        let text = read_str(options_json, "options_json")?;
        let (tools, mut options) = phaseo_agent::spec::serve_options_text(&callbacks(&host), text)?;
        if let Some(c) = client.as_ref() {
            options = options.client(c.client.clone());
        }
        if host.has_listener() {
            options = options.on_event(Arc::new(HostListener(host.clone())));
        }
        let runtime = phaseo_agent::exec::runtime();
        // Binding a port and spawning the server need the core's runtime; `block_on` would
        // panic on a core thread.
        let server = match tokio::runtime::Handle::try_current() {
            Ok(_) => {
                let (tx, rx) = std::sync::mpsc::channel();
                runtime.spawn(async move {
                    let _ = tx.send(serve_mcp(tools, options).await);
                });
                rx.recv()
                    .map_err(|_| CError::argument("the MCP server did not start"))??
            }
            Err(_) => runtime.block_on(serve_mcp(tools, options))?,
        };
        *out_server = Box::into_raw(Box::new(PhaseoMcpServer {
            server: Arc::new(server),
            _host: host.clone(),
        }));
        Ok(PhaseoStatus::Ok)
    })
}

/// The server's URL (`http://host:port/path`) as a new string to free with
/// `phaseo_string_free`; NULL on stdio or for a NULL handle.
#[no_mangle]
pub unsafe extern "C" fn phaseo_mcp_server_url(server: *const PhaseoMcpServer) -> *mut c_char {
    let mut out = std::ptr::null_mut();
    if let Some(url) = server.as_ref().and_then(|s| s.server.url()) {
        write_out(&mut out, url.to_owned());
    }
    out
}

/// Whether the server has stopped (true for a NULL handle).
#[no_mangle]
pub unsafe extern "C" fn phaseo_mcp_server_is_closed(server: *const PhaseoMcpServer) -> bool {
    server.as_ref().is_none_or(|s| s.server.is_closed())
}

/// Waits until the server stops (end of input on stdio, or a close). Blocks: never call it
/// from a callback.
#[no_mangle]
pub unsafe extern "C" fn phaseo_mcp_server_wait(
    server: *const PhaseoMcpServer,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let server = server_ref(server)?;
        refuse_core_thread("phaseo_mcp_server_wait")?;
        phaseo_agent::exec::runtime().block_on(server.server.wait());
        Ok(PhaseoStatus::Ok)
    })
}

/// Stops the server without waiting: no new request is accepted and calls in flight are
/// cancelled. Any thread; a NULL handle is ignored.
#[no_mangle]
pub unsafe extern "C" fn phaseo_mcp_server_close(server: *const PhaseoMcpServer) {
    if let Some(server) = server.as_ref() {
        server.server.close_now();
    }
}

/// Stops the server and frees its handle. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn phaseo_mcp_server_free(server: *mut PhaseoMcpServer) {
    if !server.is_null() {
        let server = Box::from_raw(server);
        server.server.close_now();
    }
}
