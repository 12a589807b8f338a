//! Deferred tools and the built-in `tool_search` (docs/behaviour.md §17), through the
//! public API.

mod common;

use common::*;
use phaseo_agent::exec::block_on;
use phaseo_agent::{
    json, AgentDefinition, ErrorCode, RunOptions, RunOverrides, RunResult, RunStatus, Tool, Value,
};

fn weather() -> Tool {
    Tool::new(
        "get_weather",
        "Current weather of a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        |input, _| {
            Ok(json!(format!(
                "sunny in {}",
                input["city"].as_str().unwrap_or("?")
            )))
        },
    )
    .defer_loading(true)
}

fn stocks() -> Tool {
    Tool::new(
        "stock_price",
        "Price of a share",
        json!({"type": "object", "properties": {"ticker": {"type": "string"}}}),
        |_, _| Ok(json!(42)),
    )
    .defer_loading(true)
}

fn deferred_agent() -> phaseo_agent::Agent {
    agent(
        AgentDefinition::new("assistant")
            .tool(echo("echo"))
            .tool(weather())
            .tool(stocks())
            .tool(echo("time")),
    )
}

/// The tool messages' contents by call id.
fn tool_message(result: &RunResult, id: &str) -> (Value, bool) {
    let state = result.to_value();
    let m = state["run"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["toolCallId"] == id)
        .cloned()
        .unwrap();
    (
        serde_json::from_str(m["content"].as_str().unwrap()).unwrap_or(m["content"].clone()),
        m["isError"].as_bool().unwrap_or(false),
    )
}

#[test]
fn deferred_tools_are_offered_once_found_after_the_others() {
    let client = Recording::new([
        call("c1", "tool_search", r#"{"query":"weather in a city"}"#),
        call("c2", "get_weather", r#"{"city":"Oslo"}"#),
        text("It is sunny."),
    ]);
    let result =
        block_on(deferred_agent().run(RunOptions::new("weather?", client.clone()))).expect("runs");
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(client.offered(0), ["echo", "time", "tool_search"]);
    assert_eq!(
        client.offered(1),
        ["echo", "time", "tool_search", "get_weather"]
    );
    assert_eq!(
        tool_message(&result, "c1").0,
        json!({"tools": [{"id": "get_weather", "description": "Current weather of a city"}]})
    );
    assert_eq!(tool_message(&result, "c2").0, json!("sunny in Oslo"));
    assert_eq!(
        result.to_value()["run"]["loadedTools"],
        json!(["get_weather"])
    );
}

#[test]
fn a_deferred_tool_not_loaded_is_an_unknown_tool() {
    let client = Recording::new([
        call("c1", "stock_price", r#"{"ticker":"X"}"#),
        text("I cannot."),
    ]);
    let result = block_on(
        deferred_agent().run(RunOptions::new("price?", client).overrides(RunOverrides {
            tool_execution: Some(phaseo_agent::ToolExecutionConfig {
                on_error: Some(phaseo_agent::OnError::ReturnToModel),
                ..Default::default()
            }),
            ..Default::default()
        })),
    )
    .expect("runs");
    let (content, is_error) = tool_message(&result, "c1");
    assert!(is_error);
    assert!(
        content["error"]
            .as_str()
            .unwrap()
            .contains("Unknown tool 'stock_price'"),
        "{content}"
    );
    assert!(result.to_value()["run"].get("loadedTools").is_none());
}

#[test]
fn loaded_tools_stay_offered_across_a_pause_and_the_state_json() {
    let agent = agent(
        AgentDefinition::new("assistant")
            .tool(echo("gate").require_approval())
            .tool(weather())
            .tool(stocks()),
    );
    let first = Recording::new([call("c1", "tool_search", r#"{"query":"share price"}"#), {
        call("c2", "gate", "{}")
    }]);
    let paused = block_on(agent.run(RunOptions::new("go", first.clone()))).expect("pauses");
    assert_eq!(paused.status(), RunStatus::WaitingForHuman);
    assert_eq!(first.offered(1), ["gate", "tool_search", "stock_price"]);
    let stored = RunResult::from_json(&paused.to_json()).expect("reads");
    let second = Recording::new([
        call("c3", "tool_search", r#"{"query":"weather","limit":1}"#),
        call("c4", "stock_price", "{}"),
        text("done"),
    ]);
    let mut options = phaseo_agent::ContinueOptions::new(second.clone());
    options.approvals = vec![phaseo_agent::ToolDecision::new("c2")];
    let done = block_on(agent.continue_run(&stored, options)).expect("continues");
    assert_eq!(done.status(), RunStatus::Completed);
    // Loaded tools keep their place; a newly loaded one joins at the end.
    assert_eq!(second.offered(0), ["gate", "tool_search", "stock_price"]);
    assert_eq!(
        second.offered(1),
        ["gate", "tool_search", "stock_price", "get_weather"]
    );
    assert_eq!(tool_message(&done, "c4").0, json!(42));
    assert_eq!(
        done.to_value()["run"]["loadedTools"],
        json!(["stock_price", "get_weather"])
    );
}

#[test]
fn active_tools_still_filter_and_a_search_finds_nothing_without_matches() {
    let client = Recording::new([
        call("c1", "tool_search", r#"{"query":"zebra"}"#),
        text("nothing"),
    ]);
    let result = block_on(
        deferred_agent().run(
            RunOptions::new("?", client.clone()).overrides(RunOverrides {
                active_tools: Some(vec!["tool_search".into(), "get_weather".into()]),
                ..Default::default()
            }),
        ),
    )
    .expect("runs");
    assert_eq!(client.offered(0), ["tool_search"]);
    assert_eq!(tool_message(&result, "c1").0, json!({"tools": []}));
}

#[test]
fn a_search_with_a_bad_limit_is_invalid_input() {
    let client = Recording::new([call("c1", "tool_search", r#"{"query":"x","limit":50}"#)]);
    let err = block_on(deferred_agent().run(RunOptions::new("?", client))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolInputInvalid);
}

#[test]
fn tool_search_is_reserved_only_when_tools_are_deferred() {
    let err = phaseo_agent::create_agent(
        AgentDefinition::new("a")
            .tool(echo("tool_search"))
            .tool(weather()),
    )
    .err()
    .expect("refused");
    assert_eq!(err.code(), ErrorCode::DefinitionInvalid);
    assert!(err.message().contains("'tool_search'"), "{}", err.message());
    assert!(
        phaseo_agent::create_agent(AgentDefinition::new("a").tool(echo("tool_search"))).is_ok()
    );
}

#[test]
fn definitions_read_defer_loading() {
    let def = phaseo_agent::spec::agent_definition(
        &NoHost,
        json!({"id": "a", "tools": [
            {"id": "later", "description": "Loaded on demand", "deferLoading": true},
            {"id": "now"}
        ]}),
    )
    .expect("reads");
    let client = Recording::new([text("ok")]);
    block_on(
        phaseo_agent::create_agent(def)
            .unwrap()
            .run(RunOptions::new("?", client.clone())),
    )
    .unwrap();
    assert_eq!(client.offered(0), ["now", "tool_search"]);
}
