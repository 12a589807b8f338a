//! A call's input is held once in a run's state: the assistant message that requested the
//! call and the step's results share it (a turn of many calls held each input three times,
//! and copied it twice, before). Its JSON text is unchanged by the sharing.

mod common;

use std::sync::Arc;

use common::*;
use phaseo_agent::{AgentDefinition, RunOptions, RunResult};

#[test]
fn a_calls_input_is_shared_by_its_message_and_its_step() {
    let agent = agent(AgentDefinition::new("shared").tool(echo("echo")));
    let client = scripted([
        phaseo_agent::ModelResponse::tool_calls([
            ("c1", "echo", r#"{"text":"one","n":[1,2]}"#),
            ("c2", "echo", r#"{"text":"two"}"#),
        ]),
        text("done"),
    ]);
    let state = runtime(1)
        .block_on(agent.run(RunOptions::new("go", client)))
        .expect("the run ends");
    let requested = state.run.messages[1]
        .tool_calls
        .as_ref()
        .expect("the assistant message holds the calls");
    let recorded = &state.step_results[0].tool_calls;
    assert_eq!(requested.len(), 2);
    for (a, b) in requested.iter().zip(recorded) {
        assert_eq!(a, b);
        assert!(
            Arc::ptr_eq(&a.input, &b.input),
            "call {}: the message and the step hold two copies of its input",
            a.id
        );
    }
    // The text is that of plain values, and reads back into an equal state.
    let text = state.to_json();
    assert!(
        text.contains(r#""toolCalls":[{"id":"c1","name":"echo","input":{"text":"one","n":[1,2]}}"#)
    );
    let read = RunResult::from_json(&text).expect("the state reads back");
    assert_eq!(read.to_json(), text);
}
