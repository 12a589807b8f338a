//! One server's connection on `rmcp`: connecting (stdio child or Streamable HTTP), the
//! client handler (progress, `tools/list_changed`, elicitation), listing, calling with
//! cancellation, and restarting a server that died. With `progress.rs` and `process.rs`
//! the only files that name `rmcp` types, so a major bump of `rmcp` touches these only.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientConfig, ClientNotification, ClientRequest,
    ElicitRequestParams, ElicitResult, ErrorData, PaginatedRequestParams, ProtocolVersion,
    RequestId, ServerResult,
};
use rmcp::service::{
    NotificationContext, Peer, PeerRequestOptions, RequestContext, RoleClient, RunningService,
    ServiceError,
};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::ClientHandler;
use serde_json::{json, Value};

use super::config::{McpElicitationHandler, McpServer, McpTransport};
use super::error::{mcp_failed, McpFailure};
use super::process;
use super::progress::{token_key, ProgressRoutes, ProgressTap};
use crate::error::ToolError;
use crate::tool_runtime::ToolRuntime;

/// How long starting a server (spawn + `initialize`) may take.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long listing a server's tools may take at least (longer when the server's
/// `timeoutMs`, a limit meant for its calls, is longer).
const LIST_TIMEOUT: Duration = Duration::from_secs(30);
/// The most pages of one listing: a server whose pages do not end broke the protocol.
const MAX_LIST_PAGES: usize = 1_000;
/// Our side of the protocol: what the server may send us.
struct Handler {
    server: String,
    generation: Arc<AtomicU64>,
    elicitation: Option<Arc<dyn McpElicitationHandler>>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let decline = || {
            serde_json::from_value::<ElicitResult>(json!({"action": "decline"}))
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))
        };
        let Some(hook) = &self.elicitation else {
            return decline();
        };
        let request = serde_json::to_value(&request).unwrap_or(Value::Null);
        match hook.on_elicitation(&self.server, request).await {
            Ok(answer) => match serde_json::from_value::<ElicitResult>(answer) {
                Ok(result) => Ok(result),
                Err(e) => Err(ErrorData::internal_error(
                    format!("invalid elicitation answer: {e}"),
                    None,
                )),
            },
            Err(_) => decline(),
        }
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = json!({});
        if self.elicitation.is_some() {
            capabilities["elicitation"] = json!({});
        }
        let mut info: ClientConfig = serde_json::from_value(json!({
            "protocolVersion": ProtocolVersion::LATEST_WITH_INITIALIZE,
            "capabilities": capabilities,
            "clientInfo": {"name": "phaseo-agent", "version": env!("CARGO_PKG_VERSION")},
        }))
        .expect("a valid client info");
        info.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
        info
    }
}

/// A started server.
struct Live {
    service: RunningService<RoleClient, Handler>,
    child: Mutex<Option<process::Child>>,
    progress: Arc<ProgressRoutes>,
}

impl Live {
    fn peer(&self) -> Peer<RoleClient> {
        self.service.peer().clone()
    }

    fn is_dead(&self) -> bool {
        if self.service.is_closed() || self.service.peer().is_transport_closed() {
            return true;
        }
        match self.child.lock() {
            Ok(child) => child.as_ref().is_some_and(|c| c.exit_status().is_some()),
            Err(_) => true,
        }
    }

    /// Why the server is gone: its exit status and the tail of its stderr.
    fn death_note(&self) -> String {
        let Ok(child) = self.child.lock() else {
            return String::new();
        };
        let Some(child) = child.as_ref() else {
            return String::new();
        };
        let mut note = String::new();
        if let Some(status) = child.exit_status() {
            note.push_str(&format!(" ({status})"));
        }
        let tail = child.stderr_tail();
        if !tail.is_empty() {
            note.push_str(&format!("; stderr: {tail}"));
        }
        note
    }

    fn shut(&self) {
        self.service.cancellation_token().cancel();
        if let Ok(mut child) = self.child.lock() {
            child.take();
        }
    }
}

/// A server's connection: started lazily, shared by the agent's runs, restarted on the
/// next use after it died, closed with the agent.
pub(crate) struct Connection {
    server: Arc<McpServer>,
    live: tokio::sync::Mutex<Option<Arc<Live>>>,
    /// Bumped on `tools/list_changed` and on every (re)start: a listing made under an
    /// older generation is stale.
    generation: Arc<AtomicU64>,
}

