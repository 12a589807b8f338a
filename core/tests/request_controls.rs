//! Request controls (docs/behaviour.md §12): `toolChoice`, `parallelToolCalls`, `activeTools`, tool
//! `strict` and `inputExamples`, as host model clients receive them.

mod common;

use common::*;
use phaseo_agent::{
    json, AgentDefinition, ContinueOptions, ErrorCode, NextTurnParams, RunOptions, RunOverrides,
    RunStatus, Tool, ToolChoice, TurnValue, Value,
};

fn strict_params() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {"city": {"type": "string"}},
        "required": ["city"]
    })
}

#[tokio::test]
async fn unset_controls_are_null_in_the_request() {
    let client = Recording::new([text("hi")]);
    let agent = agent(AgentDefinition::new("a").tool(echo("e")));
    agent
        .run(RunOptions::new("go", client.clone()))
        .await
        .unwrap();
    let r = &client.requests()[0];
    assert_eq!(r["toolChoice"], Value::Null);
    assert_eq!(r["parallelToolCalls"], Value::Null);
    assert_eq!(r["tools"][0].get("strict"), None);
    assert_eq!(r["tools"][0].get("inputExamples"), None);
}

#[tokio::test]
async fn tool_choice_from_agent_turn_run_and_next_turn_params() {
    // Per turn: "required" on the first turn, unset after.
    let per_turn = TurnValue::from_fn(|t| {
        if t.step_index == 0 {
            json!("required")
        } else {
            Value::Null
        }
    });
    let steer = echo("steer").next_turn_params(NextTurnParams {
        tool_choice: Some(ToolChoice::None),
        ..Default::default()
    });
    let a = agent(
        AgentDefinition::new("a")
            .tools([echo("e"), steer])
            .tool_choice(per_turn)
            .parallel_tool_calls(false),
    );
    let client = Recording::new([call("c1", "steer", "{}"), text("x"), text("y")]);
    a.run(RunOptions::new("go", client.clone())).await.unwrap();
    let r = client.requests();
    assert_eq!(r[0]["toolChoice"], json!("required"));
    assert_eq!(r[0]["parallelToolCalls"], json!(false));
    // nextTurnParams wins for one request.
    assert_eq!(r[1]["toolChoice"], json!("none"));

    // A run's setting wins over the agent's; nextTurnParams over both.
    let run = RunOverrides {
        tool_choice: Some(ToolChoice::Tool("e".into())),
        parallel_tool_calls: Some(true),
        ..Default::default()
    };
    a.run(RunOptions::new("go", client.clone()).overrides(run))
        .await
        .unwrap();
    let r = client.requests();
    assert_eq!(r[2]["toolChoice"], json!({"toolId": "e"}));
    assert_eq!(r[2]["parallelToolCalls"], json!(true));
}

#[tokio::test]
async fn active_tools_narrow_what_is_offered_and_callable() {
    let a = agent(
        AgentDefinition::new("a")
            .tools([echo("a1"), echo("a2"), echo("a3")])
            .active_tools(json!(["a1", "a3"])),
    );
    let client = Recording::new([call("c1", "a2", "{}")]);
    let err = a
        .run(RunOptions::new("go", client.clone()))
        .await
        .unwrap_err();
    assert_eq!(client.offered(0), ["a1", "a3"]);
    assert_eq!(err.code(), ErrorCode::UnknownTool);
    assert_eq!(
        err.message(),
        "Unknown tool 'a2' (not offered in this turn)"
    );

    // Per run, and one-shot nextTurnParams.tools (alias activeTools) over the standing list.
    let narrow = echo("a1")
        .next_turn_params(NextTurnParams::from_value(json!({"activeTools": ["a2"]})).unwrap());
    let a = agent(
        AgentDefinition::new("a")
            .tools([narrow, echo("a2"), echo("a3")])
            .active_tools(TurnValue::from_fn(|_| json!(["a1", "a2"]))),
    );
    let client = Recording::new([call("c1", "a1", "{}"), call("c2", "a2", "{}"), text("ok")]);
    let run = RunOverrides {
        active_tools: Some(vec!["a1".into(), "a3".into()]),
        ..Default::default()
    };
    let result = a
        .run(RunOptions::new("go", client.clone()).overrides(run))
        .await
        .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(client.offered(0), ["a1", "a3"]);
    assert_eq!(client.offered(1), ["a2"]);
    assert_eq!(client.offered(2), ["a1", "a3"]);
}

