//! A call's progress notifications (docs/behaviour.md §11): read off the transport in the
//! order the server sent them, and routed to the call that asked for them.
//!
//! `rmcp` hands every notification to a task of its own, so its handler may see a call's
//! progress out of order, or after the call's answer. The transport is read by one loop,
//! in order: [`ProgressTap`] routes each progress notification there, before the loop reads
//! the next message, so every value a server sent before its answer reaches the call first.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    JsonRpcMessage, JsonRpcNotification, ProgressNotificationParam, ServerNotification,
};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{json, Value};

use crate::tool_runtime::ToolRuntime;

/// Progress values kept for a call whose route is not registered yet.
const EARLY_PROGRESS: usize = 64;
/// Calls whose progress arrived before (or without) their route, kept at most: a server
/// that sends progress for tokens no call holds cannot grow the table without bound.
const EARLY_CALLS: usize = 256;

/// Where a call's progress notifications go.
enum Route {
    /// The call's runtime, which emits each value as a preliminary result.
    Listener(ToolRuntime),
    /// Arrived before the call registered its route (the server answered quickly).
    Early(Vec<Value>),
}

/// The routes of one connection's calls, by progress token.
#[derive(Default)]
pub(super) struct ProgressRoutes {
    routes: Mutex<HashMap<String, Route>>,
}

impl ProgressRoutes {
    fn publish(&self, key: String, value: Value) {
        let Ok(mut routes) = self.routes.lock() else {
            return;
        };
        if !routes.contains_key(&key) {
            let early = routes
                .values()
                .filter(|r| matches!(r, Route::Early(_)))
                .count();
            if early >= EARLY_CALLS {
                return;
            }
        }
        match routes
            .entry(key)
            .or_insert_with(|| Route::Early(Vec::new()))
        {
            Route::Listener(runtime) => runtime.emit_progress(value),
            Route::Early(values) if values.len() < EARLY_PROGRESS => values.push(value),
            Route::Early(_) => {}
        }
    }

    /// Routes the progress of the call holding `key` to `runtime`, first the values that
    /// arrived before.
    pub(super) fn listen(&self, key: String, runtime: ToolRuntime) {
        let Ok(mut routes) = self.routes.lock() else {
            return;
        };
        if let Some(Route::Early(values)) = routes.remove(&key) {
            for value in values {
                runtime.emit_progress(value);
            }
        }
        routes.insert(key, Route::Listener(runtime));
    }

    /// The call holding `key` ended.
    pub(super) fn forget(&self, key: &str) {
        if let Ok(mut routes) = self.routes.lock() {
            routes.remove(key);
        }
    }

    fn publish_params(&self, params: &ProgressNotificationParam) {
        let mut value = json!({"progress": params.progress});
        if let Some(total) = params.total {
            value["total"] = json!(total);
        }
        if let Some(message) = &params.message {
            value["message"] = json!(message);
        }
        self.publish(token_key(&params.progress_token), value);
    }
}

/// The key of a progress token (a string or a number) in [`ProgressRoutes`].
pub(super) fn token_key(token: &impl serde::Serialize) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

/// A client transport that routes progress notifications as it reads them.
pub(super) struct ProgressTap<T> {
    inner: T,
    routes: Arc<ProgressRoutes>,
}

impl<T> ProgressTap<T> {
    /// Wraps `inner`, routing its progress notifications through `routes`.
    pub(super) fn new(inner: T, routes: Arc<ProgressRoutes>) -> Self {
        Self { inner, routes }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for ProgressTap<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(JsonRpcNotification {
            notification: ServerNotification::ProgressNotification(progress),
            ..
        }) = &message
        {
            self.routes.publish_params(&progress.params);
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
