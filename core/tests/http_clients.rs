//! The HTTP model clients (`GatewayClient`, `OpenAICompatibleClient`) against tiny HTTP
//! servers the tests start on 127.0.0.1: round trips, request bodies field by field,
//! streaming, retries, gateway errors, transport failures, timeouts and key hygiene.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use phaseo_agent::{
    create_agent, json, json_schema_validator, Agent, AgentDefinition, AgentEvent,
    CancellationToken, ErrorCode, EventListener, EventType, GatewayClient, Message, ModelClient,
    ModelRequest, ModelRetry, OpenAICompatibleClient, RunOptions, RunOverrides, RunStatus, Tool,
    ToolChoice, Value,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

const KEY: &str = "sk-test-SECRET-0123456789";

// ---------------------------------------------------------------------------------------
// A tiny HTTP/1.1 server

/// One request as the server saw it.
#[derive(Clone, Debug)]
struct Recorded {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Recorded {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One piece of an event stream, optionally held back until `wait` is notified.
struct Chunk {
    text: String,
    wait: Option<Arc<Notify>>,
}

fn chunk(data: &Value) -> Chunk {
    Chunk {
        text: format!("data: {data}\n\n"),
        wait: None,
    }
}

fn raw_chunk(text: &str) -> Chunk {
    Chunk {
        text: text.to_owned(),
        wait: None,
    }
}

/// What the server answers.
enum Reply {
    Json(u16, Vec<(&'static str, String)>, String),
    Events(Vec<Chunk>),
    /// Reads the request and never answers.
    Hang,
}

fn ok(body: Value) -> Reply {
    Reply::Json(200, vec![], body.to_string())
}

type Handler = dyn Fn(usize, &Recorded) -> Reply + Send + Sync;

struct Server {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl Server {
    async fn start(handler: impl Fn(usize, &Recorded) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let seen = requests.clone();
        let count = Arc::new(AtomicUsize::new(0));
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let (handler, seen, count) = (handler.clone(), seen.clone(), count.clone());
                tokio::spawn(async move {
                    serve(socket, handler, seen, count).await;
                });
            }
        });
        Server { addr, requests }
    }

    /// A server answering every request with the next reply of `replies` (the last one
    /// repeats).
    async fn script(replies: Vec<Reply>) -> Self {
        let replies = Mutex::new(replies.into_iter().map(Some).collect::<Vec<_>>());
        Self::start(move |i, _| {
            let mut r = replies.lock().unwrap();
            let n = r.len();
            r[i.min(n - 1)]
                .take()
                .expect("the scripted server ran out of replies")
        })
        .await
    }

    fn base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

async fn serve(
    mut socket: TcpStream,
    handler: Arc<Handler>,
    seen: Arc<Mutex<Vec<Recorded>>>,
    count: Arc<AtomicUsize>,
) {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        match socket.read(&mut tmp).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&tmp[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut start = lines.next().unwrap_or("").split(' ');
    let method = start.next().unwrap_or("").to_owned();
    let path = start.next().unwrap_or("").to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        match socket.read(&mut tmp).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&tmp[..n]),
        }
    }
    let body = serde_json::from_slice(&buf[head_end..head_end + length]).unwrap_or(Value::Null);
    let recorded = Recorded {
        method,
        path,
        headers,
        body,
    };
    seen.lock().unwrap().push(recorded.clone());
    let index = count.fetch_add(1, Ordering::SeqCst);
    match handler(index, &recorded) {
        Reply::Json(status, headers, body) => {
            let mut out = format!(
                "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                reason_phrase(status),
                body.len()
            );
            for (n, v) in headers {
                out.push_str(&format!("{n}: {v}\r\n"));
            }
            out.push_str("\r\n");
            out.push_str(&body);
            let _ = socket.write_all(out.as_bytes()).await;
        }
        Reply::Events(chunks) => {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nx-request-id: req-stream\r\nConnection: close\r\n\r\n";
            if socket.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            for c in chunks {
                if let Some(wait) = c.wait {
                    wait.notified().await;
                }
                if socket.write_all(c.text.as_bytes()).await.is_err() {
                    return;
                }
                let _ = socket.flush().await;
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
    }
    let _ = socket.shutdown().await;
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Whatever",
    }
}

/// A port with nothing listening.
/// A server that answers every request with `head` and then a body that never ends,
/// `piece` after `piece` (chunked), as fast as the client reads.
async fn endless(head: &'static str, piece: &'static [u8]) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let chunk = [format!("{:x}\r\n", piece.len()).as_bytes(), piece, b"\r\n"].concat();
                let chunks = chunk.repeat(64);
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                while socket.write_all(&chunks).await.is_ok() {}
            });
        }
    });
    base
}

/// An event-stream comment line of 64 KiB.
const COMMENT_LINE: &[u8] = &{
    let mut line = [b'x'; 65536];
    line[0] = b':';
    line[65535] = b'\n';
    line
};

