//! Decisions beyond yes and no (docs/behaviour.md §14): approving with an edited input and
//! answering in a tool's place, through the public API.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use phaseo_agent::exec::block_on;
use phaseo_agent::{
    json, json_schema_validator, AgentDefinition, ContinueOptions, ErrorCode, RunOptions,
    RunResult, RunStatus, Tool, ToolDecision, Value,
};

/// An agent whose `transfer` tool needs approval and records the inputs it ran with.
fn transfer_agent(ran: Arc<Mutex<Vec<Value>>>) -> phaseo_agent::Agent {
    let tool = Tool::new(
        "transfer",
        "Moves money",
        json!({"type": "object", "properties": {"amount": {"type": "number", "maximum": 100}},
               "required": ["amount"]}),
        move |input, _| {
            ran.lock().unwrap().push(input.clone());
            Ok(json!({"moved": input["amount"]}))
        },
    )
    .output_schema(
        json_schema_validator(&json!({"type": "object", "required": ["moved"]})).unwrap(),
    )
    .require_approval();
    agent(
        AgentDefinition::new("bank")
            .tool(tool)
            .tool(echo("note").require_approval()),
    )
}

fn paused_transfer(agent: &phaseo_agent::Agent) -> RunResult {
    let client = scripted([call("c1", "transfer", r#"{"amount":90}"#)]);
    let paused = block_on(agent.run(RunOptions::new("go", client))).unwrap();
    assert_eq!(paused.status(), RunStatus::WaitingForHuman);
    paused
}

#[test]
fn an_approval_with_an_edited_input_runs_it_and_the_history_shows_what_ran() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let agent = transfer_agent(ran.clone());
    let paused = paused_transfer(&agent);
    let rec = Recorder::default();
    // Continued from JSON, as another process would.
    let state = RunResult::from_json(&paused.to_json()).unwrap();
    let client = Recording::new([text("done")]);
    let result = block_on(
        agent.continue_run(
            &state,
            ContinueOptions::new(client.clone())
                .approve(ToolDecision::edited("c1", json!({"amount": 40})))
                .on_event(rec.listener()),
        ),
    )
    .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(*ran.lock().unwrap(), vec![json!({"amount": 40})]);
    let state = result.to_value();
    let assistant = state["run"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap()
        .clone();
    assert_eq!(assistant["toolCalls"][0]["input"], json!({"amount": 40}));
    let tool_result = &state["stepResults"][0]["toolResults"][0];
    assert_eq!(tool_result["input"], json!({"amount": 40}));
    assert_eq!(tool_result["originalInput"], json!({"amount": 90}));
    assert_eq!(tool_result["result"], json!({"moved": 40}));
    let started = rec
        .events()
        .into_iter()
        .find(|e| e.type_name() == "tool.started")
        .unwrap()
        .to_value();
    assert_eq!(started["inputEdited"], json!(true));
    // The model's next request carries the edited call.
    let request_calls = client.requests()[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap()["toolCalls"]
        .clone();
    assert_eq!(request_calls[0]["input"], json!({"amount": 40}));
}

#[test]
fn an_invalid_edit_refuses_the_continue_and_the_state_stays_usable() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let agent = transfer_agent(ran.clone());
    let paused = paused_transfer(&agent);
    let err = block_on(agent.continue_run(
        &paused,
        cont([text("done")]).approve(ToolDecision::edited("c1", json!({"amount": 500}))),
    ))
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ContinueInvalid);
    assert!(
        err.message()
            .starts_with("Edited input for tool call c1 is invalid: "),
        "{}",
        err.message()
    );
    assert!(ran.lock().unwrap().is_empty());
    // The same state continues with a valid decision.
    let result = block_on(agent.continue_run(&paused, cont([text("done")]).approve("c1"))).unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(*ran.lock().unwrap(), vec![json!({"amount": 90})]);
}

#[test]
fn a_response_answers_in_the_tools_place() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let agent = transfer_agent(ran.clone());
    let paused = paused_transfer(&agent);
    let rec = Recorder::default();
    let result = block_on(
        agent.continue_run(
            &paused,
            cont([text("done")])
                .respond("c1", json!({"moved": 0, "note": "done by hand"}))
                .on_event(rec.listener()),
        ),
    )
    .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert!(ran.lock().unwrap().is_empty(), "the tool never runs");
    let events: Vec<Value> = rec
        .events()
        .into_iter()
        .filter(|e| e.type_name().starts_with("tool."))
        .map(|e| e.to_value())
        .collect();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["type"], json!("tool.completed"));
    assert_eq!(events[0]["respondedByHuman"], json!(true));
    let state = result.to_value();
    let tool_message = state["run"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert_eq!(
        tool_message["content"],
        json!(r#"{"moved":0,"note":"done by hand"}"#)
    );
    assert_eq!(
        tool_message.get("isError").cloned().unwrap_or(json!(false)),
        json!(false)
    );

    // The answer goes through outputSchema: one without `moved` fails the run.
    let err = block_on(agent.continue_run(
        &paused,
        cont([text("done")]).respond("c1", json!({"note": "?"})),
    ))
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolOutputInvalid);
}

#[test]
fn decisions_are_refused_where_they_do_not_apply() {
    let agent = approval_agent();
    let on_approval = block_on(paused(&agent, "t"));
    let manual = block_on(paused(&agent, "m"));
    let refused = |state: &RunResult, options: ContinueOptions| {
        let err = block_on(agent.continue_run(state, options)).unwrap_err();
        assert_eq!(err.code(), ErrorCode::ContinueInvalid);
        err.message().to_owned()
    };
    assert_eq!(
        refused(&manual, cont([]).respond("c1", json!(1))),
        "Tool call c1 is not waiting for approval"
    );
    assert_eq!(
        refused(
            &manual,
            cont([]).approve(ToolDecision::edited("c1", json!({})))
        ),
        "Tool call c1 is not waiting for approval"
    );
    assert_eq!(
        refused(&on_approval, cont([]).approve("c1").respond("c1", json!(1))),
        "Tool call c1 has more than one decision"
    );
    assert_eq!(
        refused(&on_approval, cont([]).reject("c1").respond("c1", json!(1))),
        "Tool call c1 has more than one decision"
    );
    assert_eq!(
        refused(&on_approval, cont([]).respond("c9", json!(1))),
        "Unknown tool call c9"
    );
}

#[test]
fn continue_options_read_edited_inputs_and_responses() {
    let spec = phaseo_agent::spec::continue_options_text(
        &NoHost,
        Some(
            r#"{"approvals": [{"toolCallId": "c1", "editedInput": {"a": 1}}],
                 "responses": [{"toolCallId": "c2", "output": "by hand"}]}"#,
        ),
    )
    .unwrap();
    assert_eq!(spec.approvals[0].edited_input, Some(json!({"a": 1})));
    assert_eq!(spec.responses[0].output, json!("by hand"));
    let err = phaseo_agent::spec::continue_options_text(
        &NoHost,
        Some(r#"{"approvals": [{"toolCallId": "c1", "edited": {}}]}"#),
    )
    .err()
    .unwrap();
    assert_eq!(err.code(), ErrorCode::DefinitionInvalid);
}
