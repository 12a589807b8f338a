//! MCP servers on an agent (docs/behaviour.md §11) as uniffi records: a transport, the options, and the
//! host hooks (a tool filter, an approval predicate). Everything else — connecting,
//! listing, calling, timeouts, restarts — is the core's.

use std::collections::HashMap;
use std::sync::Arc;

use phaseo_agent as pa;
use phaseo_agent::mcp::McpToolInfo;

use crate::defs::OnError;
use crate::errors::ToolError;
use crate::traits::{host_in_place, parse_json, to_json, ApprovalPredicate, HostApproval};

/// How the core reaches an MCP server.
#[derive(uniffi::Enum)]
pub enum McpTransport {
    /// A child process speaking JSON-RPC on its stdin/stdout (stopped with the agent).
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the inherited environment.
        env: HashMap<String, String>,
        /// Its working directory (null: the host's).
        cwd: Option<String>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint, e.g. `http://127.0.0.1:3001/mcp`.
        url: String,
        /// Headers sent with every request.
        headers: HashMap<String, String>,
        /// Sent as `Authorization: Bearer <token>`.
        bearer: Option<String>,
    },
}

/// Which calls of a server's tools need approval.
#[derive(uniffi::Enum)]
pub enum McpApproval {
    /// None (default).
    Never,
    /// Every call.
    Always,
    /// Tools whose `destructiveHint` is true or whose `readOnlyHint` is not true.
    Destructive,
    /// Decided per call; the predicate sees the input and, through the runtime's
    /// `tool_annotations_json`, the tool's annotations.
    Predicate {
        /// `true` when the call must be approved.
        predicate: Arc<dyn ApprovalPredicate>,
    },
}

/// Keeps or drops a listed tool (applied after `allow_tools`/`deny_tools`): its MCP name
/// (before any prefix), description and annotations (JSON object, `{}` when none).
#[uniffi::export(with_foreign)]
pub trait McpToolFilter: Send + Sync {
    /// `true` to offer the tool to the model.
    fn keep(&self, name: String, description: String, annotations_json: String) -> bool;
}

struct HostFilter(Arc<dyn McpToolFilter>);

impl pa::mcp::McpToolFilter for HostFilter {
    fn keep(&self, tool: &McpToolInfo) -> bool {
        host_in_place(|| {
            self.0.keep(
                tool.name.clone(),
                tool.description.clone(),
                to_json(&tool.annotations),
            )
        })
    }
}

/// Answers a server's elicitation request (`elicitation/create`): `request_json` is the MCP
/// params object (`message`, `requestedSchema`, …); the answer is an MCP `ElicitResult`
/// (`{"action": "accept" | "decline" | "cancel", "content": {...}}`). Throwing declines.
#[uniffi::export(foreign)]
#[async_trait::async_trait]
pub trait McpElicitation: Send + Sync {
    /// The answer (JSON text) to one request of server `server`.
    async fn on_elicitation(
        &self,
        server: String,
        request_json: String,
    ) -> Result<String, ToolError>;
}

struct HostElicitation(Arc<dyn McpElicitation>);

#[pa::async_trait]
impl pa::mcp::McpElicitationHandler for HostElicitation {
    async fn on_elicitation(
        &self,
        server: &str,
        request: pa::Value,
    ) -> Result<pa::Value, pa::ToolError> {
        let answer = self
            .0
            .on_elicitation(server.to_owned(), to_json(&request))
            .await
            .map_err(ToolError::into_core)?;
        parse_json(&answer, "the elicitation answer")
    }
}

