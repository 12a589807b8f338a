//! Property tests: arbitrary tool arguments, arbitrary state text and mutated states never
//! panic and always end in a well-formed result or the documented error.

mod common;

use common::*;
use phaseo_agent::exec::block_on;
use phaseo_agent::json_host::{CallKind, JsonArgs, JsonExecutor, JsonHostFn};
use phaseo_agent::{
    human_review_fn, json, Agent, AgentDefinition, AgentError, ContinueOptions, ErrorCode,
    HostStreamSender, OnError, ReviewRequest, Role, RunOptions, RunResult, RunStatus, Tool,
    ToolError, ToolRuntime, Value,
};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

const KEYS: &[&str] = &[
    "version",
    "run",
    "id",
    "agentId",
    "status",
    "pause",
    "kind",
    "pendingToolCalls",
    "call",
    "name",
    "input",
    "messages",
    "role",
    "content",
    "stepCount",
    "createdAt",
    "stepResults",
    "toolCalls",
    "usage",
    "waiting_for_human",
    "tool_approval",
    "approval",
];

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f)
            .map(Value::Number)),
        "\\PC{0,10}".prop_map(Value::String),
        prop::sample::select(KEYS).prop_map(|k| json!(k)),
    ];
    let key = prop_oneof![
        "\\PC{0,6}",
        prop::sample::select(KEYS).prop_map(str::to_owned)
    ];
    leaf.prop_recursive(3, 32, 5, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn arb_arguments() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..48)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        any::<String>(),
        arb_json().prop_map(|v| v.to_string()),
        (any::<i64>(), "\\PC{0,8}").prop_map(|(n, s)| json!({"n": n, "s": s}).to_string()),
        (arb_json(), arb_json()).prop_map(|(n, s)| json!({"n": n, "s": s}).to_string()),
    ]
}

fn check(cond: bool, what: impl Into<String>) -> Result<(), TestCaseError> {
    if cond {
        Ok(())
    } else {
        Err(TestCaseError::fail(what.into()))
    }
}