impl Connection {
    pub(crate) fn new(server: Arc<McpServer>) -> Self {
        Connection {
            server,
            live: tokio::sync::Mutex::new(None),
            generation: Arc::new(AtomicU64::new(0)),
        }
    }

    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    fn name(&self) -> &str {
        &self.server.name
    }

    async fn live(&self) -> Result<Arc<Live>, McpFailure> {
        let mut slot = self.live.lock().await;
        if let Some(live) = slot.as_ref() {
            if !live.is_dead() {
                return Ok(live.clone());
            }
            live.shut();
            *slot = None;
        }
        let live = Arc::new(self.start().await?);
        self.generation.fetch_add(1, Ordering::SeqCst);
        *slot = Some(live.clone());
        Ok(live)
    }

    async fn start(&self) -> Result<Live, McpFailure> {
        let progress = Arc::new(ProgressRoutes::default());
        let handler = Handler {
            server: self.server.name.clone(),
            generation: self.generation.clone(),
            elicitation: self.server.on_elicitation.clone(),
        };
        let could_not_start = |detail: String| McpFailure::Start(detail);
        match &self.server.transport {
            McpTransport::Stdio { .. } => {
                let spec = process::Spec::from_transport(&self.server.transport)
                    .expect("a stdio transport");
                let (child, pipes) = process::start(spec).await.map_err(could_not_start)?;
                let transport = AsyncRwTransport::new_client(pipes.stdout, pipes.stdin);
                let transport = ProgressTap::new(transport, progress.clone());
                let serving = rmcp::service::serve_client(handler, transport);
                match tokio::time::timeout(START_TIMEOUT, serving).await {
                    Ok(Ok(service)) => Ok(Live {
                        service,
                        child: Mutex::new(Some(child)),
                        progress,
                    }),
                    Ok(Err(e)) => {
                        // Let the stderr drain catch the child's last words.
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        let mut detail = e.to_string();
                        if let Some(status) = child.exit_status() {
                            detail.push_str(&format!(" ({status})"));
                        }
                        let tail = child.stderr_tail();
                        if !tail.is_empty() {
                            detail.push_str(&format!("; stderr: {tail}"));
                        }
                        Err(could_not_start(detail))
                    }
                    Err(_) => Err(could_not_start(format!(
                        "no answer to initialize within {}s",
                        START_TIMEOUT.as_secs()
                    ))),
                }
            }
            McpTransport::Http {
                url,
                headers,
                bearer,
            } => {
                use rmcp::transport::streamable_http_client::{
                    StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
                };
                let client = crate::clients::shared_http_client().map_err(could_not_start)?;
                let mut custom = HashMap::new();
                for (k, v) in headers {
                    let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
                        .map_err(|e| could_not_start(format!("invalid header name {k:?}: {e}")))?;
                    let value = reqwest::header::HeaderValue::from_str(v)
                        .map_err(|e| could_not_start(format!("invalid header {k:?}: {e}")))?;
                    custom.insert(name, value);
                }
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(custom)
                    .max_concurrent_requests(1024);
                if let Some(token) = bearer {
                    config = config.auth_header(token.clone());
                }
                let transport = StreamableHttpClientTransport::with_client(client, config);
                let transport = ProgressTap::new(transport, progress.clone());
                let serving = rmcp::service::serve_client(handler, transport);
                match tokio::time::timeout(START_TIMEOUT, serving).await {
                    Ok(Ok(service)) => Ok(Live {
                        service,
                        child: Mutex::new(None),
                        progress,
                    }),
                    Ok(Err(e)) => Err(could_not_start(e.to_string())),
                    Err(_) => Err(could_not_start(format!(
                        "no answer to initialize within {}s",
                        START_TIMEOUT.as_secs()
                    ))),
                }
            }
        }
    }

    /// The server's tools as MCP JSON objects (`name`, `description`, `inputSchema`, …).
    /// A listing ends within 30 s (or the server's `timeoutMs`, when longer) and within 1,000
    /// pages, each with a cursor of its own (docs/behaviour.md §11).
    pub(crate) async fn list_tools(&self) -> Result<Vec<Value>, String> {
        let live = self.live().await.map_err(|f| f.message(self.name()))?;
        let limit = self
            .server
            .timeout
            .map_or(LIST_TIMEOUT, |t| t.max(LIST_TIMEOUT));
        let pages = tokio::time::timeout(limit, list_pages(live.peer())).await;
        let failure = match pages {
            Ok(Ok(tools)) => {
                return Ok(tools
                    .iter()
                    .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
                    .collect())
            }
            Ok(Err(ListFailure::Request(e))) => self.failure_of(&live, e).await,
            Ok(Err(ListFailure::Endless(detail))) => McpFailure::Protocol(detail),
            Err(_) => McpFailure::Protocol(format!(
                "no complete answer to tools/list within {} ms",
                limit.as_millis()
            )),
        };
        Err(format!(
            "{} while listing its tools",
            failure.message(self.name())
        ))
    }

