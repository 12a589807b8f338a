//! Tool input as the model writes it (docs/behaviour.md §16): both HTTP clients, streaming
//! from a server on 127.0.0.1 that sends tool calls in pieces, report
//! `tool.input_started` and `tool.input_delta` live, in order, before `model.completed`;
//! a failed and retried attempt's deltas stay in the history; non-streaming runs emit
//! neither; the scripted client and host streaming clients report them too.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use phaseo_agent::{
    create_agent, json, Agent, AgentDefinition, AgentEvent, EventType, GatewayClient, ModelClient,
    ModelRetry, OpenAICompatibleClient, RunOptions, RunStatus, ScriptedClient, StreamItem, Tool,
    Value,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

// ---------------------------------------------------------------------------------------
// A server answering each request with the next scripted event stream

/// One `data:` event, optionally held back until `wait` is notified.
struct Chunk {
    data: Value,
    wait: Option<Arc<Notify>>,
}

fn chunk(data: Value) -> Chunk {
    Chunk { data, wait: None }
}

/// The server's reply to one request: an event stream or one plain JSON body.
enum Reply {
    Events(Vec<Chunk>),
    Json(Value),
}

struct Server {
    base: String,
    bodies: Arc<Mutex<Vec<Value>>>,
}

async fn start(replies: Vec<Reply>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let replies = Arc::new(Mutex::new(replies.into_iter().rev().collect::<Vec<_>>()));
    let seen = bodies.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let reply = replies
                .lock()
                .unwrap()
                .pop()
                .expect("the server ran out of replies");
            let seen = seen.clone();
            tokio::spawn(serve(socket, reply, seen));
        }
    });
    Server { base, bodies }
}

async fn serve(mut socket: TcpStream, reply: Reply, seen: Arc<Mutex<Vec<Value>>>) {
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
    let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        match socket.read(&mut tmp).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&tmp[..n]),
        }
    }
    let body = serde_json::from_slice(&buf[head_end..head_end + length]).unwrap_or(Value::Null);
    seen.lock().unwrap().push(body);
    match reply {
        Reply::Json(body) => {
            let body = body.to_string();
            let out = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(out.as_bytes()).await;
        }
        Reply::Events(chunks) => {
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
            if socket.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            for c in chunks {
                if let Some(wait) = c.wait {
                    wait.notified().await;
                }
                let text = format!("data: {}\n\n", c.data);
                if socket.write_all(text.as_bytes()).await.is_err() {
                    return;
                }
                let _ = socket.flush().await;
            }
            let _ = socket.write_all(b"data: [DONE]\n\n").await;
        }
    }
    let _ = socket.shutdown().await;
}

// ---------------------------------------------------------------------------------------
// The agent and the two wires

