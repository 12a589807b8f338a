//! The adapters' argument shapes and readings of answers, over a recording host.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;

use super::*;
use crate::spec::HostCallbacks;
use crate::state::ToolCall;
use crate::tool_runtime::{PhaseShared, RunIds};
use crate::{CancellationToken, HostStreamSender, StopState, ToolError, ToolRuntime, Value};

/// What the host was called with: (kind, args, had a runtime).
type Calls = Arc<Mutex<Vec<(CallKind, Value, bool)>>>;

/// A host function that records its calls and answers `answer` (or fails with it).
#[derive(Clone)]
struct Recorder {
    calls: Calls,
    answer: Result<Value, String>,
}

#[async_trait]
impl JsonHostFn for Recorder {
    async fn call(
        &self,
        kind: CallKind,
        args: JsonArgs<'_>,
        runtime: Option<&ToolRuntime>,
    ) -> Result<Value, ToolError> {
        let serialized = serde_json::to_value(&args).unwrap();
        assert_eq!(
            args.to_canonical_text(),
            crate::json::to_canonical_string(&args),
            "the text and the serialized arguments differ"
        );
        let value = args.into_value();
        assert_eq!(serialized, value, "serialized and built arguments differ");
        self.calls
            .lock()
            .unwrap()
            .push((kind, value, runtime.is_some()));
        self.answer.clone().map_err(ToolError::new)
    }

    async fn call_streaming(
        &self,
        args: JsonArgs<'_>,
        _events: HostStreamSender,
    ) -> Result<Value, ToolError> {
        self.call(CallKind::Stream, args, None).await
    }
}

fn host(answer: Value) -> (Recorder, Calls) {
    let calls = Calls::default();
    let rec = Recorder {
        calls: calls.clone(),
        answer: Ok(answer),
    };
    (rec, calls)
}

fn runtime() -> ToolRuntime {
    let call = ToolCall::new("c1", "add", json!({"a": 1}));
    ToolRuntime::new(
        PhaseShared::new(
            RunIds::new("run".into(), "agent".into()),
            2,
            json!({"k": "v"}),
        ),
        call,
        None,
        false,
    )
}

fn runtime_json() -> Value {
    json!({"runId": "run", "agentId": "agent", "stepIndex": 2, "context": {"k": "v"},
        "toolCall": {"id": "c1", "name": "add", "input": {"a": 1}},
        "attempt": 1, "idempotencyKey": "run:c1"})
}

#[tokio::test]
async fn executor_gets_input_and_runtime() {
    let (rec, calls) = host(json!(3));
    let cb = JsonCallbacks::new(|_| rec.clone());
    let out = cb.executor(7).execute(json!({"a": 1}), runtime()).await;
    assert_eq!(out.unwrap(), json!(3));
    let calls = calls.lock().unwrap();
    assert_eq!(calls[0].0, CallKind::Execute);
    assert_eq!(calls[0].1, json!([{"a": 1}, runtime_json()]));
    assert!(calls[0].2);
}

#[tokio::test]
async fn validator_gets_the_value_and_keeps_its_schema() {
    let (rec, calls) = host(json!("ok"));
    let v = JsonCallbacks::new(|_| rec.clone()).validator(1, Some(json!({"type": "string"})));
    assert_eq!(v.validate(json!("x")).await.unwrap(), json!("ok"));
    assert_eq!(v.json_schema(), Some(json!({"type": "string"})));
    assert_eq!(
        calls.lock().unwrap()[0],
        (CallKind::Validate, json!(["x"]), false)
    );
}

#[tokio::test]
async fn approvals_read_truthy_answers() {
    for (answer, expected) in [(json!(1), true), (json!(""), false), (json!(null), false)] {
        let (rec, calls) = host(answer);
        let cb = JsonCallbacks::new(|_| rec.clone());
        let rt = runtime();
        let tool = cb.tool_approval(1).requires_approval(&json!(5), &rt).await;
        let agent = cb.agent_approval(2).requires_approval(&json!(5), &rt).await;
        assert_eq!((tool.unwrap(), agent.unwrap()), (expected, expected));
        let calls = calls.lock().unwrap();
        assert_eq!(calls[0].0, CallKind::Approve);
        assert_eq!(calls[0].1, json!([5, runtime_json()]));
        assert_eq!(calls[1].0, CallKind::AgentApprove);
        assert_eq!(
            calls[1].1[0],
            json!({"id": "c1", "name": "add", "input": {"a": 1}})
        );
    }
}