#[tokio::test]
async fn a_body_or_stream_without_end_is_refused_at_128_mib() {
    // JSON whitespace for ever: a body the client would otherwise read until its timeout.
    let base = endless(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n",
        &[b' '; 65536],
    )
    .await;
    let started = Instant::now();
    let client = Arc::new(
        GatewayClient::new()
            .base_url(base)
            .api_key(KEY)
            .timeout(Duration::from_secs(600)),
    );
    let err = plain_agent(ModelRetry::default())
        .run(RunOptions::new("hi", client))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ModelFailed);
    assert_eq!(
        err.message(),
        "malformed response body: the response body is longer than 128 MiB"
    );
    // Comments for ever: an event stream that never goes idle.
    let base = endless(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
        COMMENT_LINE,
    )
    .await;
    let client = Arc::new(
        OpenAICompatibleClient::new()
            .base_url(base)
            .timeout(Duration::from_secs(600)),
    );
    let stream = plain_agent(ModelRetry::default()).stream(RunOptions::new("hi", client));
    let err = stream.result().await.unwrap_err();
    assert_eq!(
        err.message(),
        "malformed response body: the event stream is longer than 128 MiB"
    );
    assert!(started.elapsed() < Duration::from_secs(300));
}

async fn dead_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    port
}

// ---------------------------------------------------------------------------------------
// Agents and canned responses

fn add_tool() -> Tool {
    Tool::new(
        "add",
        "Adds two integers",
        json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"]
        }),
        |input, _rt| {
            Ok(json!(
                input["a"].as_i64().unwrap() + input["b"].as_i64().unwrap()
            ))
        },
    )
}

fn calculator() -> Agent {
    create_agent(
        AgentDefinition::new("calculator")
            .instructions("Use the add tool.")
            .model("test-model")
            .temperature(0.2)
            .max_output_tokens(256u64)
            .top_p(0.9)
            .tool(add_tool()),
    )
    .unwrap()
}

fn plain_agent(retry: ModelRetry) -> Agent {
    create_agent(
        AgentDefinition::new("plain")
            .model("test-model")
            .model_retry(retry),
    )
    .unwrap()
}

fn gateway(server: &Server) -> Arc<GatewayClient> {
    Arc::new(GatewayClient::new().base_url(server.base()).api_key(KEY))
}

fn openai(server: &Server) -> Arc<OpenAICompatibleClient> {
    Arc::new(
        OpenAICompatibleClient::new()
            .base_url(server.base())
            .api_key(KEY),
    )
}

/// Both clients against the same server.
fn both(server: &Server) -> [(&'static str, Arc<dyn ModelClient>); 2] {
    [("gateway", gateway(server)), ("openai", openai(server))]
}

fn responses_call() -> Value {
    json!({
        "id": "resp_1",
        "model": "test-model",
        "provider": "acme",
        "status": "completed",
        "output": [{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "add",
                    "arguments": "{\"a\":2,\"b\":3}"}],
        "usage": {"input_tokens": 20, "output_tokens": 5, "total_tokens": 25,
                  "input_tokens_details": {"cached_tokens": 8}},
        "cost": 0.002
    })
}

fn responses_text(text: &str) -> Value {
    json!({
        "id": "resp_2",
        "model": "test-model",
        "status": "completed",
        "output": [{"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": text}]}],
        "usage": {"input_tokens": 30, "output_tokens": 4, "total_tokens": 34},
        "meta": {"cost": 0.003}
    })
}

fn chat_call() -> Value {
    json!({
        "id": "chatcmpl-1",
        "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "add", "arguments": "{\"a\":2,\"b\":3}"}}]}}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25,
                  "prompt_tokens_details": {"cached_tokens": 8}}
    })
}

fn chat_text(text: &str) -> Value {
    json!({
        "id": "chatcmpl-2",
        "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 30, "completion_tokens": 4, "total_tokens": 34}
    })
}

fn events_listener() -> (Arc<Mutex<Vec<AgentEvent>>>, Arc<dyn EventListener>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let listener: Arc<dyn EventListener> =
        Arc::new(move |e: &AgentEvent| sink.lock().unwrap().push(e.clone()));
    (events, listener)
}

fn count_events(events: &Mutex<Vec<AgentEvent>>, t: EventType) -> usize {
    events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.event_type == t)
        .count()
}

// ---------------------------------------------------------------------------------------
// Round trips and request bodies

#[tokio::test]
async fn gateway_tool_round_trip_and_request_bodies() {
    let server = Server::script(vec![ok(responses_call()), ok(responses_text("5"))]).await;
    let result = calculator()
        .run(
            RunOptions::new("What is 2+3?", gateway(&server))
                .context(json!({"tenant": "acme", "secret": "do-not-send"})),
        )
        .await
        .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(result.output(), &json!("5"));
    let usage = result.usage();
    assert_eq!(
        (usage.input_tokens, usage.output_tokens, usage.total_tokens),
        (50, 9, 59)
    );
    assert_eq!(usage.cached_tokens, 8);
    assert!((usage.cost - 0.005).abs() < 1e-9);
    assert_eq!(result.steps[0].request_id.as_deref(), Some("resp_1"));
    assert_eq!(result.steps[0].provider.as_deref(), Some("acme"));

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/v1/responses");
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(r.header("x-phaseo-client"), Some("phaseo-agent-rust"));
        assert!(r.header("x-phaseo-client-version").is_some());
        assert!(!r.body.to_string().contains("do-not-send"));
        assert!(r.body.get("context").is_none());
        assert!(r.body.get("stream").is_none());
        assert!(r.body.get("text").is_none());
    }
    let first = &requests[0].body;
    assert_eq!(
        first,
        &json!({
            "model": "test-model",
            "input": [{"type": "message", "role": "user", "content": "What is 2+3?"}],
            "instructions": "Use the add tool.",
            "tools": [{
                "type": "function",
                "name": "add",
                "description": "Adds two integers",
                "parameters": {
                    "type": "object",
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    "required": ["a", "b"]
                },
                "strict": false
            }],
            "temperature": 0.2,
            "max_output_tokens": 256,
            "top_p": 0.9,
            "metadata": {"phaseo_agent_id": "calculator"}
        })
    );
    // Instructions exactly once: not also as a system message.
    assert_eq!(first.to_string().matches("Use the add tool.").count(), 1);
    let second = &requests[1].body;
    assert_eq!(
        second["input"],
        json!([
            {"type": "message", "role": "user", "content": "What is 2+3?"},
            {"type": "function_call", "call_id": "call_1", "name": "add",
             "arguments": "{\"a\":2,\"b\":3}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "5"}
        ])
    );
    assert_eq!(second["instructions"], json!("Use the add tool."));
    assert_eq!(second.to_string().matches("Use the add tool.").count(), 1);
}

