//! Pause and continue through the public API: refusals never touch the state, a stored
//! state continues in another "process", and inconsistent state is refused, not a panic.

mod common;

use common::*;
use phaseo_agent::{
    human_review_fn, json, AgentDefinition, ContinueOptions, ErrorCode, PauseKind, ReviewRequest,
    RunOptions, RunResult, RunStatus, ScriptedClient,
};

fn refuse(agent: &phaseo_agent::Agent, state: &RunResult, options: ContinueOptions, msg: &str) {
    let before = state.to_json();
    let err = phaseo_agent::exec::block_on(agent.continue_run(state, options)).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ContinueInvalid, "{}", err.message());
    assert_eq!(err.message(), msg);
    assert!(
        err.result().is_none(),
        "a refused continue carries no result"
    );
    assert_eq!(state.to_json(), before, "the state is byte-identical");
}

#[test]
fn refused_continues_leave_the_state_byte_identical_and_usable() {
    let agent = approval_agent();
    let state = phaseo_agent::exec::block_on(paused(&agent, "t"));
    let id = &state.run.id;
    refuse(
        &agent,
        &state,
        cont([]),
        "Missing approval decision for tool call c1",
    );
    refuse(
        &agent,
        &state,
        cont([]).approve("zz"),
        "Unknown tool call zz",
    );
    refuse(
        &agent,
        &state,
        cont([]).approve("c1").reject("c1"),
        "Tool call c1 is both approved and rejected",
    );
    refuse(
        &agent,
        &state,
        cont([]).approve("c1").output("c1", json!(1)),
        "Tool call c1 requires approval; an output cannot be supplied for it",
    );
    let other = common::agent(AgentDefinition::new("other").tool(echo("t")));
    refuse(
        &other,
        &state,
        cont([]).approve("c1"),
        &format!("Cannot continue run {id} with agent other; it belongs to pauser"),
    );
    let renamed = common::agent(AgentDefinition::new("pauser").tool(echo("u")));
    refuse(
        &renamed,
        &state,
        cont([]).approve("c1"),
        "Tool 't' of pending call c1 is not defined on this agent",
    );
    // Still continuable after all those refusals.
    let done = phaseo_agent::exec::block_on(
        agent.continue_run(&state, cont([text("done")]).approve("c1")),
    )
    .unwrap();
    assert_eq!(done.status(), RunStatus::Completed);
    refuse(
        &agent,
        &done,
        cont([]).approve("c1"),
        &format!("Run {id} is not waiting for human input"),
    );
}

#[test]
fn refused_continues_of_manual_and_review_pauses() {
    let agent = approval_agent();
    let manual = phaseo_agent::exec::block_on(paused(&agent, "m"));
    refuse(&agent, &manual, cont([]), "Missing output for tool call c1");
    let hitl = phaseo_agent::exec::block_on(paused(&agent, "h"));
    assert_eq!(hitl.pause().unwrap().kind, PauseKind::Hitl);
    refuse(
        &agent,
        &hitl,
        cont([]).output("c9", json!(1)),
        "Unknown tool call c9",
    );

    let review = common::agent(
        AgentDefinition::new("rev").human_review(human_review_fn(|_| {
            Some(ReviewRequest {
                reason: "check".into(),
                payload: json!({"a": 1}),
            })
        })),
    );
    let state =
        phaseo_agent::exec::block_on(review.run(RunOptions::new("go", scripted([text("draft")]))))
            .unwrap();
    let id = state.run.id.clone();
    refuse(
        &review,
        &state,
        cont([]),
        &format!("Run {id} is waiting for human input"),
    );
    refuse(
        &review,
        &state,
        cont([]).human_input("ok").approve("x"),
        "Unknown tool call x",
    );
}

#[test]
fn a_refused_continue_stream_leaves_the_state_alone() {
    let agent = approval_agent();
    let state = phaseo_agent::exec::block_on(paused(&agent, "t"));
    let before = state.to_json();
    let stream = agent.continue_stream(&state, cont([]));
    let err = phaseo_agent::exec::block_on(stream.result()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ContinueInvalid);
    assert_eq!(state.to_json(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_state_continues_with_a_client_starting_where_the_first_stopped() {
    let agent = approval_agent();
    let responses = vec![call("c1", "t", r#"{"x":1}"#), text("all done")];
    let first = std::sync::Arc::new(ScriptedClient::from_responses(responses.clone()));
    let state = agent
        .run(RunOptions::new("go", first.clone()))
        .await
        .unwrap();
    assert_eq!(first.cursor(), 1);
    let stored = state.to_json();

    // "Another process": the state from text, a client skipping what was consumed.
    let restored = RunResult::from_json(&stored).unwrap();
    let second = std::sync::Arc::new(ScriptedClient::starting_at(
        responses.into_iter().map(Ok).collect(),
        1,
    ));
    let done = agent
        .continue_run(
            &restored,
            ContinueOptions::new(second.clone()).approve("c1"),
        )
        .await
        .unwrap();
    assert_eq!(done.output(), &json!("all done"));
    assert_eq!(second.cursor(), 2);
    assert_eq!(restored.to_json(), stored);
    let tool = done
        .messages()
        .iter()
        .find(|m| m.tool_call_id.is_some())
        .unwrap();
    assert_eq!(tool.content, r#"{"x":1}"#);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_paused_state_can_be_continued_twice_and_each_pause_has_its_own_id() {
    let agent = approval_agent();
    let a = paused(&agent, "t").await;
    let b = paused(&agent, "t").await;
    assert_ne!(a.pause().unwrap().id, b.pause().unwrap().id);
    let once = agent
        .continue_run(&a, cont([text("1")]).approve("c1"))
        .await
        .unwrap();
    let twice = agent
        .continue_run(&a, cont([text("2")]).reject("c1"))
        .await
        .unwrap();
    assert_eq!(once.output(), &json!("1"));
    assert_eq!(twice.output(), &json!("2"));
    assert_eq!(once.run.id, twice.run.id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_pause_without_step_results_is_refused_not_a_panic() {
    // A store may hand back a damaged state; the core must name the problem.
    let agent = approval_agent();
    let mut value = paused(&agent, "t").await.to_value();
    value["stepResults"] = json!([]);
    let outcome = match RunResult::from_value(value) {
        Err(e) => Err(e),
        Ok(state) => {
            let agent = agent.clone();
            tokio::spawn(async move {
                agent
                    .continue_run(&state, cont([text("done")]).approve("c1"))
                    .await
            })
            .await
            .expect("continue_run must not panic on an inconsistent state")
        }
    };
    let err = outcome.expect_err("an inconsistent state is refused");
    assert_eq!(err.code(), ErrorCode::StateInvalid);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_usage_counters_in_a_stored_state_do_not_panic_on_continue() {
    let agent = approval_agent();
    let mut value = paused(&agent, "t").await.to_value();
    value["run"]["usage"]["inputTokens"] = json!(u64::MAX);
    value["run"]["usage"]["totalTokens"] = json!(u64::MAX);
    let state = RunResult::from_value(value).unwrap();
    let outcome = tokio::spawn(async move {
        let client = scripted([text("done").with_usage(10, 5)]);
        agent
            .continue_run(&state, ContinueOptions::new(client).approve("c1"))
            .await
    })
    .await;
    let result = outcome
        .expect("counters saturate instead of overflowing")
        .unwrap();
    assert_eq!(result.usage().input_tokens, u64::MAX);
}
