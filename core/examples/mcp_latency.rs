//! Benchmark (docs/behaviour.md §11): latency of a trivial MCP tool call over stdio through
//! an agent run, beside the official Python `mcp` client calling the same server directly
//! (benchmarks/mcp/python_client.py), and 100 concurrent calls with `toolConcurrency: 100`.
//!
//! `make mcp-servers && cargo run --release -p phaseo-agent --example mcp_latency [CALLS]`

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use phaseo_agent::mcp::McpServer;
use phaseo_agent::{
    create_agent, AgentDefinition, ModelResponse, RunOptions, RunStatus, ScriptedClient,
    ToolExecutionConfig,
};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main]
async fn main() {
    let calls: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let python = root.join(".venvs/py/bin/python");
    let script = root.join("tests/mcp/test_server.py");
    assert!(python.exists(), "run `make mcp-servers` first");
    let server = McpServer::stdio("bench", python.to_string_lossy())
        .args([script.to_string_lossy().into_owned()]);
    let agent = create_agent(
        AgentDefinition::new("bench")
            .mcp_server(server)
            .tool_execution(ToolExecutionConfig::default().tool_concurrency(100)),
    )
    .unwrap();
    let one_call = |i: usize| {
        Arc::new(ScriptedClient::from_responses([
            ModelResponse::tool_calls([("c1", "echo", format!(r#"{{"text":"hi {i}"}}"#))]),
            ModelResponse::text("done"),
        ]))
    };
    for i in 0..20 {
        agent
            .run(RunOptions::new("warm", one_call(i)))
            .await
            .unwrap();
    }
    let mut runs = Vec::with_capacity(calls);
    for i in 0..calls {
        let start = Instant::now();
        let r = agent.run(RunOptions::new("go", one_call(i))).await.unwrap();
        runs.push(start.elapsed());
        assert_eq!(r.status(), RunStatus::Completed);
    }
    let mean = runs.iter().sum::<Duration>() / calls as u32;
    let med = median(runs);

    let hundred: Vec<(String, String, String)> = (0..100)
        .map(|i| {
            (
                format!("c{i}"),
                "echo".to_owned(),
                format!(r#"{{"text":"c {i}"}}"#),
            )
        })
        .collect();
    let mut wall = Vec::new();
    for _ in 0..5 {
        let client = Arc::new(ScriptedClient::from_responses([
            ModelResponse::tool_calls(
                hundred
                    .iter()
                    .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str())),
            ),
            ModelResponse::text("done"),
        ]));
        let start = Instant::now();
        let r = agent.run(RunOptions::new("go", client)).await.unwrap();
        wall.push(start.elapsed());
        assert_eq!(r.status(), RunStatus::Completed);
    }
    agent.close().await;

    let py = Command::new(&python)
        .arg(root.join("benchmarks/mcp/python_client.py"))
        .arg(calls.to_string())
        .output()
        .expect("the Python baseline");
    let py = String::from_utf8_lossy(&py.stdout);
    println!(
        "phaseo agent run with one MCP call over stdio ({calls} runs): mean {} us, median {} us",
        mean.as_micros(),
        med.as_micros()
    );
    println!(
        "phaseo 100 concurrent MCP calls in one turn (toolConcurrency 100): median of 5 runs {:.1} ms",
        median(wall).as_secs_f64() * 1e3
    );
    println!("python mcp client, direct calls: {}", py.trim());
}
