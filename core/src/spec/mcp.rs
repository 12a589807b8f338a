//! An `mcpServers` entry (SPEC §11): `{"name", "command", "args"?, "env"?, "cwd"?}` (stdio)
//! or `{"name", "url", "headers"?, "bearer"?}` (Streamable HTTP), with `allowTools`,
//! `denyTools`, `filter` (a function), `toolPrefix`, `requireApproval` (`true`, `false`,
//! `"destructive"` or a function), `timeoutMs`, `toolTimeoutsMs`, `onError`, `cacheTtlMs`,
//! `optional` and `onElicitation` (a function).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::forms::Callback;
use super::{invalid, read, HostCallbacks};
use crate::mcp::{McpApproval, McpServer};
use crate::{AgentError, OnError, Value};

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
    filter: Option<Callback>,
    tool_prefix: Option<String>,
    require_approval: Option<Value>,
    timeout_ms: Option<f64>,
    #[serde(default)]
    tool_timeouts_ms: BTreeMap<String, f64>,
    on_error: Option<String>,
    cache_ttl_ms: Option<f64>,
    optional: Option<bool>,
    on_elicitation: Option<Callback>,
}

/// Reads one `mcpServers` entry; its host functions are made by `host`.
pub fn mcp_server(host: &dyn HostCallbacks, value: Value) -> Result<McpServer, AgentError> {
    let spec: ServerSpec = read(value, "MCP server")?;
    let name = spec.name.clone();
    let bad = |m: String| invalid(format!("Invalid MCP server '{name}': {m}"));
    let ms = |what: &str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(v.ceil() as u64)
        } else {
            Err(bad(format!(
                "{what} must be a positive number of milliseconds, got {v}"
            )))
        }
    };
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
            return Err(bad(
                "give either a command (stdio) or a url (Streamable HTTP)".into(),
            ))
        }
    };
    if let Some(names) = spec.allow_tools {
        server = server.allow_tools(names);
    }
    if let Some(names) = spec.deny_tools {
        server = server.deny_tools(names);
    }
    if let Some(cb) = spec.filter {
        let filter = host
            .mcp_filter(cb.id)
            .ok_or_else(|| bad("a filter function is not supported here".into()))?;
        server = server.filter(filter);
    }
    if let Some(prefix) = spec.tool_prefix {
        server = server.tool_prefix(prefix);
    }
    match spec.require_approval {
        None | Some(Value::Null) | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => server = server.require_approval(McpApproval::Always),
        Some(Value::String(s)) => {
            server = server.require_approval(McpApproval::parse(&s).map_err(bad)?)
        }
        Some(other) => match serde_json::from_value::<Callback>(other.clone()) {
            Ok(cb) => {
                server = server.require_approval(McpApproval::Predicate(host.mcp_approval(cb.id)))
            }
            Err(_) => {
                return Err(bad(format!(
                "requireApproval must be true, false, a predicate or \"destructive\", got {other}"
            )))
            }
        },
    }
    if let Some(t) = spec.timeout_ms {
        server = server.timeout_ms(ms("timeoutMs", t)?);
    }
    for (tool, t) in spec.tool_timeouts_ms {
        let t = ms(&format!("toolTimeoutsMs[{tool:?}]"), t)?;
        server = server.tool_timeout_ms(tool, t);
    }
    if let Some(p) = spec.on_error {
        server = server.on_error(OnError::parse(&p).map_err(|e| bad(format!("onError: {e}")))?);
    }
    if let Some(t) = spec.cache_ttl_ms {
        server = server.cache_ttl_ms(ms("cacheTtlMs", t)?);
    }
    if let Some(o) = spec.optional {
        server = server.optional(o);
    }
    if let Some(cb) = spec.on_elicitation {
        let handler = host
            .mcp_elicitation(cb.id)
            .ok_or_else(|| bad("an onElicitation function is not supported here".into()))?;
        server = server.on_elicitation(handler);
    }
    Ok(server)
}
