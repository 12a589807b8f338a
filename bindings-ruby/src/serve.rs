//! `PhaseoAgentSdk::Native::McpToolServer`: the application's tools (or one agent) served
//! as an MCP server (docs/behaviour.md §19). The core reads the options (`phaseo_agent::spec::serve_options`)
//! and runs the server; the tools' callables are called through the bridge like a run's,
//! so a Ruby thread must serve the queue while the server runs (`serve`, see [`crate::host`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use magnus::{Error, Module, Object, Ruby, Value as RValue};
use phaseo_agent::mcp_server::{serve_mcp as core_serve, McpToolServer};

use crate::agent::{client, raise, NativeHttpClient};
use crate::convert::{to_json_within, WRAPPED_DEPTH};
use crate::host::{serve_until, wake_all, Waitable};
use crate::spec::{ruby_names, RB_CALLBACKS};

/// A running MCP server.
#[magnus::wrap(
    class = "PhaseoAgentSdk::Native::McpToolServer",
    free_immediately,
    size
)]
pub struct NativeMcpServer(Arc<McpToolServer>);

/// Ready once the server stopped or the wait's deadline passed.
struct Stopped<'a> {
    server: &'a McpToolServer,
    deadline: Option<Instant>,
}

impl Waitable for Stopped<'_> {
    fn ready(&self) -> bool {
        self.server.is_closed() || self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

impl NativeMcpServer {
    /// Starts a server from its options in the core's form `{tools | agent, name, version,
    /// description, transport, toolExecution}`; raises the core's definition error when
    /// invalid. The model client a served agent runs on is `http`, else `model` (its native
    /// description, nil for none).
    fn start(
        ruby: &Ruby,
        spec: RValue,
        model: RValue,
        http: Option<&NativeHttpClient>,
    ) -> Result<Self, Error> {
        let spec = to_json_within(ruby, spec, "MCP server options", WRAPPED_DEPTH)?;
        let model = to_json_within(ruby, model, "client", WRAPPED_DEPTH)?;
        let (tools, mut options) = phaseo_agent::spec::serve_options(&RB_CALLBACKS, spec)
            .map_err(|e| raise(ruby, ruby_names(e)))?;
        if let Some(h) = http {
            options = options.client(h.0.clone());
        } else if !model.is_null() {
            options = options.client(client(&model).map_err(|e| raise(ruby, e))?.client);
        }
        let runtime = phaseo_agent::exec::runtime();
        let server = Arc::new(
            runtime
                .block_on(core_serve(tools, options))
                .map_err(|e| raise(ruby, ruby_names(e)))?,
        );
        // The serving thread waits on the wake pipe: wake it when the server stops.
        let watched = server.clone();
        runtime.spawn(async move {
            watched.wait().await;
            wake_all();
        });
        Ok(Self(server))
    }

    /// `http://host:port/path` of a Streamable HTTP server; nil on stdio.
    fn url(&self) -> Option<String> {
        self.0.url().map(str::to_owned)
    }

    /// Whether the server has stopped.
    fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    /// Runs the tools' calls on this thread until the server stops or `timeout` seconds
    /// (nil: no limit) pass; returns whether it stopped. An interrupt of this thread stops
    /// the server and is raised.
    fn serve(ruby: &Ruby, rb_self: &Self, timeout: Option<f64>) -> Result<bool, Error> {
        let deadline = phaseo_agent::duration::deadline_in_secs(timeout);
        let server = &rb_self.0;
        serve_until(
            ruby,
            &Stopped { server, deadline },
            &|| server.close_now(),
            Duration::from_millis(500),
        )?;
        Ok(server.is_closed())
    }

    /// Stops the server (calls in flight are cancelled) and serves their ends until it has
    /// stopped.
    fn close(ruby: &Ruby, rb_self: &Self) -> Result<(), Error> {
        rb_self.0.close_now();
        Self::serve(ruby, rb_self, None).map(|_| ())
    }
}

/// Defines `Native::McpToolServer`.
pub fn init(ruby: &Ruby, module: magnus::RModule) -> Result<(), Error> {
    use magnus::{function, method};
    let native = module.define_module("Native")?;
    let server = native.define_class("McpToolServer", ruby.class_object())?;
    server.define_singleton_method("start", function!(NativeMcpServer::start, 3))?;
    server.define_method("url", method!(NativeMcpServer::url, 0))?;
    server.define_method("closed?", method!(NativeMcpServer::is_closed, 0))?;
    server.define_method("serve", method!(NativeMcpServer::serve, 1))?;
    server.define_method("close", method!(NativeMcpServer::close, 0))?;
    Ok(())
}