    /// Calls a tool; the raw MCP result object. Dropping the future (timeout, run
    /// cancelled) sends `notifications/cancelled` for the request.
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: Value,
        runtime: &ToolRuntime,
    ) -> Result<Value, ToolError> {
        let live = self
            .live()
            .await
            .map_err(|f| mcp_failed(f.message(self.name())))?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = match arguments {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return Err(ToolError::new(format!(
                    "MCP tool arguments must be an object, got {other}"
                )))
            }
        };
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let peer = live.peer();
        let handle = match peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(e) => {
                return Err(mcp_failed(
                    self.failure_of(&live, e).await.message(self.name()),
                ))
            }
        };
        let key = token_key(&handle.progress_token);
        live.progress.listen(key.clone(), runtime.clone());
        let mut guard = CancelOnDrop {
            peer,
            id: Some(handle.id.clone()),
            routes: live.progress.clone(),
            key,
        };
        let response = handle.await_response().await;
        guard.id = None;
        drop(guard);
        match response {
            Ok(ServerResult::CallToolResult(result)) => {
                Ok(serde_json::to_value(&result).unwrap_or(Value::Null))
            }
            Ok(other) => Err(mcp_failed(format!(
                "MCP server '{}' broke the protocol: unexpected answer to tools/call: {}",
                self.name(),
                serde_json::to_string(&other).unwrap_or_default()
            ))),
            Err(ServiceError::McpError(e)) => Err(ToolError::new(format!(
                "MCP server '{}' refused the call of '{tool}': {}",
                self.name(),
                e.message
            ))),
            Err(e) => Err(mcp_failed(
                self.failure_of(&live, e).await.message(self.name()),
            )),
        }
    }

    /// Classifies a request failure; a dead server is dropped so the next use restarts it.
    async fn failure_of(&self, live: &Arc<Live>, e: ServiceError) -> McpFailure {
        let closed = matches!(
            e,
            ServiceError::TransportClosed | ServiceError::TransportSend(_)
        );
        if closed || live.is_dead() {
            // Give the child a moment to be reaped and its stderr drained.
            tokio::time::sleep(Duration::from_millis(50)).await;
            let note = live.death_note();
            let mut slot = self.live.lock().await;
            if slot.as_ref().is_some_and(|l| Arc::ptr_eq(l, live)) {
                live.shut();
                *slot = None;
            }
            McpFailure::Died(note)
        } else {
            McpFailure::Protocol(e.to_string())
        }
    }

    /// Stops the server (kills a stdio child). The next use starts it again.
    pub(crate) async fn close(&self) {
        if let Some(live) = self.live.lock().await.take() {
            live.shut();
        }
    }
}

/// Sends `notifications/cancelled` when a call is abandoned (timeout, cancelled run).
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
    routes: Arc<ProgressRoutes>,
    key: String,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.routes.forget(&self.key);
        let Some(id) = self.id.take() else {
            return;
        };
        let Ok(notification) = serde_json::from_value::<ClientNotification>(json!({
            "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "The tool call was abandoned (timeout or cancelled run)"},
        })) else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let peer = self.peer.clone();
            runtime.spawn(async move {
                let _ = peer.send_notification(notification).await;
            });
        }
    }
}

/// Why the pages of a listing did not come to an end.
enum ListFailure {
    Request(ServiceError),
    Endless(String),
}

/// Every page of `tools/list`, following `nextCursor`; a cursor seen before or more than
/// [`MAX_LIST_PAGES`] pages end it (a hostile or broken server would page for ever).
async fn list_pages(peer: Peer<RoleClient>) -> Result<Vec<rmcp::model::Tool>, ListFailure> {
    let mut tools = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_LIST_PAGES {
        let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
        let page = peer
            .list_tools(Some(params))
            .await
            .map_err(ListFailure::Request)?;
        tools.extend(page.tools);
        match page.next_cursor {
            None => return Ok(tools),
            Some(next) if !seen.insert(next.clone()) => {
                return Err(ListFailure::Endless(format!(
                    "tools/list gave the cursor {next:?} twice"
                )))
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(ListFailure::Endless(format!(
        "tools/list did not end within {MAX_LIST_PAGES} pages"
    )))
}