#[tokio::test]
async fn openai_tool_round_trip_and_request_bodies() {
    let server = Server::script(vec![ok(chat_call()), ok(chat_text("5"))]).await;
    let result = calculator()
        .run(
            RunOptions::new("What is 2+3?", openai(&server))
                .context(json!({"secret": "do-not-send"})),
        )
        .await
        .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(result.output(), &json!("5"));
    assert_eq!(result.usage().input_tokens, 50);
    assert_eq!(result.usage().cached_tokens, 8);
    assert_eq!(result.steps[0].request_id.as_deref(), Some("chatcmpl-1"));

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!(r.path, "/v1/chat/completions");
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert!(!r.body.to_string().contains("do-not-send"));
        assert!(r.body.get("context").is_none());
        assert!(r.body.get("stream").is_none());
        assert!(r.body.get("response_format").is_none());
    }
    assert_eq!(
        requests[0].body,
        json!({
            "model": "test-model",
            "messages": [
                {"role": "system", "content": "Use the add tool."},
                {"role": "user", "content": "What is 2+3?"}
            ],
            "tools": [{
                "type": "function",
                "function": {
                    "name": "add",
                    "description": "Adds two integers",
                    "parameters": {
                        "type": "object",
                        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                        "required": ["a", "b"]
                    }
                }
            }],
            "temperature": 0.2,
            "max_tokens": 256,
            "top_p": 0.9
        })
    );
    let second = &requests[1].body;
    assert_eq!(
        second["messages"],
        json!([
            {"role": "system", "content": "Use the add tool."},
            {"role": "user", "content": "What is 2+3?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "add", "arguments": "{\"a\":2,\"b\":3}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "5"}
        ])
    );
    assert_eq!(second.to_string().matches("Use the add tool.").count(), 1);
}

#[tokio::test]
async fn output_schema_is_sent_as_the_structured_output_format() {
    let schema = json!({
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"]
    });
    let agent = create_agent(
        AgentDefinition::new("structured")
            .model("test-model")
            .output_schema(json_schema_validator(&schema).unwrap()),
    )
    .unwrap();
    let server = Server::start(|_, r| {
        if r.path.ends_with("/responses") {
            ok(responses_text("{\"answer\":5}"))
        } else {
            ok(chat_text("{\"answer\":5}"))
        }
    })
    .await;
    for (name, client) in both(&server) {
        let result = agent.run(RunOptions::new("2+3?", client)).await.unwrap();
        assert_eq!(result.output(), &json!({"answer": 5}), "{name}");
    }
    let requests = server.requests();
    assert_eq!(
        requests[0].body["text"],
        json!({"format": {"type": "json_schema", "name": "output", "schema": schema,
                          "strict": false}})
    );
    assert!(requests[0].body.get("instructions").is_none());
    assert_eq!(
        requests[1].body["response_format"],
        json!({"type": "json_schema",
               "json_schema": {"name": "output", "schema": schema, "strict": false}})
    );
}

#[tokio::test]
async fn a_strict_compatible_output_schema_is_sent_strict() {
    let schema = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"]
    });
    let agent = create_agent(
        AgentDefinition::new("structured")
            .model("test-model")
            .output_schema(json_schema_validator(&schema).unwrap()),
    )
    .unwrap();
    let server = Server::start(|_, r| {
        if r.path.ends_with("/responses") {
            ok(responses_text("{\"answer\":5}"))
        } else {
            ok(chat_text("{\"answer\":5}"))
        }
    })
    .await;
    for (name, client) in both(&server) {
        let result = agent.run(RunOptions::new("2+3?", client)).await.unwrap();
        assert_eq!(result.output(), &json!({"answer": 5}), "{name}");
    }
    let requests = server.requests();
    assert_eq!(requests[0].body["text"]["format"]["strict"], json!(true));
    assert_eq!(
        requests[1].body["response_format"]["json_schema"]["strict"],
        json!(true)
    );
}