fn calculator(retries: u32) -> Agent {
    create_agent(
        AgentDefinition::new("calculator")
            .model("test-model")
            .model_retry(ModelRetry::new(retries, Duration::from_millis(1)))
            .tool(Tool::new(
                "add",
                "Adds two integers",
                json!({"type": "object",
                       "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                       "required": ["a", "b"]}),
                |input, _rt| {
                    Ok(json!(
                        input["a"].as_i64().unwrap() + input["b"].as_i64().unwrap()
                    ))
                },
            )),
    )
    .unwrap()
}

#[derive(Clone, Copy, Debug)]
enum Wire {
    Gateway,
    OpenAI,
}

impl Wire {
    fn client(self, server: &Server) -> Arc<dyn ModelClient> {
        match self {
            Wire::Gateway => Arc::new(GatewayClient::new().base_url(&server.base).api_key("k")),
            Wire::OpenAI => Arc::new(
                OpenAICompatibleClient::new()
                    .base_url(&server.base)
                    .api_key("k"),
            ),
        }
    }

    /// A call to `add` with its arguments in `pieces`; the second piece onwards is held
    /// until `gate` is notified (when `gate` is given).
    fn call(self, id: &str, pieces: &[&str], gate: Option<&Arc<Notify>>) -> Vec<Chunk> {
        let mut chunks = Vec::new();
        match self {
            Wire::Gateway => {
                chunks.push(chunk(
                    json!({"type": "response.output_item.added", "output_index": 0,
                    "item": {"type": "function_call", "id": format!("fc_{id}"), "call_id": id,
                             "name": "add", "arguments": ""}}),
                ));
                for p in pieces {
                    chunks.push(chunk(
                        json!({"type": "response.function_call_arguments.delta",
                        "item_id": format!("fc_{id}"), "output_index": 0, "delta": p}),
                    ));
                }
            }
            Wire::OpenAI => {
                let delta =
                    |d: Value| json!({"id": "chatcmpl-s", "choices": [{"index": 0, "delta": d}]});
                // The id and name come only in the call's first chunk.
                chunks.push(chunk(delta(json!({"role": "assistant", "tool_calls": [
                    {"index": 0, "id": id, "type": "function",
                     "function": {"name": "add", "arguments": ""}}]}))));
                for p in pieces {
                    chunks.push(chunk(delta(
                        json!({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}),
                    )));
                }
            }
        }
        if let Some(gate) = gate {
            chunks[2].wait = Some(gate.clone());
        }
        chunks
    }

    /// The end of a turn that called `add` with `arguments`.
    fn call_done(self, id: &str, arguments: &str) -> Chunk {
        match self {
            Wire::Gateway => chunk(json!({"type": "response.completed", "response": {
                "id": "resp_1", "status": "completed",
                "output": [{"type": "function_call", "id": format!("fc_{id}"), "call_id": id,
                            "name": "add", "arguments": arguments}],
                "usage": {"input_tokens": 5, "output_tokens": 5}}})),
            Wire::OpenAI => chunk(json!({"id": "chatcmpl-s",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}})),
        }
    }

    /// A turn answering `text`.
    fn text(self, text: &str) -> Reply {
        Reply::Events(match self {
            Wire::Gateway => vec![chunk(json!({"type": "response.completed", "response": {
                "id": "resp_2", "status": "completed",
                "output": [{"type": "message", "role": "assistant",
                            "content": [{"type": "output_text", "text": text}]}]}}))],
            Wire::OpenAI => vec![
                chunk(json!({"id": "chatcmpl-t", "choices": [{"index": 0,
                    "delta": {"role": "assistant", "content": text}}]})),
                chunk(json!({"id": "chatcmpl-t",
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})),
            ],
        })
    }

    /// A failure in the middle of a stream.
    fn failure(self) -> Chunk {
        match self {
            Wire::Gateway => chunk(json!({"type": "response.failed",
                "response": {"error": {"message": "upstream reset"}}})),
            Wire::OpenAI => chunk(json!({"error": {"message": "upstream reset"}})),
        }
    }
}

const WIRES: [Wire; 2] = [Wire::Gateway, Wire::OpenAI];

fn types(events: &[AgentEvent]) -> Vec<&'static str> {
    events.iter().map(AgentEvent::type_name).collect()
}

fn position(events: &[AgentEvent], t: EventType) -> usize {
    events
        .iter()
        .position(|e| e.event_type == t)
        .unwrap_or_else(|| panic!("no {} in {:?}", t.as_str(), types(events)))
}

/// The `tool.input_delta` texts of call `id`, in order.
fn deltas_of(events: &[AgentEvent], id: &str) -> Vec<String> {
    events
        .iter()
        .filter(|e| e.event_type == EventType::ToolInputDelta)
        .map(AgentEvent::to_value)
        .filter(|v| v["toolCallId"] == json!(id))
        .map(|v| v["delta"].as_str().unwrap().to_owned())
        .collect()
}

// ---------------------------------------------------------------------------------------
// Tests

