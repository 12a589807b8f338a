//! How an MCP server is declared on an agent (docs/behaviour.md §11): its transport and its options.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use crate::error::ToolError;
use crate::tool::{ApprovalPredicate, OnError};

/// How the core reaches a server.
#[derive(Clone, Debug)]
pub enum McpTransport {
    /// A child process speaking JSON-RPC on its stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the inherited environment.
        env: BTreeMap<String, String>,
        /// Its working directory (default: the host's).
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint, e.g. `http://127.0.0.1:3001/mcp`.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
        /// Sent as `Authorization: Bearer <token>`.
        bearer: Option<String>,
    },
}

/// What an MCP tool looks like to a filter: its MCP name (before any prefix), description
/// and annotations (`{}` when the server gave none).
#[derive(Clone, Debug, PartialEq)]
pub struct McpToolInfo {
    /// The tool's name on the server.
    pub name: String,
    /// Its description (empty when absent).
    pub description: String,
    /// Its `annotations` object (`readOnlyHint`, `destructiveHint`, …).
    pub annotations: Value,
}

/// Keeps or drops a listed tool (after `allow_tools`/`deny_tools`).
#[async_trait]
pub trait McpToolFilter: Send + Sync {
    /// `true` to offer the tool to the model.
    fn keep(&self, tool: &McpToolInfo) -> bool;

    /// What the core calls at listing time; by default [`Self::keep`]. Filters that must
    /// wait for their answer (a host function called on another thread, as in the Node
    /// and Python bindings) override this one. An error fails the listing with
    /// `mcp_failed`, also for an `optional` server (a broken filter is not a server that
    /// is down).
    async fn keep_async(&self, tool: &McpToolInfo) -> Result<bool, ToolError> {
        Ok(self.keep(tool))
    }
}

impl<F> McpToolFilter for F
where
    F: Fn(&McpToolInfo) -> bool + Send + Sync,
{
    fn keep(&self, tool: &McpToolInfo) -> bool {
        self(tool)
    }
}

/// Answers a server's elicitation request (`elicitation/create`). The request is the MCP
/// params object (`message`, `requestedSchema`, …); the answer is an MCP `ElicitResult`
/// object: `{"action": "accept" | "decline" | "cancel", "content": {...}}`.
#[async_trait]
pub trait McpElicitationHandler: Send + Sync {
    /// Called for each request; an error declines it.
    async fn on_elicitation(&self, server: &str, request: Value) -> Result<Value, ToolError>;
}

/// Which calls of a server's tools need approval.
#[derive(Clone, Default)]
pub enum McpApproval {
    /// None (default).
    #[default]
    Never,
    /// Every call.
    Always,
    /// Tools whose `destructiveHint` is true or whose `readOnlyHint` is not true.
    Destructive,
    /// Decided per call; the predicate sees the annotations through
    /// [`crate::ToolRuntime::tool_annotations`].
    Predicate(Arc<dyn ApprovalPredicate>),
}

impl McpApproval {
    /// Parses `"destructive"` (the only string form).
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "destructive" => Ok(McpApproval::Destructive),
            other => Err(format!(
                "requireApproval must be true, false, a predicate or \"destructive\", got {other:?}"
            )),
        }
    }
}

