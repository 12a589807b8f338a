//! Bounded concurrency at scale: deadlock canary, 1,000 calls in one turn, the limit holds.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use phaseo_agent::{
    json, AgentDefinition, EventData, ModelResponse, Role, RunOptions, RunResult, RunStatus, Tool,
    ToolExecutionConfig, Value,
};

fn fan_out(n: usize, tool: &str) -> ModelResponse {
    ModelResponse::tool_calls(
        (0..n).map(|i| (format!("c{i}"), tool.to_owned(), format!("{{\"i\":{i}}}"))),
    )
}

fn tool_ids(result: &RunResult) -> Vec<String> {
    result
        .messages()
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.tool_call_id.as_deref().unwrap().to_owned())
        .collect()
}

fn expected_ids(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("c{i}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_tools_that_wait_for_each_other_all_finish() {
    // Each call waits until all 200 are running: only true concurrency lets them finish.
    let barrier = Arc::new(tokio::sync::Barrier::new(200));
    let tool = Tool::new_async("meet", "", Value::Null, move |input, _| {
        let barrier = barrier.clone();
        async move {
            barrier.wait().await;
            Ok(input["i"].clone())
        }
    });
    let agent = agent(
        AgentDefinition::new("canary")
            .tool(tool)
            .tool_execution(ToolExecutionConfig::default().tool_concurrency(200)),
    );
    let client = scripted([fan_out(200, "meet"), text("met")]);
    let result = tokio::time::timeout(
        Duration::from_secs(10),
        agent.run(RunOptions::new("go", client)),
    )
    .await
    .expect("no deadlock")
    .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(tool_ids(&result), expected_ids(200));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_calls_in_one_turn_complete_in_call_order() {
    for concurrency in [1, 64, 1000] {
        let tool = Tool::new_async("id", "", Value::Null, |input, _| async move {
            Ok(input["i"].clone())
        });
        let agent = agent(
            AgentDefinition::new("wide")
                .tool(tool)
                .tool_execution(ToolExecutionConfig::default().tool_concurrency(concurrency)),
        );
        let client = scripted([fan_out(1000, "id"), text("done")]);
        let result = agent.run(RunOptions::new("go", client)).await.unwrap();
        assert_eq!(result.status(), RunStatus::Completed);
        assert_eq!(result.messages().len(), 1 + 1 + 1000 + 1);
        assert_eq!(tool_ids(&result), expected_ids(1000));
        let results = &result.step_results[0].tool_results;
        assert_eq!(results.len(), 1000);
        assert_eq!(results[999].result, Some(json!(999)));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limit_holds_and_results_keep_call_order_whatever_the_completion_order() {
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (r, p) = (running.clone(), peak.clone());
    let tool = Tool::new_async("sleep", "", Value::Null, move |input, rt| {
        let (r, p) = (r.clone(), p.clone());
        async move {
            let now = r.fetch_add(1, Ordering::SeqCst) + 1;
            p.fetch_max(now, Ordering::SeqCst);
            // The first three wait (up to 10 s) until all three are in flight, so that a
            // loaded machine starting them slowly cannot keep the peak below the limit.
            let deadline = Instant::now() + Duration::from_secs(10);
            while p.load(Ordering::SeqCst) < 3 && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            // Later calls finish first.
            let i = input["i"].as_u64().unwrap();
            tokio::time::sleep(Duration::from_millis(40 - 2 * i)).await;
            r.fetch_sub(1, Ordering::SeqCst);
            rt.set_context(json!(i)).unwrap();
            Ok(json!(i))
        }
    });
    let agent = agent(
        AgentDefinition::new("limit")
            .tool(tool)
            .tool_execution(ToolExecutionConfig::default().tool_concurrency(3)),
    );
    let client = scripted([fan_out(12, "sleep"), text("done")]);
    let result = agent.run(RunOptions::new("go", client)).await.unwrap();
    assert_eq!(peak.load(Ordering::SeqCst), 3);
    assert_eq!(tool_ids(&result), expected_ids(12));
    // The last call in call order wins the context, not the last to finish.
    assert_eq!(result.run.context, json!(11));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_tools_run_in_parallel_on_blocking_threads() {
    // A barrier rather than a timed sleep: each closure blocks its thread until all 16 are in
    // flight (or 10 s pass), so the peak shows they ran in parallel however slowly a loaded
    // machine starts the threads; one after another, the peak would stay at 1.
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (r, p) = (running.clone(), peak.clone());
    let tool = Tool::new("block", "", Value::Null, move |input, _| {
        let now = r.fetch_add(1, Ordering::SeqCst) + 1;
        p.fetch_max(now, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(10);
        while p.load(Ordering::SeqCst) < 16 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        r.fetch_sub(1, Ordering::SeqCst);
        Ok(input)
    });
    let agent = agent(
        AgentDefinition::new("par")
            .tool(tool)
            .tool_execution(ToolExecutionConfig::default().tool_concurrency(16)),
    );
    let client = scripted([fan_out(16, "block"), text("done")]);
    let result = agent.run(RunOptions::new("go", client)).await.unwrap();
    assert_eq!(
        peak.load(Ordering::SeqCst),
        16,
        "the sync tools did not all run at once"
    );
    assert_eq!(tool_ids(&result), expected_ids(16));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_running_when_another_fails_the_run_end_with_tool_failed() {
    let slow = Tool::new_async("slow", "", Value::Null, |_, _| async {
        tokio::time::sleep(Duration::from_secs(10)).await;
        Ok(json!("late"))
    });
    let boom = Tool::new_async("boom", "", Value::Null, |_, _| async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        Err(phaseo_agent::ToolError::new("boom"))
    });
    let agent = agent(
        AgentDefinition::new("a")
            .tool(slow)
            .tool(boom)
            .tool_execution(ToolExecutionConfig::default().tool_concurrency(2)),
    );
    let rec = Recorder::default();
    let turn = ModelResponse::tool_calls([("c1", "slow", "{}"), ("c2", "boom", "{}")]);
    let started = Instant::now();
    let err = agent
        .run(RunOptions::new("go", scripted([turn])).on_event(rec.listener()))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_millis(2_500));
    assert_eq!(err.message(), "boom");
    // Each started call ends, the one cancelled by the failure after the one that failed,
    // and both before the step and the run (docs/behaviour.md §5).
    let ends: Vec<(String, String, String)> = rec
        .events()
        .iter()
        .filter_map(|e| match &e.data {
            EventData::ToolFailed {
                tool_call_id,
                error,
                ..
            } => Some((
                e.type_name().to_owned(),
                tool_call_id.clone(),
                error.clone(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        ends,
        [
            ("tool.failed".into(), "c2".into(), "boom".into()),
            (
                "tool.failed".into(),
                "c1".into(),
                "Tool call cancelled".into()
            ),
        ]
    );
    let types = rec.types();
    assert_eq!(
        types[types.len() - 4..],
        ["tool.failed", "tool.failed", "step.failed", "run.failed"]
    );
}
