//! The canonical, versioned state: round trips, refusals of bad state, canonical JSON.

mod common;

use common::*;
use phaseo_agent::json::to_canonical_string;
use phaseo_agent::{
    create_agent, json, AgentDefinition, ErrorCode, ModelResponse, NextTurnParams, RunOptions,
    RunResult, Tool, Value,
};

fn assert_round_trip(state: &RunResult) {
    let text = state.to_json();
    let parsed = RunResult::from_json(&text).expect("a state the core wrote is readable");
    assert_eq!(
        parsed.to_json(),
        text,
        "to_json ∘ from_json is the identity"
    );
    assert_eq!(
        RunResult::from_value(state.to_value()).unwrap().to_json(),
        text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_states_of_every_kind_round_trip() {
    let agent = approval_agent();
    for tool in ["t", "m", "h"] {
        let state = paused(&agent, tool).await;
        assert_round_trip(&state);
        assert_eq!(RunResult::from_json(&state.to_json()).unwrap(), state);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rich_paused_state_round_trips() {
    let next = NextTurnParams {
        temperature: Some(0.3),
        tools: Some(vec!["t".into()]),
        ..Default::default()
    };
    let progress = Tool::new("p", "", Value::Null, |_, rt| {
        rt.emit_progress(json!({"pct": 0.5}));
        rt.set_context(json!({"z": 1, "a": [2.5, "x", null]}))
            .unwrap();
        Ok(json!({"ok": true, "n": 2.0}))
    })
    .next_turn_params(next);
    let agent = agent(
        AgentDefinition::new("rich")
            .tool(progress)
            .tool(echo("t").require_approval()),
    );
    let mut first = ModelResponse::tool_calls([("c0", "p", r#"{"b":1,"a":0.1}"#)])
        .with_usage(10, 5)
        .with_cost(0.25);
    first.message.reasoning = Some("thinking".into());
    first.message.content = "calling p".into();
    let client = scripted([first, call("c1", "t", r#"{"x":"ü ✓"}"#)]);
    let state = agent
        .run(RunOptions::new(json!({"question": "why?"}), client))
        .await
        .unwrap();
    assert_eq!(state.pending().len(), 1);
    assert_round_trip(&state);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_returning_null_round_trips() {
    // ToolResult.result is `Some(null)`: written as `"result":null`, it must read back as
    // such (not as an absent result).
    let agent = agent(
        AgentDefinition::new("nul")
            .tool(Tool::new("n", "", Value::Null, |_, _| Ok(Value::Null)))
            .tool(echo("t").require_approval()),
    );
    let client = scripted([call("c0", "n", "{}"), call("c1", "t", "{}")]);
    let state = agent.run(RunOptions::new("go", client)).await.unwrap();
    assert!(state.to_json().contains(r#""result":null"#));
    assert_round_trip(&state);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_with_a_non_finite_cost_stays_readable() {
    // A Rust client may report any f64; the state the core writes must read back.
    let agent = agent(AgentDefinition::new("nan"));
    let client = scripted([ModelResponse::text("hi").with_cost(f64::NAN)]);
    let state = agent.run(RunOptions::new("go", client)).await.unwrap();
    RunResult::from_json(&state.to_json()).expect("the core reads what it wrote");
}

async fn paused_value() -> Value {
    let agent = approval_agent();
    paused(&agent, "t").await.to_value()
}

type Mutation = fn(&mut Value);

fn refused(text: &str, expected: &str) {
    let err = RunResult::from_json(text).expect_err(text);
    assert_eq!(err.code(), ErrorCode::StateInvalid, "{text}");
    assert!(
        err.message().contains(expected),
        "{:?} should name {expected:?}",
        err.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupported_versions_are_refused() {
    let state = paused_value().await;
    for (version, expected) in [
        (json!(2), "unsupported version 2"),
        (json!("1"), r#"unsupported version "1""#),
        (json!(0), "unsupported version 0"),
        (json!(-1), "unsupported version -1"),
        (json!(1.5), "unsupported version 1.5"),
        (Value::Null, "unsupported version null"),
    ] {
        let mut s = state.clone();
        s["version"] = version;
        refused(&s.to_string(), expected);
    }
    let mut s = state.clone();
    s.as_object_mut().unwrap().remove("version");
    refused(&s.to_string(), "missing `version`");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_states_are_refused_naming_the_problem() {
    refused("", "not JSON");
    refused("{\"version\":1,", "not JSON");
    refused("[1]", "expected a JSON object");
    refused(r#"{"version":1}"#, "run");
    let state = paused_value().await;
    let cases: Vec<(Mutation, &str)> = vec![
        (
            |s| drop(s["run"].as_object_mut().unwrap().remove("id")),
            "id",
        ),
        (|s| s["run"]["id"] = json!(""), "`run.id` is empty"),
        (|s| s["run"]["status"] = json!("sleeping"), "sleeping"),
        (|s| s["run"]["pause"] = Value::Null, "`run.pause` is null"),
        (|s| s["run"]["createdAt"] = json!("yesterday"), "createdAt"),
        (|s| s["run"]["messages"] = json!("hi"), "invalid type"),
        (|s| s["run"]["stepCount"] = json!(0), "stepCount 0"),
        (
            |s| s["run"]["pause"]["pendingToolCalls"] = json!([]),
            "without pending tool calls",
        ),
        (|s| s["run"]["usage"]["inputTokens"] = json!(-3), "-3"),
    ];
    for (mutate, expected) in cases {
        let mut s = state.clone();
        mutate(&mut s);
        refused(&s.to_string(), expected);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fields_the_core_derives_are_ignored_on_read() {
    // `items`, `usage` and `output` are derived from the run: what the reader trusts is run.
    let mut state = paused_value().await;
    state["items"] = json!("garbage");
    state["output"] = json!(42);
    let parsed = RunResult::from_json(&state.to_string()).unwrap();
    assert_eq!(parsed.output(), &Value::Null);
}

#[test]
fn canonical_json_writes_integral_floats_as_integers_and_keeps_key_order() {
    let v = json!({"z": 2.0, "a": 0.3, "m": [1.0, -0.0, 1e21, 1.5e-7, 100], "b": {"y": 1, "x": 2}});
    // Exponents as JavaScript writes them (`1e+21`).
    assert_eq!(
        to_canonical_string(&v),
        r#"{"z":2,"a":0.3,"m":[1,0,1e+21,1.5e-7,100],"b":{"y":1,"x":2}}"#
    );
    let parsed: Value = serde_json::from_str(r#"{"k":0.1,"j":2.50,"i":3.0}"#).unwrap();
    assert_eq!(to_canonical_string(&parsed), r#"{"k":0.1,"j":2.5,"i":3}"#);
    assert_eq!(phaseo_agent::json::number_text(2.0), "2");
    assert_eq!(phaseo_agent::json::number_text(0.3), "0.3");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn states_and_events_are_canonical() {
    let agent = agent(AgentDefinition::new("canon").tool(Tool::new(
        "t",
        "",
        Value::Null,
        |_, _| Ok(json!({"b": 2.0, "a": 0.3})),
    )));
    let rec = Recorder::default();
    let client = scripted([
        call("c1", "t", "{}").with_cost(2.0),
        ModelResponse::text("ok").with_cost(0.5),
    ]);
    let state = agent
        .run(
            RunOptions::new("go", client)
                .context(json!({"temperature": 1.0, "top": 0.3}))
                .on_event(rec.listener()),
        )
        .await
        .unwrap();
    let text = state.to_json();
    assert!(text.starts_with(r#"{"version":1,"run":{"id":"#), "{text}");
    assert!(text.contains(r#""context":{"temperature":1,"top":0.3}"#));
    assert!(text.contains(r#""content":"{\"b\":2,\"a\":0.3}""#));
    assert!(text.contains(r#""cost":2.5}"#));
    assert!(!text.contains(".0,") && !text.contains(".0}"), "{text}");
    let completed = rec
        .events()
        .into_iter()
        .find(|e| e.type_name() == "tool.completed")
        .unwrap();
    assert!(completed
        .to_json()
        .ends_with(r#""output":{"b":2,"a":0.3}}"#));
}

/// A run's state of `calls` calls in one turn, completed.
async fn state_of(calls: usize) -> RunResult {
    let agent = agent(AgentDefinition::new("sizes").tool(echo("t")));
    let turn = ModelResponse::tool_calls(
        (0..calls).map(|i| (format!("c{i}"), "t".to_owned(), format!(r#"{{"i":{i}}}"#))),
    );
    let client = scripted([turn, text("done")]);
    agent
        .run(RunOptions::new(json!("go"), client))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_states_text_is_the_same_whatever_was_written_before() {
    let large = state_of(400).await;
    let small = state_of(1).await;
    for state in [&large, &small, &small, &large, &small] {
        let text = state.to_json();
        assert_eq!(text, to_canonical_string(state));
        assert!(
            text.capacity() <= 2 * text.len().max(1024),
            "a {}-byte text kept {} bytes",
            text.len(),
            text.capacity()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_states_text_without_items_is_its_text_with_the_items_cut_out() {
    let signed = create_agent(
        AgentDefinition::new("signed")
            .tool(Tool::new("t", "Echo", Value::Null, |input, _| Ok(input)))
            .state_secret("a secret of the test"),
    )
    .unwrap();
    let turn = ModelResponse::tool_calls([("c1", "t", r#"{"i":1}"#), ("c2", "t", r#"{"i":2}"#)]);
    let signed = signed
        .run(RunOptions::new(json!("go"), scripted([turn, text("done")])))
        .await
        .unwrap();
    for state in [state_of(30).await, state_of(0).await, signed] {
        let whole = state.to_json();
        let without = state.to_json_without_items();
        let items_at = whole.find(r#","items":["#).expect("the items");
        let items_end = whole.rfind(']').expect("the items' end") + 1;
        assert!(!state.items().is_empty());
        assert_eq!(
            without,
            format!("{}{}", &whole[..items_at], &whole[items_end..]),
            "every other part written as in the whole text, in its order"
        );
        assert_eq!(state.to_json(), whole, "the state is unchanged");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_states_head_is_its_text_without_the_history() {
    let mut state = state_of(50).await;
    let whole = state.to_json();
    let head = state.head_json();
    assert_eq!(
        state.to_json(),
        whole,
        "taking the head leaves the state as it was"
    );
    let head: Value = serde_json::from_str(&head).unwrap();
    let mut expected: Value = serde_json::from_str(&whole).unwrap();
    for (object, key) in [("run", "messages"), ("", "steps"), ("", "stepResults")] {
        let target = if object.is_empty() {
            &mut expected
        } else {
            &mut expected[object]
        };
        assert_ne!(target[key], json!([]), "{key} grows with the run");
        target[key] = json!([]);
    }
    // The items are the steps' and then the output: only the output is left.
    expected["items"] = json!([{"type": "output", "value": "done"}]);
    assert_eq!(head, expected, "everything else is in the head");
    assert_eq!(head["output"], json!("done"));
    assert_eq!(head["run"]["status"], json!("completed"));
    // The size estimate grows with the history.
    assert!(state.estimated_size() > state_of(1).await.estimated_size() * 10);
    assert!(state.estimated_size() >= whole.len() / 2);
}
