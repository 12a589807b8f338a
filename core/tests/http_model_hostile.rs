//! Property test: a hostile model endpoint behind the HTTP model clients (docs/behaviour.md
//! §8). Whatever a server on 127.0.0.1 answers (odd statuses and headers, JSON of any shape,
//! bodies shaped like a Responses or chat-completions answer with odd fields, event streams
//! of odd events, lines that are not JSON, bytes that are not UTF-8, a connection closed
//! early), a run or stream through `GatewayClient` or `OpenAICompatibleClient` ends by
//! itself with a result or a documented error, never a panic or a hang, and its state reads
//! back. `PROPTEST_CASES` raises the count (`make fuzz-core`).

mod hostile_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hostile_support::{config, json_value, panics};
use phaseo_agent::{
    create_agent, json, AgentDefinition, ErrorCode, GatewayClient, ModelClient, ModelRetry,
    OpenAICompatibleClient, RunOptions, RunResult, Tool, Value,
};
use proptest::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn value() -> impl Strategy<Value = Value> + Clone {
    json_value(
        3,
        vec![json!(1e300), json!("add"), json!("{\"a\":1,\"b\":2}")],
    )
}

/// A value, or one of the fields a real answer has, filled oddly.
fn responses_body() -> impl Strategy<Value = Value> {
    let item = prop_oneof![
        (value(), value(), value())
            .prop_map(|(name, arguments, id)| json!({"type": "function_call",
            "call_id": id, "name": name, "arguments": arguments})),
        Just(
            json!({"type": "function_call", "call_id": "c1", "name": "add",
                    "arguments": "{\"a\":1,\"b\":2}"})
        ),
        value().prop_map(|content| json!({"type": "message", "content": content})),
        value().prop_map(|text| json!({"type": "message",
            "content": [{"type": "output_text", "text": text}]})),
        value(),
    ];
    (prop::collection::vec(item, 0..3), value(), value()).prop_map(|(output, usage, status)| {
        json!({"output": output, "usage": usage, "status": status, "model": "m"})
    })
}

fn chat_body() -> impl Strategy<Value = Value> {
    let call = prop_oneof![
        (value(), value(), value()).prop_map(|(id, name, arguments)| json!({"id": id,
            "type": "function", "function": {"name": name, "arguments": arguments}})),
        Just(json!({"id": "c1", "type": "function",
                    "function": {"name": "add", "arguments": "{\"a\":1,\"b\":2}"}})),
        value(),
    ];
    (value(), prop::collection::vec(call, 0..3), value(), value()).prop_map(
        |(content, calls, finish, usage)| {
            json!({"choices": [{"message": {"role": "assistant", "content": content,
                "tool_calls": calls}, "finish_reason": finish}], "usage": usage})
        },
    )
}

/// An event-stream body: events of both formats with odd fields, and odd lines.
fn event_stream() -> impl Strategy<Value = Vec<u8>> {
    let event = prop_oneof![
        value().prop_map(|delta| json!({"type": "response.output_text.delta", "delta": delta}).to_string()),
        responses_body().prop_map(|r| json!({"type": "response.completed", "response": r}).to_string()),
        value().prop_map(|r| json!({"type": "response.completed", "response": r}).to_string()),
        (value(), value(), value()).prop_map(|(index, name, arguments)| json!({"choices": [{"delta": {
            "tool_calls": [{"index": index, "id": "c1", "function": {"name": name, "arguments": arguments}}]}}]})
            .to_string()),
        Just(json!({"choices": [{"delta": {"tool_calls": [{"index": 4_000_000_000u64,
            "function": {"arguments": "{"}}]}}]}).to_string()),
        value().prop_map(|content| json!({"choices": [{"delta": {"content": content},
            "finish_reason": null}]}).to_string()),
        value().prop_map(|v| v.to_string()),
        Just("[DONE]".to_owned()),
        Just("{".to_owned()),
    ];
    let line = prop_oneof![
        4 => event.prop_map(|e| format!("data: {e}\n\n").into_bytes()),
        1 => Just(b"event: response.output_text.delta\n".to_vec()),
        1 => Just(b": comment\n".to_vec()),
        1 => Just(b"data: \xff\xfe\n\n".to_vec()),
        1 => Just(b"retry: x\n".to_vec()),
        1 => Just(b"\n\n\n".to_vec()),
    ];
    prop::collection::vec(line, 0..8).prop_map(|lines| lines.concat())
}

/// One answer: status, headers, body, and whether the connection closes before its end.
#[derive(Clone, Debug)]
struct Answer {
    status: u16,
    headers: Vec<String>,
    body: Vec<u8>,
    cut: bool,
}

