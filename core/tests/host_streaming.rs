//! Host model clients that stream through the `host_stream` bridge (how every binding adapts
//! a host `stream(request)`): deltas and items live and in order, retries keep the failed
//! attempt's deltas in the history but not in the output; tool calls given as a parsed
//! `input`.

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use futures::StreamExt;
use phaseo_agent::{
    async_trait, host_stream, json, AgentDefinition, AgentEvent, CancellationToken, DeltaSink,
    EventData, ModelClient, ModelError, ModelRequest, ModelResponse, ModelRetry, RunOptions,
    RunStatus, Value,
};

/// Streams scripted host events per attempt (`{"fail": msg}` fails the attempt there).
struct HostLike {
    attempts: Vec<Vec<Value>>,
    next: AtomicU32,
}

#[async_trait]
impl ModelClient for HostLike {
    async fn generate(
        &self,
        _request: &ModelRequest<'_>,
        _cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        Err(ModelError::new("not used: the run is streamed"))
    }

    async fn stream(
        &self,
        _request: &ModelRequest<'_>,
        _cancel: &CancellationToken,
        deltas: &dyn DeltaSink,
    ) -> Result<ModelResponse, ModelError> {
        let i = self.next.fetch_add(1, Ordering::SeqCst) as usize;
        let events = self.attempts[i].clone();
        let (tx, rx) = host_stream();
        let host = async move {
            for event in events {
                if let Some(message) = event.get("fail").and_then(Value::as_str) {
                    return Err(ModelError::new(message));
                }
                tx.send(&event).map_err(ModelError::new)?;
                tokio::task::yield_now().await;
            }
            Ok(())
        };
        rx.run(host, deltas).await
    }
}

fn text_delta(d: &str) -> Value {
    json!({"type": "text-delta", "delta": d})
}

fn summary(e: &AgentEvent) -> String {
    match &e.data {
        EventData::Delta { delta } => format!("{}:{delta}", e.type_name()),
        EventData::Item { item } => {
            format!(
                "item:{}",
                serde_json::to_value(item).unwrap()["type"]
                    .as_str()
                    .unwrap()
            )
        }
        _ => e.type_name().to_owned(),
    }
}

#[tokio::test]
async fn a_streaming_host_client_emits_its_deltas_and_items_live_in_order() {
    let client = Arc::new(HostLike {
        attempts: vec![vec![
            json!({"type": "reasoning-delta", "delta": "thinking"}),
            text_delta("Hel"),
            text_delta("lo"),
            json!({"type": "item", "item": {"type": "message", "role": "assistant", "content": "Hello"}}),
            json!({"type": "response", "response": {"message": {"content": "Hello"}}}),
        ]],
        next: AtomicU32::new(0),
    });
    let agent = agent(AgentDefinition::new("s"));
    let stream = agent.stream(RunOptions::new("hi", client));
    let events: Vec<String> = stream
        .events()
        .map(|e| summary(&e.unwrap()))
        .collect()
        .await;
    let model = events.iter().position(|e| e == "model.requested").unwrap();
    assert_eq!(
        events[model..model + 6],
        [
            "model.requested",
            "response.reasoning.delta:thinking",
            "response.output_text.delta:Hel",
            "response.output_text.delta:lo",
            "item:message",
            "model.completed",
        ]
    );
    // The client's items replace the ones the run would derive: one message item.
    assert_eq!(events.iter().filter(|e| *e == "item:message").count(), 1);
    assert_eq!(stream.text().await.unwrap(), "Hello");
}

#[tokio::test]
async fn a_failed_attempts_deltas_stay_in_the_history_but_not_in_the_output() {
    let client = Arc::new(HostLike {
        attempts: vec![
            vec![
                text_delta("Wrong "),
                text_delta("answ"),
                json!({"fail": "connection reset"}),
            ],
            vec![
                text_delta("Right"),
                json!({"type": "response", "response": {"text": "Right"}}),
            ],
        ],
        next: AtomicU32::new(0),
    });
    let agent = agent(AgentDefinition::new("s").model_retry(ModelRetry::new(1, Duration::ZERO)));
    let stream = agent.stream(RunOptions::new("hi", client));
    let deltas: Vec<String> = stream.text_stream().map(|d| d.unwrap()).collect().await;
    assert_eq!(deltas, ["Wrong ", "answ", "Right"]);
    let result = stream.result().await.unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(result.output(), &json!("Right"));
    assert_eq!(stream.text().await.unwrap(), "Right");
    assert_eq!(result.step_results[0].text, "Right");
    // Items come from the successful attempt only (derived from its response here).
    let items: Vec<Value> = stream
        .items_stream()
        .map(|i| serde_json::to_value(i.unwrap()).unwrap())
        .collect()
        .await;
    assert_eq!(
        items[0],
        json!({"type": "message", "role": "assistant", "content": "Right"})
    );
}

#[tokio::test]
async fn a_stream_without_a_response_fails_the_attempt_with_a_clear_error() {
    let client = Arc::new(HostLike {
        attempts: vec![vec![text_delta("x")]],
        next: AtomicU32::new(0),
    });
    let agent = agent(AgentDefinition::new("s"));
    let err = agent
        .stream(RunOptions::new("hi", client))
        .result()
        .await
        .unwrap_err();
    assert!(
        err.message().contains("without a final"),
        "{}",
        err.message()
    );
}

#[tokio::test]
async fn tool_calls_with_a_parsed_input_are_accepted_as_the_product_returns_them() {
    let full = ModelResponse::from_value(json!({
        "message": {"role": "assistant", "content": null,
                    "toolCalls": [{"id": "c1", "name": "t", "input": {"q": 1}}]}
    }))
    .unwrap();
    assert_eq!(full.message.tool_calls[0].arguments, r#"{"q":1}"#);
    let short = ModelResponse::from_script_entry(&json!({
        "toolCalls": [{"id": "c2", "name": "t", "input": "text"}]
    }))
    .unwrap()
    .unwrap();
    assert_eq!(short.message.tool_calls[0].arguments, r#""text""#);
    let agent = agent(AgentDefinition::new("s").tool(echo("t")));
    let result = agent
        .run(RunOptions::new("go", scripted([full, text("done")])))
        .await
        .unwrap();
    assert_eq!(
        result.step_results[0].tool_results[0].result,
        Some(json!({"q": 1}))
    );
}
