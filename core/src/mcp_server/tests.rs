//! The served tools over a byte stream (the stdio framing) with a raw JSON-RPC client,
//! and over Streamable HTTP with the Rust MCP SDK's client.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, WriteHalf};

use super::*;
use crate::options::ToolExecutionConfig;
use crate::schema::json_schema_validator;
use crate::tool::ToolRetry;
use crate::ToolError;

fn add() -> Tool {
    Tool::new(
        "add",
        "Adds two numbers",
        json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
               "required": ["a", "b"], "additionalProperties": false}),
        |input, _rt| {
            Ok(json!({"sum": input["a"].as_f64().unwrap() + input["b"].as_f64().unwrap()}))
        },
    )
    .output_schema(
        json_schema_validator(
            &json!({"type": "object", "properties": {"sum": {"type": "number"}}}),
        )
        .unwrap(),
    )
    .annotations(json!({"readOnlyHint": true, "title": "Add numbers"}))
}

fn greet() -> Tool {
    Tool::new(
        "greet",
        "Greets",
        json!({"type": "object"}),
        |input, _rt| {
            Ok(json!(format!(
                "Hello, {}",
                input["name"].as_str().unwrap_or("you")
            )))
        },
    )
}

/// Sleeps until cancelled; counts the cancellations it saw.
fn slow(cancelled: Arc<AtomicUsize>) -> Tool {
    Tool::new_async(
        "slow",
        "Waits",
        json!({"type": "object"}),
        move |_input, rt| {
            let cancelled = cancelled.clone();
            async move {
                tokio::select! {
                    _ = rt.cancelled() => {
                        cancelled.fetch_add(1, Ordering::SeqCst);
                        Err(ToolError::new("cancelled"))
                    }
                    _ = tokio::time::sleep(Duration::from_secs(600)) => Ok(json!("done")),
                }
            }
        },
    )
}

fn delete(ran: Arc<AtomicUsize>) -> Tool {
    Tool::new(
        "delete",
        "Deletes a file",
        json!({"type": "object"}),
        move |_input, _rt| {
            ran.fetch_add(1, Ordering::SeqCst);
            Ok(json!("deleted"))
        },
    )
    .require_approval()
}

fn steps() -> Tool {
    Tool::new_async(
        "steps",
        "Reports progress",
        json!({"type": "object"}),
        |_input, rt| async move {
            rt.emit_progress(json!({"progress": 1, "total": 2, "message": "half"}));
            rt.emit_progress(json!("almost"));
            Ok(json!(2))
        },
    )
}

struct Wire {
    writer: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    next_id: u64,
    _server: McpToolServer,
}

impl Wire {
    async fn start(tools: Vec<Tool>, options: McpServeOptions, elicitation: bool) -> Wire {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server);
        let server = serve_mcp_on(tools, options, server_read, server_write).unwrap();
        let (read, writer) = tokio::io::split(client);
        let mut wire = Wire {
            writer,
            lines: BufReader::new(read).lines(),
            next_id: 0,
            _server: server,
        };
        let capabilities = match elicitation {
            true => json!({"elicitation": {}}),
            false => json!({}),
        };
        let init = wire
            .request(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": capabilities,
                       "clientInfo": {"name": "wire", "version": "1"}}),
            )
            .await;
        let id = init;
        let answer = wire.response(id).await;
        assert_eq!(answer["result"]["serverInfo"]["name"], "tools");
        wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        wire
    }

    async fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.writer.write_all(&line).await.unwrap();
    }

    async fn request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
            .await
            .expect("the server answers within a minute")
            .unwrap()
            .expect("the server is still there");
        serde_json::from_str(&line).unwrap()
    }

    /// The response to `id`, skipping notifications.
    async fn response(&mut self, id: u64) -> Value {
        loop {
            let m = self.next().await;
            if m["id"] == json!(id) && m.get("method").is_none() {
                return m;
            }
        }
    }

    async fn call(&mut self, name: &str, arguments: Value) -> Value {
        let id = self
            .request("tools/call", json!({"name": name, "arguments": arguments}))
            .await;
        self.response(id).await["result"].clone()
    }
}

