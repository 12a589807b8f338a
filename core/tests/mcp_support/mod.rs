//! Helpers of the MCP tests: the real servers (installed by `make mcp-servers`), a model
//! client that records the tools it was offered, and marker files.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use phaseo_agent::mcp::McpServer;
use phaseo_agent::{
    async_trait, CancellationToken, ModelClient, ModelError, ModelRequest, ModelResponse,
    RunResult, ScriptedClient, ToolResult,
};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A server the tests need is missing: in CI (`CI=true`) the test fails; elsewhere it
/// says so and returns `None` (run `make mcp-servers`).
fn missing(what: &str) -> Option<PathBuf> {
    let message = format!("{what} is not installed: run `make mcp-servers`");
    if std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0") {
        panic!("{message}");
    }
    eprintln!("NOT RUN: {message}");
    None
}

/// The dev venv's Python with the official `mcp` package.
pub fn python() -> Option<PathBuf> {
    let root = repo_root();
    let py = root.join(".venvs/py/bin/python");
    if py.exists() && root.join(".venvs/py/.mcp").exists() {
        Some(py)
    } else {
        missing("the Python `mcp` package (.venvs/py)")
    }
}

/// `@modelcontextprotocol/server-everything`'s CLI.
pub fn everything() -> Option<PathBuf> {
    let bin = repo_root().join("tests/mcp/node_modules/.bin/mcp-server-everything");
    if bin.exists() {
        Some(bin)
    } else {
        missing("@modelcontextprotocol/server-everything (tests/mcp/node_modules)")
    }
}

/// A fresh directory for marker files.
pub fn markers() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phaseo-mcp-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Our Python test server over stdio, writing markers into `dir`.
pub fn test_server(name: &str, dir: &Path) -> Option<McpServer> {
    let py = python()?;
    Some(
        McpServer::stdio(name, py.to_string_lossy())
            .args([repo_root()
                .join("tests/mcp/test_server.py")
                .to_string_lossy()
                .into_owned()])
            .env("PHASEO_MCP_MARKERS", dir.to_string_lossy())
            .env("PHASEO_MCP_NAME", name),
    )
}

/// Waits up to `limit` for a file.
pub fn wait_for(path: &Path, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if path.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    path.exists()
}

/// The pids the test server recorded in `dir`.
pub fn server_pids(dir: &Path) -> Vec<u32> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.strip_prefix("pid-")?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a process exists (and is not a zombie).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Scripted responses; records the tool ids each request offered.
pub struct Recording {
    inner: ScriptedClient,
    pub offered: Mutex<Vec<Vec<String>>>,
}

impl Recording {
    pub fn new(responses: impl IntoIterator<Item = ModelResponse>) -> Arc<Self> {
        Arc::new(Recording {
            inner: ScriptedClient::from_responses(responses),
            offered: Mutex::new(Vec::new()),
        })
    }

    pub fn first_offer(&self) -> Vec<String> {
        let mut ids = self.offered.lock().unwrap()[0].clone();
        ids.sort();
        ids
    }
}

#[async_trait]
impl ModelClient for Recording {
    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        self.offered
            .lock()
            .unwrap()
            .push(request.tools.iter().map(|t| t.id.clone()).collect());
        self.inner.generate(request, cancel).await
    }
}

pub fn call(id: &str, name: &str, args: &str) -> ModelResponse {
    ModelResponse::tool_calls([(id, name, args)])
}

pub fn text(t: &str) -> ModelResponse {
    ModelResponse::text(t)
}

/// Every tool result of a run, in order.
pub fn tool_results(result: &RunResult) -> Vec<ToolResult> {
    result
        .step_results
        .iter()
        .flat_map(|s| s.tool_results.iter().cloned())
        .collect()
}
