//! Against `@modelcontextprotocol/server-everything` (the reference server, pinned in
//! tests/mcp/package.json): a call round trip over stdio and over Streamable HTTP.

mod mcp_support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use mcp_support::*;
use phaseo_agent::mcp::McpServer;
use phaseo_agent::{create_agent, json, AgentDefinition, RunOptions, RunStatus};

async fn echo_round_trip(server: McpServer) {
    let agent =
        create_agent(AgentDefinition::new("everything").mcp_server(server.tool_prefix("ev")))
            .unwrap();
    let client = Recording::new([
        phaseo_agent::ModelResponse::tool_calls([
            ("c1", "ev_echo", r#"{"message":"hi"}"#),
            ("c2", "ev_get-sum", r#"{"a":2,"b":3}"#),
        ]),
        text("done"),
    ]);
    let result = agent
        .run(RunOptions::new("go", client.clone()))
        .await
        .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    let offered = client.first_offer();
    assert!(offered.contains(&"ev_echo".to_owned()), "{offered:?}");
    let results = tool_results(&result);
    assert_eq!(results[0].result, Some(json!("Echo: hi")));
    assert_eq!(results[1].result, Some(json!("The sum of 2 and 3 is 5.")));
    agent.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_trip_over_stdio() {
    let Some(bin) = everything() else { return };
    echo_round_trip(McpServer::stdio("everything", bin.to_string_lossy()).args(["stdio"])).await;
}

/// Kills the HTTP server when the test ends, however it ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_trip_over_streamable_http() {
    let Some(bin) = everything() else { return };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(&bin)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let _server = Killed(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("listening on port") {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("server-everything did not start listening");
    echo_round_trip(
        McpServer::http("everything", format!("http://127.0.0.1:{port}/mcp"))
            .header("X-Test", "1")
            .bearer("not-checked"),
    )
    .await;
}

struct Answer(std::sync::Mutex<Vec<(String, phaseo_agent::Value)>>);

#[phaseo_agent::async_trait]
impl phaseo_agent::mcp::McpElicitationHandler for Answer {
    async fn on_elicitation(
        &self,
        server: &str,
        request: phaseo_agent::Value,
    ) -> Result<phaseo_agent::Value, phaseo_agent::ToolError> {
        self.0.lock().unwrap().push((server.to_owned(), request));
        Ok(json!({"action": "accept", "content": {"name": "Ada Lovelace"}}))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_requests_go_to_the_hook() {
    let Some(bin) = everything() else { return };
    let hook = std::sync::Arc::new(Answer(Default::default()));
    let server = McpServer::stdio("everything", bin.to_string_lossy())
        .args(["stdio"])
        .on_elicitation(hook.clone());
    let agent = create_agent(AgentDefinition::new("eli").mcp_server(server)).unwrap();
    let client = Recording::new([call("c1", "trigger-elicitation-request", "{}"), text("ok")]);
    let result = agent.run(RunOptions::new("go", client)).await.unwrap();
    let seen = hook.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0, "everything");
    assert_eq!(
        seen[0].1["message"],
        json!("Please provide inputs for the following fields:")
    );
    let out = tool_results(&result)[0].result.clone().unwrap().to_string();
    assert!(out.contains("Ada Lovelace"), "{out}");
    agent.close().await;
}
