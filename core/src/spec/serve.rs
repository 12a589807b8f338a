//! Served MCP options (docs/behaviour.md §19): `{"tools" | "agent", "name", "version"?,
//! "description"?, "transport"?, "toolExecution"?}`; `agent` is an agent definition served
//! as one tool (§18's defaults: the agent's id, one string `input`; `description` is the
//! tool's), its runs on the client the binding gives the server; `transport` is `"stdio"`
//! (the default), `"http"` or `{"type": "stdio" | "http", "host"?, "port"?, "path"?,
//! "authToken"?, "allowedOrigins"?, "allowedHosts"?}`.

use serde::Deserialize;

use super::settings::ToolExecutionSpec;
use super::tool::{self, ToolSpec};
use super::{invalid, read_at, HostCallbacks};
use crate::mcp_server::{McpHttpServeOptions, McpServeOptions, McpServeTransport};
use crate::tool::Tool;
use crate::{AgentError, Value};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ServeSpec {
    name: String,
    version: Option<String>,
    #[serde(default)]
    tools: Vec<ToolSpec>,
    agent: Option<Value>,
    description: Option<String>,
    transport: Option<Value>,
    tool_execution: Option<ToolExecutionSpec>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TransportSpec {
    #[serde(rename = "type")]
    kind: String,
    host: Option<String>,
    port: Option<u16>,
    path: Option<String>,
    auth_token: Option<String>,
    allowed_origins: Option<Vec<String>>,
    allowed_hosts: Option<Vec<String>>,
}

/// The tools and options of a served MCP server, read from their JSON form; the tools'
/// host functions are made by `host`.
pub fn serve_options(
    host: &dyn HostCallbacks,
    value: Value,
) -> Result<(Vec<Tool>, McpServeOptions), AgentError> {
    let spec: ServeSpec = read_at(value, "MCP server options", "")?;
    let tools =
        match (spec.agent, spec.tools.is_empty()) {
            (Some(_), false) => return Err(invalid(
                "Invalid MCP server options: give tools or agent (served as one tool), not both",
            )),
            (Some(agent), true) => {
                let id = agent.get("id").cloned().unwrap_or(Value::Null);
                let mut served = serde_json::json!({"id": id, "agent": agent});
                if let Some(d) = spec.description {
                    served["description"] = Value::String(d);
                }
                vec![tool::build(
                    host,
                    read_at(served, "MCP server options", "agent")?,
                )?]
            }
            (None, _) if spec.description.is_some() => {
                return Err(invalid(
                    "Invalid MCP server options: description describes a served agent; give agent",
                ))
            }
            (None, _) => spec
                .tools
                .into_iter()
                .map(|t| tool::build(host, t))
                .collect::<Result<Vec<_>, _>>()?,
        };
    let mut options = McpServeOptions::new(spec.name);
    if let Some(v) = spec.version {
        options = options.version(v);
    }
    if let Some(t) = spec.tool_execution {
        options = options.tool_execution(t.build()?);
    }
    if let Some(t) = spec.transport {
        options = options.transport(serve_transport(t)?);
    }
    Ok((tools, options))
}

/// A served server's `transport` (`"stdio"`, `"http"` or its object form).
pub fn serve_transport(value: Value) -> Result<McpServeTransport, AgentError> {
    let spec = match value {
        Value::String(kind) => TransportSpec {
            kind,
            host: None,
            port: None,
            path: None,
            auth_token: None,
            allowed_origins: None,
            allowed_hosts: None,
        },
        v => read_at(v, "MCP server options", "transport")?,
    };
    match spec.kind.as_str() {
        "stdio" => match (&spec.host, spec.port, &spec.path, &spec.auth_token) {
            (None, None, None, None) => Ok(McpServeTransport::Stdio),
            _ => Err(invalid(
                "Invalid MCP server options: transport: host, port, path and authToken need type \"http\"",
            )),
        },
        "http" => {
            let d = McpHttpServeOptions::default();
            Ok(McpServeTransport::Http(McpHttpServeOptions {
                host: spec.host.unwrap_or(d.host),
                port: spec.port.unwrap_or(d.port),
                path: spec.path.unwrap_or(d.path),
                auth_token: spec.auth_token,
                allowed_origins: spec.allowed_origins.unwrap_or_default(),
                allowed_hosts: spec.allowed_hosts.unwrap_or_default(),
            }))
        }
        other => Err(invalid(format!(
            "Invalid MCP server options: transport.type must be \"stdio\" or \"http\", got {other:?}"
        ))),
    }
}
