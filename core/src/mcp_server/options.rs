//! What a server is started with (docs/behaviour.md §19).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::events::EventListener;
use crate::model::ModelClient;
use crate::options::ToolExecutionConfig;

/// How an MCP server serving the application's tools is reached.
#[derive(Clone, Debug, Default)]
pub enum McpServeTransport {
    /// JSON-RPC over the process's standard input and output; the server stops at the end
    /// of input.
    #[default]
    Stdio,
    /// Streamable HTTP on `http://{host}:{port}{path}`.
    Http(McpHttpServeOptions),
}

/// The Streamable HTTP listener of a served MCP server.
#[derive(Clone, Debug)]
pub struct McpHttpServeOptions {
    /// Interface to bind (`127.0.0.1` unless told otherwise).
    pub host: String,
    /// Port to bind; `0` picks a free one (read it back from [`super::McpToolServer::url`]).
    pub port: u16,
    /// Path of the MCP endpoint (`/mcp`).
    pub path: String,
    /// When set, every request must carry `Authorization: Bearer <token>` (else 401).
    pub auth_token: Option<String>,
    /// Browser origins allowed to call (`Origin` header); a request from any other origin
    /// is refused. Empty: loopback origins only.
    pub allowed_origins: Vec<String>,
    /// Host names the `Host` header may name; empty: loopback names and `host`.
    pub allowed_hosts: Vec<String>,
}

impl Default for McpHttpServeOptions {
    fn default() -> Self {
        McpHttpServeOptions {
            host: "127.0.0.1".to_owned(),
            port: 0,
            path: "/mcp".to_owned(),
            auth_token: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
        }
    }
}

/// Options of [`super::serve_mcp`].
#[derive(Clone)]
pub struct McpServeOptions {
    /// The server's name, as clients show it.
    pub name: String,
    /// The server's version.
    pub version: String,
    /// Stdio or Streamable HTTP.
    pub transport: McpServeTransport,
    /// `toolConcurrency` (calls served at once) and the budgets (`maxToolCalls`) of the
    /// server's calls, counted over its lifetime; `onError` as in a run.
    pub tool_execution: ToolExecutionConfig,
    /// Receives the `tool.*` events of every served call.
    pub on_event: Option<Arc<dyn EventListener>>,
    /// Wraps every served call (a binding sets the host's event loop around its callbacks).
    pub call_scope: Option<CallScope>,
    /// The model client of served agent tools that have none of their own (an agent
    /// served as one tool, docs/behaviour.md §19).
    pub client: Option<Arc<dyn ModelClient>>,
}

/// A served call's work: the tool's result or the message of its error.
pub type ServedCall = Pin<Box<dyn Future<Output = Result<Value, String>> + Send>>;

/// Runs a served call inside whatever the host needs around it.
pub type CallScope = Arc<dyn Fn(ServedCall) -> ServedCall + Send + Sync>;

impl McpServeOptions {
    /// A server named `name` on stdio, version `0.0.0`.
    pub fn new(name: impl Into<String>) -> Self {
        McpServeOptions {
            name: name.into(),
            version: "0.0.0".to_owned(),
            transport: McpServeTransport::Stdio,
            tool_execution: ToolExecutionConfig::default(),
            on_event: None,
            call_scope: None,
            client: None,
        }
    }

    /// Sets the version.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// Sets the transport.
    pub fn transport(mut self, transport: McpServeTransport) -> Self {
        self.transport = transport;
        self
    }

    /// Sets `toolExecution`.
    pub fn tool_execution(mut self, config: ToolExecutionConfig) -> Self {
        self.tool_execution = config;
        self
    }

    /// Sets the scope every served call runs in.
    pub fn call_scope(mut self, scope: CallScope) -> Self {
        self.call_scope = Some(scope);
        self
    }

    /// Sets the model client agent tools run on when they have none of their own.
    pub fn client(mut self, client: Arc<dyn ModelClient>) -> Self {
        self.client = Some(client);
        self
    }

    /// Sets the event listener.
    pub fn on_event(mut self, listener: Arc<dyn EventListener>) -> Self {
        self.on_event = Some(listener);
        self
    }
}

impl std::fmt::Debug for McpServeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServeOptions")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("transport", &self.transport)
            .finish()
    }
}
