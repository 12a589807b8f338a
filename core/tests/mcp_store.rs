//! MCP tools and run stores together (docs/behaviour.md §10, §11): a run paused on an approval-gated
//! MCP call is stored in SQLite and continued by id from another agent instance with its
//! own store handle (as another process would), which calls the server; and MCP tools
//! honour the agent's fixed `activeTools`/`toolChoice` like local tools.

mod mcp_support;

use std::sync::Arc;

use mcp_support::*;
use phaseo_agent::mcp::McpApproval;
use phaseo_agent::store::{RunStore, SqliteRunStore};
use phaseo_agent::{
    create_agent, json, AgentDefinition, ContinueOptions, ErrorCode, PendingKind, RunOptions,
    RunStatus,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_mcp_call_stored_in_sqlite_is_continued_by_id_from_a_new_agent() {
    let dir = markers();
    let Some(server) = test_server("t", &dir) else {
        return;
    };
    let server = server.require_approval(McpApproval::Destructive);
    let db = dir.join("runs.sqlite");
    let agent = |store: Arc<dyn RunStore>| {
        create_agent(
            AgentDefinition::new("mcp-store")
                .mcp_server(server.clone())
                .store(store),
        )
        .unwrap()
    };

    let first = agent(Arc::new(SqliteRunStore::open(&db).unwrap()));
    let client = Recording::new([
        call("c1", "delete_file", r#"{"path":"b.txt"}"#),
        text("done"),
    ]);
    let paused = first.run(RunOptions::new("go", client)).await.unwrap();
    assert_eq!(paused.status(), RunStatus::WaitingForHuman);
    assert_eq!(paused.pending()[0].kind, PendingKind::Approval);
    assert!(!dir.join("deleted-b.txt").exists());
    let run_id = paused.run.id.clone();
    first.close().await;
    drop(first);

    // A new agent with its own handle on the file: only the run id crosses over.
    let second = agent(Arc::new(SqliteRunStore::open(&db).unwrap()));
    let done = second
        .continue_by_id(
            run_id.clone(),
            ContinueOptions::new(Recording::new([text("done")])).approve("c1"),
        )
        .await
        .unwrap();
    assert_eq!(done.status(), RunStatus::Completed);
    assert!(dir.join("deleted-b.txt").exists());
    let results = tool_results(&done);
    assert_eq!(results[0].result, Some(json!("deleted b.txt")));
    assert_eq!(server_pids(&dir).len(), 2);

    // The stored run is the completed one; its pause cannot be continued again.
    let stored = SqliteRunStore::open(&db).unwrap();
    let snapshot = stored.load(&run_id).await.unwrap().unwrap();
    assert_eq!(snapshot.state().unwrap().status(), RunStatus::Completed);
    let again = second
        .continue_by_id(
            run_id,
            ContinueOptions::new(Recording::new([text("x")])).approve("c1"),
        )
        .await
        .unwrap_err();
    assert_eq!(again.code(), ErrorCode::ContinueInvalid);
    second.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_tools_honour_fixed_active_tools_and_tool_choice() {
    let dir = markers();
    let Some(server) = test_server("t", &dir) else {
        return;
    };
    // The ids name MCP tools, known only once listed: the definition is accepted.
    let agent = create_agent(
        AgentDefinition::new("mcp-controls")
            .mcp_server(server.clone())
            .active_tools(json!(["echo", "add"]))
            .tool_choice(json!({"toolId": "echo"})),
    )
    .unwrap();
    let client = Recording::new([call("c1", "echo", r#"{"text":"hi"}"#), text("done")]);
    let done = agent
        .run(RunOptions::new("go", client.clone()))
        .await
        .unwrap();
    assert_eq!(done.status(), RunStatus::Completed);
    assert_eq!(client.first_offer(), ["add", "echo"]);
    agent.close().await;

    // A name that is no tool of the agent, MCP tools included, fails the run when listed.
    let agent = create_agent(
        AgentDefinition::new("mcp-controls")
            .mcp_server(server)
            .active_tools(json!(["echo", "nope"])),
    )
    .unwrap();
    let err = agent
        .run(RunOptions::new("go", Recording::new([text("x")])))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::DefinitionInvalid);
    assert_eq!(
        err.message(),
        "Invalid agent definition: activeTools[1] names no tool of the agent: 'nope'"
    );
    assert_eq!(err.result().unwrap().status(), RunStatus::Failed);
    // A malformed value is still refused when the agent is created.
    let bad = create_agent(
        AgentDefinition::new("mcp-controls")
            .mcp_server(test_server("t", &dir).unwrap())
            .tool_choice(json!({"tool": 1})),
    )
    .err()
    .unwrap();
    assert_eq!(bad.code(), ErrorCode::DefinitionInvalid);
    agent.close().await;
}

#[tokio::test]
async fn a_failed_listing_of_a_stored_run_is_stored_failed() {
    let dir = markers();
    let store = Arc::new(SqliteRunStore::open(dir.join("runs.sqlite")).unwrap());
    let agent = create_agent(
        AgentDefinition::new("mcp-store")
            .mcp_server(phaseo_agent::mcp::McpServer::stdio(
                "broken",
                "/nonexistent/mcp-server",
            ))
            .store(store.clone()),
    )
    .unwrap();
    let err = agent
        .run(RunOptions::new("go", Recording::new([text("x")])))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::McpFailed);
    let failed = err.result().unwrap();
    assert_eq!(failed.status(), RunStatus::Failed);
    // The store holds the same failed run: an application's inbox sees it.
    let stored = store.load(&failed.run.id).await.unwrap().unwrap();
    let state = stored.state().unwrap();
    assert_eq!(state.status(), RunStatus::Failed);
    assert_eq!(state.run.error.unwrap().code, ErrorCode::McpFailed);
}
