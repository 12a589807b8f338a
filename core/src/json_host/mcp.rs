//! An MCP server's host hooks (docs/behaviour.md §11): the tool filter and the elicitation handler.

use async_trait::async_trait;

use super::{CallKind, JsonArgs, JsonHostFn};
use crate::mcp::{McpElicitationHandler, McpToolFilter, McpToolInfo};
use crate::{ToolError, Value};

/// `filter(tool)` with `tool = {name, description, annotations}`, called at listing.
pub struct JsonMcpFilter<H>(pub H);

#[async_trait]
impl<H: JsonHostFn> McpToolFilter for JsonMcpFilter<H> {
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
        let args = JsonArgs::List(vec![info]);
        let answer = self.0.call(CallKind::McpFilter, args, None).await?;
        answer.as_bool().ok_or_else(|| {
            ToolError::new(format!(
                "an MCP tool filter must answer a boolean, got {answer}"
            ))
        })
    }
}

/// `onElicitation(request, {server})`, answering an MCP `ElicitResult`.
pub struct JsonMcpElicitation<H>(pub H);

#[async_trait]
impl<H: JsonHostFn> McpElicitationHandler for JsonMcpElicitation<H> {
    async fn on_elicitation(&self, server: &str, request: Value) -> Result<Value, ToolError> {
        let args = JsonArgs::List(vec![request, serde_json::json!({ "server": server })]);
        self.0.call(CallKind::McpElicit, args, None).await
    }
}
