//! Timeouts return on time, even for executors that ignore cancellation.

mod common;

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use phaseo_agent::{
    json, AgentDefinition, ErrorCode, ModelResponse, OnError, Role, RunOptions, RunStatus, Tool,
    ToolExecutionConfig, Value,
};

const LIMIT: Duration = Duration::from_millis(50);

/// How long a run ending at a 50 ms deadline may take on a loaded machine: far below the
/// 5 s the stubborn executors sleep, so a run that waits for one is still caught.
const ON_TIME: Duration = Duration::from_millis(2_500);

/// Runs `f` on a fresh runtime that is not waited for at the end (a sync closure that
/// ignores cancellation is still sleeping on its blocking thread).
fn on_runtime<F: Future>(f: F) -> F::Output {
    let rt = runtime(2);
    let out = rt.block_on(f);
    rt.shutdown_background();
    out
}

fn stubborn_sync() -> Tool {
    Tool::new("slow", "Ignores cancellation", Value::Null, |_, _| {
        std::thread::sleep(Duration::from_secs(5));
        Ok(json!("late"))
    })
    .timeout(LIMIT)
}

fn stubborn_async() -> Tool {
    Tool::new_async("slow", "Ignores cancellation", Value::Null, |_, _| async {
        tokio::time::sleep(Duration::from_secs(5)).await;
        Ok(json!("late"))
    })
    .timeout(LIMIT)
}

fn check_fail_run(tool: Tool) {
    let agent = agent(AgentDefinition::new("t").tool(tool));
    let started = Instant::now();
    let err = on_runtime(agent.run(RunOptions::new("go", scripted([call("c1", "slow", "{}")]))))
        .unwrap_err();
    let elapsed = started.elapsed();
    assert!(elapsed < ON_TIME, "took {elapsed:?}");
    assert_eq!(err.code(), ErrorCode::ToolTimeout);
    assert_eq!(err.message(), "Tool slow timed out after 50ms");
    assert_eq!(err.result().unwrap().status(), RunStatus::Failed);
}

