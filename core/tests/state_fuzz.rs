//! Property tests: generated and mutated states through `RunResult::from_json` and
//! `continue_run`, and generated model arguments, never panic (debug builds check every
//! addition for overflow). `PROPTEST_CASES` raises the count (`make fuzz`).

mod common;

use common::*;
use phaseo_agent::exec::block_on;
use phaseo_agent::{json, parse_json_text, ContinueOptions, ErrorCode, RunResult, Value};
use proptest::prelude::*;

/// Every JSON pointer into a value.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => m.iter().for_each(|(k, c)| {
            pointers(
                c,
                format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                out,
            )
        }),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, c)| pointers(c, format!("{at}/{i}"), out)),
        _ => {}
    }
}

fn replacement() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        Just(json!(u64::MAX)),
        Just(json!(u64::MAX - 1)),
        Just(json!(-1)),
        Just(json!(0)),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::from)),
        "[a-z_]{0,8}".prop_map(Value::from),
        Just(json!("approval")),
        Just(json!("manual")),
        Just(json!("hitl")),
        Just(json!("waiting_for_human")),
        Just(json!([])),
        Just(json!({})),
        (1usize..90).prop_map(|d| (0..d).fold(json!(1), |v, _| json!([v]))),
    ]
}

/// Raw text edits that JSON-level mutation cannot make.
fn text_edit() -> impl Strategy<Value = (usize, String)> {
    (
        any::<usize>(),
        prop_oneof![
            Just("18446744073709551616".to_owned()),
            Just("\\ud800".to_owned()),
            Just("[".repeat(200)),
            Just("}".to_owned()),
            Just("\"".to_owned()),
            Just("-".to_owned()),
            Just("1e999".to_owned()),
        ],
    )
}

fn paused_states() -> Vec<RunResult> {
    let agent = approval_agent();
    ["t", "m", "h"]
        .into_iter()
        .map(|name| block_on(paused(&agent, name)))
        .collect()
}

/// Continues with every decision the state could want; must end or refuse, never panic.
fn try_continue(state: &RunResult) {
    let agent = approval_agent();
    let mut options = ContinueOptions::new(scripted([text("done"), text("again")]));
    for p in state.pending() {
        options = options
            .approve(p.call.id.clone())
            .output(&p.call.id, json!(1));
    }
    let _ = block_on(agent.continue_run(state, options.clone()));
    let mut approve_only = ContinueOptions::new(scripted([text("done"), text("again")]));
    for p in state.pending() {
        approve_only = approve_only.approve(p.call.id.clone());
    }
    let _ = block_on(agent.continue_run(state, approve_only));
    let _ =
        block_on(agent.continue_run(state, ContinueOptions::new(scripted([])).human_input("hi")));
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(256),
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_states_are_refused_or_continue_never_panic(
        which in 0usize..3,
        edits in prop::collection::vec((any::<prop::sample::Index>(), replacement()), 1..4),
    ) {
        let states = paused_states();
        let mut v = states[which].to_value();
        for (index, value) in edits {
            let mut all = Vec::new();
            pointers(&v, String::new(), &mut all);
            let at = index.get(&all).clone();
            if at.is_empty() {
                v = value;
            } else if let Some(slot) = v.pointer_mut(&at) {
                *slot = value;
            }
        }
        match RunResult::from_json(&v.to_string()) {
            Ok(state) => try_continue(&state),
            Err(e) => prop_assert_eq!(e.code(), ErrorCode::StateInvalid),
        }
    }

    #[test]
    fn edited_state_text_is_refused_or_continues_never_panics(
        which in 0usize..3,
        (at, insert) in text_edit(),
    ) {
        let text = paused_states()[which].to_json();
        let mut at = at % text.len();
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let edited = format!("{}{}{}", &text[..at], insert, &text[at..]);
        match RunResult::from_json(&edited) {
            Ok(state) => try_continue(&state),
            Err(e) => prop_assert_eq!(e.code(), ErrorCode::StateInvalid),
        }
    }

    #[test]
    fn model_arguments_parse_or_are_refused_never_panic(text in ".{0,64}", depth in 1usize..200) {
        let _ = parse_json_text(&text);
        let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        prop_assert_eq!(parse_json_text(&deep).is_ok(), depth <= 64);
    }
}