fn answer() -> impl Strategy<Value = Answer> {
    let status = prop_oneof![
        6 => Just(200u16),
        1 => Just(201u16),
        1 => Just(204u16),
        1 => Just(302u16),
        1 => Just(400u16),
        1 => Just(429u16),
        1 => Just(500u16),
        1 => Just(503u16),
    ];
    let content_type = prop_oneof![
        Just("Content-Type: application/json".to_owned()),
        Just("Content-Type: text/event-stream".to_owned()),
        Just("Content-Type: text/plain".to_owned()),
        Just(String::new()),
    ];
    let extra = prop::sample::select(
        &[
            "",
            "Retry-After: -1",
            // A long Retry-After is honoured up to 60 s (docs/behaviour.md §3.1): not here.
            "Retry-After: 0.5",
            "Retry-After: soon",
            "Retry-After: Wed, 21 Oct 2015 07:28:00 GMT",
            "x-request-id: \u{7f}",
            "Location: /v1/responses",
        ][..],
    );
    let body = prop_oneof![
        value().prop_map(|v| v.to_string().into_bytes()),
        responses_body().prop_map(|v| v.to_string().into_bytes()),
        chat_body().prop_map(|v| v.to_string().into_bytes()),
        event_stream(),
        Just(b"\xff\xfe not utf-8".to_vec()),
        Just(Vec::new()),
    ];
    (status, content_type, extra, body, prop::bool::weighted(0.1)).prop_map(
        |(status, content_type, extra, body, cut)| Answer {
            status,
            headers: [content_type, extra.to_owned()]
                .into_iter()
                .filter(|h| !h.is_empty())
                .collect(),
            body,
            cut,
        },
    )
}

/// A server that answers the n-th request with `answers[n]` (the last one again after).
async fn serve(answers: Vec<Answer>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let answers = Arc::new(answers);
    let served = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let answers = answers.clone();
            let n = served.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 8192];
                // The head, then the body its Content-Length announces.
                let head_end = loop {
                    if let Some(at) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                        break at + 4;
                    }
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(k) => request.extend_from_slice(&buf[..k]),
                    }
                };
                let head = String::from_utf8_lossy(&request[..head_end]).to_ascii_lowercase();
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                while request.len() < head_end + length {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(k) => request.extend_from_slice(&buf[..k]),
                    }
                }
                let a = &answers[n.min(answers.len() - 1)];
                let mut out = format!("HTTP/1.1 {} X\r\n", a.status).into_bytes();
                for h in &a.headers {
                    out.extend_from_slice(format!("{h}\r\n").as_bytes());
                }
                let body = if a.cut {
                    &a.body[..a.body.len() / 2]
                } else {
                    &a.body[..]
                };
                out.extend_from_slice(
                    format!(
                        "Content-Length: {}\r\nConnection: close\r\n\r\n",
                        a.body.len()
                    )
                    .as_bytes(),
                );
                out.extend_from_slice(body);
                let _ = socket.write_all(&out).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    base
}

fn add() -> Tool {
    Tool::new(
        "add",
        "Adds",
        json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
               "required": ["a", "b"]}),
        |input, _| {
            Ok(json!(
                input["a"].as_f64().unwrap_or(0.0) + input["b"].as_f64().unwrap_or(0.0)
            ))
        },
    )
}

async fn run_against(answers: Vec<Answer>, chat: bool, streamed: bool) -> Result<(), String> {
    let base = serve(answers).await;
    let client: Arc<dyn ModelClient> = if chat {
        Arc::new(
            OpenAICompatibleClient::new()
                .base_url(base)
                .timeout(Duration::from_secs(2)),
        )
    } else {
        Arc::new(
            GatewayClient::new()
                .base_url(base)
                .api_key("sk-test")
                .timeout(Duration::from_secs(2)),
        )
    };
    let agent = create_agent(
        AgentDefinition::new("hostile-model")
            .model("m")
            .tool(add())
            .max_steps(4)
            .model_retry(ModelRetry::new(1, Duration::ZERO)),
    )
    .map_err(|e| format!("create_agent: {e}"))?;
    let options = RunOptions::new("add 1 and 2", client);
    let ending = async {
        if streamed {
            agent.stream(options).result().await
        } else {
            agent.run(options).await
        }
    };
    let outcome = tokio::time::timeout(Duration::from_secs(60), ending)
        .await
        .map_err(|_| "the run did not end within 60 s".to_owned())?;
    match outcome {
        Ok(result) => {
            RunResult::from_json(&result.to_json())
                .map_err(|e| format!("the state does not read back: {e}"))?;
            Ok(())
        }
        Err(e) => match e.code() {
            ErrorCode::ModelFailed
            | ErrorCode::Gateway
            | ErrorCode::MaxSteps
            | ErrorCode::ToolInputInvalid
            | ErrorCode::UnknownTool
            | ErrorCode::ToolFailed => Ok(()),
            other => Err(format!(
                "an error of another kind: {other:?}: {}",
                e.message()
            )),
        },
    }
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn a_hostile_model_endpoint_cannot_hang_or_break_a_run(
        answers in prop::collection::vec(answer(), 1..5),
        chat in any::<bool>(),
        streamed in any::<bool>(),
    ) {
        let before = panics();
        let outcome = phaseo_agent::exec::block_on(run_against(answers.clone(), chat, streamed));
        prop_assert_eq!(panics(), before, "a panic in the process");
        prop_assert!(outcome.is_ok(), "{}\nanswers: {:?}", outcome.unwrap_err(), answers);
    }
}
