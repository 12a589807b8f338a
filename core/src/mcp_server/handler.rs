//! The MCP request handler: lists the served tools and runs each `tools/call` through the
//! engine's tool path (docs/behaviour.md §19).

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::call_host::{forward_progress, ClientCallHost};
use crate::engine::ServedTools;
use crate::json::to_canonical_string;

/// Shared by every connection (one per HTTP session, one for stdio).
#[derive(Clone)]
pub(crate) struct ToolServerHandler {
    pub(crate) served: Arc<ServedTools>,
    pub(crate) listing: Arc<Vec<rmcp::model::Tool>>,
    pub(crate) info: Arc<ServerConfig>,
    pub(crate) scope: Option<super::CallScope>,
}

impl ServerHandler for ToolServerHandler {
    fn get_info(&self) -> ServerConfig {
        (*self.info).clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items((*self.listing).clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let input = request.arguments.map(Value::Object).unwrap_or(json!({}));
        let (progress_tx, forwarder) = match context.meta.get_progress_token() {
            Some(token) => {
                let (tx, rx) = mpsc::unbounded_channel();
                let task = tokio::spawn(forward_progress(context.peer.clone(), token, rx));
                (Some(tx), Some(task))
            }
            None => (None, None),
        };
        let host = Arc::new(ClientCallHost {
            peer: context.peer.clone(),
            cancel: context.ct.clone(),
            progress: progress_tx,
        });
        let served = self.served.clone();
        let cancel = context.ct.clone();
        let name = request.name.to_string();
        // W3C trace context a client may pass in `_meta` (docs/behaviour.md §19).
        let traceparent = context
            .meta
            .get("traceparent")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let call: super::ServedCall = Box::pin(async move {
            served
                .call(&name, input, cancel, host, traceparent.as_deref())
                .await
        });
        let outcome = match &self.scope {
            Some(scope) => scope(call).await,
            None => call.await,
        };
        // Progress the call reported reaches the client before its result.
        if let Some(task) = forwarder {
            let _ = task.await;
        }
        Ok(CallToolResponse::Complete(result(outcome)))
    }
}

/// Objects as `structuredContent` with a text copy; other values as text; errors as
/// `isError` results.
fn result(outcome: Result<Value, String>) -> CallToolResult {
    match outcome {
        Ok(Value::Object(o)) => {
            let value = Value::Object(o);
            let mut r =
                CallToolResult::success(vec![ContentBlock::text(to_canonical_string(&value))]);
            r.structured_content = Some(value);
            r
        }
        Ok(Value::String(s)) => CallToolResult::success(vec![ContentBlock::text(s)]),
        Ok(v) => CallToolResult::success(vec![ContentBlock::text(to_canonical_string(&v))]),
        Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
    }
}
