//! A call's cancellation without a token of its own: the flag, the phase's token and the
//! token made on request agree in every order.

use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{PhaseShared, RunIds, ToolRuntime};
use crate::state::ToolCall;

/// A runtime in a phase cancelled with `phase`.
fn runtime(phase: &CancellationToken) -> ToolRuntime {
    let shared = PhaseShared::with_token(
        RunIds::new("run".into(), "agent".into()),
        0,
        json!(null),
        phase.clone(),
    );
    ToolRuntime::new(shared, ToolCall::new("c1", "t", json!({})), None, false)
}

/// A task waiting for `rt.cancelled()`, already waiting when this returns.
async fn waiter(rt: &ToolRuntime) -> tokio::task::JoinHandle<()> {
    let rt = rt.clone();
    let task = tokio::spawn(async move { rt.cancelled().await });
    tokio::task::yield_now().await;
    task
}

/// Fails unless `task` ends soon.
async fn woken(task: tokio::task::JoinHandle<()>) {
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("the waiter wakes")
        .unwrap();
}

/// Whether `cancelled` completes within a short wait.
async fn completes(rt: &ToolRuntime) -> bool {
    tokio::time::timeout(Duration::from_millis(200), rt.cancelled())
        .await
        .is_ok()
}

#[tokio::test]
async fn a_call_cancelled_on_its_own_is_cancelled_and_its_phase_is_not() {
    let phase = CancellationToken::new();
    let rt = runtime(&phase);
    assert!(!rt.is_cancelled());
    rt.cancel();
    assert!(rt.is_cancelled());
    assert!(completes(&rt).await);
    assert!(!phase.is_cancelled());
    // A token asked for after the cancellation is born cancelled.
    assert!(rt.cancellation_token().is_cancelled());
}

#[tokio::test]
async fn a_token_asked_for_before_the_cancellation_is_cancelled_with_the_call() {
    let phase = CancellationToken::new();
    let rt = runtime(&phase);
    let token = rt.cancellation_token().clone();
    assert!(!token.is_cancelled());
    rt.cancel();
    assert!(token.is_cancelled());
    assert!(!phase.is_cancelled());
}

#[tokio::test]
async fn the_phases_cancellation_reaches_the_call_its_waiters_and_its_token() {
    let phase = CancellationToken::new();
    let rt = runtime(&phase);
    let task = waiter(&rt).await;
    phase.cancel();
    woken(task).await;
    assert!(rt.is_cancelled());
    assert!(rt.cancellation_token().is_cancelled());
}

#[tokio::test]
async fn a_waiter_wakes_when_the_call_is_cancelled_while_it_waits() {
    let rt = runtime(&CancellationToken::new());
    let task = waiter(&rt).await;
    assert!(!task.is_finished());
    rt.cancel();
    woken(task).await;
}

#[tokio::test]
async fn a_waiter_wakes_when_a_token_made_while_it_waits_is_cancelled_by_its_holder() {
    let rt = runtime(&CancellationToken::new());
    let task = waiter(&rt).await;
    // Made after the waiter began to wait, then cancelled by whoever holds it.
    let token = rt.cancellation_token().clone();
    tokio::task::yield_now().await;
    token.cancel();
    woken(task).await;
    assert!(rt.is_cancelled());
}

#[tokio::test]
async fn a_call_not_cancelled_never_completes_its_wait() {
    let rt = runtime(&CancellationToken::new());
    assert!(!completes(&rt).await);
    assert!(!rt.is_cancelled());
}

#[test]
fn a_cancellation_racing_the_first_token_always_reaches_it() {
    for _ in 0..2_000 {
        let rt = runtime(&CancellationToken::new());
        let other = rt.clone();
        let canceller = std::thread::spawn(move || other.cancel());
        let token = rt.cancellation_token().clone();
        canceller.join().unwrap();
        assert!(token.is_cancelled(), "the token missed the cancellation");
    }
}
