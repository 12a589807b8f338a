//! Regression tests for hostile input: values beyond the limits of
//! docs/behaviour.md §7 are refused with the code of the place they enter, malformed state is
//! `state_invalid` (never a panic or an overflow), an edited pending kind cannot stand in
//! for an approval, and signed state cannot be edited.

mod common;

use common::*;
use phaseo_agent::exec::block_on;
use phaseo_agent::{
    json, AgentDefinition, ErrorCode, OnError, RunOptions, RunResult, RunStatus, Tool, ToolError,
    ToolExecutionConfig, Value, ValueLimitError,
};

/// `{"a": {"a": … 1}}`, `depth` levels.
fn nested(depth: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..depth {
        v = json!({ "a": v });
    }
    v
}

fn returning(id: &str, value: Value) -> Tool {
    Tool::new(id, "Returns a fixed value", Value::Null, move |_, _| {
        Ok(value.clone())
    })
}

fn return_to_model() -> ToolExecutionConfig {
    ToolExecutionConfig::default().on_error(OnError::ReturnToModel)
}

#[test]
fn deep_model_arguments_are_invalid_input_and_the_model_can_retry() {
    let agent = agent(
        AgentDefinition::new("a")
            .tool(echo("t"))
            .tool_execution(return_to_model()),
    );
    let deep = nested(65).to_string();
    let client = scripted([
        call("c1", "t", &deep),
        call("c2", "t", "{\"x\":1}"),
        text("ok"),
    ]);
    let result = block_on(agent.run(RunOptions::new("go", client))).unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    let first = &result.step_results[0].tool_results[0];
    assert_eq!(
        first.error.as_deref(),
        Some("Invalid tool input: value is nested more than 64 levels deep")
    );
    assert_eq!(
        result.step_results[1].tool_results[0].result,
        Some(json!({"x": 1}))
    );
    // The stored state reads back.
    RunResult::from_json(&result.to_json()).unwrap();

    let fail = agent_fail_run();
    let client = scripted([call("c1", "t", &"[".repeat(5000))]);
    let err = block_on(fail.run(RunOptions::new("go", client))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolInputInvalid);
    assert_eq!(
        err.message(),
        "Invalid tool input: value is nested more than 64 levels deep"
    );
    RunResult::from_json(&err.result().unwrap().to_json()).unwrap();
}

fn agent_fail_run() -> phaseo_agent::Agent {
    agent(AgentDefinition::new("a").tool(echo("t")))
}

