//! `state.schema.json` describes the states the core really writes, in every status.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use phaseo_agent::{
    human_review_fn, json, step_count_is, AgentDefinition, CancellationToken, GatewayErrorInfo,
    ModelError, ModelResponse, NextTurnParams, OnError, ReviewRequest, RunOptions, RunResult,
    RunStatus, ScriptedClient, Tool, Value,
};

type Mutation = fn(&mut Value);

fn validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(include_str!("../state.schema.json")).unwrap();
    jsonschema::draft202012::new(&schema).expect("the schema compiles")
}

fn assert_valid(v: &jsonschema::Validator, state: &RunResult, status: RunStatus) {
    assert_eq!(state.status(), status);
    let value: Value = serde_json::from_str(&state.to_json()).unwrap();
    let errors: Vec<String> = v
        .iter_errors(&value)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{status:?} state invalid: {errors:#?}\n{value}"
    );
}

fn rich_agent(id: &str) -> phaseo_agent::Agent {
    let progress = Tool::new("p", "", Value::Null, |_, rt| {
        rt.emit_progress(json!({"pct": 50}));
        rt.set_context(json!({"seen": true})).unwrap();
        Ok(json!({"ok": 1.5}))
    })
    .next_turn_params(NextTurnParams {
        temperature: Some(0.3),
        tools: Some(["p", "t", "m", "h"].map(String::from).to_vec()),
        tool_choice: Some(phaseo_agent::ToolChoice::Tool("t".into())),
        ..Default::default()
    });
    let failing =
        Tool::new("f", "", Value::Null, |_, _| Err("nope".into())).on_error(OnError::ReturnToModel);
    agent(
        AgentDefinition::new(id)
            .tools([
                progress,
                failing,
                Tool::new("n", "", Value::Null, |_, _| Ok(Value::Null)),
            ])
            .tool(echo("t").require_approval())
            .tool(Tool::external("m", "", Value::Null))
            .tool(echo("h").on_tool_called(|_, _| Ok(None))),
    )
}

