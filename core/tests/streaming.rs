//! `Agent::stream`: replay for every consumer, filtered iterators, errors and cancel.

mod common;

use std::time::Duration;

use common::*;
use futures::StreamExt;
use phaseo_agent::{
    json, AgentDefinition, AgentEvent, AgentStream, ErrorCode, EventType, ModelResponse,
    RunOptions, RunStatus, StreamItem, Tool, Value,
};

const ANSWER: &str = "The answer is forty two, as computed by the tool.";

fn tool_agent() -> phaseo_agent::Agent {
    agent(AgentDefinition::new("streamer").tool(echo("t")))
}

fn start(agent: &phaseo_agent::Agent) -> AgentStream {
    let client = scripted([call("c1", "t", r#"{"q":1}"#), text(ANSWER)]);
    agent.stream(RunOptions::new("go", client))
}

async fn all_events(stream: &AgentStream) -> Vec<AgentEvent> {
    stream.events().map(|e| e.unwrap()).collect().await
}

fn keys(events: &[AgentEvent]) -> Vec<String> {
    events.iter().map(AgentEvent::to_json).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_consumer_sees_the_whole_history_from_the_start() {
    let agent = tool_agent();
    let stream = start(&agent);
    let consumers: Vec<_> = (0..4)
        .map(|_| {
            let s = stream.clone();
            tokio::spawn(async move { all_events(&s).await })
        })
        .collect();
    let result = stream.result().await.unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    let mut histories = Vec::new();
    for c in consumers {
        histories.push(keys(&c.await.unwrap()));
    }
    // A consumer created after the run finished replays the same history.
    histories.push(keys(&all_events(&stream).await));
    assert_eq!(
        histories[0].first().map(|e| e.contains("run.started")),
        Some(true)
    );
    assert!(histories[0].last().unwrap().contains("run.completed"));
    for h in &histories[1..] {
        assert_eq!(h, &histories[0]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_deltas_join_to_the_final_text() {
    let agent = tool_agent();
    let stream = start(&agent);
    let deltas: Vec<String> = stream.text_stream().map(|d| d.unwrap()).collect().await;
    assert!(deltas.len() > 1, "streamed in pieces: {deltas:?}");
    assert_eq!(deltas.concat(), ANSWER);
    assert_eq!(stream.text().await.unwrap(), ANSWER);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_deltas_are_streamed() {
    let agent = agent(AgentDefinition::new("r"));
    let mut response = ModelResponse::text("hi");
    response.message.reasoning = Some("because".into());
    let stream = agent.stream(RunOptions::new("go", scripted([response])));
    let reasoning: Vec<String> = stream
        .reasoning_stream()
        .map(|d| d.unwrap())
        .collect()
        .await;
    assert_eq!(reasoning.concat(), "because");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_stream_yields_only_tool_events() {
    let agent = tool_agent();
    let stream = start(&agent);
    let events: Vec<AgentEvent> = stream.tool_stream().map(|e| e.unwrap()).collect().await;
    let types: Vec<_> = events.iter().map(AgentEvent::type_name).collect();
    // The call's input as the model wrote it (docs/behaviour.md §16), then its run.
    assert_eq!(
        types,
        [
            "tool.input_started",
            "tool.input_delta",
            "tool.input_delta",
            "tool.started",
            "tool.completed"
        ]
    );
    assert!(events.iter().all(|e| e.event_type.is_tool_event()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_stream_ends_with_the_result() {
    let agent = tool_agent();
    let stream = start(&agent);
    let items: Vec<StreamItem> = stream.full_stream().map(|i| i.unwrap()).collect().await;
    let (last, events) = items.split_last().unwrap();
    match last {
        StreamItem::Result(r) => assert_eq!(r.output(), &json!(ANSWER)),
        other => panic!("last item is {other:?}"),
    }
    assert!(events.iter().all(|i| matches!(i, StreamItem::Event(_))));
    let item_types: Vec<Value> = stream
        .items_stream()
        .map(|i| serde_json::to_value(i.unwrap()).unwrap()["type"].clone())
        .collect()
        .await;
    assert_eq!(
        item_types,
        [
            json!("tool_call"),
            json!("tool_result"),
            json!("message"),
            json!("output")
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_streamed_run_makes_iterators_yield_the_error() {
    let agent =
        agent(
            AgentDefinition::new("f")
                .tool(Tool::new("t", "", Value::Null, |_, _| Err("broken".into()))),
        );
    let stream = agent.stream(RunOptions::new("go", scripted([call("c1", "t", "{}")])));
    let err = stream.result().await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolFailed);
    assert_eq!(err.result().unwrap().status(), RunStatus::Failed);

    let events: Vec<_> = stream.events().collect().await;
    let (last, before) = events.split_last().unwrap();
    assert_eq!(last.as_ref().unwrap_err().message(), "broken");
    assert!(before.iter().all(Result::is_ok));
    assert_eq!(
        before.last().unwrap().as_ref().unwrap().event_type,
        EventType::RunFailed
    );
    let deltas: Vec<_> = stream.text_stream().collect().await;
    assert_eq!(deltas.len(), 1);
    assert!(deltas[0].is_err());
    let full: Vec<_> = stream.full_stream().collect().await;
    assert!(full.last().unwrap().is_err());
    assert!(stream.text().await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_with_a_reason_ends_the_run_cancelled() {
    let slow = Tool::new_async("slow", "", Value::Null, |_, _| async {
        tokio::time::sleep(Duration::from_secs(10)).await;
        Ok(json!("late"))
    });
    let agent = agent(AgentDefinition::new("c").tool(slow));
    let stream = agent.stream(RunOptions::new("go", scripted([call("c1", "slow", "{}")])));
    // Wait until the tool started, then cancel.
    let mut tools = Box::pin(stream.tool_stream());
    loop {
        let event = tools.next().await.unwrap().unwrap();
        if event.type_name() == "tool.started" {
            break;
        }
    }
    stream.cancel(Some("user pressed stop".into()));
    let result = tokio::time::timeout(Duration::from_secs(2), stream.result())
        .await
        .expect("cancel is prompt")
        .expect("a cancelled stream gives its result");
    assert_eq!(result.status(), RunStatus::Cancelled);
    let error = result.run.error.as_ref().unwrap();
    assert_eq!(error.code, ErrorCode::Cancelled);
    assert_eq!(error.message, "user pressed stop");
    let last = all_events(&stream).await.pop().unwrap();
    assert_eq!(last.type_name(), "run.cancelled");
    assert_eq!(last.to_value()["error"], json!("user pressed stop"));
}

#[test]
fn a_stream_started_outside_a_runtime_still_runs() {
    let agent = tool_agent();
    let stream = start(&agent);
    let result = phaseo_agent::exec::block_on(stream.result()).unwrap();
    assert_eq!(result.output(), &json!(ANSWER));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_stream_replays_the_continued_run() {
    let agent = approval_agent();
    let state = paused(&agent, "t").await;
    let stream = agent.continue_stream(&state, cont([text("done")]).approve("c1"));
    let types: Vec<_> = all_events(&stream)
        .await
        .iter()
        .map(AgentEvent::type_name)
        .collect();
    assert_eq!(types.first(), Some(&"run.resumed"));
    assert_eq!(types.last(), Some(&"run.completed"));
    assert_eq!(stream.result().await.unwrap().output(), &json!("done"));
}
