//! The offline clients shipped with the core: TestClient and ScriptedClient.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::*;
use phaseo_agent::{
    json, AgentDefinition, ModelError, ModelResponse, Role, RunOptions, RunStatus, ScriptedClient,
    TestClient, Tool, Value,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_client_calls_every_tool_once_with_schema_generated_args_then_summarizes() {
    let inputs = Arc::new(Mutex::new(Vec::new()));
    let calls = Arc::new(AtomicUsize::new(0));
    let tool = |id: &'static str, params: Value| {
        let (inputs, calls) = (inputs.clone(), calls.clone());
        Tool::new(id, "", params, move |input, _| {
            calls.fetch_add(1, Ordering::SeqCst);
            inputs.lock().unwrap().push((id, input.clone()));
            Ok(json!(format!("{id} ok")))
        })
    };
    let weather = tool(
        "weather",
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 3},
                "days": {"type": "integer", "minimum": 1},
                "units": {"enum": ["metric", "imperial"]},
                "tags": {"type": "array", "items": {"type": "boolean"}, "minItems": 2},
            },
            "required": ["city", "days", "units", "tags"],
            "additionalProperties": false,
        }),
    );
    let greet = tool(
        "greet",
        json!({"type": "object", "properties": {"name": {"default": "Ada"}}}),
    );
    let agent = agent(AgentDefinition::new("tc").tools([weather, greet]));
    let result = agent
        .run(RunOptions::new(
            "try the tools",
            Arc::new(TestClient::new()),
        ))
        .await
        .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(
        *inputs.lock().unwrap(),
        vec![
            (
                "weather",
                json!({"city": "aaa", "days": 1, "units": "metric", "tags": [false, false]})
            ),
            ("greet", json!({"name": "Ada"})),
        ]
    );
    assert_eq!(
        result.output(),
        &json!("Tool results — weather: weather ok; greet: greet ok")
    );
    assert_eq!(result.run.step_count, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_client_without_tools_answers_at_once() {
    let agent = agent(AgentDefinition::new("tc"));
    let result = agent
        .run(RunOptions::new("hi", Arc::new(TestClient::new())))
        .await
        .unwrap();
    assert_eq!(result.output(), &json!("No tool results."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_client_starting_at_skips_consumed_responses() {
    let responses = vec![
        Ok(ModelResponse::text("first")),
        Err(ModelError::new("second fails")),
        Ok(ModelResponse::text("third")),
    ];
    let agent = agent(AgentDefinition::new("sc"));
    let client = Arc::new(ScriptedClient::starting_at(responses.clone(), 2));
    let result = agent
        .run(RunOptions::new("go", client.clone()))
        .await
        .unwrap();
    assert_eq!(result.output(), &json!("third"));
    assert_eq!(client.cursor(), 3);

    let client = Arc::new(ScriptedClient::starting_at(responses.clone(), 1));
    let err = agent.run(RunOptions::new("go", client)).await.unwrap_err();
    assert_eq!(err.message(), "second fails");

    let client = Arc::new(ScriptedClient::starting_at(responses, 3));
    let err = agent.run(RunOptions::new("go", client)).await.unwrap_err();
    assert_eq!(
        err.message(),
        "Scripted client has no response left (3 scripted)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_client_keeps_the_conversation() {
    let agent = agent(AgentDefinition::new("sc").tool(echo("t")));
    let client = scripted([call("c1", "t", r#"{"a":[1,2]}"#), text("fin")]);
    let result = agent.run(RunOptions::new("go", client)).await.unwrap();
    let roles: Vec<Role> = result.messages().iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    assert_eq!(result.messages()[2].content, r#"{"a":[1,2]}"#);
}
