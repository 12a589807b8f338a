//! The application's tools served as an MCP server (docs/behaviour.md §19). The core runs
//! the server (listing, calls, validation, approval through elicitation, progress,
//! cancellation); this adapter only carries the options across and hands back the handle.

use std::sync::Arc;

use phaseo_agent as pa;
use phaseo_agent::mcp_server as served;

use crate::api::{on_core, Agent, Tool};
use crate::conversions::core_client;
use crate::defs::{Client, ToolExecution};
use crate::errors::PhaseoError;
use crate::traits::{EventListener, HostListener};

/// How a served MCP server is reached.
#[derive(uniffi::Enum)]
pub enum McpServeTransport {
    /// JSON-RPC over the process's standard input and output; the server stops at the end
    /// of input. Nothing else may write to standard output meanwhile.
    Stdio,
    /// Streamable HTTP on `http://{host}:{port}{path}`.
    Http {
        /// Interface to bind (null: `127.0.0.1`).
        host: Option<String>,
        /// Port to bind (null or 0: a free one; read it back from the server's `url`).
        port: Option<u16>,
        /// Path of the endpoint (null: `/mcp`).
        path: Option<String>,
        /// When set, every request must carry `Authorization: Bearer <token>` (else 401).
        auth_token: Option<String>,
        /// Browser origins allowed to call (empty: loopback origins only).
        allowed_origins: Vec<String>,
        /// Host names the `Host` header may name (empty: loopback names and `host`).
        allowed_hosts: Vec<String>,
    },
}

/// What a served MCP server is started with.
#[derive(uniffi::Record)]
pub struct McpServeOptions {
    /// The server's name, as clients show it.
    pub name: String,
    /// The server's version.
    #[uniffi(default = "0.0.0")]
    pub version: String,
    /// Stdio (null) or Streamable HTTP.
    #[uniffi(default)]
    pub transport: Option<McpServeTransport>,
    /// `toolConcurrency` and `maxToolCalls` of the served calls, counted over the server's
    /// lifetime; `onError` as in a run.
    #[uniffi(default)]
    pub tool_execution: Option<ToolExecution>,
    /// Receives the `tool.*` events of every served call.
    #[uniffi(default)]
    pub on_event: Option<Arc<dyn EventListener>>,
    /// The model client a served agent runs on (`serve_mcp_agent`; also agent tools among
    /// `tools` that have none of their own). Serving an agent without one is
    /// `definition_invalid`.
    #[uniffi(default)]
    pub client: Option<Client>,
    /// What clients are told the served agent does (`serve_mcp_agent` only).
    #[uniffi(default)]
    pub description: Option<String>,
}

impl TryFrom<McpServeOptions> for served::McpServeOptions {
    type Error = PhaseoError;

    fn try_from(o: McpServeOptions) -> Result<Self, PhaseoError> {
        let mut options = served::McpServeOptions::new(o.name).version(o.version);
        if let Some(McpServeTransport::Http {
            host,
            port,
            path,
            auth_token,
            allowed_origins,
            allowed_hosts,
        }) = o.transport
        {
            let d = served::McpHttpServeOptions::default();
            options = options.transport(served::McpServeTransport::Http(
                served::McpHttpServeOptions {
                    host: host.unwrap_or(d.host),
                    port: port.unwrap_or(d.port),
                    path: path.unwrap_or(d.path),
                    auth_token,
                    allowed_origins,
                    allowed_hosts,
                },
            ));
        }
        if let Some(t) = o.tool_execution {
            options = options.tool_execution(t.try_into()?);
        }
        if let Some(l) = o.on_event {
            options = options.on_event(Arc::new(HostListener(l)));
        }
        if let Some(c) = o.client {
            options = options.client(core_client(c));
        }
        Ok(options)
    }
}

/// The native handle of a running MCP server serving the application's tools (the Kotlin
/// layer's `McpToolServer` wraps it). It stops on `shutdown`/`close_now`, at the end of its
/// input (stdio), and with its process.
#[derive(uniffi::Object)]
pub struct McpServeHandle {
    server: Arc<served::McpToolServer>,
}

#[uniffi::export(async_runtime = "tokio")]
impl McpServeHandle {
    /// `http://host:port/path` of a Streamable HTTP server; null on stdio.
    pub fn url(&self) -> Option<String> {
        self.server.url().map(str::to_owned)
    }

    /// Whether the server has stopped.
    pub fn is_closed(&self) -> bool {
        self.server.is_closed()
    }

    /// Waits until the server stops (the client closed its input, or `shutdown`).
    pub async fn wait(&self) {
        let server = self.server.clone();
        let _ = on_core(
            pa::CancellationToken::new(),
            async move { server.wait().await },
        )
        .await;
    }

    /// Stops the server (calls in flight are cancelled) and waits until it has stopped.
    pub async fn shutdown(&self) {
        let server = self.server.clone();
        let _ = on_core(
            pa::CancellationToken::new(),
            async move { server.close().await },
        )
        .await;
    }

    /// Stops the server without waiting.
    pub fn close_now(&self) {
        self.server.close_now();
    }
}

/// Starts an MCP server exposing `tools` (docs/behaviour.md §19). An empty list, a tool
/// without an executor, duplicate ids and an address that cannot be bound are refused
/// with `definition_invalid`.
#[uniffi::export(async_runtime = "tokio")]
pub async fn serve_mcp(
    tools: Vec<Arc<Tool>>,
    options: McpServeOptions,
) -> Result<Arc<McpServeHandle>, PhaseoError> {
    if options.description.is_some() {
        return Err(pa::AgentError::definition_invalid(
            "Invalid MCP server options: description describes a served agent; give agent",
        )
        .into());
    }
    let tools = tools.iter().map(|t| t.tool.clone()).collect();
    let options = options.try_into()?;
    let server = on_core(pa::CancellationToken::new(), async move {
        served::serve_mcp(tools, options).await
    })
    .await??;
    Ok(Arc::new(McpServeHandle {
        server: Arc::new(server),
    }))
}

/// Starts an MCP server exposing `agent` as one tool (docs/behaviour.md §19, §18's
/// defaults: the agent's id, one string `input`, `options.description` the tool's): a call
/// runs the agent on `options.client` and returns its output; its approvals are asked of
/// the client through elicitation. Without a client, `definition_invalid`.
#[uniffi::export(async_runtime = "tokio")]
pub async fn serve_mcp_agent(
    agent: Arc<Agent>,
    options: McpServeOptions,
) -> Result<Arc<McpServeHandle>, PhaseoError> {
    let mut tool = pa::AsToolOptions::new();
    tool.description = options.description.clone();
    let agent = agent.core().clone();
    let options = options.try_into()?;
    let server = on_core(pa::CancellationToken::new(), async move {
        served::serve_agent(&agent, tool, options).await
    })
    .await??;
    Ok(Arc::new(McpServeHandle {
        server: Arc::new(server),
    }))
}
