//! Events as a listener receives them: order, shape, timestamps, panicking listeners.

mod common;

use std::sync::Arc;

use common::*;
use phaseo_agent::{json, AgentDefinition, AgentEvent, RunOptions, RunStatus, Tool, Value};

fn is_iso_millis(s: &str) -> bool {
    // 2024-01-02T03:04:05.678Z
    s.len() == 24
        && s.ends_with('Z')
        && s.as_bytes()[10] == b'T'
        && s.as_bytes()[19] == b'.'
        && s[20..23].bytes().all(|b| b.is_ascii_digit())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_step_then_an_answer_emits_the_documented_order() {
    let agent = agent(AgentDefinition::new("ev").tool(echo("t")));
    let rec = Recorder::default();
    let client = scripted([call("c1", "t", r#"{"a":1}"#), text("ok")]);
    let result = agent
        .run(RunOptions::new("go", client).on_event(rec.listener()))
        .await
        .unwrap();
    assert_eq!(
        rec.types(),
        [
            "run.started",
            "step.started",
            "model.requested",
            "model.completed",
            "tool.started",
            "tool.completed",
            "step.completed",
            "checkpoint.saved",
            "step.started",
            "model.requested",
            "model.completed",
            "step.completed",
            "checkpoint.saved",
            "run.completed",
        ]
    );
    for e in rec.events() {
        assert_eq!(&*e.run_id, result.run.id);
        assert_eq!(&*e.agent_id, "ev");
        assert!(is_iso_millis(&e.timestamp), "{}", e.timestamp);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_serialize_as_canonical_camel_case() {
    let agent = agent(AgentDefinition::new("ev").tool(echo("t")));
    let rec = Recorder::default();
    let client = scripted([call("c1", "t", r#"{"b":2.0,"a":1}"#), text("ok")]);
    agent
        .run(RunOptions::new("go", client).on_event(rec.listener()))
        .await
        .unwrap();
    let events = rec.events();
    let completed: &AgentEvent = events
        .iter()
        .find(|e| e.type_name() == "tool.completed")
        .unwrap();
    let text = completed.to_json();
    let prefix = format!(
        r#"{{"type":"tool.completed","runId":"{}","agentId":"ev","timestamp":"{}","status":"running","stepIndex":0,"#,
        completed.run_id, completed.timestamp
    );
    assert!(text.starts_with(&prefix), "{text}");
    assert!(
        text.ends_with(r#""toolCallId":"c1","toolName":"t","output":{"b":2,"a":1}}"#),
        "{text}"
    );
    let first = events[0].to_value();
    assert_eq!(first["type"], json!("run.started"));
    assert_eq!(first["status"], json!("queued"));
    let model = events
        .iter()
        .find(|e| e.type_name() == "model.completed")
        .unwrap();
    assert_eq!(model.to_value()["usage"]["totalTokens"], json!(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_listener_does_not_take_the_run_down() {
    let agent = agent(AgentDefinition::new("ev").tool(echo("t")));
    let listener = Arc::new(|e: &AgentEvent| {
        if e.type_name() == "tool.started" {
            panic!("listener bug");
        }
    });
    let client = scripted([call("c1", "t", "{}"), text("ok")]);
    let result = agent
        .run(RunOptions::new("go", client).on_event(listener))
        .await
        .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preliminary_results_come_between_start_and_completion() {
    let tool = Tool::new("p", "", Value::Null, |_, rt| {
        rt.emit_progress(json!(1));
        rt.emit_progress(json!(2));
        Ok(json!("done"))
    });
    let agent = agent(AgentDefinition::new("ev").tool(tool));
    let rec = Recorder::default();
    let client = scripted([call("c1", "p", "{}"), text("ok")]);
    let result = agent
        .run(RunOptions::new("go", client).on_event(rec.listener()))
        .await
        .unwrap();
    let tool_events: Vec<_> = rec
        .events()
        .into_iter()
        .filter(|e| e.event_type.is_tool_event())
        .map(|e| (e.type_name(), e.to_value().get("result").cloned()))
        .collect();
    assert_eq!(
        tool_events,
        [
            ("tool.started", None),
            ("tool.preliminary_result", Some(json!(1))),
            ("tool.preliminary_result", Some(json!(2))),
            ("tool.completed", None),
        ]
    );
    assert_eq!(
        result.step_results[0].tool_results[0].preliminary_results,
        [json!(1), json!(2)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reported_while_a_call_waits_reaches_listeners_before_the_call_ends() {
    // The call waits until a listener has seen its progress, reported from another thread
    // after the call began waiting: a run that looked at progress only when the call
    // returned would never end (the wait below fails the test instead).
    let seen = Arc::new(tokio::sync::Notify::new());
    let tool = Tool::new_async("p", "", Value::Null, {
        let seen = seen.clone();
        move |_, rt| {
            let seen = seen.clone();
            async move {
                let reported = seen.notified();
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                std::thread::spawn(move || rt.emit_progress(json!("half")))
                    .join()
                    .unwrap();
                tokio::select! {
                    biased;
                    _ = tokio::time::sleep(std::time::Duration::from_secs(20)) => {
                        Ok(json!("progress was not delivered while the call waited"))
                    }
                    () = reported => Ok(json!("done")),
                }
            }
        }
    });
    let agent = agent(AgentDefinition::new("ev").tool(tool));
    let rec = Recorder::default();
    let recorded = rec.listener();
    let listener = Arc::new(move |e: &AgentEvent| {
        recorded.on_event(e);
        if e.type_name() == "tool.preliminary_result" {
            seen.notify_one();
        }
    });
    let client = scripted([call("c1", "p", "{}"), text("ok")]);
    let result = agent
        .run(RunOptions::new("go", client).on_event(listener))
        .await
        .unwrap();
    assert_eq!(
        result.step_results[0].tool_results[0].result,
        Some(json!("done"))
    );
    assert_eq!(
        result.step_results[0].tool_results[0].preliminary_results,
        [json!("half")]
    );
}

/// A waker that counts nothing itself: its `Arc`'s count says who still holds it.
struct Unpark(std::thread::Thread);

impl std::task::Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

#[test]
fn a_runtime_kept_after_its_call_keeps_nothing_of_the_run_alive() {
    // A host may keep a call's runtime after the call (a Python coroutine abandoned with its
    // event loop): it must not keep the waker of the run's task, which holds whatever
    // drives the run (a loop's bridge and its sockets). Once with the call answered, once
    // with the run dropped while the call still waits.
    use std::future::Future;
    use std::task::{Context, Poll, Waker};
    let rt = runtime(1);
    let _entered = rt.enter();
    for answered in [true, false] {
        let kept = Arc::new(std::sync::Mutex::new(Vec::new()));
        let tool = Tool::new_async("t", "", Value::Null, {
            let kept = kept.clone();
            move |_, runtime| {
                kept.lock().unwrap().push(runtime);
                async move {
                    if !answered {
                        std::future::pending::<()>().await;
                    }
                    Ok(json!("done"))
                }
            }
        });
        let agent = agent(AgentDefinition::new("ev").tool(tool));
        let unpark = Arc::new(Unpark(std::thread::current()));
        let waker = Waker::from(unpark.clone());
        let mut run = Box::pin(agent.run(RunOptions::new(
            "go",
            scripted([call("c1", "t", "{}"), text("ok")]),
        )));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            match run.as_mut().poll(&mut Context::from_waker(&waker)) {
                Poll::Ready(result) => {
                    assert!(answered, "the call never answers");
                    assert_eq!(result.unwrap().status(), RunStatus::Completed);
                    break;
                }
                Poll::Pending if !answered && !kept.lock().unwrap().is_empty() => break,
                Poll::Pending => {
                    assert!(std::time::Instant::now() < deadline, "the run did not end");
                    std::thread::park_timeout(std::time::Duration::from_millis(10));
                }
            }
        }
        drop(run);
        assert_eq!(kept.lock().unwrap().len(), 1, "the tool ran once");
        drop(waker);
        assert_eq!(
            Arc::strong_count(&unpark),
            1,
            "the kept runtime holds the run's waker (answered: {answered})"
        );
    }
}