#[tokio::test]
async fn streamed_tool_input_arrives_live_in_order_before_the_call_runs() {
    for wire in WIRES {
        let gate = Arc::new(Notify::new());
        let pieces = ["{\"a\":", "2,\"b\"", ":3}"];
        let mut turn = wire.call("call_1", &pieces, Some(&gate));
        turn.push(wire.call_done("call_1", "{\"a\":2,\"b\":3}"));
        let server = start(vec![Reply::Events(turn), wire.text("5")]).await;
        let stream = calculator(0).stream(RunOptions::new("2+3?", wire.client(&server)));
        let mut events = Vec::new();
        let mut items = Box::pin(stream.full_stream());
        let mut released = false;
        // A client that held the input back would leave the server waiting on the gate.
        let limit = tokio::time::Instant::now() + Duration::from_secs(60);
        while let Some(item) = tokio::time::timeout_at(limit, items.next())
            .await
            .unwrap_or_else(|_| panic!("{wire:?}: the input was not reported while it arrived"))
        {
            match item.unwrap() {
                StreamItem::Event(e) => {
                    if e.event_type == EventType::ToolInputDelta && !released {
                        // The first fragment is here while the server still holds the
                        // rest of the call: the input is reported as it arrives.
                        assert!(
                            !types(&events).contains(&"model.completed"),
                            "{wire:?}: {:?}",
                            types(&events)
                        );
                        released = true;
                        gate.notify_one();
                    }
                    events.push(e);
                }
                StreamItem::Result(result) => {
                    assert_eq!(result.status(), RunStatus::Completed, "{wire:?}");
                    assert_eq!(result.output(), &json!("5"), "{wire:?}");
                }
            }
        }
        assert!(released, "{wire:?}: no tool.input_delta");
        let started = events[position(&events, EventType::ToolInputStarted)].to_value();
        assert_eq!(started["toolCallId"], json!("call_1"), "{wire:?}");
        assert_eq!(started["toolName"], json!("add"), "{wire:?}");
        assert_eq!(started["stepIndex"], json!(0), "{wire:?}");
        assert_eq!(deltas_of(&events, "call_1"), pieces, "{wire:?}");
        assert_eq!(deltas_of(&events, "call_1").concat(), "{\"a\":2,\"b\":3}");
        let last_delta = events
            .iter()
            .rposition(|e| e.event_type == EventType::ToolInputDelta)
            .unwrap();
        assert!(
            position(&events, EventType::ModelRequested)
                < position(&events, EventType::ToolInputStarted)
        );
        assert!(
            position(&events, EventType::ToolInputStarted)
                < position(&events, EventType::ToolInputDelta)
        );
        assert!(
            last_delta < position(&events, EventType::ModelCompleted),
            "{wire:?}"
        );
        assert!(
            position(&events, EventType::ModelCompleted)
                < position(&events, EventType::ToolStarted)
        );
        // The call that ran is the one whose input was reported.
        let sent = &server.bodies.lock().unwrap()[1];
        assert!(sent.to_string().contains("call_1"), "{wire:?}");
    }
}

#[tokio::test]
async fn a_failed_attempts_input_stays_and_only_the_retried_call_runs() {
    for wire in WIRES {
        let mut failed = wire.call("call_lost", &["{\"a\":", "9"], None);
        failed.push(wire.failure());
        let mut retried = wire.call("call_2", &["{\"a\":1,", "\"b\":1}"], None);
        retried.push(wire.call_done("call_2", "{\"a\":1,\"b\":1}"));
        let server = start(vec![
            Reply::Events(failed),
            Reply::Events(retried),
            wire.text("2"),
        ])
        .await;
        let stream = calculator(1).stream(RunOptions::new("1+1?", wire.client(&server)));
        let mut events = Vec::new();
        let mut all = Box::pin(stream.events());
        while let Some(e) = all.next().await {
            events.push(e.unwrap());
        }
        let result = stream.result().await.unwrap();
        assert_eq!(result.output(), &json!("2"), "{wire:?}");
        assert_eq!(
            deltas_of(&events, "call_lost"),
            ["{\"a\":", "9"],
            "{wire:?}"
        );
        assert_eq!(deltas_of(&events, "call_2").concat(), "{\"a\":1,\"b\":1}");
        let failed_at = position(&events, EventType::ModelRequested);
        let lost_at = events
            .iter()
            .position(|e| e.to_value()["toolCallId"] == json!("call_lost"))
            .unwrap();
        assert!(failed_at < lost_at, "{wire:?}");
        let ran: Vec<Value> = events
            .iter()
            .filter(|e| e.event_type == EventType::ToolStarted)
            .map(|e| e.to_value()["toolCallId"].clone())
            .collect();
        assert_eq!(ran, [json!("call_2")], "{wire:?}");
    }
}

