//! Call budgets, retries, attempts and idempotency keys of tool calls (docs/behaviour.md
//! §15), through the public API.

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use phaseo_agent::exec::block_on;
use phaseo_agent::{
    json, AgentDefinition, CancellationToken, ErrorCode, ModelResponse, OnError, RunOptions,
    RunResult, RunStatus, Tool, ToolError, ToolExecutionConfig, ToolRetry, Value,
};

fn calls(list: &[(&str, &str)]) -> ModelResponse {
    ModelResponse::tool_calls(list.iter().map(|(id, name)| (*id, *name, "{}")))
}

/// The tool messages of the run, in order: `(call id, content, is error)`.
fn tool_messages(result: &RunResult) -> Vec<(String, String, bool)> {
    let state = result.to_value();
    state["run"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["toolCallId"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap().to_owned(),
                m["isError"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

#[test]
fn a_tools_max_calls_refuses_later_calls_and_the_model_sees_why() {
    let rec = Recorder::default();
    let agent = agent(AgentDefinition::new("a").tool(echo("pay").max_calls(2)));
    let client = scripted([
        calls(&[("c1", "pay"), ("c2", "pay")]),
        calls(&[("c3", "pay")]),
        text("done"),
    ]);
    let result =
        block_on(agent.run(RunOptions::new("go", client).on_event(rec.listener()))).unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    let messages = tool_messages(&result);
    assert_eq!(messages[0], ("c1".into(), "{}".into(), false));
    assert_eq!(
        messages[2],
        (
            "c3".into(),
            r#"{"error":"Tool pay may be called at most 2 times in a run"}"#.into(),
            true
        )
    );
    // The refused call failed without starting, and the run (onError fail-run) went on.
    let c3: Vec<&str> = rec
        .events()
        .iter()
        .filter(|e| e.to_json().contains("\"c3\""))
        .map(|e| e.type_name())
        .collect();
    assert_eq!(c3, vec!["tool.failed"]);
    assert_eq!(
        result.to_value()["run"]["toolCallCounts"],
        json!({"total": 2, "byTool": {"pay": 2}})
    );
}

#[test]
fn the_runs_max_tool_calls_counts_across_a_pause_and_a_json_round_trip() {
    let def = AgentDefinition::new("a")
        .tool(echo("t"))
        .tool(echo("gate").require_approval())
        .tool_execution(ToolExecutionConfig::default().max_tool_calls(3));
    let first = agent(def.clone());
    let client = scripted([calls(&[("c1", "t"), ("c2", "gate")])]);
    let paused = block_on(first.run(RunOptions::new("go", client))).unwrap();
    assert_eq!(paused.status(), RunStatus::WaitingForHuman);
    // Another process: the state as JSON, read back by a new agent.
    let state = RunResult::from_json(&paused.to_json()).unwrap();
    let second = agent(def);
    let result = block_on(second.continue_run(
        &state,
        cont([calls(&[("c3", "t"), ("c4", "t")]), text("done")]).approve("c2"),
    ))
    .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    let messages = tool_messages(&result);
    let c4 = messages.iter().find(|m| m.0 == "c4").unwrap();
    assert_eq!(c4.1, r#"{"error":"A run may make at most 3 tool calls"}"#);
    assert!(messages.iter().find(|m| m.0 == "c3").is_some_and(|m| !m.2));
}

#[test]
fn counts_at_their_maximum_in_a_stored_state_stay_there() {
    // A stored state may claim any count: continuing it must neither overflow nor wrap the
    // counts back to zero (which would lift the run's budget).
    let def = AgentDefinition::new("a")
        .tool(echo("t"))
        .tool(echo("gate").require_approval())
        .tool_execution(ToolExecutionConfig::default().max_tool_calls(3));
    let client = scripted([calls(&[("c1", "gate")])]);
    let paused = block_on(agent(def.clone()).run(RunOptions::new("go", client))).unwrap();
    let mut value = paused.to_value();
    value["run"]["toolCallCounts"] = json!({"total": usize::MAX, "byTool": {"gate": usize::MAX}});
    let state = RunResult::from_json(&value.to_string()).unwrap();
    let result = block_on(agent(def).continue_run(
        &state,
        cont([calls(&[("c2", "t")]), text("done")]).approve("c1"),
    ))
    .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    let counts = &result.to_value()["run"]["toolCallCounts"];
    assert_eq!(counts["total"], json!(usize::MAX));
    let c2 = tool_messages(&result)
        .into_iter()
        .find(|m| m.0 == "c2")
        .unwrap();
    assert_eq!(c2.1, r#"{"error":"A run may make at most 3 tool calls"}"#);
}

#[test]
fn failed_calls_count_and_refused_ones_do_not() {
    let failing = Tool::new("f", "Fails", Value::Null, |_, _| Err(ToolError::new("no")));
    let agent = agent(
        AgentDefinition::new("a")
            .tool(failing.max_calls(1))
            .tool(echo("t"))
            .tool_execution(
                ToolExecutionConfig::default()
                    .on_error(OnError::ReturnToModel)
                    .max_tool_calls(2),
            ),
    );
    let client = scripted([
        calls(&[("c1", "f"), ("c2", "f"), ("c3", "t"), ("c4", "t")]),
        text("ok"),
    ]);
    let result = block_on(agent.run(RunOptions::new("go", client))).unwrap();
    let messages = tool_messages(&result);
    assert_eq!(messages[0].1, r#"{"error":"no"}"#);
    assert_eq!(
        messages[1].1,
        r#"{"error":"Tool f may be called at most 1 times in a run"}"#
    );
    assert_eq!(messages[2], ("c3".into(), "{}".into(), false));
    assert_eq!(
        messages[3].1,
        r#"{"error":"A run may make at most 2 tool calls"}"#
    );
}

#[test]
fn budgets_are_checked_when_the_agent_is_created() {
    let err = phaseo_agent::create_agent(AgentDefinition::new("a").tool(echo("t").max_calls(0)))
        .err()
        .unwrap();
    assert_eq!(err.code(), ErrorCode::DefinitionInvalid);
    assert_eq!(
        err.message(),
        "Invalid definition of tool 't': maxCalls must be a whole number of at least 1, got 0"
    );
    // A run's budget of no call at all is refused as the definition reader refuses it, on
    // the agent and as a run's override, before anything runs.
    let none = ToolExecutionConfig::default().max_tool_calls(0);
    let err = phaseo_agent::create_agent(AgentDefinition::new("a").tool_execution(none))
        .err()
        .unwrap();
    assert_eq!(err.code(), ErrorCode::DefinitionInvalid);
    assert_eq!(
        err.message(),
        "Invalid agent definition: toolExecution.maxToolCalls must be a whole number of at least 1, got 0"
    );
    let agent = agent(AgentDefinition::new("a").tool(echo("t")));
    let client = scripted([calls(&[("c1", "t")]), text("done")]);
    let mut options = RunOptions::new("go", client.clone());
    options.overrides.tool_execution = Some(none);
    let err = block_on(agent.run(options)).unwrap_err();
    assert_eq!(err.code(), ErrorCode::DefinitionInvalid);
    assert_eq!(
        err.message(),
        "Invalid run options: toolExecution.maxToolCalls must be a whole number of at least 1, got 0"
    );
    assert_eq!(client.cursor(), 0, "nothing ran");
}

/// A tool that fails until attempt `succeed_at`, recording each attempt's number and key.
fn flaky(succeed_at: u32, seen: Arc<Mutex<Vec<(u32, String)>>>) -> Tool {
    Tool::new("flaky", "Fails at first", Value::Null, move |_, rt| {
        seen.lock()
            .unwrap()
            .push((rt.attempt(), rt.idempotency_key()));
        if rt.attempt() < succeed_at {
            Err(ToolError::new(format!("attempt {} failed", rt.attempt())))
        } else {
            Ok(json!(rt.attempt()))
        }
    })
}

#[test]
fn a_retried_call_runs_again_with_the_same_key_and_reports_each_retry() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let rec = Recorder::default();
    let agent =
        agent(AgentDefinition::new("a").tool(flaky(3, seen.clone()).retry(ToolRetry::new(3, 20))));
    let client = scripted([calls(&[("c1", "flaky")]), text("done")]);
    let started = Instant::now();
    let result =
        block_on(agent.run(RunOptions::new("go", client).on_event(rec.listener()))).unwrap();
    // Backoff 20 ms × 1, then × 2.
    assert!(started.elapsed() >= Duration::from_millis(60));
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(
        result.step_results[0].tool_results[0].result,
        Some(json!(3))
    );
    let key = format!("{}:c1", result.run.id);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(1, key.clone()), (2, key.clone()), (3, key)]
    );
    let tool_events: Vec<_> = rec
        .events()
        .into_iter()
        .filter(|e| e.type_name().starts_with("tool."))
        .map(|e| e.to_value())
        .collect();
    let types: Vec<&str> = tool_events
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        vec![
            "tool.started",
            "tool.retrying",
            "tool.retrying",
            "tool.completed"
        ]
    );
    assert_eq!(tool_events[1]["attempt"], json!(2));
    assert_eq!(tool_events[1]["error"], json!("attempt 1 failed"));
    assert_eq!(tool_events[2]["attempt"], json!(3));
}

#[test]
fn the_last_failed_attempt_follows_on_error_and_timeouts_count_per_attempt() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let failing =
        agent(AgentDefinition::new("a").tool(flaky(9, seen.clone()).retry(ToolRetry::new(2, 0))));
    let client = scripted([calls(&[("c1", "flaky")])]);
    let err = block_on(failing.run(RunOptions::new("go", client))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolFailed);
    assert_eq!(err.message(), "attempt 2 failed");
    assert_eq!(seen.lock().unwrap().len(), 2);

    // Each attempt has the whole timeout: the first times out, the second returns.
    let attempts = Arc::new(AtomicU32::new(0));
    let counted = attempts.clone();
    let slow_once = Tool::new_async("slow", "Slow at first", Value::Null, move |_, rt| {
        counted.fetch_add(1, Ordering::SeqCst);
        async move {
            if rt.attempt() == 1 {
                tokio::time::sleep(Duration::from_secs(30)).await;
            }
            Ok(json!("ok"))
        }
    })
    .timeout_ms(200.0)
    .retry(ToolRetry::new(2, 0));
    let rec = Recorder::default();
    let agent = agent(AgentDefinition::new("a").tool(slow_once));
    let client = scripted([calls(&[("c1", "slow")]), text("done")]);
    let result =
        block_on(agent.run(RunOptions::new("go", client).on_event(rec.listener()))).unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    let retrying = rec
        .events()
        .into_iter()
        .find(|e| e.type_name() == "tool.retrying")
        .unwrap()
        .to_value();
    assert_eq!(retrying["error"], json!("Tool slow timed out after 200ms"));
}

#[test]
fn output_and_input_failures_are_not_retried() {
    let attempts = Arc::new(AtomicU32::new(0));
    let counted = attempts.clone();
    let bad_output = Tool::new("o", "Bad output", Value::Null, move |_, _| {
        counted.fetch_add(1, Ordering::SeqCst);
        Ok(json!(1))
    })
    .output_schema(phaseo_agent::json_schema_validator(&json!({"type": "string"})).unwrap())
    .retry(ToolRetry::new(3, 0));
    let agent = agent(AgentDefinition::new("a").tool(bad_output));
    let client = scripted([calls(&[("c1", "o")])]);
    let err = block_on(agent.run(RunOptions::new("go", client))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolOutputInvalid);
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
}

#[test]
fn cancelling_the_run_stops_the_retries() {
    let attempts = Arc::new(AtomicU32::new(0));
    let counted = attempts.clone();
    let failing = Tool::new("f", "Fails", Value::Null, move |_, _| {
        counted.fetch_add(1, Ordering::SeqCst);
        Err(ToolError::new("down"))
    })
    .retry(ToolRetry::new(5, 60_000));
    let agent = agent(AgentDefinition::new("a").tool(failing));
    let token = CancellationToken::new();
    let cancel = token.clone();
    let rt = runtime(2);
    let seen = attempts.clone();
    let result = rt.block_on(async move {
        let run = tokio::spawn(async move {
            let client = scripted([calls(&[("c1", "f")])]);
            agent
                .run(RunOptions::new("go", client).cancel(cancel))
                .await
        });
        // The first attempt failed and the run waits out its backoff: cancel it then.
        while seen.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        token.cancel();
        tokio::time::timeout(Duration::from_secs(20), run).await
    });
    let outcome = result.expect("the run ends at once").unwrap().unwrap();
    assert_eq!(outcome.status(), RunStatus::Cancelled);
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    rt.shutdown_background();
}

#[test]
fn retry_and_budgets_are_read_from_definitions() {
    let err = phaseo_agent::spec::tool(&NoHost, json!({"id": "t", "retry": {"maxAttempts": 0}}))
        .err()
        .unwrap();
    assert_eq!(
        err.message(),
        "Invalid definition of tool 't': retry.maxAttempts must be a whole number of at least 1, got 0"
    );
    let err = phaseo_agent::spec::tool(&NoHost, json!({"id": "t", "maxCalls": 1.5}))
        .err()
        .unwrap();
    assert_eq!(
        err.message(),
        "Invalid definition of tool 't': maxCalls must be a whole number of at least 1, got 1.5"
    );
    let def = phaseo_agent::spec::agent_definition(
        &NoHost,
        json!({"id": "a", "toolExecution": {"maxToolCalls": 1},
               "tools": [{"id": "t", "maxCalls": 1, "retry": {"maxAttempts": 2, "backoffMs": 5}}]}),
    );
    assert!(def.is_ok());
    let err = phaseo_agent::spec::agent_definition(
        &NoHost,
        json!({"id": "a", "toolExecution": {"maxToolCalls": 0}}),
    )
    .err()
    .unwrap();
    assert_eq!(
        err.message(),
        "toolExecution.maxToolCalls must be a whole number of at least 1, got 0"
    );
}
