//! Property test: an agent's MCP server that misbehaves (docs/behaviour.md §11). Whatever the
//! server answers to `initialize`, `tools/list` and `tools/call` (odd results and errors,
//! lines that are not JSON, answers for other ids, no answer, an exit mid-call, listings of
//! odd tools or pages without end) and whatever it sends in between (notifications and
//! requests of its own), a run that uses it ends by itself, with a result or an error of a
//! documented kind, never a panic or a hang, and its state round-trips. The server is
//! `tests/mcp/hostile_server.py`, told what to do by a generated plan. `PROPTEST_CASES`
//! raises the count (`make fuzz-core`).

mod hostile_support;
mod mcp_support;

use std::time::Duration;

use hostile_support::{config, json_value, panics};
use mcp_support::{python, repo_root};
use phaseo_agent::mcp::McpServer;
use phaseo_agent::{
    create_agent, json, AgentDefinition, ErrorCode, ModelResponse, OnError, RunOptions, RunResult,
    ScriptedClient, Value,
};
use proptest::prelude::*;

/// Any JSON value of a few levels.
fn value() -> impl Strategy<Value = Value> + Clone {
    json_value(3, vec![json!("")])
}

fn initialize_result() -> Value {
    json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {"listChanged": true}},
           "serverInfo": {"name": "hostile", "version": "1"}})
}

/// What the server writes before an answer.
fn noise() -> impl Strategy<Value = Vec<String>> {
    let line = prop_oneof![
        Just("not json".to_owned()),
        Just("{".to_owned()),
        Just(String::new()),
        value().prop_map(|v| v.to_string()),
        (value(), value()).prop_map(|(token, progress)| json!({"jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": token, "progress": progress}})
        .to_string()),
        Just(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}).to_string()),
        value().prop_map(
            |params| json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": params})
            .to_string()
        ),
        (
            value(),
            prop::sample::select(
                &[
                    "sampling/createMessage",
                    "roots/list",
                    "elicitation/create",
                    "ping",
                    "nope/unknown"
                ][..]
            ),
            value()
        )
            .prop_map(|(id, method, params)| json!({"jsonrpc": "2.0", "id": id,
                "method": method, "params": params})
            .to_string()),
        (value(), value()).prop_map(|(id, result)| json!({"jsonrpc": "2.0", "id": id,
            "result": result})
        .to_string()),
    ];
    prop::collection::vec(line, 0..3)
}

/// One step of an answer to `initialize`: mostly a usable one.
fn initialize_step() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => Just(json!({"result": initialize_result()})),
        1 => Just(json!({"result": {"protocolVersion": "1999-01-01", "capabilities": {},
                                    "serverInfo": {"name": "old", "version": "0"}}})),
        1 => value().prop_map(|v| json!({"result": {"protocolVersion": "2025-06-18",
            "capabilities": v, "serverInfo": {"name": "odd", "version": "1"}}})),
        1 => value().prop_map(|v| json!({"result": v})),
        // A malformed error is no answer at all: the start waits for its 30 s, so only
        // well-formed errors here.
        1 => ".{0,10}".prop_map(|m| json!({"error": {"code": -32603, "message": m}})),
        1 => Just(json!({"exit": 3})),
    ]
}

/// A tool of a listing: the tool the model calls, or an odd one.
fn tool() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        4 => Just(json!({"name": "t", "inputSchema": {"type": "object"}})),
        1 => Just(json!({"name": "t", "inputSchema": {"type": "object"},
                         "outputSchema": {"type": "object", "required": ["n"]}})),
        1 => Just(json!({"name": "t", "inputSchema": {"type": 5}})),
        1 => Just(json!({"name": "", "inputSchema": {"type": "object"}})),
        1 => Just(json!({"name": "x".repeat(300), "inputSchema": {"type": "object"}})),
        1 => (value(), value()).prop_map(|(schema, annotations)| json!({"name": "u",
            "inputSchema": schema, "annotations": annotations})),
        1 => value(),
    ]
}

/// One step of an answer to `tools/list`.
fn list_step() -> impl Strategy<Value = Value> {
    let tools = prop::collection::vec(tool(), 0..4);
    prop_oneof![
        5 => tools.clone().prop_map(|tools| json!({"result": {"tools": tools}})),
        1 => (tools.clone(), 1u64..3).prop_map(|(tools, n)| json!({"pages": n, "cursor": "new",
            "tools": tools})),
        1 => tools.clone().prop_map(|tools| json!({"pages": 1_000_000_000u64, "cursor": "same",
            "tools": tools})),
        1 => tools.prop_map(|tools| json!({"pages": 1_000_000_000u64, "cursor": "new",
            "tools": tools})),
        1 => value().prop_map(|v| json!({"result": v})),
        1 => ".{0,10}".prop_map(|m| json!({"error": {"code": -32603, "message": m}})),
        // No answer to a listing (none at all, or one that is not JSON-RPC: a malformed
        // error, a cut line) holds the run for 30 s: that is the test below.
        1 => Just(json!({"exit": 0})),
    ]
}

/// One step of an answer to `tools/call`.
fn call_step() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => Just(json!({"result": {"content": [{"type": "text", "text": "ok"}]}})),
        1 => value().prop_map(|v| json!({"result": {"content": [{"type": "text", "text": "no"}],
            "isError": true, "structuredContent": v}})),
        1 => value().prop_map(|v| json!({"result": {"content": v}})),
        1 => value().prop_map(|v| json!({"result": {"content": [], "structuredContent": v}})),
        1 => Just(json!({"result": {"content": [{"type": "image", "data": "%%%",
            "mimeType": "x"}, {"type": "nope"}]}})),
        1 => Just(json!({"result": {"content": [{"type": "text",
            "text": "y".repeat(1 << 20)}]}})),
        1 => value().prop_map(|v| json!({"result": v})),
        1 => value().prop_map(|v| json!({"error": v})),
        1 => Just(json!({"error": {"code": -32602, "message": "bad arguments"}})),
        1 => Just(json!({"raw": "\u{1}\u{2}"})),
        1 => Just(json!({"never": true})),
        1 => Just(json!({"wrong_id": {"content": []}})),
        1 => Just(json!({"exit": 9})),
    ]
}

