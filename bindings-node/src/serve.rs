//! `serveMcp`: the application's tools served as an MCP server (docs/behaviour.md §19).
//! The core reads the options (`phaseo_agent::spec::serve_options`) and runs the server;
//! the tools' functions are called through the bridge like a run's.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use phaseo_agent::mcp_server::{serve_mcp as core_serve, McpToolServer};
use phaseo_agent::Value;

use crate::agent::{client, ClientSpec, NativeModelClient};
use crate::errors::{no_panic, to_napi};
use crate::spec::{spec_value, JS_CALLBACKS};

/// A running MCP server (see `serveMcp`).
#[napi]
pub struct NativeMcpToolServer {
    server: Arc<McpToolServer>,
}

#[napi]
impl NativeMcpToolServer {
    /// `http://host:port/path` of a Streamable HTTP server; null on stdio.
    #[napi(getter)]
    pub fn url(&self) -> Option<String> {
        self.server.url().map(str::to_owned)
    }

    /// Whether the server has stopped.
    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.server.is_closed()
    }

    /// Stops the server (calls in flight are cancelled); resolves once it has stopped.
    #[napi]
    pub async fn close(&self) -> napi::Result<()> {
        self.server.close().await;
        Ok(())
    }

    /// Resolves when the server stops (end of input on stdio, or `close()`).
    #[napi]
    pub async fn wait(&self) -> napi::Result<()> {
        self.server.wait().await;
        Ok(())
    }
}

/// Starts a server from its options in the core's form `{tools | agent, name, version,
/// description, transport, toolExecution}` (throws `AgentDefinitionError` data when
/// invalid); `client_spec` (with `native_client` for a built-in one) is the model client a
/// served agent runs on.
#[napi(js_name = "serveMcp", ts_return_type = "Promise<NativeMcpToolServer>")]
pub fn serve_mcp<'env>(
    env: &'env Env,
    spec: Value,
    client_spec: Option<ClientSpec>,
    native_client: Option<&NativeModelClient>,
) -> napi::Result<PromiseRaw<'env, NativeMcpToolServer>> {
    no_panic(|| {
        let (tools, mut options) =
            phaseo_agent::spec::serve_options(&JS_CALLBACKS, spec_value(spec)?).map_err(to_napi)?;
        if let Some(c) = client_spec {
            options = options.client(client(&c, native_client)?);
        }
        env.spawn_future(async move {
            let server = core_serve(tools, options).await.map_err(to_napi)?;
            Ok(NativeMcpToolServer {
                server: Arc::new(server),
            })
        })
    })
}