#[tokio::test]
async fn tool_called_null_pauses() {
    let (rec, _) = host(Value::Null);
    let cb = JsonCallbacks::new(|_| rec.clone());
    let hook = cb.tool_called(1);
    assert_eq!(
        hook.on_tool_called(json!(1), runtime()).await.unwrap(),
        None
    );
}

#[tokio::test]
async fn stop_reads_a_reason_and_host_errors_pass_through() {
    let (rec, calls) = host(json!("enough"));
    let cb = JsonCallbacks::new(|_| rec.clone());
    let usage = Default::default();
    let state = StopState {
        steps: &[],
        usage: &usage,
        elapsed_ms: 0,
        step_count: 0,
    };
    let reason = cb.stop_condition(1).check(&state).await.unwrap();
    assert_eq!(reason.as_deref(), Some("enough"));
    assert_eq!(calls.lock().unwrap()[0].0, CallKind::Stop);

    let failing = Recorder {
        calls: Calls::default(),
        answer: Err("boom".into()),
    };
    let cb = JsonCallbacks::new(|_| failing.clone());
    let err = cb.stop_condition(1).check(&state).await.unwrap_err();
    assert_eq!(err.message, "boom");
}

#[tokio::test]
async fn next_turn_refuses_a_non_object() {
    let (rec, _) = host(json!(3));
    let cb = JsonCallbacks::new(|_| rec.clone());
    let rt = runtime();
    assert!(cb
        .next_turn_params(1)
        .next_turn_params(&json!(1), &rt)
        .await
        .is_err());
}

#[cfg(feature = "mcp")]
#[tokio::test]
async fn mcp_filter_needs_a_boolean_and_elicitation_gets_the_server() {
    let info = crate::mcp::McpToolInfo {
        name: "t".into(),
        description: String::new(),
        annotations: Value::Null,
    };
    let (rec, _) = host(json!("yes"));
    let filter = JsonCallbacks::new(|_| rec.clone()).mcp_filter(1).unwrap();
    let err = filter.keep_async(&info).await.unwrap_err();
    assert_eq!(
        err.message,
        "an MCP tool filter must answer a boolean, got \"yes\""
    );

    let (rec, calls) = host(json!({"action": "decline"}));
    let handler = JsonCallbacks::new(|_| rec.clone())
        .mcp_elicitation(1)
        .unwrap();
    let answer = handler
        .on_elicitation("srv", json!({"m": 1}))
        .await
        .unwrap();
    assert_eq!(answer, json!({"action": "decline"}));
    let calls = calls.lock().unwrap();
    assert_eq!(calls[0].0, CallKind::McpElicit);
    assert_eq!(calls[0].1, json!([{"m": 1}, {"server": "srv"}]));
}

#[test]
fn kind_names_are_camel_case() {
    assert_eq!(CallKind::AgentApprove.name(), "agentApprove");
    assert_eq!(CallKind::ResponseReceived.name(), "responseReceived");
    assert_eq!(CallKind::McpElicit.name(), "mcpElicit");
}

#[tokio::test]
async fn an_mcp_tools_runtime_carries_its_annotations() {
    let (rec, calls) = host(json!(true));
    let cb = JsonCallbacks::new(|_| rec.clone());
    let annotations = json!({"destructiveHint": true});
    let rt = runtime().with_annotations(Some(Arc::new(annotations.clone())));
    assert!(cb
        .tool_approval(1)
        .requires_approval(&json!({"a": 1}), &rt)
        .await
        .unwrap());
    let mut expected = runtime_json();
    expected["toolAnnotations"] = annotations;
    assert_eq!(calls.lock().unwrap()[0].1, json!([{"a": 1}, expected]));
}