fn well_formed(state: &RunResult) -> Result<(), TestCaseError> {
    let text = state.to_json();
    let back = RunResult::from_json(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
    check(back.to_json() == text, "the state round-trips")
}

fn args_agent(policy: OnError) -> Agent {
    let schema = json!({
        "type": "object",
        "properties": {"n": {"type": "integer"}, "s": {"type": "string"}},
        "required": ["n"],
    });
    agent(
        AgentDefinition::new("props").tool(
            Tool::new("t", "", schema, |input, _| Ok(json!({"got": input}))).on_error(policy),
        ),
    )
}

#[test]
fn arbitrary_tool_arguments_end_in_a_result_or_tool_input_invalid() {
    let returning = args_agent(OnError::ReturnToModel);
    let failing = args_agent(OnError::FailRun);
    runner(600)
        .run(&arb_arguments(), |args| {
            let run = |agent: &Agent| {
                let client = scripted([call("c1", "t", &args), text("done")]);
                block_on(agent.run(RunOptions::new("go", client)))
            };
            let result = run(&returning).map_err(|e| TestCaseError::fail(e.to_string()))?;
            check(
                result.status() == RunStatus::Completed,
                "return-to-model completes",
            )?;
            well_formed(&result)?;
            let tool = result
                .messages()
                .iter()
                .find(|m| m.role == Role::Tool)
                .unwrap();
            let invalid = tool.is_error;
            if invalid {
                check(
                    tool.content
                        .starts_with(r#"{"error":"Invalid tool input: "#),
                    format!("error message: {}", tool.content),
                )?;
            }
            match run(&failing) {
                Ok(ok) => {
                    check(!invalid, "fail-run accepted what return-to-model refused")?;
                    well_formed(&ok)
                }
                Err(e) => {
                    check(invalid, "fail-run refused what return-to-model accepted")?;
                    check(e.code() == ErrorCode::ToolInputInvalid, e.code().as_str())?;
                    check(e.message().starts_with("Invalid tool input: "), e.message())?;
                    let failed = e.result().expect("a failed run is attached");
                    check(failed.status() == RunStatus::Failed, "status failed")?;
                    well_formed(failed)
                }
            }
        })
        .unwrap();
}

fn parsed_or_state_invalid(outcome: Result<RunResult, AgentError>) -> Result<(), TestCaseError> {
    match outcome {
        Ok(state) => {
            let _ = state.to_json();
            Ok(())
        }
        Err(e) => check(e.code() == ErrorCode::StateInvalid, e.code().as_str()),
    }
}

#[test]
fn arbitrary_text_as_state_is_parsed_or_refused() {
    let valid = block_on(paused(&approval_agent(), "t")).to_json();
    let truncated = (0..valid.len()).prop_map(move |i| {
        let mut end = i;
        while !valid.is_char_boundary(end) {
            end -= 1;
        }
        valid[..end].to_owned()
    });
    let text = prop_oneof![any::<String>(), "[\\[\\]{}\":,0-9a-z ]{0,40}", truncated];
    runner(1000)
        .run(&text, |text| {
            parsed_or_state_invalid(RunResult::from_json(&text))
        })
        .unwrap();
}

#[test]
fn arbitrary_json_as_state_is_parsed_or_refused() {
    let value = prop_oneof![
        arb_json(),
        arb_json().prop_map(|run| json!({"version": 1, "run": run})),
        (arb_json(), arb_json()).prop_map(|(v, run)| json!({"version": v, "run": run})),
    ];
    runner(600)
        .run(&value, |value| {
            parsed_or_state_invalid(RunResult::from_json(&value.to_string()))?;
            parsed_or_state_invalid(RunResult::from_value(value))
        })
        .unwrap();
}

fn pointers(v: &Value, prefix: &str, out: &mut Vec<String>) {
    let children: Vec<(String, &Value)> = match v {
        Value::Object(m) => m
            .iter()
            .map(|(k, c)| (k.replace('~', "~0").replace('/', "~1"), c))
            .collect(),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, c)| (i.to_string(), c))
            .collect(),
        _ => return,
    };
    for (key, child) in children {
        let path = format!("{prefix}/{key}");
        out.push(path.clone());
        pointers(child, &path, out);
    }
}

fn delete(v: &mut Value, path: &str) {
    let (parent, last) = path.rsplit_once('/').unwrap();
    let last = last.replace("~1", "/").replace("~0", "~");
    match v.pointer_mut(parent) {
        Some(Value::Object(m)) => drop(m.remove(&last)),
        Some(Value::Array(a)) => drop(a.remove(last.parse::<usize>().unwrap())),
        _ => unreachable!("paths come from the value"),
    }
}

struct Base {
    agent: Agent,
    state: Value,
    decide: fn(ContinueOptions) -> ContinueOptions,
}