#[test]
fn huge_integers_in_arguments_are_refused_not_rounded() {
    let client = scripted([call("c1", "t", r#"{"n":18446744073709551616}"#)]);
    let err = block_on(agent_fail_run().run(RunOptions::new("go", client))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolInputInvalid);
    assert_eq!(
        err.message(),
        "Invalid tool input: integer 18446744073709551616 does not fit in 64 bits"
    );
    let client = scripted([
        call(
            "c1",
            "t",
            r#"{"n":18446744073709551615,"m":-9223372036854775808}"#,
        ),
        text("ok"),
    ]);
    let result = block_on(agent_fail_run().run(RunOptions::new("go", client))).unwrap();
    let back = RunResult::from_json(&result.to_json()).unwrap();
    assert_eq!(
        back.step_results[0].tool_results[0].result,
        Some(json!({"n": 18446744073709551615u64, "m": i64::MIN}))
    );
}

#[test]
fn a_result_too_deep_fails_the_run_whatever_on_error_says() {
    let agent = agent(
        AgentDefinition::new("a")
            .tool(returning("t", nested(65)))
            .tool_execution(return_to_model()),
    );
    let client = scripted([call("c1", "t", "{}"), text("never")]);
    let err = block_on(agent.run(RunOptions::new("go", client))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolOutputInvalid);
    assert_eq!(
        err.message(),
        "Invalid tool output: value is nested more than 64 levels deep"
    );
    let state = err.result().unwrap();
    assert_eq!(state.status(), RunStatus::Failed);
    RunResult::from_json(&state.to_json()).unwrap();

    // 64 levels is fine, and stores.
    let agent = agent_with(returning("t", nested(64)));
    let client = scripted([call("c1", "t", "{}"), text("ok")]);
    let result = block_on(agent.run(RunOptions::new("go", client))).unwrap();
    let back = RunResult::from_json(&result.to_json()).unwrap();
    assert_eq!(
        back.step_results[0].tool_results[0].result,
        Some(nested(64))
    );
}

fn agent_with(tool: Tool) -> phaseo_agent::Agent {
    agent(AgentDefinition::new("a").tool(tool))
}

#[test]
fn an_adapter_reports_an_unconvertible_result_as_invalid_output() {
    let tool = Tool::new("t", "", Value::Null, |_, _| {
        Err(ToolError::invalid_output(
            ValueLimitError::Cycle.to_string(),
        ))
    })
    .on_error(OnError::ReturnToModel);
    let client = scripted([call("c1", "t", "{}"), text("never")]);
    let err = block_on(agent_with(tool).run(RunOptions::new("go", client))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolOutputInvalid);
    assert_eq!(err.message(), "Invalid tool output: value contains a cycle");
}

#[test]
fn progress_too_deep_or_rejected_is_an_invalid_event() {
    let deep = Tool::new("t", "", Value::Null, |_, rt| {
        rt.emit_progress(nested(65));
        Ok(json!("done"))
    });
    let client = scripted([call("c1", "t", "{}"), text("never")]);
    let err = block_on(agent_with(deep).run(RunOptions::new("go", client))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolEventInvalid);
    assert_eq!(
        err.message(),
        "Invalid tool event: value is nested more than 64 levels deep"
    );

    let rejected = Tool::new("t", "", Value::Null, |_, rt| {
        rt.emit_progress(json!(1));
        rt.reject_progress("integer 99999999999999999999 does not fit in 64 bits");
        Ok(json!("done"))
    });
    let client = scripted([call("c1", "t", "{}"), text("never")]);
    let err = block_on(agent_with(rejected).run(RunOptions::new("go", client))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolEventInvalid);
    assert_eq!(
        err.message(),
        "Invalid tool event: integer 99999999999999999999 does not fit in 64 bits"
    );
    assert_eq!(
        err.result().unwrap().step_results[0].tool_results.len(),
        0,
        "the failed call has no result"
    );
}

#[test]
fn set_context_refuses_a_value_too_deep_and_keeps_the_context() {
    let tool = Tool::new("t", "", Value::Null, |_, rt| {
        let refused = rt.set_context(nested(65));
        assert_eq!(refused, Err(ValueLimitError::TooDeep));
        Ok(json!(refused.unwrap_err().to_string()))
    });
    let client = scripted([call("c1", "t", "{}"), text("ok")]);
    let result = block_on(
        agent_with(tool).run(RunOptions::new("go", client).context(json!({"keep": true}))),
    )
    .unwrap();
    assert_eq!(result.run.context, json!({"keep": true}));
    assert_eq!(
        result.step_results[0].tool_results[0].result,
        Some(json!("value is nested more than 64 levels deep"))
    );
}

#[test]
fn run_values_too_deep_are_refused_before_the_run() {
    let a = agent_fail_run();
    let err = block_on(a.run(RunOptions::new(nested(65), scripted([])))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::StateInvalid);
    assert_eq!(
        err.message(),
        "Invalid run input: value is nested more than 64 levels deep"
    );
    let err = block_on(a.run(RunOptions::new("go", scripted([])).context(nested(70)))).unwrap_err();
    assert_eq!(
        err.message(),
        "Invalid run context: value is nested more than 64 levels deep"
    );
    assert!(err.result().is_none());
}

#[test]
fn a_supplied_output_too_deep_is_invalid_output() {
    let agent = approval_agent();
    let client = scripted([call("c1", "m", "{}")]);
    let state = block_on(agent.run(RunOptions::new("go", client))).unwrap();
    let err = block_on(agent.continue_run(&state, cont([text("never")]).output("c1", nested(65))))
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolOutputInvalid);
    assert_eq!(
        err.message(),
        "Invalid tool output: value is nested more than 64 levels deep"
    );
}

/// The paused state's JSON with `f` applied to it.
fn edited(state: &RunResult, f: impl FnOnce(&mut Value)) -> RunResult {
    let mut v: Value = serde_json::from_str(&state.to_json()).unwrap();
    f(&mut v);
    RunResult::from_json(&v.to_string()).unwrap()
}

fn set_kind(kind: &str) -> impl FnOnce(&mut Value) + '_ {
    move |v| v["run"]["pause"]["pendingToolCalls"][0]["kind"] = json!(kind)
}

#[test]
fn an_approval_edited_to_manual_cannot_take_an_output() {
    let agent = approval_agent();
    let state = block_on(paused(&agent, "t"));
    let forged = edited(&state, set_kind("manual"));
    let err = block_on(agent.continue_run(&forged, cont([text("x")]).output("c1", json!(1))))
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ContinueInvalid);
    assert_eq!(
        err.message(),
        "Tool call c1 requires approval; an output cannot be supplied for it"
    );
    // Edited to hitl (the tool has no onToolCalled): the same.
    let forged = edited(&state, set_kind("hitl"));
    let err = block_on(agent.continue_run(&forged, cont([text("x")]).output("c1", json!(1))))
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ContinueInvalid);
    // Any other mismatch is invalid state.
    let err = block_on(agent.continue_run(&forged, cont([text("x")]).approve("c1"))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::StateInvalid);
    assert_eq!(
        err.message(),
        "Invalid state: pending call c1 of tool 't' has kind hitl, which this tool cannot produce"
    );
    let manual = block_on(paused(&agent, "m"));
    let forged = edited(&manual, set_kind("hitl"));
    let err = block_on(agent.continue_run(&forged, cont([text("x")]).output("c1", json!(1))))
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::StateInvalid);
    // The kinds the tools really produce still continue.
    let ok = block_on(agent.continue_run(&manual, cont([text("done")]).output("c1", json!(1))));
    assert_eq!(ok.unwrap().status(), RunStatus::Completed);
}

