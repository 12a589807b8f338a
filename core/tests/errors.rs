//! Error codes, definition errors, model failures and panics outside tools.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use phaseo_agent::{
    async_trait, create_agent, human_review_fn, json, AgentDefinition, AgentError,
    CancellationToken, ErrorCode, GatewayErrorInfo, ModelClient, ModelError, ModelRequest,
    ModelResponse, ModelRetry, RunOptions, RunStatus, ScriptedClient, StopCondition, StopState,
    Tool, ToolError, TurnValue, Value,
};

#[test]
fn every_error_code_has_a_stable_string_that_parses_back() {
    let expected = [
        "tool_input_invalid",
        "tool_output_invalid",
        "tool_event_invalid",
        "agent_output_invalid",
        "unknown_tool",
        "tool_timeout",
        "tool_failed",
        "max_steps",
        "continue_invalid",
        "state_invalid",
        "model_failed",
        "gateway",
        "definition_invalid",
        "cancelled",
        "store_failed",
        "lease_lost",
        "mcp_failed",
    ];
    let strings: Vec<_> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(strings, expected);
    for code in ErrorCode::ALL {
        assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
        assert_eq!(code.to_string(), code.as_str());
        assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
        let back: ErrorCode = serde_json::from_value(json!(code.as_str())).unwrap();
        assert_eq!(back, code);
    }
    assert_eq!(ErrorCode::parse("Tool_Failed"), None);
    assert_eq!(ErrorCode::parse(""), None);
}

fn definition_error(def: AgentDefinition, expected: &str) {
    let err = create_agent(def).err().expect("refused");
    assert_eq!(err.code(), ErrorCode::DefinitionInvalid);
    assert!(err.message().contains(expected), "{:?}", err.message());
    assert!(err.result().is_none());
}

#[test]
fn invalid_definitions_are_refused_at_create_agent() {
    let tool = |params: Value| Tool::new("t", "", params, |i, _| Ok(i));
    definition_error(
        AgentDefinition::new("a").tool(tool(json!({"type": 5}))),
        "Invalid definition of tool 't': parameters: ",
    );
    definition_error(
        AgentDefinition::new("a").tool(tool(json!("object"))),
        "parameters",
    );
    definition_error(
        AgentDefinition::new("a").tool(tool(json!({"minimum": "zero"}))),
        "parameters",
    );
    definition_error(
        AgentDefinition::new("a").tool(echo("t")).tool(echo("t")),
        "duplicate tool id 't' (tools[1])",
    );
    definition_error(
        AgentDefinition::new("a").tool(echo("t").timeout_ms(-1.0)),
        "timeoutMs must be a non-negative number, got -1",
    );
    definition_error(
        AgentDefinition::new("a").tool(echo("t").timeout_ms(f64::NAN)),
        "timeoutMs",
    );
    definition_error(AgentDefinition::new(""), "id must not be empty");
    definition_error(
        AgentDefinition::new("a").tool(echo("")),
        "id must not be empty",
    );
    // A later valid schema replaces the problem of an earlier one.
    assert!(create_agent(
        AgentDefinition::new("a")
            .tool(tool(json!({"type": 5})).parameters(json!({"type": "object"})))
    )
    .is_ok());
    assert!(echo("t").timeout_ms(-5.0).check().is_err());
}

struct Panicking;

