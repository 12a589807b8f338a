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
