//! Cancelling a whole run through `RunOptions::cancel` / `ContinueOptions::cancel`.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use phaseo_agent::{
    async_trait, json, AgentDefinition, CancellationToken, ErrorCode, EventData, ModelClient,
    ModelError, ModelRequest, ModelResponse, RunOptions, RunResult, RunStatus, ScriptedClient,
    Tool, ToolError, Value,
};

fn cancel_after(token: &CancellationToken, ms: u64) {
    let token = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        token.cancel();
    });
}

/// Cancels `token` once `began` is set (the tool's first action), however long a loaded
/// machine takes to get there.
fn cancel_once_begun(token: &CancellationToken, began: Arc<AtomicBool>) {
    let token = token.clone();
    tokio::spawn(async move {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !began.load(Ordering::SeqCst) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        token.cancel();
    });
}

fn assert_cancelled(result: &RunResult) {
    assert_eq!(result.status(), RunStatus::Cancelled);
    let error = result
        .run
        .error
        .as_ref()
        .expect("a cancelled run records why");
    assert_eq!(error.code, ErrorCode::Cancelled);
    assert_eq!(error.message, "Agent run cancelled");
    assert!(result.pause().is_none());
    RunResult::from_json(&result.to_json()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_during_an_async_tool_ends_cancelled_and_signals_the_tool() {
    let observed = Arc::new(AtomicBool::new(false));
    let began = Arc::new(AtomicBool::new(false));
    let seen = observed.clone();
    let begin = began.clone();
    let tool = Tool::new_async("wait", "", Value::Null, move |_, rt| {
        let (seen, begin) = (seen.clone(), begin.clone());
        async move {
            // Watch the signal from a task of our own: the run drops this future.
            let watcher = rt.clone();
            tokio::spawn(async move {
                watcher.cancelled().await;
                seen.store(true, Ordering::SeqCst);
            });
            begin.store(true, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_secs(10)).await;
            Ok(json!("late"))
        }
    });
    let agent = agent(AgentDefinition::new("c").tool(tool));
    let rec = Recorder::default();
    let token = CancellationToken::new();
    // Cancelled once the tool is running, so that it has a signal to observe.
    cancel_once_begun(&token, began);
    let started = Instant::now();
    let result = agent
        .run(
            RunOptions::new("go", scripted([call("c1", "wait", "{}")]))
                .cancel(token)
                .on_event(rec.listener()),
        )
        .await
        .expect("a cancelled run returns Ok");
    // Far below the tool's 10 s sleep, with room for a loaded machine.
    assert!(started.elapsed() < Duration::from_millis(2_500));
    assert_cancelled(&result);
    // The watcher task sees the signal shortly after.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !observed.load(Ordering::SeqCst) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(
        observed.load(Ordering::SeqCst),
        "the tool's token was cancelled"
    );
    // The call that was running ends too, before the run (docs/behaviour.md §5).
    let types = rec.types();
    assert_eq!(
        types[types.len() - 3..],
        ["tool.started", "tool.failed", "run.cancelled"]
    );
    let events = rec.events();
    match &events[events.len() - 2].data {
        EventData::ToolFailed {
            tool_call_id,
            error,
            ..
        } => assert_eq!((&**tool_call_id, &**error), ("c1", "Tool call cancelled")),
        other => panic!("expected tool.failed, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_during_a_blocking_sync_tool_returns_at_once() {
    let tool = Tool::new("wait", "", Value::Null, |_, _| {
        // Far longer than the bound below: a run waiting for it would be caught.
        std::thread::sleep(Duration::from_secs(5));
        Ok(json!("late"))
    });
    let agent = agent(AgentDefinition::new("c").tool(tool));
    let token = CancellationToken::new();
    cancel_after(&token, 50);
    let started = Instant::now();
    let result = agent
        .run(RunOptions::new("go", scripted([call("c1", "wait", "{}")])).cancel(token))
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_millis(2_500));
    assert_cancelled(&result);
}

struct Hanging;

#[async_trait]
impl ModelClient for Hanging {
    async fn generate(
        &self,
        _request: &ModelRequest<'_>,
        _cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        tokio::time::sleep(Duration::from_secs(10)).await;
        Ok(ModelResponse::text("late"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_during_a_model_request_ends_cancelled() {
    let agent = agent(AgentDefinition::new("c"));
    let token = CancellationToken::new();
    cancel_after(&token, 50);
    let started = Instant::now();
    let result = agent
        .run(RunOptions::new("go", Arc::new(Hanging)).cancel(token))
        .await
        .unwrap();
    // Far below the model's 10 s, with room for a loaded machine.
    assert!(started.elapsed() < Duration::from_millis(2_500));
    assert_cancelled(&result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_cancelled_before_the_run_stops_it_before_the_model() {
    let agent = agent(AgentDefinition::new("c"));
    let client = Arc::new(ScriptedClient::from_responses([ModelResponse::text("hi")]));
    let token = CancellationToken::new();
    token.cancel();
    let result = agent
        .run(RunOptions::new("go", client.clone()).cancel(token))
        .await
        .unwrap();
    assert_cancelled(&result);
    assert_eq!(client.cursor(), 0);
    assert_eq!(result.run.step_count, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_continue_ends_cancelled_and_leaves_the_paused_state() {
    let agent = approval_agent();
    let slow = Tool::new_async("t", "", Value::Null, |_, _| async {
        tokio::time::sleep(Duration::from_secs(10)).await;
        Ok(json!("late"))
    })
    .require_approval();
    let agent2 = common::agent(
        AgentDefinition::new(agent.id())
            .tool(slow)
            .tool(Tool::external("m", "", Value::Null)),
    );
    let state = paused(&agent, "t").await;
    let before = state.to_json();
    let token = CancellationToken::new();
    cancel_after(&token, 50);
    let started = Instant::now();
    let result = agent2
        .continue_run(&state, cont([text("x")]).approve("c1").cancel(token))
        .await
        .unwrap();
    // Far below the tool's 10 s sleep, with room for a loaded machine.
    assert!(started.elapsed() < Duration::from_millis(2_500));
    assert_cancelled(&result);
    assert_eq!(state.to_json(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_fails_because_the_run_was_cancelled_leaves_the_run_cancelled() {
    // The tool ends with an error the moment it sees the signal (Go's `ctx.Err()`): the
    // run was cancelled, not failed by the tool. Many runs, as the two race.
    for _ in 0..200 {
        let began = Arc::new(AtomicBool::new(false));
        let begin = began.clone();
        let tool = Tool::new_async("wait", "", Value::Null, move |_, rt| {
            let begin = begin.clone();
            async move {
                begin.store(true, Ordering::SeqCst);
                rt.cancelled().await;
                Err(ToolError::new("context canceled"))
            }
        });
        let agent = agent(AgentDefinition::new("c").tool(tool));
        let token = CancellationToken::new();
        cancel_once_begun(&token, began);
        let result = agent
            .run(RunOptions::new("go", scripted([call("c1", "wait", "{}")])).cancel(token))
            .await
            .expect("a cancelled run returns Ok");
        assert_cancelled(&result);
    }
}

/// A state accessor whose load and save never answer.
struct Silent;

#[async_trait]
impl phaseo_agent::store::StateAccessor for Silent {
    async fn load(&self, _run_id: &str) -> Result<Option<String>, ToolError> {
        std::future::pending().await
    }
    async fn save(&self, _run_id: &str, _state_json: &str) -> Result<(), ToolError> {
        std::future::pending().await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_never_answers_does_not_hold_a_cancelled_run_or_continue() {
    let store: Arc<dyn phaseo_agent::store::RunStore> =
        Arc::new(phaseo_agent::store::AccessorRunStore::new(Arc::new(Silent)));
    let agent = agent(AgentDefinition::new("c"));
    // The run's first save waits on the store; cancelled, the run ends, and its final save
    // is given up after a bounded wait: the run fails with store_failed, its state attached.
    let token = CancellationToken::new();
    cancel_after(&token, 50);
    let started = Instant::now();
    let client = Arc::new(ScriptedClient::from_responses([ModelResponse::text("hi")]));
    let error = agent
        .run(
            RunOptions::new("go", client.clone())
                .store(store.clone())
                .cancel(token),
        )
        .await
        .expect_err("the final save was not made");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(error.code(), ErrorCode::StoreFailed);
    assert!(error.result().is_some());
    // A continue by id waits on the store's load: cancelled, it is refused with cancelled
    // and no result (nothing ran).
    let token = CancellationToken::new();
    cancel_after(&token, 50);
    let started = Instant::now();
    let error = agent
        .continue_by_id(
            "r1",
            phaseo_agent::ContinueOptions::new(client)
                .store(store)
                .cancel(token),
        )
        .await
        .expect_err("cancelled");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(error.code(), ErrorCode::Cancelled);
    assert!(error.result().is_none());
}

/// A tool that cancels its own run and answers at once: the answer arrives within the poll
/// that had checked for cancellation first, and the run must still end `cancelled` without
/// asking the model again (the scripted model would answer at once and complete the run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_cancelled_while_its_tool_answers_takes_no_further_step() {
    for _ in 0..20 {
        let token = CancellationToken::new();
        let cancel = token.clone();
        let tool = Tool::new_async("stop", "", Value::Null, move |_, _| {
            let cancel = cancel.clone();
            async move {
                cancel.cancel();
                Ok(json!("answered"))
            }
        });
        let agent = agent(AgentDefinition::new("c").tool(tool));
        let model = scripted([call("c1", "stop", "{}"), text("done")]);
        let result = agent
            .run(RunOptions::new("go", model).cancel(token))
            .await
            .unwrap();
        assert_cancelled(&result);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_cancels_its_own_token_stops_only_itself() {
    // Alone in its turn and beside another call: the call's token is its own, never the
    // run's or the other calls'.
    let tool = Tool::new_async("quit", "", Value::Null, |_, rt| async move {
        rt.cancellation_token().cancel();
        Ok(json!(rt.is_cancelled()))
    });
    let slow = Tool::new_async("slow", "", Value::Null, |_, rt| async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        Ok(json!(rt.is_cancelled()))
    });
    let agent = agent(AgentDefinition::new("c").tool(tool).tool(slow));
    let client = Arc::new(ScriptedClient::from_responses([
        ModelResponse::tool_calls([("c1", "quit", "{}")]),
        ModelResponse::tool_calls([("c2", "quit", "{}"), ("c3", "slow", "{}")]),
        ModelResponse::text("ok"),
    ]));
    let result = agent.run(RunOptions::new("go", client)).await.unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    let results: Vec<_> = result
        .step_results
        .iter()
        .flat_map(|s| &s.tool_results)
        .map(|r| (&*r.tool_call_id, r.result.clone()))
        .collect();
    assert_eq!(
        results,
        [
            ("c1", Some(json!(true))),
            ("c2", Some(json!(true))),
            ("c3", Some(json!(false)))
        ]
    );
}
