//! The Rust samples of the product's Tools page, copied verbatim (checked by
//! scripts/check-tools-page-samples.py; rustfmt only indents them), run against scripted
//! models and checked against what the page says they do.

mod common;

use common::*;
use phaseo_agent::{
    exec::block_on, AgentDefinition, PauseKind, PendingKind, RunOptions, RunStatus,
};

/// "Define a tool": the model calls it by id and the result reaches the next turn.
#[test]
fn define_a_tool() {
    use phaseo_agent::Tool;
    use serde_json::json;

    let get_status = Tool::new(
        "get_status",
        "Get the current service status",
        json!({
            "type": "object",
            "properties": {
                "service": { "type": "string" }
            },
            "required": ["service"]
        }),
        |input, _context| {
            Ok(json!({
                "service": input["service"],
                "status": "healthy"
            }))
        },
    );

    let agent = agent(AgentDefinition::new("status").tool(get_status));
    let client = scripted([
        call("c1", "get_status", r#"{"service":"billing"}"#),
        text("billing is healthy"),
    ]);
    let result = block_on(agent.run(RunOptions::new("status?", client))).unwrap();
    assert_eq!(result.output(), &json!("billing is healthy"));
    let tool_message = result
        .messages()
        .iter()
        .find(|m| m.tool_call_id.as_deref() == Some("c1"))
        .expect("the tool's message");
    assert_eq!(
        tool_message.content,
        r#"{"service":"billing","status":"healthy"}"#
    );
}

/// "Require approval": every call pauses the run (`tool_approval`) before it runs.
#[test]
fn require_approval() {
    use phaseo_agent::Tool;
    use serde_json::json;

    let deploy = Tool::new(
        "deploy",
        "Deploy an application environment",
        json!({
            "type": "object",
            "properties": {
                "environment": { "type": "string" }
            },
            "required": ["environment"]
        }),
        |input, _context| {
            Ok(json!({
                "environment": input["environment"],
                "deployed": true
            }))
        },
    )
    .require_approval();

    let agent = agent(AgentDefinition::new("ops").tool(deploy));
    let paused = block_on(agent.run(RunOptions::new(
        "ship",
        scripted([call("c1", "deploy", r#"{"environment":"production"}"#)]),
    )))
    .unwrap();
    assert_eq!(paused.status(), RunStatus::WaitingForHuman);
    assert_eq!(
        paused.pause().map(|p| p.kind),
        Some(PauseKind::ToolApproval)
    );
    assert_eq!(paused.pending()[0].kind, PendingKind::Approval);
    let done =
        block_on(agent.continue_run(&paused, cont([text("shipped")]).approve("c1"))).unwrap();
    assert_eq!(done.output(), &json!("shipped"));
}

/// "Hand a call to a person or another system": the external tool pauses the run
/// (`external_output`, a manual call) until its output is supplied.
#[test]
fn an_external_tool() {
    use phaseo_agent::Tool;
    use serde_json::json;

    let ticket_lookup = Tool::external(
        "ticket_lookup",
        "Load one support ticket",
        json!({
            "type": "object",
            "properties": {
                "ticket_id": { "type": "string" }
            },
            "required": ["ticket_id"]
        }),
    );

    let agent = agent(AgentDefinition::new("desk").tool(ticket_lookup));
    let paused = block_on(agent.run(RunOptions::new(
        "T-7?",
        scripted([call("c1", "ticket_lookup", r#"{"ticket_id":"T-7"}"#)]),
    )))
    .unwrap();
    assert_eq!(paused.status(), RunStatus::WaitingForHuman);
    assert_eq!(paused.pending()[0].kind, PendingKind::Manual);
    let done = block_on(agent.continue_run(
        &paused,
        cont([text("T-7 is open")]).output("c1", json!({"status": "open"})),
    ))
    .unwrap();
    assert_eq!(done.output(), &json!("T-7 is open"));
}