fn tool_step() -> ModelResponse {
    let mut r = ModelResponse::tool_calls([("a", "p", "{}"), ("b", "f", "{}"), ("c", "n", "{}")])
        .with_usage(12, 3)
        .with_cost(0.002);
    r.message.reasoning = Some("let me see".into());
    r.message.content = "working".into();
    r.request_id = Some("req-1".into());
    r.model = Some("m-1".into());
    r.provider = Some("prov".into());
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn states_in_every_status_match_the_schema() {
    let v = validator();
    let agent = rich_agent("schema");

    let completed = agent
        .run(RunOptions::new(
            json!({"q": [1, 2]}),
            scripted([tool_step(), text("done")]),
        ))
        .await
        .unwrap();
    assert_valid(&v, &completed, RunStatus::Completed);
    let items = completed.to_value()["items"].clone();
    let kinds: std::collections::BTreeSet<_> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        [
            "error",
            "message",
            "output",
            "reasoning",
            "tool_call",
            "tool_result"
        ]
    );

    let stopper = common::agent(
        AgentDefinition::new("stop")
            .tool(echo("t"))
            .stop_when(step_count_is(1)),
    );
    let stopped = stopper
        .run(RunOptions::new("go", scripted([call("c1", "t", "{}")])))
        .await
        .unwrap();
    assert_valid(&v, &stopped, RunStatus::Stopped);

    for tool in ["t", "m", "h"] {
        let state = agent
            .run(RunOptions::new(
                "go",
                scripted([tool_step(), call("c1", tool, r#"{"x":1}"#)]),
            ))
            .await
            .unwrap();
        assert_valid(&v, &state, RunStatus::WaitingForHuman);
        let mut decisions = cont([text("after")]);
        decisions = match tool {
            "t" => decisions.approve("c1"),
            _ => decisions.output("c1", json!({"supplied": true})),
        };
        let continued = agent
            .continue_run(&state, decisions.human_input("thanks"))
            .await
            .unwrap();
        assert_valid(&v, &continued, RunStatus::Completed);
        let rejected = agent
            .continue_run(&state, cont([text("x")]).reject("c1"))
            .await;
        if tool == "t" {
            assert_valid(&v, &rejected.unwrap(), RunStatus::Completed);
        }
    }

    // A pause in the step whose tool set next-turn overrides keeps them in the state.
    let with_overrides = agent
        .run(RunOptions::new(
            "go",
            scripted([ModelResponse::tool_calls([
                ("a", "p", "{}"),
                ("c1", "m", "{}"),
            ])]),
        ))
        .await
        .unwrap();
    assert_eq!(
        with_overrides.to_value()["run"]["nextTurnParams"]["toolChoice"],
        json!({"toolId": "t"})
    );
    assert_valid(&v, &with_overrides, RunStatus::WaitingForHuman);

    let reviewer = common::agent(
        AgentDefinition::new("rev").human_review(human_review_fn(|c| {
            c.is_final.then(|| ReviewRequest {
                reason: "check".into(),
                payload: json!({"draft": c.response["message"]["content"]}),
            })
        })),
    );
    let review = reviewer
        .run(RunOptions::new("go", scripted([text("draft")])))
        .await
        .unwrap();
    assert_valid(&v, &review, RunStatus::WaitingForHuman);

    let failing = common::agent(AgentDefinition::new("fail").tool(Tool::new(
        "x",
        "",
        Value::Null,
        |_, _| Err("boom".into()),
    )));
    let failed = failing
        .run(RunOptions::new("go", scripted([call("c1", "x", "{}")])))
        .await
        .unwrap_err();
    assert_valid(&v, failed.result().unwrap(), RunStatus::Failed);

    let gateway = ModelError {
        message: "Gateway request failed: 503 Service Unavailable - down".into(),
        gateway: Some(GatewayErrorInfo {
            status: 503,
            status_text: "Service Unavailable".into(),
            request_id: None,
            reason: Some("down".into()),
        }),
    };
    let http = common::agent(AgentDefinition::new("http"));
    let failed = http
        .run(RunOptions::new(
            "go",
            Arc::new(ScriptedClient::new(vec![Err(gateway)])),
        ))
        .await
        .unwrap_err();
    assert_valid(&v, failed.result().unwrap(), RunStatus::Failed);

    let slow = common::agent(AgentDefinition::new("slow").tool(Tool::new_async(
        "s",
        "",
        Value::Null,
        |_, _| async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Ok(json!(1))
        },
    )));
    let token = CancellationToken::new();
    let t = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        t.cancel();
    });
    let cancelled = slow
        .run(RunOptions::new("go", scripted([call("c1", "s", "{}")])).cancel(token))
        .await
        .unwrap();
    assert_valid(&v, &cancelled, RunStatus::Cancelled);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_schema_rejects_what_the_core_would_not_write() {
    let v = validator();
    let agent = approval_agent();
    let state = paused(&agent, "t").await.to_value();
    assert!(v.is_valid(&state));
    let mutations: Vec<(&str, Mutation)> = vec![
        ("version as a string", |s| s["version"] = json!("1")),
        ("version 2", |s| s["version"] = json!(2)),
        ("no run.id", |s| {
            drop(s["run"].as_object_mut().unwrap().remove("id"))
        }),
        ("no run", |s| drop(s.as_object_mut().unwrap().remove("run"))),
        ("unknown status", |s| s["run"]["status"] = json!("paused")),
        ("waiting without pause", |s| s["run"]["pause"] = Value::Null),
        ("createdAt not ISO", |s| {
            s["run"]["createdAt"] = json!("today")
        }),
        ("isError false written", |s| {
            s["run"]["messages"][0]["isError"] = json!(false)
        }),
        ("negative tokens", |s| s["usage"]["inputTokens"] = json!(-1)),
        ("unknown run key", |s| s["run"]["extra"] = json!(1)),
        ("bad pending kind", |s| {
            s["run"]["pause"]["pendingToolCalls"][0]["kind"] = json!("maybe")
        }),
    ];
    for (what, mutate) in mutations {
        let mut s = state.clone();
        mutate(&mut s);
        assert!(!v.is_valid(&s), "the schema accepts a state with {what}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_states_match_the_schema() {
    let v = validator();
    let agent = agent(
        AgentDefinition::new("signed")
            .tool(echo("t").require_approval())
            .state_secret("k"),
    );
    let state = paused(&agent, "t").await;
    assert!(state.signature().is_some());
    assert_valid(&v, &state, RunStatus::WaitingForHuman);
    let mut bad = state.to_value();
    bad["signature"] = json!("ZZ");
    assert!(
        !v.is_valid(&bad),
        "the schema accepts a malformed signature"
    );
}