/// An agent with every request control set: a strict tool with examples, a plain tool,
/// `toolChoice` naming the strict tool, `parallelToolCalls: false`.
fn controlled_agent() -> Agent {
    let strict_params = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {"city": {"type": "string"}},
        "required": ["city"]
    });
    let weather = Tool::new("weather", "Weather in a city", strict_params, |_, _| {
        Ok(json!("sunny"))
    })
    .strict(true)
    .input_examples(vec![json!({"city": "Paris"}), json!({"city": "Oslo"})]);
    let plain = Tool::new("plain", "Plain", json!({"type": "object"}), |_, _| {
        Ok(json!(1))
    });
    create_agent(
        AgentDefinition::new("controls")
            .model("test-model")
            .tools([weather, plain])
            .tool_choice(json!({"toolId": "weather"}))
            .parallel_tool_calls(false),
    )
    .unwrap()
}

const EXAMPLES_DESCRIPTION: &str =
    "Weather in a city\n\nExamples of valid arguments:\n{\"city\":\"Paris\"}\n{\"city\":\"Oslo\"}";

#[tokio::test]
async fn request_controls_are_mapped_to_the_responses_body() {
    let server = Server::script(vec![ok(responses_text("done"))]).await;
    let result = controlled_agent()
        .run(RunOptions::new("weather?", gateway(&server)))
        .await
        .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    let body = &server.requests()[0].body;
    assert_eq!(
        body["tool_choice"],
        json!({"type": "function", "name": "weather"})
    );
    assert_eq!(body["parallel_tool_calls"], json!(false));
    assert_eq!(body["tools"][0]["strict"], json!(true));
    assert_eq!(body["tools"][0]["description"], json!(EXAMPLES_DESCRIPTION));
    assert_eq!(body["tools"][1]["strict"], json!(false));
    assert_eq!(body["tools"][1]["description"], json!("Plain"));
}

#[tokio::test]
async fn request_controls_are_mapped_to_the_chat_completions_body() {
    let server = Server::script(vec![ok(chat_text("done"))]).await;
    let result = controlled_agent()
        .run(RunOptions::new("weather?", openai(&server)))
        .await
        .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    let body = &server.requests()[0].body;
    assert_eq!(
        body["tool_choice"],
        json!({"type": "function", "function": {"name": "weather"}})
    );
    assert_eq!(body["parallel_tool_calls"], json!(false));
    assert_eq!(body["tools"][0]["function"]["strict"], json!(true));
    assert_eq!(
        body["tools"][0]["function"]["description"],
        json!(EXAMPLES_DESCRIPTION)
    );
    assert!(body["tools"][1]["function"].get("strict").is_none());
}

#[tokio::test]
async fn string_tool_choices_pass_through_and_unset_controls_send_nothing() {
    let server = Server::start(|_, r| {
        if r.path.ends_with("/responses") {
            ok(responses_text("ok"))
        } else {
            ok(chat_text("ok"))
        }
    })
    .await;
    for choice in ["auto", "required", "none"] {
        for (_, client) in both(&server) {
            let overrides = RunOverrides {
                tool_choice: Some(ToolChoice::from_value(&json!(choice)).unwrap()),
                parallel_tool_calls: Some(true),
                ..Default::default()
            };
            calculator()
                .run(RunOptions::new("hi", client).overrides(overrides))
                .await
                .unwrap();
        }
    }
    for (_, client) in both(&server) {
        calculator()
            .run(RunOptions::new("hi", client))
            .await
            .unwrap();
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 8);
    for (i, r) in requests[..6].iter().enumerate() {
        assert_eq!(
            r.body["tool_choice"],
            json!(["auto", "required", "none"][i / 2])
        );
        assert_eq!(r.body["parallel_tool_calls"], json!(true));
    }
    for r in &requests[6..] {
        assert!(r.body.get("tool_choice").is_none(), "{}", r.body);
        assert!(r.body.get("parallel_tool_calls").is_none(), "{}", r.body);
    }
}

#[tokio::test]
async fn earlier_messages_and_client_model_are_mapped() {
    let server = Server::start(|_, r| {
        if r.path.ends_with("/responses") {
            ok(responses_text("ok"))
        } else {
            ok(chat_text("ok"))
        }
    })
    .await;
    // No model on the agent: the client's model is used.
    let agent = create_agent(AgentDefinition::new("chat")).unwrap();
    let history = vec![
        Message::system("Be terse."),
        Message::user("hi"),
        Message::assistant("hello"),
    ];
    let gw = Arc::new(
        GatewayClient::new()
            .base_url(format!("{}/", server.base()))
            .api_key(KEY)
            .model("client-model"),
    );
    let oa = Arc::new(
        OpenAICompatibleClient::new()
            .base_url(server.base())
            .model("client-model"),
    );
    agent
        .run(RunOptions::new("again", gw).messages(history.clone()))
        .await
        .unwrap();
    agent
        .run(RunOptions::new("again", oa).messages(history))
        .await
        .unwrap();
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/responses");
    assert_eq!(requests[0].body["model"], json!("client-model"));
    assert_eq!(
        requests[0].body["input"],
        json!([
            {"type": "message", "role": "system", "content": "Be terse."},
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "message", "role": "assistant", "content": "hello"},
            {"type": "message", "role": "user", "content": "again"}
        ])
    );
    assert!(requests[0].body.get("tools").is_none());
    assert_eq!(requests[1].body["model"], json!("client-model"));
    assert_eq!(requests[1].header("authorization"), None);
    assert_eq!(
        requests[1].body["messages"],
        json!([
            {"role": "system", "content": "Be terse."},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": "again"}
        ])
    );
}

