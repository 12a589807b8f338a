//! State parsing: any text through `RunResult::from_json`, and every state it accepts
//! through `continue_run` (with every decision it could want). Refusals are fine; a panic
//! (overflow included: build with debug assertions) is a finding.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use phaseo_agent::{
    create_agent, exec::block_on, json, Agent, AgentDefinition, ContinueOptions, ModelResponse,
    RunResult, ScriptedClient, Tool, Value,
};

fn agent() -> &'static Agent {
    static AGENT: OnceLock<Agent> = OnceLock::new();
    AGENT.get_or_init(|| {
        let echo = |id: &str| Tool::new(id, "", Value::Null, |input, _| Ok(input));
        create_agent(
            AgentDefinition::new("pauser")
                .tool(echo("t").require_approval())
                .tool(Tool::external("m", "", Value::Null))
                .tool(echo("h").on_tool_called(|_, _| Ok(None))),
        )
        .expect("valid")
    })
}

fn client() -> Arc<ScriptedClient> {
    Arc::new(ScriptedClient::from_responses([
        ModelResponse::text("done"),
        ModelResponse::text("again"),
    ]))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(state) = RunResult::from_json(text) else { return };
    let mut options = ContinueOptions::new(client());
    for p in state.pending() {
        options = options.approve(p.call.id.clone()).output(p.call.id.clone(), json!(1));
    }
    let _ = block_on(agent().continue_run(&state, options));
    let _ = block_on(agent().continue_run(&state, ContinueOptions::new(client()).human_input("hi")));
});
