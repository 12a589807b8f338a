//! What a served call asks of the MCP client: progress notifications and approvals
//! through elicitation (docs/behaviour.md §19).

use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use rmcp::model::{
    ElicitRequestParams, ElicitationAction, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{ElicitationMode, Peer, RoleServer};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::engine::CallHost;
use crate::json::to_canonical_string;
use crate::state::ToolCall;

/// One `tools/call` request's side of the conversation with the client.
pub(crate) struct ClientCallHost {
    pub(crate) peer: Peer<RoleServer>,
    pub(crate) cancel: CancellationToken,
    /// Set when the request carried a progress token: progress values go here, in order.
    pub(crate) progress: Option<mpsc::UnboundedSender<Value>>,
}

#[async_trait]
impl CallHost for ClientCallHost {
    fn progress(&self, value: &Value) {
        if let Some(tx) = &self.progress {
            let _ = tx.send(value.clone());
        }
    }

    async fn approve(&self, call: &ToolCall) -> Result<bool, String> {
        if !self
            .peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return Err(format!(
                "Tool {} requires approval and this client cannot be asked",
                call.name
            ));
        }
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "mode": "form",
            "message": format!(
                "Allow the tool {} to run with input {}?",
                call.name,
                to_canonical_string(&call.input)
            ),
            "requestedSchema": {
                "type": "object",
                "properties": {"approve": {"type": "boolean", "title": "Approve"}},
                "required": ["approve"]
            }
        }))
        .map_err(|e| e.to_string())?;
        let answer = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => return Err(crate::engine::CANCELLED_MESSAGE.to_owned()),
            answer = self.peer.create_elicitation(params) => answer,
        };
        match answer {
            Ok(r)
                if r.action == ElicitationAction::Accept
                    && r.content.as_ref().and_then(|c| c.get("approve")) == Some(&json!(true)) =>
            {
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

/// Sends a call's progress values as `notifications/progress`, in order, until the call
/// ends (its sender is dropped).
pub(crate) async fn forward_progress(
    peer: Peer<RoleServer>,
    token: ProgressToken,
    mut values: mpsc::UnboundedReceiver<Value>,
) {
    let count = AtomicU64::new(0);
    while let Some(value) = values.recv().await {
        let n = count.fetch_add(1, Ordering::Relaxed) + 1;
        let _ = peer
            .notify_progress(progress_param(&token, n, &value))
            .await;
    }
}

/// A progress value as MCP progress: an object with a numeric `progress` (and optional
/// `total`, `message`) maps field by field; anything else counts one step, with the value
/// (text as is, other values as JSON) as the message.
fn progress_param(token: &ProgressToken, n: u64, value: &Value) -> ProgressNotificationParam {
    let (progress, total, message) = match value.get("progress").and_then(Value::as_f64) {
        Some(p) => (
            p,
            value.get("total").and_then(Value::as_f64),
            value
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned),
        ),
        None => (
            n as f64,
            None,
            Some(match value {
                Value::String(s) => s.clone(),
                v => to_canonical_string(v),
            }),
        ),
    };
    let mut param = json!({"progressToken": token, "progress": progress});
    if let Some(t) = total {
        param["total"] = json!(t);
    }
    if let Some(m) = message {
        param["message"] = json!(m);
    }
    serde_json::from_value(param).expect("a well-formed progress notification")
}