// ---------------------------------------------------------------------------------------
// Streaming

async fn collect_text(stream: &phaseo_agent::AgentStream, first: &Notify) -> Vec<String> {
    let mut deltas = Vec::new();
    let mut s = Box::pin(stream.text_stream());
    while let Some(d) = s.next().await {
        deltas.push(d.unwrap());
        // The server holds the rest of the stream until the first delta arrived here.
        first.notify_one();
    }
    deltas
}

#[tokio::test]
async fn gateway_streams_deltas_in_order() {
    let gate = Arc::new(Notify::new());
    let mut rest = chunk(&json!({"type": "response.output_text.delta", "delta": "lo, "}));
    rest.wait = Some(gate.clone());
    let server = Server::script(vec![Reply::Events(vec![
        raw_chunk(": keep-alive\n\n"),
        chunk(&json!({"type": "response.created", "response": {"id": "resp_s"}})),
        Chunk {
            text: format!(
                "event: response.output_text.delta\ndata: {}\n\n",
                json!({"type": "response.output_text.delta", "delta": "Hel"})
            ),
            wait: None,
        },
        rest,
        chunk(&json!({"type": "response.output_text.delta", "delta": "world"})),
        chunk(&json!({"type": "response.completed", "response": {
            "id": "resp_s", "model": "test-model", "status": "completed",
            "output": [{"type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": "Hello, world"}]}],
            "usage": {"input_tokens": 3, "output_tokens": 3, "total_tokens": 6}}})),
    ])])
    .await;
    let agent = plain_agent(ModelRetry::default());
    let stream = agent.stream(RunOptions::new("hi", gateway(&server)));
    let deltas = collect_text(&stream, &gate).await;
    assert_eq!(deltas, vec!["Hel", "lo, ", "world"]);
    let result = stream.result().await.unwrap();
    assert_eq!(result.output(), &json!("Hello, world"));
    assert_eq!(result.usage().total_tokens, 6);
    assert_eq!(result.steps[0].request_id.as_deref(), Some("req-stream"));
    let body = &server.requests()[0].body;
    assert_eq!(body["stream"], json!(true));
    assert_eq!(
        server.requests()[0].header("accept"),
        Some("text/event-stream")
    );
}