fn with_noise(step: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    (step, noise()).prop_map(|(mut step, noise)| {
        step["noise"] = json!(noise);
        step
    })
}

/// A whole plan: the steps of each method.
fn plan() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec(with_noise(initialize_step()), 1..3),
        prop::collection::vec(with_noise(list_step()), 1..3),
        prop::collection::vec(with_noise(call_step()), 1..4),
    )
        .prop_map(|(init, list, call)| {
            json!({"initialize": init, "tools/list": list, "tools/call": call})
        })
}

/// `tests/mcp/hostile_server.py` over stdio, told `plan` (`None` without the Python of the
/// MCP tests).
fn hostile_server(name: &str, plan: &Value) -> Option<McpServer> {
    let script = repo_root().join("tests/mcp/hostile_server.py");
    Some(
        McpServer::stdio(name, python()?.to_string_lossy())
            .args([script.to_string_lossy().into_owned()])
            .env("PHASEO_HOSTILE_PLAN", plan.to_string()),
    )
}

/// Runs an agent whose model calls `t` (twice in one turn, or once), then answers; the
/// outcome, or a defect.
async fn run_against(
    plan: &Value,
    optional: bool,
    return_to_model: bool,
    two: bool,
) -> Result<(), String> {
    let server = hostile_server("hostile", plan)
        .ok_or("no Python")?
        .timeout_ms(200)
        .optional(optional)
        .on_error(if return_to_model {
            OnError::ReturnToModel
        } else {
            OnError::FailRun
        });
    let agent = create_agent(AgentDefinition::new("uses-hostile").mcp_server(server))
        .map_err(|e| format!("create_agent: {e}"))?;
    let calls: Vec<(&str, &str, &str)> = if two {
        vec![("c1", "t", r#"{"x":1}"#), ("c2", "t", "{}")]
    } else {
        vec![("c1", "t", r#"{"x":1}"#)]
    };
    let client = ScriptedClient::new(vec![
        Ok(ModelResponse::tool_calls(calls)),
        Ok(ModelResponse::text("done")),
    ]);
    let run = agent.run(RunOptions::new("go", std::sync::Arc::new(client)));
    let outcome = match tokio::time::timeout(Duration::from_secs(60), run).await {
        Err(_) => return Err("the run did not end within 60 s".to_owned()),
        Ok(outcome) => outcome,
    };
    let checked = match outcome {
        Ok(result) => {
            let text = result.to_json();
            RunResult::from_json(&text)
                .map_err(|e| format!("the state does not read back: {e}"))?;
            Ok(())
        }
        Err(e) => match e.code() {
            ErrorCode::McpFailed
            | ErrorCode::ToolFailed
            | ErrorCode::ToolTimeout
            | ErrorCode::ToolInputInvalid
            | ErrorCode::ToolOutputInvalid
            | ErrorCode::UnknownTool
            | ErrorCode::DefinitionInvalid => Ok(()),
            other => Err(format!(
                "an error of another kind: {other:?}: {}",
                e.message()
            )),
        },
    };
    agent.close().await;
    checked
}

proptest! {
    #![proptest_config(config(32))]

    #[test]
    fn a_hostile_mcp_server_cannot_hang_or_break_a_run(
        plan in plan(),
        optional in any::<bool>(),
        return_to_model in any::<bool>(),
        two in any::<bool>(),
    ) {
        let before = panics();
        let outcome = phaseo_agent::exec::block_on(run_against(&plan, optional, return_to_model, two));
        prop_assert_eq!(panics(), before, "a panic in the process");
        prop_assert!(outcome.is_ok(), "{}\nplan: {}", outcome.unwrap_err(), plan);
    }
}

/// A server that never answers `tools/list` fails the run after 30 s (a server's short
/// `timeoutMs` is its calls' limit, not its listing's), as a broken protocol.
#[test]
fn a_listing_without_answer_fails_the_run_after_30_s() {
    let plan = json!({"initialize": [{"result": initialize_result()}],
                      "tools/list": [{"never": true}]});
    let outcome = phaseo_agent::exec::block_on(async {
        let server = hostile_server("silent", &plan)
            .expect("Python")
            .timeout_ms(200);
        let agent = create_agent(AgentDefinition::new("uses-silent").mcp_server(server)).unwrap();
        let client = ScriptedClient::new(vec![Ok(ModelResponse::text("done"))]);
        let started = std::time::Instant::now();
        let run = agent.run(RunOptions::new("go", std::sync::Arc::new(client)));
        let outcome = tokio::time::timeout(Duration::from_secs(90), run).await;
        agent.close().await;
        (outcome, started.elapsed())
    });
    let (outcome, took) = outcome;
    let error = outcome.expect("the run ended").unwrap_err();
    assert_eq!(error.code(), ErrorCode::McpFailed);
    assert_eq!(
        error.message(),
        "MCP server 'silent' broke the protocol: no complete answer to tools/list within 30000 ms while listing its tools"
    );
    assert!(
        took >= Duration::from_secs(30) && took < Duration::from_secs(60),
        "{took:?}"
    );
}