#[tokio::test]
async fn a_run_that_is_not_streamed_reports_no_tool_input() {
    for wire in WIRES {
        let (body_call, body_text) = match wire {
            Wire::Gateway => (
                json!({"id": "r", "status": "completed", "output": [{"type": "function_call",
                    "call_id": "c1", "name": "add", "arguments": "{\"a\":1,\"b\":2}"}]}),
                json!({"id": "r2", "status": "completed", "output": [{"type": "message",
                    "content": [{"type": "output_text", "text": "3"}]}]}),
            ),
            Wire::OpenAI => (
                json!({"id": "x", "choices": [{"index": 0, "finish_reason": "tool_calls",
                    "message": {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "add", "arguments": "{\"a\":1,\"b\":2}"}}]}}]}),
                json!({"id": "y", "choices": [{"index": 0, "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "3"}}]}),
            ),
        };
        let server = start(vec![Reply::Json(body_call), Reply::Json(body_text)]).await;
        let events = Arc::new(Mutex::new(Vec::<AgentEvent>::new()));
        let sink = events.clone();
        let result = calculator(0)
            .run(
                RunOptions::new("1+2?", wire.client(&server)).on_event(Arc::new(
                    move |e: &AgentEvent| sink.lock().unwrap().push(e.clone()),
                )),
            )
            .await
            .unwrap();
        assert_eq!(result.output(), &json!("3"), "{wire:?}");
        let events = events.lock().unwrap();
        assert!(types(&events).contains(&"tool.completed"), "{wire:?}");
        assert!(
            !events.iter().any(|e| matches!(
                e.event_type,
                EventType::ToolInputStarted | EventType::ToolInputDelta
            )),
            "{wire:?}: {:?}",
            types(&events)
        );
    }
}

#[tokio::test]
async fn a_streamed_run_answered_with_one_json_body_reports_each_input_whole() {
    let server = start(vec![
        Reply::Json(
            json!({"id": "r", "status": "completed", "output": [{"type": "function_call",
            "call_id": "c1", "name": "add", "arguments": "{\"a\":1,\"b\":2}"}]}),
        ),
        Reply::Json(
            json!({"id": "r2", "status": "completed", "output": [{"type": "message",
            "content": [{"type": "output_text", "text": "3"}]}]}),
        ),
    ])
    .await;
    let stream = calculator(0).stream(RunOptions::new("1+2?", Wire::Gateway.client(&server)));
    let events: Vec<AgentEvent> = stream.events().map(Result::unwrap).collect().await;
    assert_eq!(deltas_of(&events, "c1"), ["{\"a\":1,\"b\":2}"]);
    assert!(
        position(&events, EventType::ToolInputStarted)
            < position(&events, EventType::ModelCompleted)
    );
}

#[tokio::test]
async fn the_scripted_client_streams_each_calls_input_in_pieces() {
    let client = Arc::new(
        ScriptedClient::from_script(&[
            json!({"toolCalls": [{"id": "c1", "name": "add", "arguments": "{\"a\":2,\"b\":3}"}]}),
            json!({"text": "5"}),
        ])
        .unwrap(),
    );
    let stream = calculator(0).stream(RunOptions::new("2+3?", client));
    let events: Vec<AgentEvent> = stream.tool_stream().map(Result::unwrap).collect().await;
    assert_eq!(
        types(&events),
        [
            "tool.input_started",
            "tool.input_delta",
            "tool.input_delta",
            "tool.input_delta",
            "tool.input_delta",
            "tool.started",
            "tool.completed"
        ]
    );
    assert_eq!(deltas_of(&events, "c1"), ["{\"a\":", "2,", "\"b\":", "3}"]);
    assert_eq!(deltas_of(&events, "c1").concat(), "{\"a\":2,\"b\":3}");
}

#[tokio::test]
async fn an_openai_call_named_after_its_first_fragment_is_reported_once_named() {
    let delta = |d: Value| json!({"id": "chatcmpl-s", "choices": [{"index": 0, "delta": d}]});
    let turn = vec![
        chunk(delta(json!({"tool_calls": [{"index": 0, "id": "call_9",
            "function": {"arguments": "{\"a\":"}}]}))),
        chunk(delta(json!({"tool_calls": [{"index": 0,
            "function": {"name": "add", "arguments": "4,"}}]}))),
        chunk(delta(json!({"tool_calls": [{"index": 0,
            "function": {"arguments": "\"b\":1}"}}]}))),
        Wire::OpenAI.call_done("call_9", ""),
    ];
    let server = start(vec![Reply::Events(turn), Wire::OpenAI.text("5")]).await;
    let stream = calculator(0).stream(RunOptions::new("4+1?", Wire::OpenAI.client(&server)));
    let events: Vec<AgentEvent> = stream.events().map(Result::unwrap).collect().await;
    assert_eq!(stream.result().await.unwrap().output(), &json!("5"));
    let started = events[position(&events, EventType::ToolInputStarted)].to_value();
    assert_eq!(
        (&started["toolCallId"], &started["toolName"]),
        (&json!("call_9"), &json!("add"))
    );
    // What came before the name is reported with the start, as one fragment.
    assert_eq!(deltas_of(&events, "call_9"), ["{\"a\":4,", "\"b\":1}"]);
    let ran = events[position(&events, EventType::ToolStarted)].to_value();
    assert_eq!(ran["toolCallId"], json!("call_9"));
}