fn signed_agent(secrets: Vec<&str>) -> phaseo_agent::Agent {
    agent(
        AgentDefinition::new("pauser")
            .tool(echo("t").require_approval())
            .state_secrets(secrets.into_iter().map(str::to_owned).collect()),
    )
}

#[test]
fn signed_state_continues_and_edits_are_refused() {
    let agent = signed_agent(vec!["s3cret"]);
    let state = block_on(paused(&agent, "t"));
    let signature = state.signature().expect("signed").to_owned();
    assert_eq!(signature.len(), 64);
    assert!(signature
        .bytes()
        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    let stored_text = state.to_json();
    assert!(stored_text.ends_with(&format!(",\"signature\":\"{signature}\"}}")));
    let stored = RunResult::from_json(&stored_text).unwrap();
    assert_eq!(stored.unsigned_json(), state.unsigned_json());

    let tampered = edited(&state, |v| v["run"]["context"] = json!({"k": 1}));
    let err = block_on(agent.continue_run(&tampered, cont([]).approve("c1"))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::StateInvalid);
    assert_eq!(err.message(), "State signature does not match");

    let stripped = edited(&state, |v| {
        v.as_object_mut().unwrap().remove("signature");
    });
    let err = block_on(agent.continue_run(&stripped, cont([]).approve("c1"))).unwrap_err();
    assert_eq!(err.message(), "State signature is missing");

    let garbage = edited(&state, |v| v["signature"] = json!("zz"));
    let err = block_on(agent.continue_run(&garbage, cont([]).approve("c1"))).unwrap_err();
    assert_eq!(err.message(), "State signature does not match");

    let done = block_on(agent.continue_run(&stored, cont([text("done")]).approve("c1"))).unwrap();
    assert_eq!(done.status(), RunStatus::Completed);
    let new_signature = done.signature().expect("results are signed");
    assert_ne!(new_signature, signature);
}

#[test]
fn a_signed_state_edited_where_the_reader_does_not_look_is_refused() {
    // The signature covers the state as given (docs/behaviour.md §7): edits to the parts
    // the reader derives again (`usage`, `output`, `items`) or does not know are edits too,
    // from its text and from its value.
    let agent = signed_agent(vec!["s3cret"]);
    let state = block_on(paused(&agent, "t"));
    type Edit = fn(&mut Value);
    let edits: [(&str, Edit); 5] = [
        ("usage", |v| v["usage"]["totalTokens"] = json!(999)),
        ("output", |v| v["output"] = json!("forged")),
        ("items", |v| v["items"][0]["content"] = json!("forged")),
        ("added field", |v| v["note"] = json!("added")),
        ("added call field", |v| {
            v["run"]["pause"]["pendingToolCalls"][0]["extra"] = json!(true)
        }),
    ];
    for (what, edit) in edits {
        let mut value = state.to_value();
        edit(&mut value);
        for read in [
            RunResult::from_json(&value.to_string()).unwrap(),
            RunResult::from_value(value.clone()).unwrap(),
        ] {
            let err = block_on(agent.continue_run(&read, cont([]).approve("c1"))).unwrap_err();
            assert_eq!(err.code(), ErrorCode::StateInvalid, "{what}");
            assert_eq!(err.message(), "State signature does not match", "{what}");
        }
    }
    // Untouched, with other spacing and number forms (`0.0` for `0`), it continues.
    let pretty = serde_json::to_string_pretty(&state.to_value()).unwrap();
    let read = RunResult::from_json(&pretty).unwrap();
    let done = block_on(agent.continue_run(&read, cont([text("done")]).approve("c1"))).unwrap();
    assert_eq!(done.status(), RunStatus::Completed);
    // The state it makes is signed anew and reads back as it was written.
    let again = RunResult::from_json(&done.to_json()).unwrap();
    assert_eq!(again.to_json(), done.to_json());
}

#[test]
fn a_call_pending_twice_is_refused_and_nothing_runs() {
    let agent = approval_agent();
    let state = block_on(paused(&agent, "t"));
    let mut value = state.to_value();
    let pending = value["run"]["pause"]["pendingToolCalls"]
        .as_array_mut()
        .unwrap();
    pending.push(pending[0].clone());
    assert_state_refused(
        value,
        "Invalid state: tool call c1 is pending more than once",
    );
}

#[test]
fn rotation_verifies_with_any_secret_and_signs_with_the_first() {
    let old = signed_agent(vec!["old"]);
    let state = block_on(paused(&old, "t"));
    let rotated = signed_agent(vec!["new", "old"]);
    let done = block_on(rotated.continue_run(&state, cont([text("done")]).approve("c1"))).unwrap();
    let only_new = signed_agent(vec!["new"]);
    let again = block_on(paused(&rotated, "t"));
    block_on(only_new.continue_run(&again, cont([text("d")]).approve("c1"))).unwrap();
    let err = block_on(only_new.continue_run(&state, cont([]).approve("c1"))).unwrap_err();
    assert_eq!(err.message(), "State signature does not match");
    assert!(done.signature().is_some());
}

#[test]
fn an_agent_without_a_secret_ignores_and_drops_a_signature() {
    let state = block_on(paused(&signed_agent(vec!["s"]), "t"));
    let plain = approval_agent();
    let done = block_on(plain.continue_run(&state, cont([text("done")]).approve("c1"))).unwrap();
    assert_eq!(done.signature(), None);
    assert!(!done.to_json().contains("\"signature\""));
}

#[test]
fn failed_runs_carry_a_signed_state() {
    let agent = agent(AgentDefinition::new("a").tool(echo("t")).state_secret("k"));
    let client = scripted([call("c1", "nope", "{}")]);
    let err = block_on(agent.run(RunOptions::new("go", client))).unwrap_err();
    assert!(err.result().unwrap().signature().is_some());
}

fn invalid_state(text: &str) -> String {
    let err = RunResult::from_json(text).unwrap_err();
    assert_eq!(err.code(), ErrorCode::StateInvalid, "{}", err.message());
    err.message().to_owned()
}

#[test]
fn malformed_state_is_state_invalid_never_a_panic() {
    let agent = approval_agent();
    let state = block_on(paused(&agent, "t"));
    let mut v: Value = serde_json::from_str(&state.to_json()).unwrap();

    // Counters at the top of their range: no `attempt to add with overflow`.
    let max = u64::MAX;
    v["run"]["stepCount"] = json!(max);
    v["stepResults"][0]["stepIndex"] = json!(max);
    invalid_state(&v.to_string());
    v["stepResults"][0]["stepIndex"] = json!(max - 1);
    let near_max = RunResult::from_json(&v.to_string()).unwrap();
    let out = block_on(agent.continue_run(&near_max, cont([text("done")]).approve("c1")));
    match out {
        Ok(r) => assert!(matches!(
            r.status(),
            RunStatus::Completed | RunStatus::Failed
        )),
        Err(e) => assert_eq!(e.code(), ErrorCode::MaxSteps),
    }
    v["run"]["usage"]["totalTokens"] = json!(max);
    RunResult::from_json(&v.to_string()).unwrap();

    // A counter beyond 64 bits, deep nesting, garbage.
    let huge = state.to_json().replacen(
        "\"inputTokens\":0",
        "\"inputTokens\":18446744073709551616",
        1,
    );
    assert!(invalid_state(&huge).starts_with("Invalid state: "));
    let deep = format!("{{\"version\":1,\"run\":{}}}", "[".repeat(100_000));
    assert_eq!(
        invalid_state(&deep),
        "Invalid state: value is nested more than 64 levels deep"
    );
    invalid_state("\"\\ud800\"");
    invalid_state("{\"version\":1,\"run\":{\"id\":\"\\ud800\"}}");
    invalid_state("[]");
    invalid_state("{\"version\":18446744073709551615}");
}

#[test]
fn a_large_integral_float_in_a_result_stores_and_reads_back() {
    // Canonical JSON writes 1.8350310382066395e20 as JavaScript does, all its digits and no
    // exponent (docs/behaviour.md §7): an integer literal beyond 64 bits that the state reader must read
    // back (found by the property tests).
    let client = scripted([
        call("c1", "t", r#"{"x":1.8350310382066395e+20}"#),
        text("ok"),
    ]);
    let result = block_on(agent_fail_run().run(RunOptions::new("go", client))).unwrap();
    let text = result.to_json();
    assert!(
        text.contains(r#""result":{"x":183503103820663950000}"#),
        "{text}"
    );
    let back = RunResult::from_json(&text).unwrap();
    assert_eq!(back.to_json(), text);
}

#[test]
fn hooks_can_report_an_unconvertible_value_as_invalid_output() {
    let hitl = echo("h")
        .on_tool_called(|_, _| Err(ToolError::invalid_output("value contains a cycle")))
        .on_error(OnError::ReturnToModel);
    let client = scripted([call("c1", "h", "{}"), text("never")]);
    let err = block_on(agent_with(hitl).run(RunOptions::new("go", client))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolOutputInvalid);
    assert_eq!(err.message(), "Invalid tool output: value contains a cycle");

    let manual = Tool::external("m", "", Value::Null)
        .on_response_received(|_, _| Err(ToolError::invalid_output("value contains a cycle")));
    let agent = agent_with(manual);
    let state =
        block_on(agent.run(RunOptions::new("go", scripted([call("c1", "m", "{}")])))).unwrap();
    let err =
        block_on(agent.continue_run(&state, cont([text("x")]).output("c1", json!(1)))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolOutputInvalid);
}

#[test]
fn float_arguments_given_as_values_reach_the_tool_unchanged() {
    // A host client (Python, Kotlin) gives arguments as a value: an integral float beyond
    // 2^53 must not come back an integer, nor one beyond 2^64 be refused as too large.
    use phaseo_agent::ScriptedClient;
    use std::sync::{Arc, Mutex};
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let tool = Tool::new("t", "Records its input", Value::Null, move |input, _| {
        sink.lock().unwrap().push(input.clone());
        Ok(input)
    });
    let floats = [5.403617073549582e16, 1.8350310382066395e20, 2.0, 0.5];
    let script: Vec<Value> = floats
        .iter()
        .enumerate()
        .map(|(i, f)| json!({"toolCalls": [{"id": format!("c{i}"), "name": "t", "arguments": {"x": f}}]}))
        .chain([json!({"text": "ok"})])
        .collect();
    let client = Arc::new(ScriptedClient::from_script(&script).unwrap());
    let result =
        block_on(agent(AgentDefinition::new("a").tool(tool)).run(RunOptions::new("go", client)))
            .unwrap();
    assert_eq!(result.run.status, RunStatus::Completed);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), floats.len());
    for (input, f) in seen.iter().zip(floats) {
        assert!(input["x"].is_f64(), "{f} arrived as {input}");
        assert_eq!(input["x"].as_f64(), Some(f));
    }
}

#[test]
fn call_ids_a_model_repeats_or_leaves_empty_are_made_unique_in_the_run() {
    // Two calls `d` in one response, `d` again and two empty ids a turn later: each
    // execution sees its own id (the key a side-effecting tool uses for idempotency), and
    // each result answers the id its call is recorded with.
    use std::sync::{Arc, Mutex};
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let tool = Tool::new("t", "Records its call id", Value::Null, move |input, rt| {
        sink.lock().unwrap().push(rt.tool_call().id.to_string());
        Ok(input)
    });
    let client = scripted([
        phaseo_agent::ModelResponse::tool_calls([("d", "t", "{\"n\":1}"), ("d", "t", "{\"n\":2}")]),
        phaseo_agent::ModelResponse::tool_calls([
            ("d", "t", "{\"n\":3}"),
            ("", "t", "{}"),
            ("", "t", "{}"),
        ]),
        text("ok"),
    ]);
    let result =
        block_on(agent(AgentDefinition::new("a").tool(tool)).run(RunOptions::new("go", client)))
            .unwrap();
    assert_eq!(result.run.status, RunStatus::Completed);
    let mut executed = seen.lock().unwrap().clone();
    executed.sort();
    assert_eq!(executed, ["call_1", "call_2", "d", "d_2", "d_3"]);
    let called: Vec<&str> = result
        .run
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.iter().flatten())
        .map(|c| &*c.id)
        .collect();
    assert_eq!(called, ["d", "d_2", "d_3", "call_1", "call_2"]);
    let answered: Vec<&str> = result
        .run
        .messages
        .iter()
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    assert_eq!(answered, called);
    // The state reads back, and its step results name the same ids.
    let back = RunResult::from_json(&result.to_json()).unwrap();
    let results: Vec<&str> = back
        .step_results
        .iter()
        .flat_map(|s| s.tool_results.iter())
        .map(|r| &*r.tool_call_id)
        .collect();
    assert_eq!(results, called);
}