fn bases() -> Vec<Base> {
    let agent = approval_agent();
    let review = common::agent(AgentDefinition::new("rev").tool(echo("t")).human_review(
        human_review_fn(|c| {
            c.is_final.then(|| ReviewRequest {
                reason: "check".into(),
                payload: json!({"a": [1, 2]}),
            })
        }),
    ));
    let reviewed = block_on(review.run(RunOptions::new(
        "go",
        scripted([call("c0", "t", r#"{"y":2}"#), text("draft")]),
    )))
    .unwrap();
    vec![
        Base {
            state: block_on(paused(&agent, "t")).to_value(),
            agent: agent.clone(),
            decide: |o| o.approve("c1"),
        },
        Base {
            state: block_on(paused(&agent, "m")).to_value(),
            agent: agent.clone(),
            decide: |o| o.output("c1", json!({"ok": true})),
        },
        Base {
            state: block_on(paused(&agent, "h")).to_value(),
            agent,
            decide: |o| o.output("c1", json!("typed by a human")),
        },
        Base {
            state: reviewed.to_value(),
            agent: review,
            decide: |o| o.human_input("looks good"),
        },
    ]
}

#[test]
fn mutated_paused_states_are_refused_or_continue_without_panicking() {
    let bases = bases();
    let mutation = (any::<Index>(), any::<Index>(), prop::option::of(arb_json()));
    runner(1500)
        .run(&mutation, |(which, at, replacement)| {
            let base = &bases[which.index(bases.len())];
            let mut state = base.state.clone();
            let mut paths = Vec::new();
            pointers(&state, "", &mut paths);
            let path = at.get(&paths).clone();
            let what = match replacement {
                None => {
                    delete(&mut state, &path);
                    format!("deleting {path}")
                }
                Some(v) => {
                    let what = format!("setting {path} to {v}");
                    *state.pointer_mut(&path).unwrap() = v;
                    what
                }
            };
            let parsed = match RunResult::from_json(&state.to_string()) {
                Ok(parsed) => parsed,
                Err(e) => return check(e.code() == ErrorCode::StateInvalid, e.code().as_str()),
            };
            let before = parsed.to_json();
            let options = (base.decide)(cont([text("done"), text("again")]));
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                block_on(base.agent.continue_run(&parsed, options))
            }))
            .map_err(|p| {
                let msg = phaseo_agent::panic_message(p.as_ref());
                TestCaseError::fail(format!("continue_run panicked ({msg}) after {what}"))
            })?;
            match outcome {
                Ok(result) => well_formed(&result)?,
                Err(e) if e.result().is_some() => well_formed(e.result().unwrap())?,
                Err(e) => check(
                    matches!(
                        e.code(),
                        ErrorCode::ContinueInvalid | ErrorCode::StateInvalid
                    ),
                    format!("{}: {}", e.code(), e.message()),
                )?,
            }
            check(parsed.to_json() == before, "the input state is untouched")
        })
        .unwrap();
}

/// A host that checks each call's argument text against the arguments' own canonical
/// serialization and answers with whether they agree.
struct TextChecking;

#[phaseo_agent::async_trait]
impl JsonHostFn for TextChecking {
    async fn call(
        &self,
        _kind: CallKind,
        args: JsonArgs<'_>,
        _runtime: Option<&ToolRuntime>,
    ) -> Result<Value, ToolError> {
        let text = args.to_canonical_text();
        Ok(json!(text == json::to_canonical_string(&args)))
    }

    async fn call_streaming(
        &self,
        _args: JsonArgs<'_>,
        _events: HostStreamSender,
    ) -> Result<Value, ToolError> {
        Err(ToolError::new("not a model"))
    }
}

/// Model argument texts as models write them: compact or spaced out, keys repeated, numbers
/// and strings in every spelling JSON allows.
fn arb_model_text() -> impl Strategy<Value = String> {
    let spelled = prop_oneof![
        Just("1.0"),
        Just("1e2"),
        Just("-0"),
        Just("0.50"),
        Just("12345678901234567890"),
        Just(r#""\u00e9\/\u0041""#),
        Just(r#""q\"\\\b\f\n\r\t""#),
        Just("\"\u{7f}é😀\""),
        Just("[ 1 , 2 ]"),
    ];
    prop_oneof![
        arb_arguments(),
        arb_json().prop_map(|v| serde_json::to_string_pretty(&v).unwrap()),
        (prop::sample::select(KEYS), spelled.clone(), spelled)
            .prop_map(|(k, a, b)| format!(r#"{{"{k}":{a},"{k}":{b},"n":{a}}}"#)),
    ]
}

#[test]
fn a_host_tools_argument_text_is_canonical_whatever_the_models_text() {
    let host = agent(
        AgentDefinition::new("texts").tool(
            Tool::with_executor(
                "t",
                "",
                json!({}),
                std::sync::Arc::new(JsonExecutor(TextChecking)),
            )
            .on_error(OnError::ReturnToModel),
        ),
    );
    runner(600)
        .run(&arb_model_text(), |args| {
            let client = scripted([call("c1", "t", &args), text("done")]);
            let result = block_on(host.run(RunOptions::new("go", client)))
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let answer = result.messages().iter().find(|m| m.role == Role::Tool);
            if let Some(answer) = answer.filter(|m| !m.is_error) {
                check(
                    answer.content == "true",
                    format!("{args}: {}", answer.content),
                )?;
            }
            Ok(())
        })
        .unwrap();
}