/// An MCP server declared on an agent: a name (used in `mcp_failed` messages), a
/// transport and options. Built with [`McpServer::stdio`] or [`McpServer::http`].
///
/// ```
/// use phaseo_agent::mcp::McpServer;
/// let files = McpServer::stdio("files", "python3")
///     .args(["server.py"])
///     .env("LOG", "0")
///     .tool_prefix("fs")
///     .deny_tools(["delete"])
///     .timeout_ms(5_000);
/// assert_eq!(files.name(), "files");
/// ```
#[derive(Clone)]
pub struct McpServer {
    pub(crate) name: String,
    pub(crate) transport: McpTransport,
    pub(crate) allow_tools: Option<Vec<String>>,
    pub(crate) deny_tools: Vec<String>,
    pub(crate) filter: Option<Arc<dyn McpToolFilter>>,
    pub(crate) tool_prefix: Option<String>,
    pub(crate) approval: McpApproval,
    pub(crate) timeout: Option<Duration>,
    pub(crate) tool_timeouts: BTreeMap<String, Duration>,
    pub(crate) on_error: Option<OnError>,
    pub(crate) cache_ttl: Option<Duration>,
    pub(crate) optional: bool,
    /// Its tools are offered only once found by `tool_search` (docs/behaviour.md §17).
    pub(crate) defer_loading: bool,
    pub(crate) on_elicitation: Option<Arc<dyn McpElicitationHandler>>,
    pub(crate) problems: Vec<String>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.name)
            .field("transport", &self.transport)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    fn new(name: impl Into<String>, transport: McpTransport) -> Self {
        let name = name.into();
        let mut problems = Vec::new();
        if name.is_empty() {
            problems.push("name must not be empty".to_owned());
        }
        McpServer {
            name,
            transport,
            allow_tools: None,
            deny_tools: Vec::new(),
            filter: None,
            tool_prefix: None,
            approval: McpApproval::Never,
            timeout: None,
            tool_timeouts: BTreeMap::new(),
            on_error: None,
            cache_ttl: None,
            optional: false,
            defer_loading: false,
            on_elicitation: None,
            problems,
        }
    }

    /// A server started as a child process (`command`), spoken to over stdio.
    pub fn stdio(name: impl Into<String>, command: impl Into<String>) -> Self {
        let command = command.into();
        let mut server = Self::new(
            name,
            McpTransport::Stdio {
                command: command.clone(),
                args: Vec::new(),
                env: BTreeMap::new(),
                cwd: None,
            },
        );
        if command.is_empty() {
            server.problems.push("command must not be empty".to_owned());
        }
        server
    }

    /// A server reached over Streamable HTTP at `url`.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        let url = url.into();
        let mut server = Self::new(
            name,
            McpTransport::Http {
                url: url.clone(),
                headers: BTreeMap::new(),
                bearer: None,
            },
        );
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            server.problems.push(format!(
                "url must start with http:// or https://, got {url:?}"
            ));
        }
        server
    }

    /// Arguments of a stdio server's command (ignored for HTTP).
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        if let McpTransport::Stdio { args: a, .. } = &mut self.transport {
            a.extend(args.into_iter().map(Into::into));
        }
        self
    }

    /// An environment variable for a stdio server (added to the inherited environment).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let McpTransport::Stdio { env, .. } = &mut self.transport {
            env.insert(key.into(), value.into());
        }
        self
    }

    /// The working directory of a stdio server.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        if let McpTransport::Stdio { cwd, .. } = &mut self.transport {
            *cwd = Some(dir.into());
        }
        self
    }

    /// A header sent with every request to an HTTP server.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let McpTransport::Http { headers, .. } = &mut self.transport {
            headers.insert(name.into(), value.into());
        }
        self
    }

    /// A bearer token for an HTTP server (`Authorization: Bearer <token>`).
    pub fn bearer(mut self, token: impl Into<String>) -> Self {
        if let McpTransport::Http { bearer, .. } = &mut self.transport {
            *bearer = Some(token.into());
        }
        self
    }

    /// Offers only these tools (MCP names, before the prefix).
    pub fn allow_tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allow_tools = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Never offers these tools (MCP names, before the prefix).
    pub fn deny_tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.deny_tools.extend(names.into_iter().map(Into::into));
        self
    }

    /// A predicate on `{name, description, annotations}` run after the allow/deny lists.
    pub fn filter(mut self, filter: Arc<dyn McpToolFilter>) -> Self {
        self.filter = Some(filter);
        self
    }

    /// Renames each tool `x` to `<prefix>_x`.
    pub fn tool_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.tool_prefix = Some(prefix.into());
        self
    }

    /// Which calls need approval (see [`McpApproval`]).
    pub fn require_approval(mut self, approval: McpApproval) -> Self {
        self.approval = approval;
        self
    }

    /// A time limit for every call to this server's tools.
    pub fn timeout_ms(mut self, ms: u64) -> Self {
        self.timeout = Some(Duration::from_millis(ms));
        self
    }

    /// A time limit for the calls of one tool (MCP name), overriding the server's.
    pub fn tool_timeout_ms(mut self, tool: impl Into<String>, ms: u64) -> Self {
        self.tool_timeouts
            .insert(tool.into(), Duration::from_millis(ms));
        self
    }

    /// The error policy of this server's tools (default: the run's).
    pub fn on_error(mut self, policy: OnError) -> Self {
        self.on_error = Some(policy);
        self
    }

    /// Lists the tools again when the cached list is older than this (default: keep it
    /// until the server sends `notifications/tools/list_changed` or is restarted).
    pub fn cache_ttl_ms(mut self, ms: u64) -> Self {
        self.cache_ttl = Some(Duration::from_millis(ms));
        self
    }

    /// When the server cannot be listed, run without its tools instead of failing.
    pub fn optional(mut self, optional: bool) -> Self {
        self.optional = optional;
        self
    }

    /// Defers every tool of this server: none is offered until `tool_search` finds it
    /// (docs/behaviour.md §17).
    pub fn defer_loading(mut self, deferred: bool) -> Self {
        self.defer_loading = deferred;
        self
    }

    /// Answers the server's elicitation requests (declined without a handler).
    pub fn on_elicitation(mut self, handler: Arc<dyn McpElicitationHandler>) -> Self {
        self.on_elicitation = Some(handler);
        self
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The transport.
    pub fn transport(&self) -> &McpTransport {
        &self.transport
    }

    /// Refuses an invalid declaration (`definition_invalid`).
    pub(crate) fn check(&self) -> Result<(), crate::AgentError> {
        match self.problems.first() {
            None => Ok(()),
            Some(p) => Err(crate::AgentError::definition_invalid(format!(
                "Invalid MCP server '{}': {p}",
                self.name
            ))),
        }
    }
}