#[tokio::test]
async fn a_client_without_generate_drains_its_stream_and_one_with_neither_fails() {
    let context = Value::Null;
    let request = crate::ModelRequest {
        agent_id: "a",
        model: None,
        instructions: None,
        messages: &[],
        tools: Arc::new(Vec::new()),
        context: &context,
        temperature: None,
        max_output_tokens: None,
        top_p: None,
        stream: false,
        output_schema: None,
        tool_choice: None,
        parallel_tool_calls: None,
    };
    let (rec, calls) = host(Value::Null);
    let client = JsonModelFunctions {
        generate: None,
        stream: Some(rec),
    }
    .into_client();
    // The recorder sends no events: the drained stream ends without a response.
    let err = crate::ModelClient::generate(&client, &request, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(err.message.contains("response"), "{}", err.message);
    assert_eq!(calls.lock().unwrap()[0].0, CallKind::Stream);

    let neither = JsonModelFunctions::<Recorder> {
        generate: None,
        stream: None,
    }
    .into_client();
    let err = crate::ModelClient::stream(
        &neither,
        &request,
        &CancellationToken::new(),
        &crate::NoDeltas,
    )
    .await
    .unwrap_err();
    assert_eq!(err.message, "the model client has no generate function");
}

/// A runtime of `phase` for call `id` with `input`.
fn runtime_of(phase: &Arc<PhaseShared>, id: &str, input: Value) -> ToolRuntime {
    let call = ToolCall::new(id, "t\u{e9}l\u{e9}", input);
    ToolRuntime::new(phase.clone(), call, None, true)
}

#[test]
fn the_arguments_text_is_their_canonical_serialization() {
    let awkward = "q\"uote\\ back\nline \u{1F600} \u{7f}\u{1}";
    let phases = [
        PhaseShared::new(RunIds::new("run".into(), "agent".into()), 0, Value::Null),
        PhaseShared::new(
            RunIds::new(awkward.into(), awkward.into()),
            41,
            json!({"n": 18446744073709551615u64, "f": 0.5, "i": -7, "s": awkward,
                "deep": [[{"a": null, "b": true}]], "e": {}}),
        ),
    ];
    for phase in &phases {
        for (id, input) in [
            ("c1", json!({"a": 1, "b": 2})),
            (awkward, json!(awkward)),
            ("", json!([1.5, 2.5, {"z": []}])),
        ] {
            let plain = runtime_of(phase, id, input.clone());
            let annotated = runtime_of(phase, id, input.clone())
                .with_annotations(Some(Arc::new(json!({"readOnlyHint": true}))))
                .with_attempt(3);
            let other = json!({"other": awkward});
            for rt in [&plain, &annotated] {
                // The call's own input (as an executor hands it), an equal copy, another value.
                for value in [&rt.tool_call().input, &input, &other] {
                    let args = JsonArgs::WithRuntime(value, rt);
                    let text = args.to_canonical_text();
                    assert_eq!(text, crate::json::to_canonical_string(&args));
                    let parsed: Value = serde_json::from_str(&text).expect("valid JSON");
                    assert_eq!(parsed, JsonArgs::WithRuntime(value, rt).into_value());
                }
            }
        }
    }
    let list = JsonArgs::List(vec![json!(1), json!("x")]);
    assert_eq!(list.to_canonical_text(), r#"[1,"x"]"#);
}

#[test]
fn the_shared_part_of_a_phases_runtimes_is_written_once() {
    let phase = PhaseShared::new(
        RunIds::new("run".into(), "agent".into()),
        1,
        json!({"big": "context"}),
    );
    let first = runtime_of(&phase, "c1", json!({}));
    let second = runtime_of(&phase, "c2", json!({}));
    let first_text = JsonArgs::WithRuntime(&json!({}), &first).to_canonical_text();
    let second_text = JsonArgs::WithRuntime(&json!({}), &second).to_canonical_text();
    assert!(
        first_text.contains(r#""idempotencyKey":"run:c1""#),
        "{first_text}"
    );
    assert!(
        second_text.contains(r#""idempotencyKey":"run:c2""#),
        "{second_text}"
    );
    // The second call found the text the first one wrote.
    let head = second.phase_json_head(|| panic!("the phase's text was written twice"));
    assert_eq!(
        head.text,
        r#"{"runId":"run","agentId":"agent","stepIndex":1,"context":{"big":"context"}"#
    );
    assert_eq!(&head.text[..head.run_id_end], r#"{"runId":"run""#);
    // Another phase writes its own.
    let other = runtime_of(
        &PhaseShared::new(RunIds::new("run".into(), "agent".into()), 2, Value::Null),
        "c3",
        json!({}),
    );
    let other_text = JsonArgs::WithRuntime(&json!({}), &other).to_canonical_text();
    assert!(
        other_text.contains(r#""stepIndex":2,"context":null"#),
        "{other_text}"
    );
}

#[test]
fn a_model_argument_text_copied_as_it_is_is_the_canonical_text() {
    let phase = PhaseShared::new(RunIds::new("run".into(), "agent".into()), 0, Value::Null);
    let texts = [
        r#"{"a":1,"b":2}"#,
        r#"{"s":"q\"\\\n","u":"é","l":[true,null,{}]}"#,
        r#"{"a": 1}"#,
        r#"{"a":1,"a":2}"#,
        r#"{"a":1.50,"e":"\u00e9"}"#,
    ];
    for text in texts {
        let (input, canonical) = crate::limits::parse_json_text_canonical(text).unwrap();
        let call = match canonical {
            true => ToolCall::with_input_text("c".into(), "t".into(), input, text.to_owned()),
            false => ToolCall::new("c", "t", input),
        };
        assert_eq!(call.input_text().is_some(), canonical, "{text}");
        let rt = ToolRuntime::new(phase.clone(), call, None, true);
        let other = json!({"other": 1});
        for value in [&rt.tool_call().input, &other] {
            let args = JsonArgs::WithRuntime(value, &rt);
            assert_eq!(
                args.to_canonical_text(),
                crate::json::to_canonical_string(&args)
            );
        }
    }
    // A call whose input was replaced no longer gives its old input's text.
    let text = r#"{"a":1}"#;
    let (input, _) = crate::limits::parse_json_text_canonical(text).unwrap();
    let call = ToolCall::with_input_text("c".into(), "t".into(), input, text.to_owned());
    let replaced = ToolCall {
        input: Arc::new(json!({"a": 2})),
        ..call.clone()
    };
    assert_eq!(call.clone().input_text(), Some(text));
    assert_eq!(replaced.input_text(), None);
    assert_eq!(replaced, ToolCall::new("c", "t", json!({"a": 2})));
}

/// A run's host tool receives its arguments as their canonical text whatever the model's
/// text looked like; the recorder checks each call's text against the arguments' own
/// serialization.
#[tokio::test]
async fn a_host_tool_gets_canonical_argument_text_from_any_model_text() {
    let texts = [
        r#"{"a":1,"b":"x"}"#,
        r#"{ "a" : 1 , "b" : "x" }"#,
        r#"{"a":1,"a":2,"b":"x"}"#,
        r#"{"a":1.50,"b":"\u00e9\/"}"#,
        r#"{"a":-0,"b":"q\"\\\n"}"#,
    ];
    let (rec, calls) = host(json!(3));
    let tool = crate::Tool::with_executor(
        "k",
        "Records its calls",
        json!({"type": "object", "properties": {"a": {"type": "number"}}}),
        Arc::new(JsonExecutor(rec)),
    );
    let agent = crate::create_agent(crate::AgentDefinition::new("a").tool(tool)).unwrap();
    let client = crate::ScriptedClient::from_responses([
        crate::ModelResponse::tool_calls(
            texts
                .iter()
                .enumerate()
                .map(|(i, t)| (format!("c{i}"), "k".to_owned(), (*t).to_owned())),
        ),
        crate::ModelResponse::text("done"),
    ]);
    let result = agent
        .run(crate::RunOptions::new("go", Arc::new(client)))
        .await
        .unwrap();
    assert_eq!(result.output(), &json!("done"));
    let calls = calls.lock().unwrap();
    assert_eq!(calls.len(), texts.len());
    for (i, text) in texts.iter().enumerate() {
        let input: Value = serde_json::from_str(text).unwrap();
        let (kind, args, _) = calls
            .iter()
            .find(|c| c.1[1]["toolCall"]["id"] == json!(format!("c{i}")))
            .unwrap();
        assert_eq!(*kind, CallKind::Execute);
        assert_eq!(args[0], input, "{text}");
        assert_eq!(args[1]["toolCall"]["input"], input, "{text}");
    }
}
