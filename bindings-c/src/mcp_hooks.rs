//! An MCP server's host hooks (SPEC §11): the tool filter (`"filter": {"$callback": id}`)
//! and the elicitation handler (`"onElicitation": {"$callback": id}`). They are taken out of
//! the definition's `mcpServers` before the definition reader sees it, and the servers are
//! then declared here, in order, with the hooks attached.

use std::borrow::Cow;
use std::sync::Arc;

use phaseo_agent::mcp::{McpElicitationHandler, McpToolFilter, McpToolInfo};
use phaseo_agent::{async_trait, AgentDefinition, ToolError, Value};

use crate::error::CError;
use crate::host::{Host, HostFn, PhaseoCallKind};

/// `filter(tool)` with `tool = {name, description, annotations}`, called at listing.
pub struct HostMcpFilter(pub HostFn);

#[async_trait]
impl McpToolFilter for HostMcpFilter {
    /// Only the run loop lists tools, and it calls `keep_async`.
    fn keep(&self, _tool: &McpToolInfo) -> bool {
        true
    }

    async fn keep_async(&self, tool: &McpToolInfo) -> Result<bool, ToolError> {
        let info = serde_json::json!({
            "name": tool.name,
            "description": tool.description,
            "annotations": tool.annotations,
        });
        let answer = self
            .0
            .call(PhaseoCallKind::McpFilter, &Value::Array(vec![info]), None)
            .await?;
        answer.as_bool().ok_or_else(|| {
            ToolError::new(format!(
                "an MCP tool filter must answer a boolean, got {answer}"
            ))
        })
    }
}

/// `onElicitation(request, {server})`, answering an MCP `ElicitResult`.
pub struct HostMcpElicitation(pub HostFn);

#[async_trait]
impl McpElicitationHandler for HostMcpElicitation {
    async fn on_elicitation(&self, server: &str, request: Value) -> Result<Value, ToolError> {
        let args = Value::Array(vec![request, serde_json::json!({ "server": server })]);
        self.0.call(PhaseoCallKind::McpElicit, &args, None).await
    }
}

/// A definition whose `mcpServers` the caller declares itself (see [`declare`]).
pub struct Split<'a> {
    /// The definition's text for the reader (without `mcpServers` when split).
    pub text: Cow<'a, str>,
    /// The servers taken out, in order (empty when none has a hook).
    pub servers: Vec<Value>,
}

/// Takes `mcpServers` out of a definition when one of its servers has a hook; otherwise
/// the text is given back unchanged (and read as before, in one pass).
pub fn split(text: &str) -> Split<'_> {
    let unchanged = || Split {
        text: Cow::Borrowed(text),
        servers: Vec::new(),
    };
    if !text.contains("\"filter\"") && !text.contains("\"onElicitation\"") {
        return unchanged();
    }
    let Ok(Value::Object(mut obj)) = phaseo_agent::parse_json_text(text) else {
        return unchanged(); // the reader names what is wrong
    };
    let hooked = |v: &Value| v.get("filter").is_some() || v.get("onElicitation").is_some();
    match obj.get("mcpServers") {
        Some(Value::Array(list)) if list.iter().any(hooked) => {}
        _ => return unchanged(),
    }
    let Some(Value::Array(servers)) = obj.remove("mcpServers") else {
        return unchanged();
    };
    Split {
        text: Cow::Owned(phaseo_agent::json::to_canonical_string(&Value::Object(obj))),
        servers,
    }
}

fn callback(host: &Arc<Host>, server: &mut Value, key: &str) -> Result<Option<HostFn>, CError> {
    let Some(value) = server.as_object_mut().and_then(|o| o.remove(key)) else {
        return Ok(None);
    };
    let name = server.get("name").and_then(Value::as_str).unwrap_or("?");
    match value.get("$callback").and_then(Value::as_u64) {
        Some(id) if value.as_object().is_some_and(|o| o.len() == 1) => Ok(Some(HostFn {
            host: host.clone(),
            id,
        })),
        _ => Err(CError::definition(format!(
            "Invalid MCP server '{name}': {key} must be a host function {{\"$callback\": id}}"
        ))),
    }
}

/// Declares the servers [`split`] took out on `def`, with their hooks, in order.
pub fn declare(
    host: &Arc<Host>,
    mut def: AgentDefinition,
    servers: Vec<Value>,
) -> Result<AgentDefinition, CError> {
    for mut value in servers {
        let filter = callback(host, &mut value, "filter")?;
        let elicit = callback(host, &mut value, "onElicitation")?;
        let mut server = crate::spec_mcp::server(host, value)?;
        if let Some(f) = filter {
            server = server.filter(Arc::new(HostMcpFilter(f)));
        }
        if let Some(f) = elicit {
            server = server.on_elicitation(Arc::new(HostMcpElicitation(f)));
        }
        def = def.mcp_server(server);
    }
    Ok(def)
}