/// An MCP server declared on an agent. `name` appears in `mcp_failed` messages; tools are
/// offered under their MCP names, or `<tool_prefix>_<name>` with a prefix.
#[derive(uniffi::Record)]
pub struct McpServerConfig {
    /// The server's name.
    pub name: String,
    /// How it is reached.
    pub transport: McpTransport,
    /// Only these tools (MCP names) are offered (null: every tool).
    #[uniffi(default)]
    pub allow_tools: Option<Vec<String>>,
    /// These tools (MCP names) are never offered.
    #[uniffi(default)]
    pub deny_tools: Vec<String>,
    /// Keeps or drops each listed tool.
    #[uniffi(default)]
    pub filter: Option<Arc<dyn McpToolFilter>>,
    /// Offered tool names become `<prefix>_<name>`.
    #[uniffi(default)]
    pub tool_prefix: Option<String>,
    /// Which calls need approval (null: never).
    #[uniffi(default)]
    pub require_approval: Option<McpApproval>,
    /// Timeout of each call (ms).
    #[uniffi(default)]
    pub timeout_ms: Option<u64>,
    /// Timeouts of single tools (MCP name → ms), winning over `timeout_ms`.
    #[uniffi(default)]
    pub tool_timeouts_ms: HashMap<String, u64>,
    /// What a failed call does (default: fails the run).
    #[uniffi(default)]
    pub on_error: Option<OnError>,
    /// How long the tool list is kept (ms).
    #[uniffi(default)]
    pub cache_ttl_ms: Option<u64>,
    /// A server that cannot start is skipped (its tools are not offered) instead of failing
    /// the run.
    #[uniffi(default)]
    pub optional: bool,
    /// Answers the server's elicitation requests (none: elicitation is not offered to it).
    #[uniffi(default)]
    pub on_elicitation: Option<Arc<dyn McpElicitation>>,
    /// Defers every tool of this server: none is offered until the built-in `tool_search`
    /// finds it (docs/behaviour.md §17).
    #[uniffi(default)]
    pub defer_loading: bool,
}

/// The core's server declaration (its own checks run when the agent is created).
pub(crate) fn core_server(c: McpServerConfig) -> pa::mcp::McpServer {
    let mut s = match c.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut s = pa::mcp::McpServer::stdio(c.name, command).args(args);
            for (k, v) in env {
                s = s.env(k, v);
            }
            if let Some(dir) = cwd {
                s = s.cwd(dir);
            }
            s
        }
        McpTransport::Http {
            url,
            headers,
            bearer,
        } => {
            let mut s = pa::mcp::McpServer::http(c.name, url);
            for (k, v) in headers {
                s = s.header(k, v);
            }
            if let Some(token) = bearer {
                s = s.bearer(token);
            }
            s
        }
    };
    if let Some(allow) = c.allow_tools {
        s = s.allow_tools(allow);
    }
    if !c.deny_tools.is_empty() {
        s = s.deny_tools(c.deny_tools);
    }
    if let Some(f) = c.filter {
        s = s.filter(Arc::new(HostFilter(f)));
    }
    if let Some(p) = c.tool_prefix {
        s = s.tool_prefix(p);
    }
    if let Some(a) = c.require_approval {
        s = s.require_approval(match a {
            McpApproval::Never => pa::mcp::McpApproval::Never,
            McpApproval::Always => pa::mcp::McpApproval::Always,
            McpApproval::Destructive => pa::mcp::McpApproval::Destructive,
            McpApproval::Predicate { predicate } => {
                pa::mcp::McpApproval::Predicate(Arc::new(HostApproval(predicate)))
            }
        });
    }
    if let Some(ms) = c.timeout_ms {
        s = s.timeout_ms(ms);
    }
    for (tool, ms) in c.tool_timeouts_ms {
        s = s.tool_timeout_ms(tool, ms);
    }
    if let Some(e) = c.on_error {
        s = s.on_error(e.into());
    }
    if let Some(ms) = c.cache_ttl_ms {
        s = s.cache_ttl_ms(ms);
    }
    if let Some(h) = c.on_elicitation {
        s = s.on_elicitation(Arc::new(HostElicitation(h)));
    }
    s.optional(c.optional).defer_loading(c.defer_loading)
}