#[tokio::test]
async fn openai_streams_deltas_and_tool_call_fragments() {
    let gate = Arc::new(Notify::new());
    let delta = |d: Value| {
        json!({"id": "chatcmpl-s", "model": "test-model",
                                  "choices": [{"index": 0, "delta": d, "finish_reason": null}]})
    };
    let tool_turn = Reply::Events(vec![
        chunk(&delta(json!({"role": "assistant", "tool_calls": [
            {"index": 0, "id": "call_1", "type": "function",
             "function": {"name": "add", "arguments": ""}}]}))),
        chunk(&delta(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"a\":2,"}}]}),
        )),
        chunk(&delta(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"b\":3}"}}]}),
        )),
        chunk(&json!({"id": "chatcmpl-s", "choices": [
            {"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})),
        chunk(&json!({"id": "chatcmpl-s", "choices": [],
                      "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})),
        raw_chunk("data: [DONE]\n\n"),
    ]);
    let mut held = chunk(&delta(json!({"content": "is "})));
    held.wait = Some(gate.clone());
    let text_turn = Reply::Events(vec![
        chunk(&delta(json!({"role": "assistant", "content": "The sum "}))),
        held,
        chunk(&delta(json!({"content": "5."}))),
        chunk(&json!({"id": "chatcmpl-s", "choices": [
            {"index": 0, "delta": {}, "finish_reason": "stop"}]})),
        chunk(&json!({"id": "chatcmpl-s", "choices": [],
                      "usage": {"prompt_tokens": 20, "completion_tokens": 3, "total_tokens": 23}})),
        raw_chunk("data: [DONE]\n\n"),
    ]);
    let server = Server::script(vec![tool_turn, text_turn]).await;
    let stream = calculator().stream(RunOptions::new("What is 2+3?", openai(&server)));
    let deltas = collect_text(&stream, &gate).await;
    assert_eq!(deltas, vec!["The sum ", "is ", "5."]);
    let result = stream.result().await.unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(result.output(), &json!("The sum is 5."));
    assert_eq!(result.usage().total_tokens, 38);
    let requests = server.requests();
    assert_eq!(requests[0].body["stream"], json!(true));
    assert_eq!(
        requests[0].body["stream_options"],
        json!({"include_usage": true})
    );
    // The streamed call was assembled from its fragments and answered.
    assert_eq!(
        requests[1].body["messages"][2]["tool_calls"][0]["function"],
        json!({"name": "add", "arguments": "{\"a\":2,\"b\":3}"})
    );
    assert_eq!(requests[1].body["messages"][3]["content"], json!("5"));
}

#[tokio::test]
async fn a_stream_without_completed_event_is_assembled_from_deltas() {
    let server = Server::script(vec![Reply::Events(vec![
        chunk(&json!({"type": "response.output_text.delta", "delta": "par"})),
        chunk(&json!({"type": "response.output_text.delta", "delta": "tial"})),
    ])])
    .await;
    let stream = plain_agent(ModelRetry::default()).stream(RunOptions::new("hi", gateway(&server)));
    let result = stream.result().await.unwrap();
    assert_eq!(result.output(), &json!("partial"));
}

// ---------------------------------------------------------------------------------------
// Retries and gateway errors

#[tokio::test]
async fn rate_limit_with_retry_after_then_success() {
    for kind in ["gateway", "openai"] {
        let success = if kind == "gateway" {
            responses_text("done")
        } else {
            chat_text("done")
        };
        let server = Server::script(vec![
            Reply::Json(
                429,
                vec![("Retry-After", "0".into())],
                json!({"error": {"message": "provider_rate_limit"}}).to_string(),
            ),
            ok(success),
        ])
        .await;
        let client: Arc<dyn ModelClient> = if kind == "gateway" {
            gateway(&server)
        } else {
            openai(&server)
        };
        // A 30 s backoff: only `Retry-After: 0` lets this finish quickly.
        let agent = plain_agent(ModelRetry::new(2, Duration::from_secs(30)));
        let (events, listener) = events_listener();
        let started = Instant::now();
        let result = agent
            .run(RunOptions::new("hi", client).on_event(listener))
            .await
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(10), "{kind}");
        assert_eq!(result.output(), &json!("done"));
        assert_eq!(result.steps[0].model_attempts, 2, "{kind}");
        assert_eq!(server.requests().len(), 2);
        assert_eq!(count_events(&events, EventType::ModelRequested), 2);
        assert_eq!(count_events(&events, EventType::ModelFailed), 0);
    }
}

#[tokio::test]
async fn server_error_on_every_attempt_is_a_gateway_error() {
    let server = Server::start(|_, _| {
        Reply::Json(
            500,
            vec![("x-request-id", "req-500".into())],
            json!({"error": {"message": "upstream exploded"}}).to_string(),
        )
    })
    .await;
    for (name, client) in both(&server) {
        let before = server.requests().len();
        let (events, listener) = events_listener();
        let err = plain_agent(ModelRetry::new(2, Duration::ZERO))
            .run(RunOptions::new("hi", client).on_event(listener))
            .await
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::Gateway, "{name}");
        assert_eq!(
            err.message(),
            "Gateway request failed: 500 Internal Server Error - upstream exploded"
        );
        let info = err.gateway_info().unwrap();
        assert_eq!(info.status, 500);
        assert_eq!(info.status_text, "Internal Server Error");
        assert_eq!(info.request_id.as_deref(), Some("req-500"));
        assert_eq!(info.reason.as_deref(), Some("upstream exploded"));
        assert_eq!(server.requests().len() - before, 3, "{name}: 1 + 2 retries");
        assert_eq!(count_events(&events, EventType::ModelFailed), 1);
        let failed = err.result().unwrap();
        assert_eq!(failed.status(), RunStatus::Failed);
        assert_eq!(
            failed.run.error.as_ref().unwrap().gateway.as_ref(),
            Some(info)
        );
        assert_eq!(count_events(&events, EventType::ModelRequested), 3);
    }
}

#[tokio::test]
async fn a_client_error_is_not_retried() {
    let server = Server::start(|i, _| {
        if i % 2 == 0 {
            Reply::Json(400, vec![], json!({"message": "unknown field"}).to_string())
        } else {
            Reply::Json(400, vec![("request-id", "req-400".into())], String::new())
        }
    })
    .await;
    for (name, client) in both(&server) {
        let before = server.requests().len();
        let (events, listener) = events_listener();
        let started = Instant::now();
        let err = plain_agent(ModelRetry::new(3, Duration::from_secs(30)))
            .run(RunOptions::new("hi", client).on_event(listener))
            .await
            .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(err.code(), ErrorCode::Gateway);
        assert_eq!(server.requests().len() - before, 1, "{name}: not retried");
        assert_eq!(count_events(&events, EventType::ModelRequested), 1);
        assert_eq!(count_events(&events, EventType::ModelFailed), 1);
        assert_eq!(err.gateway_info().unwrap().status, 400);
        if before == 0 {
            assert_eq!(
                err.message(),
                "Gateway request failed: 400 Bad Request - unknown field"
            );
        } else {
            // No reason in an empty body: no " - <reason>" suffix.
            assert_eq!(err.message(), "Gateway request failed: 400 Bad Request");
            assert_eq!(
                err.gateway_info().unwrap().request_id.as_deref(),
                Some("req-400")
            );
            assert_eq!(err.gateway_info().unwrap().reason, None);
        }
    }
}

#[tokio::test]
async fn a_plain_text_error_body_is_the_reason() {
    let long = "x".repeat(800);
    let server = Server::script(vec![Reply::Json(503, vec![], long)]).await;
    let err = plain_agent(ModelRetry::default())
        .run(RunOptions::new("hi", openai(&server)))
        .await
        .unwrap_err();
    let info = err.gateway_info().unwrap();
    assert_eq!(info.status, 503);
    assert_eq!(info.reason.as_deref().map(str::len), Some(500));
    assert!(err
        .message()
        .starts_with("Gateway request failed: 503 Service Unavailable - xxx"));
}

// ---------------------------------------------------------------------------------------
// Transport failures, malformed bodies, timeouts, cancellation

#[tokio::test]
async fn connection_refused_is_a_clear_model_failure() {
    let port = dead_port().await;
    let base = format!("http://127.0.0.1:{port}/v1");
    let clients: [(&str, Arc<dyn ModelClient>); 2] = [
        (
            "gateway",
            Arc::new(GatewayClient::new().base_url(&base).api_key(KEY)),
        ),
        (
            "openai",
            Arc::new(OpenAICompatibleClient::new().base_url(&base)),
        ),
    ];
    for (name, client) in clients {
        let (events, listener) = events_listener();
        let err = plain_agent(ModelRetry::new(1, Duration::ZERO))
            .run(RunOptions::new("hi", client).on_event(listener))
            .await
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::ModelFailed, "{name}");
        assert!(
            err.message()
                .starts_with(&format!("connection failed: http://127.0.0.1:{port}/v1/")),
            "{name}: {}",
            err.message()
        );
        assert!(err.gateway_info().is_none());
        // Connection errors are retried.
        assert_eq!(count_events(&events, EventType::ModelRequested), 2);
        assert_eq!(count_events(&events, EventType::ModelFailed), 1);
    }
}

#[tokio::test]
async fn a_malformed_body_is_a_clear_failure_and_not_retried() {
    let server = Server::start(|_, _| Reply::Json(200, vec![], "this is not json{".into())).await;
    for (name, client) in both(&server) {
        let before = server.requests().len();
        let err = plain_agent(ModelRetry::new(2, Duration::ZERO))
            .run(RunOptions::new("hi", client))
            .await
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::ModelFailed, "{name}");
        assert!(
            err.message().starts_with("malformed response body: "),
            "{name}: {}",
            err.message()
        );
        assert_eq!(server.requests().len() - before, 1);
    }
    // Valid JSON of the wrong shape.
    let wrong = Server::start(|_, _| ok(json!({"hello": "world"}))).await;
    for (name, client) in both(&wrong) {
        let err = plain_agent(ModelRetry::default())
            .run(RunOptions::new("hi", client))
            .await
            .unwrap_err();
        assert!(
            err.message().starts_with("malformed response body: "),
            "{name}: {}",
            err.message()
        );
    }
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let server = Server::start(|_, _| Reply::Hang).await;
    let clients: [(&str, Arc<dyn ModelClient>); 2] = [
        (
            "gateway",
            Arc::new(
                GatewayClient::new()
                    .base_url(server.base())
                    .api_key(KEY)
                    .timeout(Duration::from_millis(200)),
            ),
        ),
        (
            "openai",
            Arc::new(
                OpenAICompatibleClient::new()
                    .base_url(server.base())
                    .timeout(Duration::from_millis(200)),
            ),
        ),
    ];
    for (name, client) in clients {
        let started = Instant::now();
        let err = plain_agent(ModelRetry::default())
            .run(RunOptions::new("hi", client.clone()))
            .await
            .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5), "{name}");
        assert_eq!(err.code(), ErrorCode::ModelFailed);
        assert_eq!(err.message(), "request timed out after 200ms", "{name}");
        // Streaming: the same timeout waiting for the headers.
        let stream = plain_agent(ModelRetry::default()).stream(RunOptions::new("hi", client));
        let err = stream.result().await.unwrap_err();
        assert_eq!(err.message(), "request timed out after 200ms", "{name}");
    }
}

