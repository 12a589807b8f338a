//! MCP server declarations (SPEC §11) as JSON: `{"name", "command", "args"?, "env"?,
//! "cwd"?}` (stdio) or `{"name", "url", "headers"?, "bearer"?}` (streamable HTTP), with
//! `allowTools`, `denyTools`, `toolPrefix`, `requireApproval` (`true`, `false`,
//! `"destructive"` or a callback), `timeoutMs`, `toolTimeoutsMs`, `onError`, `cacheTtlMs`,
//! `optional`.
// moves to phaseo_agent::spec: a copy of the C ABI's reader (bindings-c/src/spec_mcp.rs),
// reading the same canonical JSON definitions, until the core holds it.

use std::collections::BTreeMap;
use std::sync::Arc;

use phaseo_agent::mcp::{McpApproval, McpServer};
use phaseo_agent::{OnError, Value};
use serde::Deserialize;

use crate::adapters::HostApproval;
use crate::error::NativeError as CError;
use crate::host::{Host, HostFn};

#[derive(Deserialize)]
#[serde(untagged)]
enum ApprovalSpec {
    Flag(bool),
    Text(String),
    Callback {
        #[serde(rename = "$callback")]
        id: u64,
    },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ServerSpec {
    name: String,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    bearer: Option<String>,
    allow_tools: Option<Vec<String>>,
    deny_tools: Option<Vec<String>>,
    tool_prefix: Option<String>,
    require_approval: Option<ApprovalSpec>,
    timeout_ms: Option<u64>,
    #[serde(default)]
    tool_timeouts_ms: BTreeMap<String, u64>,
    on_error: Option<String>,
    cache_ttl_ms: Option<u64>,
    optional: Option<bool>,
}

/// The core declaration of one `mcpServers` entry.
pub fn server(host: &Arc<Host>, value: Value) -> Result<McpServer, CError> {
    let spec: ServerSpec = serde_json::from_value(value)
        .map_err(|e| CError::definition(format!("Invalid MCP server: {e}")))?;
    let name = spec.name.clone();
    let invalid = |e: String| CError::definition(format!("Invalid MCP server '{name}': {e}"));
    let mut server = match (spec.command, spec.url) {
        (Some(command), None) => {
            let mut s = McpServer::stdio(spec.name, command).args(spec.args);
            for (k, v) in spec.env {
                s = s.env(k, v);
            }
            if let Some(dir) = spec.cwd {
                s = s.cwd(dir);
            }
            s
        }
        (None, Some(url)) => {
            let mut s = McpServer::http(spec.name, url);
            for (k, v) in spec.headers {
                s = s.header(k, v);
            }
            if let Some(token) = spec.bearer {
                s = s.bearer(token);
            }
            s
        }
        _ => {
            return Err(invalid(
                "give exactly one of `command` (stdio) and `url` (HTTP)".into(),
            ))
        }
    };
    if let Some(names) = spec.allow_tools {
        server = server.allow_tools(names);
    }
    if let Some(names) = spec.deny_tools {
        server = server.deny_tools(names);
    }
    if let Some(prefix) = spec.tool_prefix {
        server = server.tool_prefix(prefix);
    }
    match spec.require_approval {
        None | Some(ApprovalSpec::Flag(false)) => {}
        Some(ApprovalSpec::Flag(true)) => server = server.require_approval(McpApproval::Always),
        Some(ApprovalSpec::Text(t)) => {
            server = server.require_approval(McpApproval::parse(&t).map_err(invalid)?)
        }
        Some(ApprovalSpec::Callback { id }) => {
            let f = HostFn {
                host: host.clone(),
                id,
            };
            server = server.require_approval(McpApproval::Predicate(Arc::new(HostApproval(f))));
        }
    }
    if let Some(ms) = spec.timeout_ms {
        server = server.timeout_ms(ms);
    }
    for (tool, ms) in spec.tool_timeouts_ms {
        server = server.tool_timeout_ms(tool, ms);
    }
    if let Some(p) = spec.on_error {
        server = server.on_error(OnError::parse(&p).map_err(invalid)?);
    }
    if let Some(ms) = spec.cache_ttl_ms {
        server = server.cache_ttl_ms(ms);
    }
    if let Some(o) = spec.optional {
        server = server.optional(o);
    }
    Ok(server)
}
