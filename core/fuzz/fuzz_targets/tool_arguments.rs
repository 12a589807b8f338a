//! Argument validation: any text as a model's tool-call arguments, through
//! `parse_json_text` and a run whose tool has a JSON Schema. The run must end (completed, or
//! failed with `tool_input_invalid`), never panic.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use phaseo_agent::{
    create_agent, exec::block_on, json, parse_json_text, Agent, AgentDefinition, ErrorCode,
    ModelResponse, RunOptions, ScriptedClient, Tool,
};

fn agent() -> &'static Agent {
    static AGENT: OnceLock<Agent> = OnceLock::new();
    AGENT.get_or_init(|| {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        create_agent(AgentDefinition::new("a").tool(Tool::new("t", "", schema, |i, _| Ok(i))))
            .expect("valid")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = parse_json_text(text);
    let client = Arc::new(ScriptedClient::from_responses([
        ModelResponse::tool_calls([("c1", "t", text)]),
        ModelResponse::text("ok"),
    ]));
    if let Err(e) = block_on(agent().run(RunOptions::new("go", client))) {
        assert_eq!(e.code(), ErrorCode::ToolInputInvalid, "{}", e.message());
    }
});