#[tokio::test]
async fn a_stalled_stream_times_out() {
    let never = Arc::new(Notify::new());
    let mut stalled = chunk(&json!({"type": "response.output_text.delta", "delta": "never"}));
    stalled.wait = Some(never);
    let server = Server::script(vec![Reply::Events(vec![
        chunk(&json!({"type": "response.output_text.delta", "delta": "one"})),
        stalled,
    ])])
    .await;
    let client = Arc::new(
        GatewayClient::new()
            .base_url(server.base())
            .api_key(KEY)
            .timeout(Duration::from_millis(300)),
    );
    let stream = plain_agent(ModelRetry::default()).stream(RunOptions::new("hi", client));
    let err = stream.result().await.unwrap_err();
    assert_eq!(err.message(), "request timed out after 300ms");
}

#[tokio::test]
async fn cancelling_aborts_the_request() {
    let server = Server::start(|_, _| Reply::Hang).await;
    for (name, client) in both(&server) {
        // Through a run.
        let token = CancellationToken::new();
        let cancel = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            cancel.cancel();
        });
        let started = Instant::now();
        let result = plain_agent(ModelRetry::default())
            .run(RunOptions::new("hi", client.clone()).cancel(token))
            .await
            .unwrap();
        assert_eq!(result.status(), RunStatus::Cancelled, "{name}");
        assert!(started.elapsed() < Duration::from_secs(5));
        // Directly: the client itself honours the token.
        let token = CancellationToken::new();
        let cancel = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            cancel.cancel();
        });
        let messages = [Message::user("hi")];
        let request = ModelRequest {
            agent_id: "direct",
            model: None,
            instructions: None,
            messages: &messages,
            tools: Arc::new(Vec::new()),
            context: &Value::Null,
            temperature: None,
            max_output_tokens: None,
            top_p: None,
            stream: false,
            output_schema: None,
            tool_choice: None,
            parallel_tool_calls: None,
        };
        let err = client.generate(&request, &token).await.unwrap_err();
        assert_eq!(err.message, "model request cancelled", "{name}");
    }
}

// ---------------------------------------------------------------------------------------
// Key hygiene and configuration

