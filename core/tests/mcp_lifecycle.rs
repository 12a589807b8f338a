//! MCP calls through their whole life (docs/behaviour.md §11), against our Python test server over
//! stdio: approval by annotations → pause → JSON → continue with a new agent (a new
//! connection); timeouts and cancelled runs send `notifications/cancelled`; a crashed
//! server is `mcp_failed` and restarts on the next call; no stdio child outlives the
//! agent or the process.

mod mcp_support;

use std::time::{Duration, Instant};

use mcp_support::*;
use phaseo_agent::mcp::{McpApproval, McpServer};
use phaseo_agent::{
    create_agent, json, AgentDefinition, CancellationToken, ContinueOptions, ErrorCode, OnError,
    PendingKind, RunOptions, RunResult, RunStatus,
};

fn agent_with(server: McpServer) -> phaseo_agent::Agent {
    create_agent(AgentDefinition::new("mcp-agent").mcp_server(server)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destructive_calls_pause_and_continue_in_a_new_agent_calls_the_server() {
    let dir = markers();
    let Some(server) = test_server("t", &dir) else {
        return;
    };
    let server = server.require_approval(McpApproval::Destructive);
    let first = agent_with(server.clone());
    let client = Recording::new([
        phaseo_agent::ModelResponse::tool_calls([
            ("c1", "delete_file", r#"{"path":"a.txt"}"#),
            ("c2", "echo", r#"{"text":"read-only runs"}"#),
            ("c3", "append_note", r#"{"note":"not read-only"}"#),
        ]),
        text("done"),
    ]);
    let paused = first.run(RunOptions::new("go", client)).await.unwrap();
    assert_eq!(paused.status(), RunStatus::WaitingForHuman);
    let pending: Vec<_> = paused
        .pending()
        .iter()
        .map(|p| (&*p.call.id, p.kind))
        .collect();
    assert_eq!(
        pending,
        [("c1", PendingKind::Approval), ("c3", PendingKind::Approval)]
    );
    assert!(!dir.join("deleted-a.txt").exists());
    let json_state = paused.to_json();
    first.close().await;
    drop(first);

    // Another agent instance, as another process would build it: its own connection.
    let second = agent_with(server);
    let state = RunResult::from_json(&json_state).unwrap();
    let done = second
        .continue_run(
            &state,
            ContinueOptions::new(Recording::new([text("done")]))
                .approve("c1")
                .approve("c3"),
        )
        .await
        .unwrap();
    assert_eq!(done.status(), RunStatus::Completed);
    assert!(dir.join("deleted-a.txt").exists());
    let results = tool_results(&done);
    let by_id = |id: &str| {
        results
            .iter()
            .find(|r| *r.tool_call_id == *id)
            .unwrap()
            .clone()
    };
    assert_eq!(by_id("c1").result, Some(json!("deleted a.txt")));
    assert_eq!(by_id("c2").result, Some(json!("read-only runs")));
    assert_eq!(by_id("c3").result, Some(json!("noted not read-only")));
    // Two server processes: one per agent.
    assert_eq!(server_pids(&dir).len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_returns_on_time_and_the_server_sees_the_cancellation() {
    let dir = markers();
    let Some(server) = test_server("t", &dir) else {
        return;
    };
    // The deadline is 1.5 s away so that the server has begun the call (a loaded machine
    // may take several hundred ms to hand it over) before the cancellation reaches it.
    let agent = agent_with(
        server
            .timeout_ms(60_000)
            .tool_timeout_ms("slow", 1_500)
            .on_error(OnError::ReturnToModel),
    );
    // Start the server first so the wall time measures the call only.
    agent
        .run(RunOptions::new("warm", Recording::new([text("ok")])))
        .await
        .unwrap();
    let client = Recording::new([
        call("c1", "slow", r#"{"seconds":20,"tag":"t1"}"#),
        text("ok"),
    ]);
    let started = Instant::now();
    let result = agent.run(RunOptions::new("go", client)).await.unwrap();
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_millis(3_000), "took {elapsed:?}");
    assert_eq!(
        tool_results(&result)[0].error.as_deref(),
        Some("Tool slow timed out after 1500ms")
    );
    assert!(
        wait_for(&dir.join("cancelled-t1"), Duration::from_secs(10)),
        "the server did not see notifications/cancelled"
    );
    assert!(!dir.join("finished-t1").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_run_cancels_its_mcp_call() {
    let dir = markers();
    let Some(server) = test_server("t", &dir) else {
        return;
    };
    let agent = agent_with(server);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let client = Recording::new([
        call("c1", "slow", r#"{"seconds":20,"tag":"t2"}"#),
        text("ok"),
    ]);
    let run = tokio::spawn({
        let agent = agent.clone();
        async move {
            agent
                .run(RunOptions::new("go", client).cancel(cancel))
                .await
        }
    });
    // Cancel once the server has begun the call (it writes `started-<tag>`), however long a
    // loaded machine takes to start the server and hand the call over.
    let in_flight = dir.join("started-t2");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !in_flight.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(in_flight.exists(), "the server did not begin the call");
    let started = Instant::now();
    trigger.cancel();
    let result = run.await.unwrap().unwrap();
    // Far below the call's 20 s: the run does not wait for the server.
    assert!(started.elapsed() < Duration::from_millis(2_500));
    assert_eq!(result.status(), RunStatus::Cancelled);
    assert!(
        wait_for(&dir.join("cancelled-t2"), Duration::from_secs(10)),
        "the server did not see notifications/cancelled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_server_is_mcp_failed_under_both_policies_and_restarts() {
    let dir = markers();
    let Some(server) = test_server("t", &dir) else {
        return;
    };

    let agent = agent_with(server.clone());
    let err = agent
        .run(RunOptions::new(
            "go",
            Recording::new([call("c1", "crash", "{}"), text("ok")]),
        ))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::McpFailed);
    assert!(
        err.message().starts_with("MCP server 't' exited"),
        "{}",
        err.message()
    );
    assert!(
        err.message().contains("crashing on purpose"),
        "{}",
        err.message()
    );
    // The next call starts it again.
    let result = agent
        .run(RunOptions::new(
            "go",
            Recording::new([call("c1", "echo", r#"{"text":"back"}"#), text("ok")]),
        ))
        .await
        .unwrap();
    assert_eq!(tool_results(&result)[0].result, Some(json!("back")));
    assert_eq!(server_pids(&dir).len(), 2);

    let agent = agent_with(server.on_error(OnError::ReturnToModel));
    let result = agent
        .run(RunOptions::new(
            "go",
            Recording::new([
                call("c1", "crash", "{}"),
                call("c2", "echo", r#"{"text":"again"}"#),
                text("ok"),
            ]),
        ))
        .await
        .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    let results = tool_results(&result);
    let error = results[0].error.as_deref().unwrap();
    assert!(error.starts_with("MCP server 't' exited"), "{error}");
    assert_eq!(results[1].result, Some(json!("again")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_stdio_child_is_left_after_the_agent_is_closed_or_dropped() {
    let dir = markers();
    let Some(server) = test_server("t", &dir) else {
        return;
    };
    let agent = agent_with(server.clone());
    agent
        .run(RunOptions::new("go", Recording::new([text("ok")])))
        .await
        .unwrap();
    let pids = server_pids(&dir);
    assert_eq!(pids.len(), 1);
    assert!(alive(pids[0]));
    agent.close().await;
    assert!(
        !alive(pids[0]),
        "server {} still running after close",
        pids[0]
    );

    let dir = markers();
    let agent = agent_with(test_server("t", &dir).unwrap());
    agent
        .run(RunOptions::new("go", Recording::new([text("ok")])))
        .await
        .unwrap();
    let pid = server_pids(&dir)[0];
    drop(agent);
    assert!(!alive(pid), "server {pid} still running after drop");
}

/// Helper for the next test, run in a child process of this test binary: starts a
/// server, says so, and waits to be killed. Does nothing in a normal test run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn child_process_helper() {
    let Ok(dir) = std::env::var("PHASEO_MCP_CHILD_DIR") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let agent = agent_with(test_server("t", &dir).unwrap());
    agent
        .run(RunOptions::new("go", Recording::new([text("ok")])))
        .await
        .unwrap();
    std::fs::write(dir.join("ready"), "").unwrap();
    tokio::time::sleep(Duration::from_secs(120)).await;
}

#[test]
fn no_stdio_child_is_left_after_the_host_is_killed() {
    let dir = markers();
    if python().is_none() {
        return;
    }
    let mut host = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_process_helper",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("PHASEO_MCP_CHILD_DIR", &dir)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_for(&dir.join("ready"), Duration::from_secs(60)),
        "the helper process did not start its server"
    );
    let pid = server_pids(&dir)[0];
    assert!(alive(pid));
    // SIGKILL: no destructor runs in the host.
    host.kill().unwrap();
    host.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(pid), "server {pid} outlived its killed host");
}