#[test]
fn durations_too_long_for_a_clock_are_the_longest_wait_not_a_panic() {
    // A tool timeout of 1e300 ms never fires: the call runs and the run completes.
    let tool = returning("t", json!(1)).timeout_ms(1e300);
    let client = scripted([call("c1", "t", "{}"), text("done")]);
    let done = block_on(agent_with(tool).run(RunOptions::new("go", client))).unwrap();
    assert_eq!(done.status(), RunStatus::Completed);
    // The same numbers in a definition's text, as every binding but Rust's passes them.
    let def = phaseo_agent::spec::agent_definition(
        &NoHost,
        json!({
            "id": "a",
            "modelRetry": {"maxRetries": 1, "backoffMs": 1e300},
            "lease": {"durationMs": 1e300, "renewEveryMs": 1e299},
        }),
    );
    assert!(def.is_ok(), "{:?}", def.err());
    let options = phaseo_agent::spec::run_options(
        &NoHost,
        json!({"modelRetry": {"maxRetries": 2, "backoffMs": 1e308}}),
    );
    assert!(options.is_ok(), "{:?}", options.err());
}

/// A client whose request timeout is 1e300 ms sends its request (to a port nobody listens
/// on) and fails as a model failure, not a panic.
#[cfg(feature = "http")]
#[test]
fn an_http_client_timeout_too_long_for_a_clock_is_no_limit() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let client = std::sync::Arc::new(phaseo_agent::clients::OpenAICompatibleClient::from_options(
        &phaseo_agent::clients::HttpClientOptions {
            api_key: Some("k".into()),
            base_url: Some(format!("http://127.0.0.1:{port}/v1")),
            model: Some("m".into()),
            timeout_ms: Some(1e300),
            ..Default::default()
        },
    ));
    let err =
        block_on(agent(AgentDefinition::new("a")).run(RunOptions::new("go", client))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ModelFailed);
}
