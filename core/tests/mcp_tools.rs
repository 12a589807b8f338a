//! MCP servers' tools as agent tools (docs/behaviour.md §11), against real servers: our Python test
//! server (official `mcp` package) over stdio.

mod mcp_support;

use std::sync::Arc;

use mcp_support::*;
use phaseo_agent::mcp::{McpServer, McpToolInfo};
use phaseo_agent::{
    create_agent, json, AgentDefinition, AgentEvent, ErrorCode, EventData, OnError, RunOptions,
    RunStatus, Tool, Value,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_listed_filtered_and_prefixed() {
    let dir = markers();
    let Some(server) = test_server("files", &dir) else {
        return;
    };
    let server = server
        .tool_prefix("fs")
        .deny_tools(["crash", "noisy"])
        .filter(Arc::new(|t: &McpToolInfo| {
            t.annotations.get("readOnlyHint") == Some(&json!(true)) || t.name == "delete_file"
        }));
    let agent = create_agent(AgentDefinition::new("lister").mcp_server(server)).unwrap();
    let client = Recording::new([text("ok")]);
    let result = agent
        .run(RunOptions::new("hi", client.clone()))
        .await
        .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(
        client.first_offer(),
        [
            "fs_add",
            "fs_count_up",
            "fs_delete_file",
            "fs_echo",
            "fs_fail",
            "fs_slow"
        ]
    );
    agent.close().await;

    let only = test_server("only", &dir)
        .unwrap()
        .allow_tools(["echo", "add"]);
    let agent = create_agent(AgentDefinition::new("lister").mcp_server(only)).unwrap();
    let client = Recording::new([text("ok")]);
    agent
        .run(RunOptions::new("hi", client.clone()))
        .await
        .unwrap();
    assert_eq!(client.first_offer(), ["add", "echo"]);
    agent.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_round_trip_maps_text_structured_and_error_results() {
    let dir = markers();
    let Some(server) = test_server("t", &dir) else {
        return;
    };
    let agent = create_agent(
        AgentDefinition::new("caller").mcp_server(server.on_error(OnError::ReturnToModel)),
    )
    .unwrap();
    let client = Recording::new([
        phaseo_agent::ModelResponse::tool_calls([
            ("c1", "echo", r#"{"text":"hello"}"#),
            ("c2", "add", r#"{"numbers":[1,2,3]}"#),
            ("c3", "fail", r#"{"reason":"nope"}"#),
        ]),
        text("done"),
    ]);
    let result = agent.run(RunOptions::new("go", client)).await.unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    let results = tool_results(&result);
    assert_eq!(results[0].result, Some(json!("hello")));
    assert_eq!(results[1].result, Some(json!({"total": 6, "count": 3})));
    assert_eq!(results[2].result, None);
    assert_eq!(
        results[2].error.as_deref(),
        Some("Error executing tool fail: failed: nope")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_input_schema_is_validated_by_the_core_before_the_server_is_called() {
    let dir = markers();
    let Some(server) = test_server("t", &dir) else {
        return;
    };
    let agent = create_agent(AgentDefinition::new("v").mcp_server(server)).unwrap();
    let client = Recording::new([call("c1", "add", r#"{"numbers":"x"}"#), text("done")]);
    let err = agent.run(RunOptions::new("go", client)).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolInputInvalid);
    assert!(
        err.message().starts_with("Invalid tool input: /numbers"),
        "{}",
        err.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_notifications_become_preliminary_results() {
    let dir = markers();
    let Some(server) = test_server("t", &dir) else {
        return;
    };
    let agent = create_agent(AgentDefinition::new("p").mcp_server(server)).unwrap();
    let events = Arc::new(std::sync::Mutex::new(Vec::<AgentEvent>::new()));
    let sink = events.clone();
    let client = Recording::new([call("c1", "count_up", r#"{"steps":3}"#), text("done")]);
    let result = agent
        .run(
            RunOptions::new("go", client).on_event(Arc::new(move |e: &AgentEvent| {
                sink.lock().unwrap().push(e.clone())
            })),
        )
        .await
        .unwrap();
    let r = &tool_results(&result)[0];
    assert_eq!(r.result, Some(json!("counted 3")));
    assert_eq!(
        r.preliminary_results,
        vec![
            json!({"progress": 1.0, "total": 3.0, "message": "step 1"}),
            json!({"progress": 2.0, "total": 3.0, "message": "step 2"}),
            json!({"progress": 3.0, "total": 3.0, "message": "step 3"}),
        ]
    );
    let preliminary = events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.type_name() == "tool.preliminary_result")
        .count();
    assert_eq!(preliminary, 3);
    let _ = EventData::None;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_collision_fails_the_run_with_definition_invalid_and_the_result() {
    let dir = markers();
    let Some(server) = test_server("t", &dir) else {
        return;
    };
    let local = Tool::new("echo", "Local echo", Value::Null, |input, _| Ok(input));
    let agent = create_agent(AgentDefinition::new("clash").tool(local).mcp_server(server)).unwrap();
    let err = agent
        .run(RunOptions::new("go", Recording::new([text("x")])))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::DefinitionInvalid);
    assert_eq!(
        err.message(),
        "Invalid agent definition: MCP tool 'echo' of server 't' collides with another tool of the agent"
    );
    assert_eq!(err.result().unwrap().status(), RunStatus::Failed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_optional_server_that_cannot_start_is_skipped_a_required_one_fails_the_run() {
    let dir = markers();
    let Some(good) = test_server("good", &dir) else {
        return;
    };
    let broken = || McpServer::stdio("broken", "/nonexistent/mcp-server");
    let agent = create_agent(
        AgentDefinition::new("opt")
            .mcp_server(good.allow_tools(["echo"]))
            .mcp_server(broken().optional(true)),
    )
    .unwrap();
    let client = Recording::new([text("ok")]);
    let result = agent
        .run(RunOptions::new("go", client.clone()))
        .await
        .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(client.first_offer(), ["echo"]);

    let agent = create_agent(AgentDefinition::new("req").mcp_server(broken())).unwrap();
    let err = agent
        .run(RunOptions::new("go", Recording::new([text("ok")])))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::McpFailed);
    assert!(
        err.message()
            .starts_with("MCP server 'broken' could not start: "),
        "{}",
        err.message()
    );
    assert_eq!(err.result().unwrap().status(), RunStatus::Failed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_refreshes_the_cached_list() {
    let dir = markers();
    let Some(server) = test_server("t", &dir) else {
        return;
    };
    let agent = create_agent(AgentDefinition::new("grow").mcp_server(server)).unwrap();
    let first = Recording::new([call("c1", "grow", "{}"), text("done")]);
    agent
        .run(RunOptions::new("go", first.clone()))
        .await
        .unwrap();
    assert!(!first.first_offer().contains(&"grown".to_owned()));
    // The notification is handled asynchronously; the next run lists again.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let second = Recording::new([call("c1", "grown", "{}"), text("done")]);
    let result = agent
        .run(RunOptions::new("go", second.clone()))
        .await
        .unwrap();
    assert!(second.first_offer().contains(&"grown".to_owned()));
    assert_eq!(tool_results(&result)[0].result, Some(json!("grown")));
}

struct ReadOnlyRunsFree;

#[phaseo_agent::async_trait]
impl phaseo_agent::ApprovalPredicate for ReadOnlyRunsFree {
    async fn requires_approval(
        &self,
        _input: &Value,
        runtime: &phaseo_agent::ToolRuntime,
    ) -> Result<bool, phaseo_agent::ToolError> {
        let annotations = runtime.tool_annotations().cloned().unwrap_or(Value::Null);
        Ok(annotations.get("readOnlyHint") != Some(&json!(true)))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_level_approval_predicate_sees_the_annotations() {
    let dir = markers();
    let Some(server) = test_server("t", &dir) else {
        return;
    };
    let agent = create_agent(
        AgentDefinition::new("gate")
            .mcp_server(server)
            .require_approval(Arc::new(ReadOnlyRunsFree)),
    )
    .unwrap();
    let client = Recording::new([
        phaseo_agent::ModelResponse::tool_calls([
            ("c1", "echo", r#"{"text":"free"}"#),
            ("c2", "append_note", r#"{"note":"gated"}"#),
        ]),
        text("done"),
    ]);
    let paused = agent.run(RunOptions::new("go", client)).await.unwrap();
    assert_eq!(paused.status(), RunStatus::WaitingForHuman);
    let pending: Vec<&str> = paused.pending().iter().map(|p| &*p.call.id).collect();
    assert_eq!(pending, ["c2"]);
    assert_eq!(tool_results(&paused)[0].result, Some(json!("free")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_to_one_server_run_concurrently_up_to_tool_concurrency() {
    let dir = markers();
    let Some(server) = test_server("t", &dir) else {
        return;
    };
    let agent = create_agent(
        AgentDefinition::new("many")
            .mcp_server(server)
            .tool_execution(phaseo_agent::ToolExecutionConfig::default().tool_concurrency(10)),
    )
    .unwrap();
    agent
        .run(RunOptions::new("warm", Recording::new([text("ok")])))
        .await
        .unwrap();
    let calls: Vec<(String, String, String)> = (0..10)
        .map(|i| {
            (
                format!("c{i}"),
                "slow".to_owned(),
                format!(r#"{{"seconds":0.5,"tag":"s{i}"}}"#),
            )
        })
        .collect();
    let client = Recording::new([
        phaseo_agent::ModelResponse::tool_calls(
            calls
                .iter()
                .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str())),
        ),
        text("done"),
    ]);
    let started = std::time::Instant::now();
    let result = agent.run(RunOptions::new("go", client)).await.unwrap();
    let elapsed = started.elapsed();
    // Ten half-second calls one after another would take five seconds.
    assert!(
        elapsed < std::time::Duration::from_millis(2_500),
        "{elapsed:?}"
    );
    let results = tool_results(&result);
    assert_eq!(results.len(), 10);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(*r.tool_call_id, format!("c{i}"));
        assert_eq!(r.result, Some(json!("slept 0.5")));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_is_cached_per_agent_until_cache_ttl_passes() {
    let dir = markers();
    let Some(server) = test_server("t", &dir) else {
        return;
    };
    let agent =
        create_agent(AgentDefinition::new("ttl").mcp_server(server.cache_ttl_ms(1_500))).unwrap();
    let first = Recording::new([call("c1", "grow_quietly", "{}"), text("done")]);
    agent.run(RunOptions::new("go", first)).await.unwrap();
    // No notification: the cached list still holds until the TTL passes.
    let second = Recording::new([text("done")]);
    agent
        .run(RunOptions::new("go", second.clone()))
        .await
        .unwrap();
    assert!(!second.first_offer().contains(&"quiet".to_owned()));
    tokio::time::sleep(std::time::Duration::from_millis(1_600)).await;
    let third = Recording::new([text("done")]);
    agent
        .run(RunOptions::new("go", third.clone()))
        .await
        .unwrap();
    assert!(third.first_offer().contains(&"quiet".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_writing_megabytes_to_stderr_never_blocks() {
    let dir = markers();
    let Some(server) = test_server("t", &dir) else {
        return;
    };
    let agent =
        create_agent(AgentDefinition::new("noisy").mcp_server(server.timeout_ms(20_000))).unwrap();
    let client = Recording::new([call("c1", "noisy", r#"{"kb":4096}"#), text("done")]);
    let result = agent.run(RunOptions::new("go", client)).await.unwrap();
    assert_eq!(
        tool_results(&result)[0].result,
        Some(json!("wrote 4096 KiB"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_that_is_not_there_is_mcp_failed() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let agent = create_agent(AgentDefinition::new("down").mcp_server(McpServer::http(
        "down",
        format!("http://127.0.0.1:{port}/mcp"),
    )))
    .unwrap();
    let err = agent
        .run(RunOptions::new("go", Recording::new([text("ok")])))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::McpFailed);
    assert!(
        err.message()
            .starts_with("MCP server 'down' could not start: "),
        "{}",
        err.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deferred_servers_tools_are_offered_once_tool_search_finds_them() {
    let dir = markers();
    let Some(server) = test_server("deferred", &dir) else {
        return;
    };
    let server = server.allow_tools(["echo", "add"]).defer_loading(true);
    let agent = create_agent(
        AgentDefinition::new("searcher")
            .tool(Tool::new("local", "A local tool", Value::Null, |_, _| {
                Ok(json!(1))
            }))
            .mcp_server(server),
    )
    .unwrap();
    let client = Recording::new([
        text_call("c1", "tool_search", r#"{"query":"echo"}"#),
        text_call("c2", "echo", r#"{"text":"found"}"#),
        text("done"),
    ]);
    let result = agent
        .run(RunOptions::new("go", client.clone()))
        .await
        .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    let offered = client.offered.lock().unwrap().clone();
    assert_eq!(offered[0], ["local", "tool_search"]);
    assert_eq!(offered[1], ["local", "tool_search", "echo"]);
    let results = tool_results(&result);
    assert!(
        results[1]
            .result
            .as_ref()
            .unwrap()
            .to_string()
            .contains("found"),
        "{:?}",
        results[1].result
    );
    assert_eq!(result.to_value()["run"]["loadedTools"], json!(["echo"]));
    agent.close().await;
}

fn text_call(id: &str, name: &str, args: &str) -> phaseo_agent::ModelResponse {
    phaseo_agent::ModelResponse::tool_calls([(id, name, args)])
}