#[async_trait]
impl ModelClient for Panicking {
    async fn generate(
        &self,
        _request: &ModelRequest<'_>,
        _cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        panic!("client exploded")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_model_client_is_a_model_failure() {
    let agent = agent(AgentDefinition::new("m"));
    for stream in [false, true] {
        let options = RunOptions::new("go", Arc::new(Panicking));
        let err = if stream {
            agent.stream(options).result().await.unwrap_err()
        } else {
            agent.run(options).await.unwrap_err()
        };
        assert_eq!(err.code(), ErrorCode::ModelFailed);
        assert_eq!(err.message(), "model client panicked: client exploded");
        assert_eq!(err.result().unwrap().status(), RunStatus::Failed);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_failures_carry_the_last_error() {
    let gateway = GatewayErrorInfo {
        status: 429,
        status_text: "Too Many Requests".into(),
        request_id: Some("req-1".into()),
        reason: Some("slow down".into()),
    };
    let http = ModelError {
        message: "Gateway request failed: 429 Too Many Requests - slow down".into(),
        gateway: Some(gateway.clone()),
    };
    let client = Arc::new(ScriptedClient::new(vec![
        Err(ModelError::new("first")),
        Err(http),
    ]));
    let agent = agent(AgentDefinition::new("m").model_retry(ModelRetry::new(1, Duration::ZERO)));
    let err = agent.run(RunOptions::new("go", client)).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Gateway);
    assert_eq!(err.gateway_info(), Some(&gateway));
    let failed = err.result().unwrap();
    assert_eq!(failed.run.error.as_ref().unwrap().gateway, Some(gateway));

    let client = scripted([]);
    let err = agent.run(RunOptions::new("go", client)).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::ModelFailed);
    assert_eq!(
        err.message(),
        "Scripted client has no response left (0 scripted)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_as_json_carries_its_code_and_the_failed_state_verbatim() {
    let agent = agent(AgentDefinition::new("m").max_steps(1).tool(echo("t")));
    let client = scripted([call("c1", "t", "{}"), text("never")]);
    let err: AgentError = agent.run(RunOptions::new("go", client)).await.unwrap_err();
    let text = err.to_json();
    assert!(text.ends_with(&format!(
        ",\"result\":{}}}",
        err.result().unwrap().to_json()
    )));
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["code"], "max_steps");
    assert_eq!(body["message"], "Max steps exceeded (1)");
    assert_eq!(body["target"], Value::Null);
    assert_eq!(body["result"]["run"]["status"], "failed");
    let plain: Value =
        serde_json::from_str(&AgentError::definition_invalid("bad").to_json()).unwrap();
    assert_eq!(
        plain,
        json!({"code": "definition_invalid", "message": "bad", "target": null, "gateway": null})
    );
}

#[test]
fn an_approval_answer_is_read_the_same_for_every_host() {
    use phaseo_agent::tool::approval_from_answer;
    for no in [json!(null), json!(false), json!(0), json!(0.0), json!("")] {
        assert!(!approval_from_answer(&no), "{no}");
    }
    for yes in [
        json!(true),
        json!(1),
        json!(-2.5),
        json!("yes"),
        json!([]),
        json!({}),
    ] {
        assert!(approval_from_answer(&yes), "{yes}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_run_can_be_taken_out_of_its_error() {
    let agent = agent(AgentDefinition::new("m").max_steps(1).tool(echo("t")));
    let client = scripted([call("c1", "t", "{}"), text("never")]);
    let mut err: AgentError = agent.run(RunOptions::new("go", client)).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::MaxSteps);
    assert_eq!(err.message(), "Max steps exceeded (1)");
    let failed = err.take_result().unwrap();
    assert!(err.result().is_none());
    assert_eq!(failed.status(), RunStatus::Failed);
    assert_eq!(failed.run.step_count, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panicking_review_and_stop_hooks_fail_the_run() {
    let review = agent(AgentDefinition::new("r").human_review(human_review_fn(|_| panic!("nope"))));
    let err = review
        .run(RunOptions::new("go", scripted([text("hi")])))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolFailed);
    assert_eq!(err.message(), "humanReview panicked: nope");

    struct Exploding;
    #[async_trait]
    impl StopCondition for Exploding {
        async fn check(&self, _: &StopState<'_>) -> Result<Option<String>, ToolError> {
            panic!("nope")
        }
    }
    let stop = agent(AgentDefinition::new("s").stop_when(Arc::new(Exploding)));
    let err = stop
        .run(RunOptions::new("go", scripted([text("hi")])))
        .await
        .unwrap_err();
    assert_eq!(err.message(), "stopWhen panicked: nope");
    assert_eq!(err.result().unwrap().status(), RunStatus::Failed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_per_turn_function_fails_the_run_instead_of_crashing() {
    // Per-turn values (instructions, model, temperature …) are host callbacks like any
    // other: a panic in one must fail the run, not unwind through `run()`.
    let instructions = TurnValue::from_fn(|_| panic!("no instructions"));
    let agent = agent(AgentDefinition::new("i").instructions(instructions));
    let outcome = tokio::spawn(async move {
        agent
            .run(RunOptions::new("go", scripted([text("hi")])))
            .await
    })
    .await;
    let err = outcome
        .expect("run() must not panic")
        .expect_err("the run fails");
    assert_eq!(err.code(), ErrorCode::ToolFailed);
    assert!(
        err.message().starts_with("instructions: "),
        "{}",
        err.message()
    );
    assert_eq!(err.result().unwrap().status(), RunStatus::Failed);
}

#[tokio::test]
async fn custom_stop_conditions_see_the_last_steps_tool_calls_and_finish_reason() {
    struct Capture(Arc<std::sync::Mutex<Vec<Value>>>);
    #[async_trait::async_trait]
    impl StopCondition for Capture {
        async fn check(&self, state: &StopState<'_>) -> Result<Option<String>, ToolError> {
            self.0.lock().unwrap().push(state.to_value());
            Ok(None)
        }
    }
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let agent = agent(
        AgentDefinition::new("s")
            .tool(echo("t"))
            .stop_when(Arc::new(Capture(seen.clone()))),
    );
    agent
        .run(RunOptions::new(
            "go",
            scripted([call("c1", "t", r#"{"a":1}"#), text("done")]),
        ))
        .await
        .unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen[0]["toolCalls"],
        json!([{"id": "c1", "name": "t", "input": {"a": 1}}])
    );
    assert_eq!(seen[0]["finishReason"], json!("tool_calls"));
    assert_eq!(seen[0]["stepCount"], json!(1));
    assert_eq!(seen[1]["toolCalls"], json!([]));
    assert_eq!(seen[1]["finishReason"], json!("stop"));
}
