//! Serving the application's tools as an MCP server (docs/behaviour.md §19), over stdio or
//! Streamable HTTP. Every call runs through the same engine path as a model's call:
//! validation, approval, timeout, retries, budgets, `toolConcurrency` and events.
//!
//! ```no_run
//! use phaseo_agent::{json, Tool};
//! use phaseo_agent::mcp_server::{serve_mcp, McpServeOptions};
//!
//! # phaseo_agent::exec::block_on(async {
//! let add = Tool::new("add", "Adds two numbers", json!({"type": "object"}), |input, _rt| {
//!     Ok(json!(input["a"].as_i64().unwrap_or(0) + input["b"].as_i64().unwrap_or(0)))
//! });
//! let server = serve_mcp(vec![add], McpServeOptions::new("calculator")).await.unwrap();
//! server.wait().await; // until the client closes standard input
//! # });
//! ```

mod call_host;
mod handler;
mod http;
mod listing;
mod options;

use std::sync::Arc;

use rmcp::model::ServerConfig;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub use options::{CallScope, McpHttpServeOptions, McpServeOptions, McpServeTransport, ServedCall};

use crate::agent::{create_agent, AgentDefinition};
use crate::engine::ServedTools;
use crate::error::{AgentError, ErrorCode};
use crate::tool::Tool;
use handler::ToolServerHandler;

/// A running MCP server. It stops on [`close`](Self::close), when dropped, at the end of
/// input (stdio), and with its process.
pub struct McpToolServer {
    url: Option<String>,
    cancel: CancellationToken,
    done: watch::Receiver<bool>,
}

impl McpToolServer {
    /// `http://host:port/path` of a Streamable HTTP server; `None` on stdio.
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    /// Whether the server has stopped.
    pub fn is_closed(&self) -> bool {
        *self.done.borrow()
    }

    /// Waits until the server stops (the client closed its input, or [`close`](Self::close)).
    pub async fn wait(&self) {
        let mut done = self.done.clone();
        let _ = done.wait_for(|d| *d).await;
    }

    /// Stops the server: no new request is accepted and calls in flight are cancelled.
    /// Returns once it has stopped.
    pub async fn close(&self) {
        self.cancel.cancel();
        self.wait().await;
    }

    /// Stops the server without waiting.
    pub fn close_now(&self) {
        self.cancel.cancel();
    }
}

impl Drop for McpToolServer {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

impl std::fmt::Debug for McpToolServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolServer")
            .field("url", &self.url)
            .field("closed", &self.is_closed())
            .finish()
    }
}

/// Starts an MCP server exposing `tools` (docs/behaviour.md §19). Refuses manual tools,
/// an empty or duplicate tool list and an unusable address with `definition_invalid`.
/// An agent is served as one tool: pass `agent.as_tool(...)` (see [`serve_agent`]); its
/// nested approvals are asked of the client through elicitation, one by one.
/// Must be called inside a tokio runtime; the server runs on it.
pub async fn serve_mcp(
    tools: Vec<Tool>,
    options: McpServeOptions,
) -> Result<McpToolServer, AgentError> {
    let handler = prepare(tools, &options)?;
    let cancel = CancellationToken::new();
    match &options.transport {
        McpServeTransport::Stdio => Ok(spawn_io(
            handler,
            tokio::io::stdin(),
            tokio::io::stdout(),
            cancel,
        )),
        McpServeTransport::Http(http_options) => {
            let server = http::bind(http_options, handler, cancel.child_token()).await?;
            let url = server.url.clone();
            let (tx, done) = watch::channel(false);
            let stop = cancel.clone();
            tokio::spawn(async move {
                server.run(stop).await;
                let _ = tx.send(true);
            });
            Ok(McpToolServer {
                url: Some(url),
                cancel,
                done,
            })
        }
    }
}

/// Serves `agent` as one tool (docs/behaviour.md §19) made by
/// [`Agent::as_tool`](crate::Agent::as_tool) with `tool` (§18's defaults: the agent's id,
/// one string `input`); its runs use `options.client`.
pub async fn serve_agent(
    agent: &crate::Agent,
    tool: crate::AsToolOptions,
    options: McpServeOptions,
) -> Result<McpToolServer, AgentError> {
    serve_mcp(vec![agent.as_tool(tool)?], options).await
}

/// Serves one MCP client over a byte stream pair (a pipe, a socket) instead of the
/// process's stdio; `options.transport` is ignored. Stops at the end of `reader`.
pub fn serve_mcp_on<R, W>(
    tools: Vec<Tool>,
    options: McpServeOptions,
    reader: R,
    writer: W,
) -> Result<McpToolServer, AgentError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let handler = prepare(tools, &options)?;
    Ok(spawn_io(handler, reader, writer, CancellationToken::new()))
}

fn spawn_io<R, W>(
    handler: ToolServerHandler,
    reader: R,
    writer: W,
    cancel: CancellationToken,
) -> McpToolServer
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (tx, done) = watch::channel(false);
    let stop = cancel.clone();
    tokio::spawn(async move {
        if let Ok(running) =
            rmcp::service::serve_server_with_ct(handler, (reader, writer), stop.child_token()).await
        {
            let _ = running.waiting().await;
        }
        let _ = tx.send(true);
    });
    McpToolServer {
        url: None,
        cancel,
        done,
    }
}

/// Checks the tools as an agent definition would and builds the handler.
fn prepare(tools: Vec<Tool>, options: &McpServeOptions) -> Result<ToolServerHandler, AgentError> {
    let invalid = |m: String| AgentError::new(ErrorCode::DefinitionInvalid, m);
    if tools.is_empty() {
        return Err(invalid("An MCP server needs at least one tool".into()));
    }
    if let Some(manual) = tools.iter().find(|t| t.is_manual()) {
        return Err(invalid(format!(
            "Tool {} has no execute and cannot be served over MCP",
            manual.id
        )));
    }
    if options.client.is_none() {
        if let Some(agent_tool) = tools.iter().find(|t| t.runs_without_client()) {
            return Err(invalid(format!(
                "Tool {} runs an agent and needs a model client to be served: give the \
                 server a client",
                agent_tool.id
            )));
        }
    }
    if options.name.trim().is_empty() {
        return Err(invalid("An MCP server needs a name".into()));
    }
    let agent = create_agent(
        AgentDefinition::new(options.name.clone())
            .tools(tools)
            .tool_execution(options.tool_execution),
    )?;
    let listing = agent
        .inner
        .def
        .tools
        .iter()
        .map(|t| serde_json::from_value(listing::tool_entry(t)))
        .collect::<Result<Vec<rmcp::model::Tool>, _>>()
        .map_err(|e| invalid(format!("A tool cannot be listed over MCP: {e}")))?;
    let info: ServerConfig = serde_json::from_value(json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": options.name, "version": options.version},
    }))
    .map_err(|e| invalid(e.to_string()))?;
    Ok(ToolServerHandler {
        served: Arc::new(ServedTools::new(
            agent.inner.clone(),
            options.client.clone(),
            options.on_event.clone(),
        )),
        listing: Arc::new(listing),
        info: Arc::new(info),
        scope: options.call_scope.clone(),
    })
}

#[cfg(test)]
mod tests;
