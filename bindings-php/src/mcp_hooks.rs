//! An MCP server's host hooks (SPEC §11): the tool filter (`"filter": {"$callback": id}`)
//! and the elicitation handler (`"onElicitation": {"$callback": id}`), handed to the core's
//! definition reader by `spec::Callbacks` and served on the PHP thread like any call.

use phaseo_agent::mcp::{McpElicitationHandler, McpToolFilter, McpToolInfo};
use phaseo_agent::{async_trait, ToolError, Value};

use crate::host::HostFn;

/// `filter(array $tool): bool` with `$tool = [name, description, annotations]`, called at
/// listing.
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
            .call("mcpFilter", Value::Array(vec![info]), None)
            .await?;
        answer.as_bool().ok_or_else(|| {
            ToolError::new(format!(
                "an MCP tool filter must answer a boolean, got {answer}"
            ))
        })
    }
}

/// `onElicitation(array $request, array $info)` with `$info = [server]`, answering an MCP
/// `ElicitResult` (`[action, content]`).
pub struct HostMcpElicitation(pub HostFn);

#[async_trait]
impl McpElicitationHandler for HostMcpElicitation {
    async fn on_elicitation(&self, server: &str, request: Value) -> Result<Value, ToolError> {
        let args = Value::Array(vec![request, serde_json::json!({ "server": server })]);
        self.0.call("mcpElicit", args, None).await
    }
}
