//! Agents as tools (docs/behaviour.md §18) through the public API: defaults, usage, nested
//! failures, events, nested pauses surfacing as `<outer>/<nested>` and continuing (also
//! from a fresh agent, a serialized state and a run store), depth and refusals.

mod common;

use std::sync::Arc;

use common::*;
use phaseo_agent::store::InMemoryRunStore;
use phaseo_agent::{
    default_agent_tool_parameters, json, Agent, AgentDefinition, AsToolOptions, ContinueOptions,
    ErrorCode, OnError, PauseKind, RunOptions, RunResult, RunStatus, Tool,
};

fn block<T>(f: impl std::future::Future<Output = T>) -> T {
    phaseo_agent::exec::block_on(f)
}

/// `researcher` has an approval-gated echo tool `lookup`.
fn researcher() -> Agent {
    agent(AgentDefinition::new("researcher").tool(echo("lookup").require_approval()))
}

fn outer_with(tool: Tool) -> Agent {
    agent(AgentDefinition::new("boss").tool(tool).tool(echo("note")))
}

fn ask(id: &str, input: &str) -> phaseo_agent::ModelResponse {
    call(id, "researcher", &json!({ "input": input }).to_string())
}

/// Runs `boss` until its nested `researcher` pauses on approval of `n1` (outer call `c1`).
fn paused_nested(boss: &Agent) -> RunResult {
    let client = scripted([ask("c1", "find x"), call("n1", "lookup", r#"{"q":"x"}"#)]);
    block(boss.run(RunOptions::new("go", client))).unwrap()
}

#[test]
fn as_tool_defaults_to_the_agents_id_and_one_string_input() {
    let tool = researcher().as_tool(AsToolOptions::new()).unwrap();
    assert_eq!(tool.id(), "researcher");
    assert!(tool.is_agent_tool());
    let recording = Recording::new([
        ask("c1", "hello"),
        text("nested answer"),
        text("outer answer"),
    ]);
    let boss = outer_with(
        agent(AgentDefinition::new("researcher").tool(echo("lookup")))
            .as_tool(AsToolOptions::new().description("Researches"))
            .unwrap(),
    );
    let result = block(boss.run(RunOptions::new("go", recording.clone()))).unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(result.output(), &json!("outer answer"));
    let requests = recording.requests();
    assert_eq!(requests.len(), 3);
    let spec = &requests[0]["tools"][0];
    assert_eq!(spec["id"], "researcher");
    assert_eq!(spec["description"], "Researches");
    assert_eq!(spec["parameters"], default_agent_tool_parameters());
    // The nested run's input is the call's `input`; its output is the tool message.
    let nested_messages = requests[1]["messages"].as_array().unwrap();
    assert_eq!(nested_messages.last().unwrap()["content"], "hello");
    let outer_last = requests[2]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(outer_last["toolCallId"], "c1");
    assert_eq!(outer_last["content"], "nested answer");
}

#[test]
fn nested_usage_is_added_to_the_outer_runs() {
    let boss = outer_with(researcher().as_tool(AsToolOptions::new()).unwrap());
    let client = scripted([
        ask("c1", "q").with_usage(10, 1),
        text("inner").with_usage(100, 20),
        text("outer").with_usage(1000, 300),
    ]);
    let result = block(boss.run(RunOptions::new("go", client))).unwrap();
    assert_eq!(result.usage().input_tokens, 1110);
    assert_eq!(result.usage().output_tokens, 321);
}

#[test]
fn a_failed_nested_run_is_a_tool_error_of_the_outer_call() {
    let failing = agent(AgentDefinition::new("researcher").tool(Tool::new(
        "lookup",
        "",
        json!(null),
        |_, _| Err(phaseo_agent::ToolError::new("index offline")),
    )));
    let tool = failing
        .as_tool(AsToolOptions::new())
        .unwrap()
        .on_error(OnError::ReturnToModel);
    let recording = Recording::new([ask("c1", "q"), call("n1", "lookup", "{}"), text("sorry")]);
    let boss = outer_with(tool);
    let result = block(boss.run(RunOptions::new("go", recording.clone()))).unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    let last = recording.requests()[2]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["toolCallId"], "c1");
    assert_eq!(last["isError"], true);
    assert_eq!(last["content"], r#"{"error":"index offline"}"#);

    // With the default `fail-run` the outer run fails with the nested message.
    let boss = outer_with(failing.as_tool(AsToolOptions::new()).unwrap());
    let client = scripted([ask("c1", "q"), call("n1", "lookup", "{}")]);
    let err = block(boss.run(RunOptions::new("go", client))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolFailed);
    assert_eq!(err.message(), "index offline");
    assert_eq!(err.result().unwrap().status(), RunStatus::Failed);
}

#[test]
fn nested_events_reach_the_outer_listener_with_their_parent_call() {
    let boss = outer_with(
        agent(AgentDefinition::new("researcher").tool(echo("lookup")))
            .as_tool(AsToolOptions::new())
            .unwrap(),
    );
    let recorder = Recorder::default();
    let client = scripted([
        ask("c1", "q"),
        call("n1", "lookup", "{}"),
        text("inner"),
        text("outer"),
    ]);
    block(boss.run(RunOptions::new("go", client).on_event(recorder.listener()))).unwrap();
    let events = recorder.events();
    let nested: Vec<_> = events
        .iter()
        .filter(|e| e.parent_tool_call_id.is_some())
        .collect();
    assert!(nested
        .iter()
        .all(|e| e.parent_tool_call_id.as_deref() == Some("c1")));
    let types: Vec<_> = nested.iter().map(|e| e.type_name()).collect();
    assert_eq!(types.first(), Some(&"run.started"));
    assert!(types.contains(&"tool.completed"));
    assert_eq!(types.last(), Some(&"run.completed"));
    assert_eq!(nested[0].to_value()["parentToolCallId"], "c1");
    assert_ne!(
        nested[0].run_id, events[0].run_id,
        "the nested run has its own id"
    );
    // The outer call completes after the nested run.
    let outer_done = events
        .iter()
        .position(|e| e.parent_tool_call_id.is_none() && e.type_name() == "tool.completed")
        .unwrap();
    let nested_done = events
        .iter()
        .position(|e| e.type_name() == "run.completed" && e.parent_tool_call_id.is_some())
        .unwrap();
    assert!(nested_done < outer_done);
}

#[test]
fn a_nested_approval_pauses_the_outer_run_and_a_decision_completes_it() {
    let boss = outer_with(researcher().as_tool(AsToolOptions::new()).unwrap());
    let state = paused_nested(&boss);
    assert_eq!(state.status(), RunStatus::WaitingForHuman);
    let pause = state.pause().unwrap();
    assert_eq!(pause.kind, PauseKind::ToolApproval);
    assert_eq!(pause.pending_tool_calls.len(), 1);
    let p = &pause.pending_tool_calls[0];
    assert_eq!(&*p.call.id, "c1/n1");
    assert_eq!(&*p.call.name, "lookup");
    assert_eq!(*p.call.input, json!({"q": "x"}));
    assert!(state.to_value()["run"]["pause"]["nestedRuns"]["c1"].is_object());

    let recorder = Recorder::default();
    let done = block(
        boss.continue_run(
            &state,
            cont([text("nested done"), text("all done")])
                .approve("c1/n1")
                .on_event(recorder.listener()),
        ),
    )
    .unwrap();
    assert_eq!(done.status(), RunStatus::Completed);
    assert_eq!(done.output(), &json!("all done"));
    let c1 = done.step_results[0]
        .tool_results
        .iter()
        .find(|r| &*r.tool_call_id == "c1")
        .unwrap();
    assert_eq!(c1.result, Some(json!("nested done")));
    assert!(recorder.events().iter().any(
        |e| e.type_name() == "tool.completed" && e.parent_tool_call_id.as_deref() == Some("c1")
    ));
}

#[test]
fn a_rejected_nested_call_is_answered_inside_the_nested_run() {
    let boss = outer_with(researcher().as_tool(AsToolOptions::new()).unwrap());
    let state = paused_nested(&boss);
    let recording = Recording::new([text("could not look"), text("fine")]);
    let mut options = ContinueOptions::new(recording.clone());
    options = options.reject("c1/n1");
    let done = block(boss.continue_run(&state, options)).unwrap();
    assert_eq!(done.output(), &json!("fine"));
    let nested_last = recording.requests()[0]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(nested_last["toolCallId"], "n1");
    assert_eq!(nested_last["isError"], true);
}

/// `boss` → agent tool `middle` → agent tool `inner`, whose `deploy` needs approval.
fn two_levels() -> Agent {
    let inner = agent(AgentDefinition::new("inner").tool(echo("deploy").require_approval()));
    let middle =
        agent(AgentDefinition::new("middle").tool(inner.as_tool(AsToolOptions::new()).unwrap()));
    outer_with(middle.as_tool(AsToolOptions::new()).unwrap())
}

#[test]
fn two_levels_deep_pause_and_continue() {
    let boss = two_levels();
    let client = scripted([
        call("c1", "middle", r#"{"input":"a"}"#),
        call("m1", "inner", r#"{"input":"b"}"#),
        call("d1", "deploy", r#"{"env":"prod"}"#),
    ]);
    let recorder = Recorder::default();
    let state =
        block(boss.run(RunOptions::new("go", client).on_event(recorder.listener()))).unwrap();
    let pending = &state.pause().unwrap().pending_tool_calls;
    assert_eq!(pending.len(), 1);
    assert_eq!(&*pending[0].call.id, "c1/m1/d1");
    assert_eq!(&*pending[0].call.name, "deploy");
    assert!(recorder
        .events()
        .iter()
        .any(|e| e.parent_tool_call_id.as_deref() == Some("c1/m1")));
    // Through the canonical text, as an application stores it.
    let state = RunResult::from_json(&state.to_json()).unwrap();
    let done = block(boss.continue_run(
        &state,
        cont([text("inner ok"), text("middle ok"), text("boss ok")]).approve("c1/m1/d1"),
    ))
    .unwrap();
    assert_eq!(done.status(), RunStatus::Completed);
    assert_eq!(done.output(), &json!("boss ok"));
}

#[test]
fn a_nested_manual_call_takes_its_output_on_continue() {
    let nested = agent(AgentDefinition::new("researcher").tool(Tool::external(
        "ask_human",
        "",
        json!(null),
    )));
    let boss = outer_with(nested.as_tool(AsToolOptions::new()).unwrap());
    let client = scripted([ask("c1", "q"), call("n1", "ask_human", "{}")]);
    let state = block(boss.run(RunOptions::new("go", client))).unwrap();
    let pause = state.pause().unwrap();
    assert_eq!(pause.kind, PauseKind::ManualTool);
    assert_eq!(&*pause.pending_tool_calls[0].call.id, "c1/n1");
    let err = block(boss.continue_run(&state, cont([]))).unwrap_err();
    assert_eq!(err.message(), "Missing output for tool call c1/n1");
    let done = block(boss.continue_run(
        &state,
        cont([text("the human said 42"), text("42")]).output("c1/n1", json!(42)),
    ))
    .unwrap();
    assert_eq!(done.output(), &json!("42"));
}

#[test]
fn the_paused_state_continues_in_a_fresh_agent_after_a_round_trip() {
    let state = paused_nested(&outer_with(
        researcher().as_tool(AsToolOptions::new()).unwrap(),
    ));
    let text_form = state.to_json();
    let restored = RunResult::from_json(&text_form).unwrap();
    assert_eq!(restored.to_json(), text_form);
    let fresh = outer_with(researcher().as_tool(AsToolOptions::new()).unwrap());
    let done = block(fresh.continue_run(&restored, cont([text("n"), text("o")]).approve("c1/n1")))
        .unwrap();
    assert_eq!(done.output(), &json!("o"));
}

#[test]
fn a_stored_nested_pause_continues_by_run_id() {
    let store = Arc::new(InMemoryRunStore::new());
    let make = || outer_with(researcher().as_tool(AsToolOptions::new()).unwrap());
    let boss = make();
    let client = scripted([ask("c1", "q"), call("n1", "lookup", "{}")]);
    let state = block(boss.run(RunOptions::new("go", client).store(store.clone()))).unwrap();
    assert_eq!(state.status(), RunStatus::WaitingForHuman);
    let other = make();
    let done = block(
        other.continue_by_id(
            state.run.id.clone(),
            cont([text("n"), text("o")])
                .approve("c1/n1")
                .store(store.clone()),
        ),
    )
    .unwrap();
    assert_eq!(done.output(), &json!("o"));
}

#[test]
fn a_nested_run_that_pauses_again_keeps_the_outer_run_paused() {
    let boss = outer_with(researcher().as_tool(AsToolOptions::new()).unwrap());
    let state = paused_nested(&boss);
    let again = block(boss.continue_run(
        &state,
        cont([call("n2", "lookup", r#"{"q":"y"}"#)]).approve("c1/n1"),
    ))
    .unwrap();
    assert_eq!(again.status(), RunStatus::WaitingForHuman);
    let pending = &again.pause().unwrap().pending_tool_calls;
    assert_eq!(&*pending[0].call.id, "c1/n2");
    assert_ne!(again.pause().unwrap().id, state.pause().unwrap().id);
    let done =
        block(boss.continue_run(&again, cont([text("n"), text("o")]).approve("c1/n2"))).unwrap();
    assert_eq!(done.output(), &json!("o"));
}

#[test]
fn other_calls_of_the_turn_run_and_keep_call_order() {
    let boss = outer_with(researcher().as_tool(AsToolOptions::new()).unwrap());
    let client = scripted([
        phaseo_agent::ModelResponse::tool_calls([
            ("c1", "researcher", r#"{"input":"q"}"#),
            ("c2", "note", r#"{"n":1}"#),
        ]),
        call("n1", "lookup", "{}"),
    ]);
    let state = block(boss.run(RunOptions::new("go", client))).unwrap();
    assert_eq!(state.status(), RunStatus::WaitingForHuman);
    let recording = Recording::new([text("n"), text("o")]);
    let done = block(boss.continue_run(
        &state,
        ContinueOptions::new(recording.clone()).approve("c1/n1"),
    ))
    .unwrap();
    assert_eq!(done.status(), RunStatus::Completed);
    let outer_request = &recording.requests()[1];
    let tool_ids: Vec<_> = outer_request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["toolCallId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(tool_ids, ["c1", "c2"]);
}

#[test]
fn nesting_deeper_than_eight_is_definition_invalid() {
    let mut current = agent(AgentDefinition::new("a0").tool(echo("leaf")));
    for level in 1..=8 {
        let tool = current.as_tool(AsToolOptions::new()).unwrap();
        current = agent(AgentDefinition::new(format!("a{level}")).tool(tool));
    }
    let err = current.as_tool(AsToolOptions::new()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::DefinitionInvalid);
    assert_eq!(
        err.message(),
        "Invalid definition of tool 'a8': agents nest 9 levels deep as tools, more than 8"
    );
}

#[test]
fn a_decision_for_an_unknown_nested_id_is_refused_and_the_state_stays_usable() {
    let boss = outer_with(researcher().as_tool(AsToolOptions::new()).unwrap());
    let state = paused_nested(&boss);
    let before = state.to_json();
    let err = block(boss.continue_run(&state, cont([]).approve("c1/n9"))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ContinueInvalid);
    assert_eq!(err.message(), "Unknown tool call c1/n9");
    let err = block(boss.continue_run(&state, cont([]))).unwrap_err();
    assert_eq!(
        err.message(),
        "Missing approval decision for tool call c1/n1"
    );
    assert_eq!(state.to_json(), before);
    let done =
        block(boss.continue_run(&state, cont([text("n"), text("o")]).approve("c1/n1"))).unwrap();
    assert_eq!(done.output(), &json!("o"));
}

#[test]
fn an_edited_nested_state_is_refused() {
    let boss = outer_with(researcher().as_tool(AsToolOptions::new()).unwrap());
    let state = paused_nested(&boss);
    let mut value = state.to_value();
    value["run"]["pause"]["pendingToolCalls"][0]["call"]["input"] = json!({"q": "other"});
    let edited = RunResult::from_value(value).unwrap();
    let err = block(boss.continue_run(&edited, cont([]).approve("c1/n1"))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::StateInvalid);
    assert_eq!(
        err.message(),
        "Invalid state: nested run of call c1: its pending calls are not the ones the pause lists"
    );
}

#[test]
fn the_json_definition_form_makes_an_agent_tool() {
    use phaseo_agent::spec;
    let def = spec::agent_definition(
        &NoHost,
        json!({
            "id": "boss",
            "tools": [{"id": "research", "description": "Researches",
                       "agent": {"id": "researcher", "tools": [
                           {"id": "lookup", "requireApproval": true}]}}]
        }),
    )
    .unwrap();
    let boss = agent(def);
    let client = scripted([
        call("c1", "research", r#"{"input":"q"}"#),
        call("n1", "lookup", "{}"),
    ]);
    let state = block(boss.run(RunOptions::new("go", client))).unwrap();
    assert_eq!(
        &*state.pause().unwrap().pending_tool_calls[0].call.id,
        "c1/n1"
    );
    let err = match spec::agent_definition(
        &NoHost,
        json!({"id": "b", "tools": [{"id": "r", "agent": {"id": "x", "tools": 3}}]}),
    ) {
        Err(e) => e,
        Ok(_) => panic!("refused"),
    };
    assert_eq!(err.code(), ErrorCode::DefinitionInvalid);
}

#[test]
fn nested_events_reach_the_outer_stream_and_the_text_stream_stays_the_outer_runs() {
    use futures::StreamExt;
    let boss = outer_with(
        agent(AgentDefinition::new("researcher").tool(echo("lookup")))
            .as_tool(AsToolOptions::new())
            .unwrap(),
    );
    let client = scripted([
        ask("c1", "q"),
        call("n1", "lookup", "{}"),
        text("inner"),
        text("outer"),
    ]);
    let stream = boss.stream(RunOptions::new("go", client));
    let items: Vec<_> = block(stream.full_stream().map(|i| i.unwrap()).collect());
    let parents: Vec<_> = items
        .iter()
        .filter_map(|i| match i {
            phaseo_agent::StreamItem::Event(e) => Some(e.parent_tool_call_id.clone()),
            _ => None,
        })
        .collect();
    assert!(parents.iter().any(|p| p.as_deref() == Some("c1")));
    assert!(parents.iter().any(Option::is_none));
    let text: String = block(stream.text_stream().map(|t| t.unwrap()).collect::<Vec<_>>()).concat();
    assert_eq!(text, "outer");
}

/// A binding's tag of a run (`RunOptions::host_tag`) reaches every tool call of the run,
/// those of its nested agent runs included; a run without one has none.
#[test]
fn the_runs_host_tag_reaches_its_tool_calls_and_nested_runs() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let tagged = |id: &str| {
        let seen = seen.clone();
        Tool::new(
            id,
            "Records the run's tag",
            serde_json::Value::Null,
            move |_, rt| {
                seen.lock().unwrap().push(rt.host_tag());
                Ok(json!("ok"))
            },
        )
    };
    let inner = agent(AgentDefinition::new("researcher").tool(tagged("lookup")));
    let boss = agent(
        AgentDefinition::new("boss")
            .tool(inner.as_tool(AsToolOptions::new()).unwrap())
            .tool(tagged("note")),
    );
    let script = || {
        scripted([
            call("c0", "note", "{}"),
            ask("c1", "q"),
            call("n1", "lookup", "{}"),
            text("inner"),
            text("outer"),
        ])
    };
    let result = block(boss.run(RunOptions::new("go", script()).host_tag(7))).unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(*seen.lock().unwrap(), vec![Some(7), Some(7)]);
    seen.lock().unwrap().clear();
    block(boss.run(RunOptions::new("go", script()))).unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![None, None]);
}

/// `{"a": … 1}` nested `levels` deep.
fn nested_value(levels: usize) -> serde_json::Value {
    (0..levels).fold(json!(1), |inner, _| json!({ "a": inner }))
}

#[test]
fn a_nested_pause_on_arguments_at_the_depth_limit_reads_back_and_continues() {
    // Arguments 64 levels deep (the limit) stand 4 levels further down in the outer state
    // than in the nested run's own: each state is counted from its own root.
    let boss = two_levels();
    let deep = nested_value(64);
    let client = scripted([
        call("c1", "middle", r#"{"input":"a"}"#),
        call("m1", "inner", r#"{"input":"b"}"#),
        call("d1", "deploy", &deep.to_string()),
    ]);
    let state = block(boss.run(RunOptions::new("go", client))).unwrap();
    let text_form = state.to_json();
    let restored = RunResult::from_json(&text_form).unwrap();
    assert_eq!(restored.to_json(), text_form);
    let from_value = RunResult::from_value(state.to_value()).unwrap();
    assert_eq!(from_value.to_json(), text_form);
    let done = block(boss.continue_run(
        &restored,
        cont([text("inner ok"), text("middle ok"), text("boss ok")]).approve("c1/m1/d1"),
    ))
    .unwrap();
    assert_eq!(done.output(), &json!("boss ok"));

    // Outside the paused agent tools' states, a value still gets one state's allowance:
    // 64 + 8 levels from the root (`run.context` is 2 of them), even though the text's
    // bound is deeper.
    let mut value = state.to_value();
    value["run"]["context"] = nested_value(70);
    RunResult::from_value(value.clone()).unwrap();
    value["run"]["context"] = nested_value(71);
    assert_state_refused(
        value,
        "Invalid state: value is nested more than 64 levels deep",
    );
    // A nested state is held to the same allowance from its own root.
    let mut value = state.to_value();
    value["run"]["pause"]["nestedRuns"]["c1"]["run"]["context"] = nested_value(71);
    let err = RunResult::from_json(&value.to_string()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::StateInvalid);
}

#[test]
fn states_nested_deeper_than_agents_can_nest_are_refused() {
    let leaf = json!({"version": 1, "run": {"id": "r"}});
    let mut state = leaf.clone();
    for _ in 0..=phaseo_agent::MAX_AGENT_NESTING {
        let mut outer = leaf.clone();
        outer["run"]["pause"] = json!({ "nestedRuns": { "c1": state } });
        state = outer;
    }
    let err = RunResult::from_value(state).unwrap_err();
    assert_eq!(err.code(), ErrorCode::StateInvalid);
    assert_eq!(
        err.message(),
        "Invalid state: value is nested more than 64 levels deep"
    );
}

#[test]
fn a_nested_state_that_is_no_state_is_refused_as_the_outer_state_is_read() {
    let boss = outer_with(researcher().as_tool(AsToolOptions::new()).unwrap());
    let mut value = paused_nested(&boss).to_value();
    value["run"]["pause"]["nestedRuns"]["c1"]["version"] = json!(99);
    // The state is checked before whose it is or whether it waits (docs/behaviour.md §4).
    value["run"]["agentId"] = json!("intruder");
    assert_state_refused(
        value,
        "Invalid state: nested run of call c1: unsupported version 99 \
             (this core reads versions 1 to 1)",
    );
}

#[test]
fn a_nested_call_pending_twice_is_refused() {
    let boss = outer_with(researcher().as_tool(AsToolOptions::new()).unwrap());
    let mut value = paused_nested(&boss).to_value();
    let nested = &mut value["run"]["pause"]["nestedRuns"]["c1"]["run"]["pause"]["pendingToolCalls"];
    let first = nested[0].clone();
    nested.as_array_mut().unwrap().push(first);
    let err = RunResult::from_value(value).unwrap_err();
    assert_eq!(err.code(), ErrorCode::StateInvalid);
    assert_eq!(
        err.message(),
        "Invalid state: nested run of call c1: tool call n1 is pending more than once"
    );
}
