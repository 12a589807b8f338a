//! Tool executors as a Rust user writes them: sync closures run off the async workers,
//! panics in executors and hooks become tool errors, never crashes.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use phaseo_agent::{
    json, validator_fn, AgentDefinition, AgentError, ErrorCode, OnError, Role, RunOptions,
    RunResult, RunStatus, Tool, ToolExecutionConfig, Value,
};

#[test]
fn a_blocking_sync_tool_does_not_stall_a_concurrent_async_tool() {
    // One async worker: if the sync closure ran on it, the async tool could not tick.
    let rt = runtime(1);
    let fast_elapsed = Arc::new(Mutex::new(None));
    let slow = Tool::new("slow", "Blocks", Value::Null, |_, _| {
        // Blocks far longer than the bound on the async tool below.
        std::thread::sleep(Duration::from_millis(3_000));
        Ok(json!("slow"))
    });
    let seen = fast_elapsed.clone();
    let fast = Tool::new_async("fast", "Ticks", Value::Null, move |_, _| {
        let seen = seen.clone();
        async move {
            let start = Instant::now();
            for _ in 0..5 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            *seen.lock().unwrap() = Some(start.elapsed());
            Ok(json!("fast"))
        }
    });
    let agent = agent(
        AgentDefinition::new("blocking")
            .tools([slow, fast])
            .tool_execution(ToolExecutionConfig::default().tool_concurrency(2)),
    );
    let client = scripted([
        phaseo_agent::ModelResponse::tool_calls([("c1", "slow", "{}"), ("c2", "fast", "{}")]),
        text("done"),
    ]);
    let started = Instant::now();
    let result = rt
        .block_on(async move {
            tokio::spawn(async move { agent.run(RunOptions::new("go", client)).await }).await
        })
        .unwrap()
        .unwrap();
    let total = started.elapsed();
    let fast = fast_elapsed.lock().unwrap().expect("fast tool ran");
    assert_eq!(result.status(), RunStatus::Completed);
    // 50 ms of ticks, with room for a loaded machine; stalled behind the sync closure they
    // would take its 3 s.
    assert!(
        fast < Duration::from_millis(1_500),
        "async tool stalled: {fast:?}"
    );
    assert!(total >= Duration::from_millis(3_000), "{total:?}");
    let tool_ids: Vec<_> = result
        .messages()
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.tool_call_id.as_deref().unwrap())
        .collect();
    assert_eq!(tool_ids, ["c1", "c2"]);
}

fn sync_panicker() -> Tool {
    Tool::new("boom", "Panics", Value::Null, |_, _| panic!("kaboom"))
}

fn async_panicker() -> Tool {
    Tool::new_async("boom", "Panics", Value::Null, |_, _| async {
        tokio::task::yield_now().await;
        panic!("kaboom")
    })
}

async fn run_with(tool: Tool, policy: OnError) -> Result<RunResult, AgentError> {
    let agent = agent(AgentDefinition::new("panics").tool(tool.on_error(policy)));
    let client = scripted([call("c1", "boom", "{}"), text("recovered")]);
    agent.run(RunOptions::new("go", client)).await
}

fn assert_fail_run(outcome: Result<RunResult, AgentError>) {
    let err = outcome.expect_err("fail-run raises");
    assert_eq!(err.code(), ErrorCode::ToolFailed);
    assert_eq!(err.message(), "Tool boom panicked: kaboom");
    let failed = err.result().expect("the failed run is attached");
    assert_eq!(failed.status(), RunStatus::Failed);
    let stored = failed.run.error.as_ref().unwrap();
    assert_eq!(stored.code, ErrorCode::ToolFailed);
    assert_eq!(stored.message, "Tool boom panicked: kaboom");
    // The attached state is a valid, storable state.
    RunResult::from_json(&failed.to_json()).unwrap();
}