#[tokio::test]
async fn unknown_ids_in_controls_are_refused() {
    let bad = phaseo_agent::create_agent(
        AgentDefinition::new("a")
            .tool(echo("e"))
            .active_tools(json!(["e", "nope"])),
    )
    .err()
    .unwrap();
    assert_eq!(bad.code(), ErrorCode::DefinitionInvalid);
    assert_eq!(
        bad.message(),
        "Invalid agent definition: activeTools[1] names no tool of the agent: 'nope'"
    );
    let bad = phaseo_agent::create_agent(
        AgentDefinition::new("a")
            .tool(echo("e"))
            .tool_choice(json!("sometimes")),
    )
    .err()
    .unwrap();
    assert_eq!(bad.code(), ErrorCode::DefinitionInvalid);
    assert!(
        bad.message().contains("toolChoice must be"),
        "{}",
        bad.message()
    );

    let a = agent(AgentDefinition::new("a").tool(echo("e")));
    let run = RunOverrides {
        tool_choice: Some(ToolChoice::Tool("nope".into())),
        ..Default::default()
    };
    let err = a
        .run(RunOptions::new("go", scripted([text("x")])).overrides(run.clone()))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::DefinitionInvalid);
    assert_eq!(
        err.message(),
        "Invalid run options: toolChoice names no tool of the agent: 'nope'"
    );
    assert!(err.result().is_none());
    // The same on continue, before anything runs.
    let paused = approval_agent()
        .run(RunOptions::new("go", scripted([call("c1", "t", "{}")])))
        .await
        .unwrap();
    let err = approval_agent()
        .continue_run(
            &paused,
            ContinueOptions::new(scripted([])).overrides(RunOverrides {
                active_tools: Some(vec!["nope".into()]),
                ..Default::default()
            }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::DefinitionInvalid);
}

#[test]
fn strict_tools_are_checked_at_definition() {
    let ok = Tool::new("w", "", strict_params(), |_, _| Ok(json!(1))).strict(true);
    assert!(phaseo_agent::create_agent(AgentDefinition::new("a").tool(ok)).is_ok());
    let loose = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {"where": {"type": "object", "properties": {"city": {}}}},
        "required": ["where"]
    });
    let bad = Tool::new("w", "", loose, |_, _| Ok(json!(1))).strict(true);
    let err = phaseo_agent::create_agent(AgentDefinition::new("a").tool(bad))
        .err()
        .unwrap();
    assert_eq!(err.code(), ErrorCode::DefinitionInvalid);
    assert_eq!(
        err.message(),
        "Invalid definition of tool 'w': strict: parameters are not strict-compatible: the \
         object schema at /properties/where must set \"additionalProperties\": false"
    );
    // The default parameters accept any object: not strict-compatible either.
    let default = Tool::new("d", "", Value::Null, |_, _| Ok(json!(1))).strict(true);
    assert!(phaseo_agent::create_agent(AgentDefinition::new("a").tool(default)).is_err());
}

#[tokio::test]
async fn strict_and_input_examples_reach_host_clients() {
    let tool = Tool::new("w", "Weather", strict_params(), |_, _| Ok(json!(1)))
        .strict(true)
        .input_examples(vec![json!({"city": "Paris"})]);
    let a = agent(AgentDefinition::new("a").tools([tool, echo("e")]));
    let client = Recording::new([text("x")]);
    a.run(RunOptions::new("go", client.clone())).await.unwrap();
    let tools = &client.requests()[0]["tools"];
    assert_eq!(tools[0]["strict"], json!(true));
    assert_eq!(tools[0]["inputExamples"], json!([{"city": "Paris"}]));
    assert_eq!(tools[1].get("strict"), None);

    let bad = Tool::new("w", "", Value::Null, |_, _| Ok(json!(1))).input_examples(vec![json!(3)]);
    let err = phaseo_agent::create_agent(AgentDefinition::new("a").tool(bad))
        .err()
        .unwrap();
    assert_eq!(
        err.message(),
        "Invalid definition of tool 'w': inputExamples[0] must be an object of arguments, got 3"
    );
}