fn options() -> McpServeOptions {
    McpServeOptions::new("tools").version("1.2.3")
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

#[tokio::test]
async fn lists_tools_with_schemas_and_annotations() {
    let ran = Arc::new(AtomicUsize::new(0));
    let mut wire = Wire::start(vec![add(), greet(), delete(ran)], options(), false).await;
    let id = wire.request("tools/list", json!({})).await;
    let tools = wire.response(id).await["result"]["tools"].clone();
    assert_eq!(tools[0]["name"], "add");
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["a", "b"]));
    assert_eq!(
        tools[0]["outputSchema"]["properties"]["sum"]["type"],
        "number"
    );
    assert_eq!(tools[0]["annotations"]["readOnlyHint"], true);
    assert_eq!(tools[0]["title"], "Add numbers");
    assert!(tools[1].get("outputSchema").is_none());
    assert_eq!(tools[1]["inputSchema"]["type"], "object");
    assert_eq!(tools[2]["annotations"]["destructiveHint"], true);
}

#[tokio::test]
async fn results_errors_and_validation() {
    let mut wire = Wire::start(vec![add(), greet()], options(), false).await;
    let sum = wire.call("add", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum["structuredContent"], json!({"sum": 5.0}));
    assert_eq!(text(&sum), r#"{"sum":5}"#);
    assert!(sum.get("isError").is_none_or(|e| e == false));
    let hello = wire.call("greet", json!({"name": "Ada"})).await;
    assert_eq!(text(&hello), "Hello, Ada");
    assert!(hello.get("structuredContent").is_none());
    let invalid = wire.call("add", json!({"a": "two"})).await;
    assert_eq!(invalid["isError"], true);
    assert!(
        text(&invalid).starts_with("Invalid tool input"),
        "{invalid}"
    );
    let unknown = wire.call("nope", json!({})).await;
    assert_eq!(unknown["isError"], true);
    assert_eq!(text(&unknown), "Unknown tool 'nope'");
}

#[tokio::test]
async fn timeout_and_retries_follow_the_tool() {
    let attempts = Arc::new(AtomicUsize::new(0));
    let seen = attempts.clone();
    let flaky = Tool::new(
        "flaky",
        "Fails once",
        json!({"type": "object"}),
        move |_i, _rt| match seen.fetch_add(1, Ordering::SeqCst) {
            0 => Err(ToolError::new("first attempt fails")),
            _ => Ok(json!("second")),
        },
    )
    .retry(ToolRetry::new(2, 0));
    let sleepy = slow(Arc::new(AtomicUsize::new(0))).timeout(Duration::from_millis(200));
    let mut wire = Wire::start(vec![flaky, sleepy], options(), false).await;
    assert_eq!(text(&wire.call("flaky", json!({})).await), "second");
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    let timed_out = wire.call("slow", json!({})).await;
    assert_eq!(timed_out["isError"], true);
    assert_eq!(text(&timed_out), "Tool slow timed out after 200ms");
}

#[tokio::test]
async fn budgets_count_over_the_server() {
    let mut wire = Wire::start(
        vec![greet().max_calls(1), add()],
        options().tool_execution(ToolExecutionConfig::default().max_tool_calls(2)),
        false,
    )
    .await;
    assert_eq!(text(&wire.call("greet", json!({})).await), "Hello, you");
    let refused = wire.call("greet", json!({})).await;
    assert_eq!(
        text(&refused),
        "Tool greet may be called at most 1 times in a run"
    );
    // A refused call is not admitted: the second admitted call is this one.
    let second = wire.call("add", json!({"a": 1, "b": 1})).await;
    assert_eq!(second["structuredContent"], json!({"sum": 2.0}));
    let third = wire.call("add", json!({"a": 1, "b": 1})).await;
    assert_eq!(third["isError"], true);
    assert_eq!(text(&third), "A run may make at most 2 tool calls");
}

#[tokio::test]
async fn progress_reaches_a_request_with_a_token() {
    let mut wire = Wire::start(vec![steps()], options(), false).await;
    let id = wire
        .request(
            "tools/call",
            json!({"name": "steps", "arguments": {}, "_meta": {"progressToken": "p1"}}),
        )
        .await;
    let first = wire.next().await;
    assert_eq!(first["method"], "notifications/progress");
    assert_eq!(
        first["params"],
        json!({"progressToken": "p1", "progress": 1.0, "total": 2.0, "message": "half"})
    );
    let second = wire.next().await;
    assert_eq!(second["params"]["progress"], 2.0);
    assert_eq!(second["params"]["message"], "almost");
    let done = wire.next().await;
    assert_eq!(done["id"], json!(id));
    assert_eq!(text(&done["result"]), "2");
}

#[tokio::test]
async fn cancellation_reaches_the_executor() {
    let cancelled = Arc::new(AtomicUsize::new(0));
    let mut wire = Wire::start(
        vec![slow(cancelled.clone()), greet()],
        options().tool_execution(ToolExecutionConfig::default().tool_concurrency(2)),
        false,
    )
    .await;
    let id = wire
        .request("tools/call", json!({"name": "slow", "arguments": {}}))
        .await;
    // The call is running once a later call on the same connection has been answered.
    assert_eq!(text(&wire.call("greet", json!({})).await), "Hello, you");
    wire.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": id, "reason": "user"}}),
    )
    .await;
    for _ in 0..600 {
        if cancelled.load(Ordering::SeqCst) == 1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the executor was not cancelled");
}

/// Answers the next `elicitation/create` with `answer`; returns its params.
async fn answer_elicitation(wire: &mut Wire, answer: Value) -> Value {
    let request = wire.next().await;
    assert_eq!(request["method"], "elicitation/create", "{request}");
    wire.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": answer}))
        .await;
    request["params"].clone()
}

#[tokio::test]
async fn approval_is_asked_through_elicitation() {
    let ran = Arc::new(AtomicUsize::new(0));
    let mut wire = Wire::start(vec![delete(ran.clone())], options(), true).await;
    let id = wire
        .request(
            "tools/call",
            json!({"name": "delete", "arguments": {"path": "/tmp/x"}}),
        )
        .await;
    let asked = answer_elicitation(
        &mut wire,
        json!({"action": "accept", "content": {"approve": true}}),
    )
    .await;
    let message = asked["message"].as_str().unwrap();
    assert!(
        message.contains("delete") && message.contains(r#"{"path":"/tmp/x"}"#),
        "{message}"
    );
    assert_eq!(
        asked["requestedSchema"]["properties"]["approve"]["type"],
        "boolean"
    );
    assert_eq!(text(&wire.response(id).await["result"]), "deleted");
    assert_eq!(ran.load(Ordering::SeqCst), 1);

    for answer in [
        json!({"action": "accept", "content": {"approve": false}}),
        json!({"action": "decline"}),
        json!({"action": "cancel"}),
    ] {
        let id = wire
            .request("tools/call", json!({"name": "delete", "arguments": {}}))
            .await;
        answer_elicitation(&mut wire, answer).await;
        let refused = wire.response(id).await["result"].clone();
        assert_eq!(refused["isError"], true);
        assert_eq!(text(&refused), "Tool call rejected by human");
    }
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_client_without_elicitation_is_refused() {
    let ran = Arc::new(AtomicUsize::new(0));
    let mut wire = Wire::start(vec![delete(ran.clone())], options(), false).await;
    let refused = wire.call("delete", json!({})).await;
    assert_eq!(refused["isError"], true);
    assert_eq!(
        text(&refused),
        "Tool delete requires approval and this client cannot be asked"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn calls_run_up_to_tool_concurrency() {
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (r, p) = (running.clone(), peak.clone());
    let busy = Tool::new_async(
        "busy",
        "Holds a slot",
        json!({"type": "object"}),
        move |_i, _rt| {
            let (r, p) = (r.clone(), p.clone());
            async move {
                let now = r.fetch_add(1, Ordering::SeqCst) + 1;
                p.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(300)).await;
                r.fetch_sub(1, Ordering::SeqCst);
                Ok(json!("ok"))
            }
        },
    );
    let mut wire = Wire::start(
        vec![busy],
        options().tool_execution(ToolExecutionConfig::default().tool_concurrency(2)),
        false,
    )
    .await;
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(
            wire.request("tools/call", json!({"name": "busy", "arguments": {}}))
                .await,
        );
    }
    for id in ids {
        assert_eq!(text(&wire.response(id).await["result"]), "ok");
    }
    assert!(peak.load(Ordering::SeqCst) <= 2);
}

#[tokio::test]
async fn stops_at_the_end_of_input_and_on_close() {
    let wire = Wire::start(vec![greet()], options(), false).await;
    let Wire {
        writer,
        _server: server,
        lines,
        ..
    } = wire;
    drop(writer);
    drop(lines);
    tokio::time::timeout(Duration::from_secs(60), server.wait())
        .await
        .expect("the server stops at the end of its input");
    assert!(server.is_closed());

    let (_client, end) = tokio::io::duplex(64);
    let (r, w) = tokio::io::split(end);
    let idle = serve_mcp_on(vec![greet()], options(), r, w).unwrap();
    tokio::time::timeout(Duration::from_secs(60), idle.close())
        .await
        .expect("close stops the server");
}

#[tokio::test]
async fn refuses_what_cannot_be_served() {
    let manual = Tool::external("ask", "Asks a person", json!({"type": "object"}));
    let (_c, end) = tokio::io::duplex(64);
    let (r, w) = tokio::io::split(end);
    let e = serve_mcp_on(vec![manual], options(), r, w).unwrap_err();
    assert_eq!(e.code(), ErrorCode::DefinitionInvalid);
    assert_eq!(
        e.message(),
        "Tool ask has no execute and cannot be served over MCP"
    );
    let e = serve_mcp(vec![], options()).await.unwrap_err();
    assert_eq!(e.message(), "An MCP server needs at least one tool");
    let e = serve_mcp(
        vec![greet()],
        options().transport(McpServeTransport::Http(McpHttpServeOptions {
            path: "mcp".into(),
            ..Default::default()
        })),
    )
    .await
    .unwrap_err();
    assert_eq!(e.message(), r#"transport.path must start with '/': "mcp""#);
}

async fn http_server(auth: Option<&str>) -> McpToolServer {
    serve_mcp(
        vec![add(), greet()],
        options().transport(McpServeTransport::Http(McpHttpServeOptions {
            auth_token: auth.map(str::to_owned),
            ..Default::default()
        })),
    )
    .await
    .unwrap()
}

fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
           "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                      "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string()
}

fn post(url: &str) -> reqwest::RequestBuilder {
    crate::clients::http::http_client()
        .unwrap()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize_body())
}

#[tokio::test]
async fn http_binds_loopback_and_serves_the_sdk_client() {
    use rmcp::ServiceExt;
    let server = http_server(None).await;
    let url = server.url().unwrap().to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
        crate::clients::http::http_client().unwrap(),
        StreamableHttpClientTransportConfig::with_uri(url.as_str()),
    );
    let client = ().serve(transport).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 2);
    let result = client
        .call_tool(
            serde_json::from_value(json!({"name": "add", "arguments": {"a": 1, "b": 2}})).unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({"sum": 3.0})));
    client.cancel().await.unwrap();
    tokio::time::timeout(Duration::from_secs(60), server.close())
        .await
        .expect("close stops the HTTP server");
    let after = crate::clients::http::http_client()
        .unwrap()
        .get(&url)
        .send()
        .await;
    assert!(after.is_err(), "nothing listens after close");
}