fn assert_returned(outcome: Result<RunResult, AgentError>) {
    let result = outcome.expect("return-to-model goes on");
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(result.output(), &json!("recovered"));
    let tool_msg = result
        .messages()
        .iter()
        .find(|m| m.role == Role::Tool)
        .unwrap();
    assert!(tool_msg.is_error);
    assert_eq!(
        tool_msg.content,
        r#"{"error":"Tool boom panicked: kaboom"}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_sync_tool_is_a_tool_error() {
    assert_fail_run(run_with(sync_panicker(), OnError::FailRun).await);
    assert_returned(run_with(sync_panicker(), OnError::ReturnToModel).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_async_tool_is_a_tool_error() {
    assert_fail_run(run_with(async_panicker(), OnError::FailRun).await);
    assert_returned(run_with(async_panicker(), OnError::ReturnToModel).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panicking_hooks_and_validators_are_tool_errors() {
    let hook = echo("boom").on_tool_called(|_, _| panic!("kaboom"));
    assert_fail_run(run_with(hook, OnError::FailRun).await);

    let predicate = echo("boom").approval(|_, _| panic!("kaboom"));
    assert_fail_run(run_with(predicate, OnError::FailRun).await);

    let input = echo("boom").input_schema(validator_fn(|_| panic!("kaboom")));
    let err = run_with(input, OnError::FailRun).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolInputInvalid);
    assert_eq!(
        err.message(),
        "Invalid tool input: Tool boom panicked: kaboom"
    );

    let output = echo("boom").output_schema(validator_fn(|_| panic!("kaboom")));
    let err = run_with(output, OnError::FailRun).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolOutputInvalid);
    assert_eq!(err.result().unwrap().status(), RunStatus::Failed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_response_hook_on_continue_is_a_tool_error() {
    let manual =
        Tool::external("boom", "Manual", Value::Null).on_response_received(|_, _| panic!("kaboom"));
    let agent = agent(AgentDefinition::new("panics").tool(manual));
    let state = paused(&agent, "boom").await;
    let before = state.to_json();
    let err = agent
        .continue_run(&state, cont([text("x")]).output("c1", json!(1)))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolFailed);
    assert_eq!(err.message(), "Tool boom panicked: kaboom");
    assert_eq!(err.result().unwrap().status(), RunStatus::Failed);
    assert_eq!(state.to_json(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_and_async_closures_see_their_runtime() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s1 = seen.clone();
    let sync = Tool::new("sync", "", Value::Null, move |input, rt| {
        s1.lock().unwrap().push(json!([
            rt.tool_call().id,
            rt.step_index(),
            rt.context(),
            input
        ]));
        rt.set_context(json!({"by": "sync"})).unwrap();
        Ok(json!(1))
    });
    let s2 = seen.clone();
    let asy = Tool::new_async("async", "", Value::Null, move |input, rt| {
        let s2 = s2.clone();
        async move {
            s2.lock().unwrap().push(json!([
                rt.tool_call().id,
                rt.step_index(),
                rt.context(),
                input
            ]));
            Ok(json!(2))
        }
    });
    let agent = agent(AgentDefinition::new("rt").tools([sync, asy]));
    let client = scripted([
        call("a", "sync", r#"{"n":1}"#),
        call("b", "async", r#"{"n":2}"#),
        text("ok"),
    ]);
    let result = agent
        .run(RunOptions::new("go", client).context(json!({"start": true})))
        .await
        .unwrap();
    assert_eq!(result.run.context, json!({"by": "sync"}));
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            json!(["a", 0, {"start": true}, {"n": 1}]),
            json!(["b", 1, {"by": "sync"}, {"n": 2}]),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_tools_called_many_times_each_run_once_per_call() {
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    let tool = Tool::new("count", "", Value::Null, move |_, _| {
        Ok(json!(c.fetch_add(1, Ordering::SeqCst)))
    });
    let agent = agent(
        AgentDefinition::new("many")
            .tool(tool)
            .tool_execution(ToolExecutionConfig::default().tool_concurrency(8)),
    );
    let calls: Vec<_> = (0..50)
        .map(|i| (format!("c{i}"), "count".to_owned(), "{}".to_owned()))
        .collect();
    let client = scripted([phaseo_agent::ModelResponse::tool_calls(calls), text("ok")]);
    let result = agent.run(RunOptions::new("go", client)).await.unwrap();
    assert_eq!(count.load(Ordering::SeqCst), 50);
    assert_eq!(result.step_results[0].tool_results.len(), 50);
}