fn check_return_to_model(tool: Tool) {
    let agent = agent(AgentDefinition::new("t").tool(tool.on_error(OnError::ReturnToModel)));
    let client = scripted([call("c1", "slow", "{}"), text("gave up")]);
    let started = Instant::now();
    let result = on_runtime(agent.run(RunOptions::new("go", client))).unwrap();
    let elapsed = started.elapsed();
    assert!(elapsed < ON_TIME, "took {elapsed:?}");
    assert_eq!(result.status(), RunStatus::Completed);
    let msg = result
        .messages()
        .iter()
        .find(|m| m.role == Role::Tool)
        .unwrap();
    assert!(msg.is_error);
    assert_eq!(msg.content, r#"{"error":"Tool slow timed out after 50ms"}"#);
}

#[test]
fn a_sync_closure_that_ignores_cancellation_times_out_on_time() {
    check_fail_run(stubborn_sync());
    check_return_to_model(stubborn_sync());
}

#[test]
fn an_async_closure_that_ignores_cancellation_times_out_on_time() {
    check_fail_run(stubborn_async());
    check_return_to_model(stubborn_async());
}

#[test]
fn the_executor_sees_the_cancellation_signal() {
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let saw = saw_cancel.clone();
    let polite = Tool::new("slow", "Watches cancellation", Value::Null, move |_, rt| {
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if rt.is_cancelled() {
                saw.store(true, Ordering::SeqCst);
                return Ok(json!("stopped"));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(json!("late"))
    })
    .timeout(LIMIT)
    .on_error(OnError::ReturnToModel);
    let agent = agent(AgentDefinition::new("t").tool(polite));
    let client = scripted([call("c1", "slow", "{}"), text("ok")]);
    on_runtime(async {
        let result = agent.run(RunOptions::new("go", client)).await.unwrap();
        assert_eq!(result.status(), RunStatus::Completed);
        // The token was cancelled at the timeout; the closure (on a blocking thread, which a
        // loaded machine may start late) notices it shortly after.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !saw_cancel.load(Ordering::SeqCst) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    assert!(saw_cancel.load(Ordering::SeqCst));
}

#[test]
fn a_timed_out_call_frees_its_slot_at_once() {
    let fast = Tool::new_async("fast", "", Value::Null, |_, _| async { Ok(json!("fast")) });
    let agent = agent(
        AgentDefinition::new("t")
            .tools([stubborn_sync().on_error(OnError::ReturnToModel), fast])
            .tool_execution(ToolExecutionConfig::default().tool_concurrency(1)),
    );
    let calls = ModelResponse::tool_calls([
        ("c1", "slow", "{}"),
        ("c2", "slow", "{}"),
        ("c3", "fast", "{}"),
    ]);
    let started = Instant::now();
    let result =
        on_runtime(agent.run(RunOptions::new("go", scripted([calls, text("ok")])))).unwrap();
    let elapsed = started.elapsed();
    assert!(elapsed < ON_TIME, "took {elapsed:?}");
    let contents: Vec<_> = result
        .messages()
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        contents,
        [
            r#"{"error":"Tool slow timed out after 50ms"}"#,
            r#"{"error":"Tool slow timed out after 50ms"}"#,
            "fast"
        ]
    );
}

#[test]
fn fractional_timeouts_are_written_as_the_shortest_number() {
    let tool = Tool::new_async("slow", "", Value::Null, |_, _| async {
        tokio::time::sleep(Duration::from_secs(5)).await;
        Ok(json!("late"))
    })
    .timeout_ms(1.5);
    let agent = agent(AgentDefinition::new("t").tool(tool));
    let err = on_runtime(agent.run(RunOptions::new("go", scripted([call("c1", "slow", "{}")]))))
        .unwrap_err();
    assert_eq!(err.message(), "Tool slow timed out after 1.5ms");
}

/// An `eventSchema` that takes `ms` per value (asynchronously) and accepts it.
struct SlowCheck(u64);

#[phaseo_agent::async_trait]
impl phaseo_agent::Validator for SlowCheck {
    async fn validate(&self, value: Value) -> Result<Value, phaseo_agent::ToolError> {
        tokio::time::sleep(Duration::from_millis(self.0)).await;
        Ok(value)
    }
}

#[test]
fn a_slow_event_schema_cannot_hold_the_deadline() {
    let tool = Tool::new_async("slow", "", Value::Null, |_, rt| async move {
        rt.emit_progress(json!("tick"));
        tokio::time::sleep(Duration::from_secs(5)).await;
        Ok(json!("late"))
    })
    // A 10 s check: far past the bound below, which leaves room for a loaded machine.
    .event_schema(Arc::new(SlowCheck(10_000)))
    .timeout(Duration::from_millis(100));
    let agent = agent(AgentDefinition::new("t").tool(tool));
    let started = Instant::now();
    let err = on_runtime(agent.run(RunOptions::new("go", scripted([call("c1", "slow", "{}")]))))
        .unwrap_err();
    let elapsed = started.elapsed();
    assert!(elapsed < ON_TIME, "took {elapsed:?}");
    assert_eq!(err.code(), ErrorCode::ToolTimeout);
}

#[test]
fn progress_still_queued_at_the_deadline_is_dropped() {
    // Three values at once, each checked in 2 s, under a 3 s limit: the first is accepted,
    // the second is being checked at the deadline, the third still queued. Each edge is 1 s
    // from the deadline, so a loaded machine's late start cannot move a value across it; a
    // run held until the queue is checked would take 6 s.
    let tool = Tool::new_async("slow", "", Value::Null, |_, rt| async move {
        for v in ["a", "b", "c"] {
            rt.emit_progress(json!(v));
        }
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok(json!("late"))
    })
    .event_schema(Arc::new(SlowCheck(2_000)))
    .timeout(Duration::from_millis(3_000))
    .on_error(OnError::ReturnToModel);
    let agent = agent(AgentDefinition::new("t").tool(tool));
    let client = scripted([call("c1", "slow", "{}"), text("ok")]);
    let started = Instant::now();
    let result = on_runtime(agent.run(RunOptions::new("go", client))).unwrap();
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_millis(4_500), "took {elapsed:?}");
    let tool_result = &result.step_results[0].tool_results[0];
    assert_eq!(tool_result.preliminary_results, [json!("a")]);
    assert_eq!(
        tool_result.error.as_deref(),
        Some("Tool slow timed out after 3000ms")
    );
}

#[test]
fn the_timeout_bounds_on_tool_called_and_cancels_its_token() {
    let seen = Arc::new(std::sync::Mutex::new(None));
    let keep = seen.clone();
    let hook = Tool::external("ask", "", Value::Null)
        .on_tool_called_hook(Arc::new(SlowHook(keep)))
        .timeout(LIMIT);
    let agent = agent(AgentDefinition::new("t").tool(hook));
    let started = Instant::now();
    let err = on_runtime(agent.run(RunOptions::new("go", scripted([call("c1", "ask", "{}")]))))
        .unwrap_err();
    let elapsed = started.elapsed();
    assert!(elapsed < ON_TIME, "took {elapsed:?}");
    assert_eq!(err.code(), ErrorCode::ToolTimeout);
    assert_eq!(err.message(), "Tool ask timed out after 50ms");
    let token: phaseo_agent::CancellationToken = seen.lock().unwrap().clone().unwrap();
    assert!(token.is_cancelled());
}

/// An interactive hook that keeps its call's token and then takes 5 s.
struct SlowHook(Arc<std::sync::Mutex<Option<phaseo_agent::CancellationToken>>>);

#[phaseo_agent::async_trait]
impl phaseo_agent::ToolCalledHook for SlowHook {
    async fn on_tool_called(
        &self,
        _input: Value,
        runtime: phaseo_agent::ToolRuntime,
    ) -> Result<Option<Value>, phaseo_agent::ToolError> {
        *self.0.lock().unwrap() = Some(runtime.cancellation_token().clone());
        tokio::time::sleep(Duration::from_secs(5)).await;
        Ok(Some(json!("late")))
    }
}