#[tokio::test]
async fn http_refuses_foreign_origins_and_missing_tokens() {
    let server = http_server(Some("s3cret")).await;
    let url = server.url().unwrap().to_owned();
    let missing = post(&url).send().await.unwrap();
    assert_eq!(missing.status(), 401);
    let wrong = post(&url).bearer_auth("nope").send().await.unwrap();
    assert_eq!(wrong.status(), 401);
    let foreign = post(&url)
        .bearer_auth("s3cret")
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
    let local = post(&url)
        .bearer_auth("s3cret")
        .header("origin", "http://localhost:3000")
        .send()
        .await
        .unwrap();
    assert_eq!(local.status(), 200);
    let elsewhere = post(&url.replace("/mcp", "/other"))
        .bearer_auth("s3cret")
        .send()
        .await
        .unwrap();
    assert_eq!(elsewhere.status(), 404);
}

/// An agent whose model calls `delete` once, then answers with the tool's result (or
/// the rejection it saw).
fn researcher(ran: Arc<AtomicUsize>) -> crate::Agent {
    crate::create_agent(AgentDefinition::new("researcher").tool(delete(ran))).unwrap()
}

fn scripted_delete_then_answer() -> Arc<crate::ScriptedClient> {
    use crate::ModelResponse;
    Arc::new(crate::ScriptedClient::from_responses([
        ModelResponse::tool_calls([("n1", "delete", r#"{"path":"/tmp/x"}"#)]),
        ModelResponse::text("researched"),
    ]))
}

async fn agent_wire(ran: Arc<AtomicUsize>, elicitation: bool) -> Wire {
    let tool = researcher(ran)
        .as_tool(crate::AsToolOptions::new().description("Researches"))
        .unwrap();
    let options = options().client(scripted_delete_then_answer());
    Wire::start(vec![tool], options, elicitation).await
}

#[tokio::test]
async fn an_agent_is_served_as_one_tool_with_approvals_through_elicitation() {
    let ran = Arc::new(AtomicUsize::new(0));
    let mut wire = agent_wire(ran.clone(), true).await;
    let listed = wire.request("tools/list", json!({})).await;
    let listed = wire.response(listed).await["result"]["tools"].clone();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["name"], "researcher");
    assert_eq!(listed[0]["description"], "Researches");
    assert_eq!(
        listed[0]["inputSchema"],
        crate::agent_tool::default_agent_tool_parameters()
    );

    let id = wire
        .request(
            "tools/call",
            json!({"name": "researcher", "arguments": {"input": "find x"}}),
        )
        .await;
    let asked = answer_elicitation(
        &mut wire,
        json!({"action": "accept", "content": {"approve": true}}),
    )
    .await;
    let message = asked["message"].as_str().unwrap();
    assert!(
        message.contains("delete") && message.contains(r#"{"path":"/tmp/x"}"#),
        "{message}"
    );
    let done = wire.response(id).await["result"].clone();
    assert_eq!(done["isError"], false, "{done}");
    assert_eq!(text(&done), "researched");
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_declined_nested_approval_is_the_agents_rejection() {
    let ran = Arc::new(AtomicUsize::new(0));
    let mut wire = agent_wire(ran.clone(), true).await;
    let id = wire
        .request(
            "tools/call",
            json!({"name": "researcher", "arguments": {"input": "find x"}}),
        )
        .await;
    answer_elicitation(&mut wire, json!({"action": "decline"})).await;
    let done = wire.response(id).await["result"].clone();
    // The nested agent saw the rejection and answered anyway.
    assert_eq!(text(&done), "researched");
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_served_agent_refuses_a_client_without_elicitation() {
    let ran = Arc::new(AtomicUsize::new(0));
    let mut wire = agent_wire(ran.clone(), false).await;
    let refused = wire.call("researcher", json!({"input": "x"})).await;
    assert_eq!(refused["isError"], true);
    assert_eq!(
        text(&refused),
        "Tool delete requires approval and this client cannot be asked"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_served_agent_needs_a_model_client_and_its_input() {
    let ran = Arc::new(AtomicUsize::new(0));
    let tool = researcher(ran.clone())
        .as_tool(crate::AsToolOptions::new())
        .unwrap();
    let refused = serve_mcp(vec![tool], options()).await.unwrap_err();
    assert_eq!(refused.code(), ErrorCode::DefinitionInvalid);
    assert_eq!(
        refused.message(),
        "Tool researcher runs an agent and needs a model client to be served: give the server a client"
    );
    let mut wire = agent_wire(ran, true).await;
    let invalid = wire.call("researcher", json!({"question": 1})).await;
    assert_eq!(invalid["isError"], true);
    assert!(text(&invalid).contains("input"), "{invalid}");
}