#[tokio::test]
async fn the_api_key_never_appears_in_state_events_errors_or_debug() {
    // A server that echoes the Authorization header in its error message.
    let server = Server::start(|_, r| {
        let auth = r.header("authorization").unwrap_or("").to_owned();
        Reply::Json(
            401,
            vec![],
            json!({"error": {"message": format!("Invalid credentials: {auth}")}}).to_string(),
        )
    })
    .await;
    assert!(!format!("{:?}", gateway(&server)).contains(KEY));
    assert!(!format!("{:?}", (*openai(&server)).clone().header("X-Api-Key", KEY)).contains(KEY));
    for (name, client) in both(&server) {
        let (events, listener) = events_listener();
        let err = plain_agent(ModelRetry::default())
            .run(
                RunOptions::new("hi", client)
                    .context(json!({"user": "u1"}))
                    .on_event(listener),
            )
            .await
            .unwrap_err();
        assert_eq!(err.gateway_info().unwrap().status, 401);
        assert!(!err.message().contains(KEY), "{name}: {}", err.message());
        assert!(err.message().contains("[redacted]"));
        assert!(!format!("{err:?}").contains(KEY));
        let state = err.result().unwrap().to_json();
        assert!(!state.contains(KEY), "{name}");
        for e in events.lock().unwrap().iter() {
            assert!(!e.to_json().contains(KEY), "{name}");
        }
    }
    // A successful run: the key is nowhere in the state either.
    let ok_server = Server::script(vec![ok(responses_call()), ok(responses_text("5"))]).await;
    let client = gateway(&ok_server);
    let result = calculator()
        .run(RunOptions::new("2+3?", client.clone()))
        .await
        .unwrap();
    assert!(!result.to_json().contains(KEY));
    let debug = format!("{client:?}");
    assert!(debug.contains("[redacted]") && !debug.contains(KEY));
}

#[tokio::test]
async fn the_gateway_requires_a_key() {
    let server = Server::start(|_, _| ok(responses_text("never"))).await;
    let client = Arc::new(GatewayClient::new().base_url(server.base()));
    let err = plain_agent(ModelRetry::new(2, Duration::ZERO))
        .run(RunOptions::new("hi", client))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ModelFailed);
    assert!(err.message().starts_with("PHASEO_API_KEY is required"));
    assert!(server.requests().is_empty());
}

#[test]
fn clients_read_their_environment() {
    // Only this test touches these variables.
    std::env::set_var("PHASEO_API_KEY", "sk-env");
    std::env::set_var("PHASEO_BASE_URL", "http://127.0.0.1:9/gw/");
    std::env::set_var("OPENAI_BASE_URL", "http://127.0.0.1:9/oa");
    std::env::remove_var("OPENAI_API_KEY");
    let gw = GatewayClient::from_env();
    assert_eq!(gw.base_url_str(), "http://127.0.0.1:9/gw");
    assert!(gw.has_api_key());
    let oa = OpenAICompatibleClient::from_env();
    assert_eq!(oa.base_url_str(), "http://127.0.0.1:9/oa");
    assert!(!oa.has_api_key());
    std::env::remove_var("PHASEO_BASE_URL");
    std::env::remove_var("PHASEO_API_KEY");
    std::env::remove_var("OPENAI_BASE_URL");
    assert_eq!(
        GatewayClient::from_env().base_url_str(),
        "https://api.phaseo.app/v1"
    );
    assert!(!GatewayClient::from_env().has_api_key());
    assert_eq!(
        OpenAICompatibleClient::from_env().base_url_str(),
        "https://api.openai.com/v1"
    );
}

#[tokio::test]
async fn gateway_body_defaults_and_preset_fill_what_the_agent_leaves_unset() {
    let server = Server::start(|_, _| ok(responses_text("ok"))).await;
    let defaults = json!({
        "tool_choice": "auto",
        "parallel_tool_calls": false,
        "provider": {"order": ["acme"]},
        "metadata": {"team": "ops", "phaseo_agent_id": "not-this"},
        "temperature": 1.5,
        "max_output_tokens": 99,
        "store": true,
        "model": "never-used"
    });
    let options = phaseo_agent::HttpClientOptions {
        api_key: Some(KEY.into()),
        base_url: Some(server.base()),
        // A host may write the preset with its `@`: it is not doubled.
        preset: Some("@fast".into()),
        body_defaults: defaults.as_object().unwrap().clone(),
        ..Default::default()
    };
    let client = Arc::new(GatewayClient::from_options(&options));
    // No model on the agent: the preset is; the agent's temperature wins over the default.
    let agent = create_agent(AgentDefinition::new("d").temperature(0.2)).unwrap();
    agent.run(RunOptions::new("hi", client)).await.unwrap();
    let body = &server.requests()[0].body;
    assert_eq!(body["model"], json!("@fast"));
    assert_eq!(body["temperature"], json!(0.2));
    assert_eq!(body["max_output_tokens"], json!(99));
    assert_eq!(body["tool_choice"], json!("auto"));
    assert_eq!(body["parallel_tool_calls"], json!(false));
    assert_eq!(body["provider"], json!({"order": ["acme"]}));
    assert_eq!(body["store"], json!(true));
    assert_eq!(
        body["metadata"],
        json!({"phaseo_agent_id": "d", "team": "ops"}),
        "objects merge, the request's keys win"
    );
    assert_eq!(body["input"][0]["content"], json!("hi"));
}
