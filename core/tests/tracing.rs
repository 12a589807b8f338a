//! Tracing against a real OTLP/HTTP receiver on 127.0.0.1: span names, GenAI
//! attributes, the parent/child tree, errors, a pause continued in the same trace, MCP
//! calls, content only on opt-in, no API key anywhere. Tracing is process-wide, so the
//! tests take turns (one lock), each enabling it with its own options.

mod common;
mod mcp_support;
mod otlp_support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use common::{call, scripted, text};
use otlp_support::{Received, Receiver};
use phaseo_agent::telemetry::{self, TracingOptions};
use phaseo_agent::{
    create_agent, json, AgentDefinition, CancellationToken, ContinueOptions, ErrorCode,
    ModelResponse, OnError, OpenAICompatibleClient, RunOptions, RunResult, RunStatus, Tool, Value,
};

static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn receiver() -> &'static Receiver {
    static R: OnceLock<Receiver> = OnceLock::new();
    R.get_or_init(Receiver::start)
}

const COLLECTOR_TOKEN: &str = "collector-token-7f3a";

fn enable(capture_content: bool) {
    telemetry::enable(TracingOptions {
        endpoint: Some(receiver().base.clone()),
        headers: BTreeMap::from([("x-collector-token".to_owned(), COLLECTOR_TOKEN.to_owned())]),
        service_name: Some("tracing-tests".to_owned()),
        capture_content,
    })
    .expect("tracing enabled");
}

/// (trace id, span id) of the state's `traceparent`.
fn ids(state: &RunResult) -> (String, String) {
    let tp = state.run.traceparent.as_deref().expect("traced state");
    assert!(telemetry::is_valid_traceparent(tp), "{tp}");
    let parts: Vec<&str> = tp.split('-').collect();
    (parts[1].to_owned(), parts[2].to_owned())
}

/// Flushes and returns the spans of the run's trace (at least `count`).
fn spans_of(state: &RunResult, count: usize) -> Vec<Received> {
    telemetry::flush().expect("flushed");
    let found = receiver().trace(&ids(state).0, count);
    assert!(found.len() >= count, "{} spans: {found:#?}", found.len());
    found
}

fn named<'a>(spans: &'a [Received], name: &str) -> Vec<&'a Received> {
    spans.iter().filter(|s| s.name() == name).collect()
}

fn one<'a>(spans: &'a [Received], name: &str) -> &'a Received {
    let found = named(spans, name);
    assert_eq!(found.len(), 1, "{name}: {spans:#?}");
    found[0]
}

fn with(mut r: ModelResponse, id: &str, model: &str, input: u64, output: u64) -> ModelResponse {
    r.request_id = Some(id.to_owned());
    r.model = Some(model.to_owned());
    r.with_usage(input, output)
}

fn calculator() -> phaseo_agent::Agent {
    let add = Tool::new("add", "Adds", Value::Null, |input, _rt| {
        Ok(json!(
            input["a"].as_i64().unwrap_or(0) + input["b"].as_i64().unwrap_or(0)
        ))
    });
    create_agent(AgentDefinition::new("calculator").tool(add)).unwrap()
}

async fn run_calculator() -> RunResult {
    let client = scripted([
        with(
            call("c1", "add", r#"{"a":2,"b":3}"#),
            "resp-1",
            "m-1",
            11,
            7,
        ),
        with(text("the sum is 5"), "resp-2", "m-1", 20, 4),
    ]);
    let mut options = RunOptions::new("what is 2+3?", client);
    options.overrides.model = Some("m-1".to_owned());
    calculator().run(options).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_with_a_tool_step_is_one_tree_of_genai_spans() {
    let _turn = LOCK.lock().await;
    enable(false);
    let state = run_calculator().await;
    assert_eq!(state.status(), RunStatus::Completed);
    let spans = spans_of(&state, 4);
    assert_eq!(spans.len(), 4, "{spans:#?}");

    let run = one(&spans, "invoke_agent calculator");
    assert_eq!(
        run.span_id(),
        ids(&state).1,
        "the state carries the run span"
    );
    assert_eq!(run.parent_id(), "", "a new run is a root span");
    assert_eq!(
        run.attr("gen_ai.operation.name").as_deref(),
        Some("invoke_agent")
    );
    assert_eq!(run.attr("gen_ai.agent.id").as_deref(), Some("calculator"));
    assert_eq!(
        run.attr("phaseo.run.id").as_deref(),
        Some(state.run.id.as_str())
    );
    assert_eq!(run.attr("phaseo.run.status").as_deref(), Some("completed"));
    assert_eq!(run.int("gen_ai.usage.input_tokens"), Some(31));
    assert_eq!(run.attr("error.type"), None);
    assert_eq!(run.service, "tracing-tests");
    assert_eq!(
        run.headers.get("x-collector-token").map(String::as_str),
        Some(COLLECTOR_TOKEN),
        "the export carries the configured headers"
    );

    let chats = named(&spans, "chat m-1");
    assert_eq!(chats.len(), 2);
    let first = chats
        .iter()
        .find(|c| c.int("phaseo.step.index") == Some(0))
        .unwrap();
    assert_eq!(first.parent_id(), run.span_id());
    assert_eq!(first.span.kind, 3, "chat spans are CLIENT spans");
    assert_eq!(first.attr("gen_ai.operation.name").as_deref(), Some("chat"));
    assert_eq!(first.attr("gen_ai.request.model").as_deref(), Some("m-1"));
    assert_eq!(first.attr("gen_ai.response.id").as_deref(), Some("resp-1"));
    assert_eq!(first.int("gen_ai.usage.input_tokens"), Some(11));
    assert_eq!(first.int("gen_ai.usage.output_tokens"), Some(7));
    assert_eq!(
        first.attr("gen_ai.response.finish_reasons").as_deref(),
        Some("tool_calls")
    );

    let tool = one(&spans, "execute_tool add");
    assert_eq!(tool.parent_id(), run.span_id());
    assert_eq!(
        tool.attr("gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(tool.attr("gen_ai.tool.name").as_deref(), Some("add"));
    assert_eq!(tool.attr("gen_ai.tool.call.id").as_deref(), Some("c1"));
    assert_eq!(tool.attr("gen_ai.tool.type").as_deref(), Some("function"));
    // The tool ran between the two model requests.
    assert!(tool.span.start_time_unix_nano >= first.span.end_time_unix_nano);

    for s in &spans {
        for key in [
            "gen_ai.tool.call.arguments",
            "gen_ai.tool.call.result",
            "gen_ai.input.messages",
            "gen_ai.output.messages",
        ] {
            assert_eq!(s.attr(key), None, "{key} recorded without captureContent");
        }
        let all = s.all_text();
        assert!(
            !all.contains("what is 2+3?") && !all.contains("the sum is 5"),
            "{all}"
        );
        assert!(!all.contains(COLLECTOR_TOKEN), "{all}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_is_recorded_only_when_opted_in() {
    let _turn = LOCK.lock().await;
    enable(true);
    let state = run_calculator().await;
    let spans = spans_of(&state, 4);
    let tool = one(&spans, "execute_tool add");
    assert_eq!(
        tool.attr("gen_ai.tool.call.arguments").as_deref(),
        Some(r#"{"a":2,"b":3}"#)
    );
    assert_eq!(tool.attr("gen_ai.tool.call.result").as_deref(), Some("5"));
    let chats = named(&spans, "chat m-1");
    let first = chats
        .iter()
        .find(|c| c.int("phaseo.step.index") == Some(0))
        .unwrap();
    assert!(first
        .attr("gen_ai.input.messages")
        .unwrap()
        .contains("what is 2+3?"));
    let last = chats
        .iter()
        .find(|c| c.int("phaseo.step.index") == Some(1))
        .unwrap();
    assert!(last
        .attr("gen_ai.output.messages")
        .unwrap()
        .contains("the sum is 5"));
    telemetry::shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_timeout_sets_error_type_on_the_tool_and_the_run() {
    let _turn = LOCK.lock().await;
    enable(false);
    let slow = Tool::new_async("slow", "Sleeps", Value::Null, |_, _| async {
        tokio::time::sleep(Duration::from_secs(5)).await;
        Ok(json!("late"))
    })
    .timeout(Duration::from_millis(50))
    .on_error(OnError::FailRun);
    let agent = create_agent(AgentDefinition::new("sleeper").tool(slow)).unwrap();
    let err = agent
        .run(RunOptions::new("go", scripted([call("c1", "slow", "{}")])))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolTimeout);
    let state = err.result().unwrap();
    let spans = spans_of(state, 3);
    let tool = one(&spans, "execute_tool slow");
    assert_eq!(tool.attr("error.type").as_deref(), Some("tool_timeout"));
    assert_eq!(tool.attr("phaseo.tool.timed_out").as_deref(), Some("true"));
    assert_eq!(tool.int("phaseo.tool.timeout_ms"), Some(50));
    assert_eq!(tool.span.status.as_ref().unwrap().code, 2, "status ERROR");
    let run = one(&spans, "invoke_agent sleeper");
    assert_eq!(run.attr("error.type").as_deref(), Some("tool_timeout"));
    assert_eq!(run.attr("phaseo.run.status").as_deref(), Some("failed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_run_says_so() {
    let _turn = LOCK.lock().await;
    enable(false);
    let cancel = CancellationToken::new();
    // The tool cancels the run as its first action: the call has begun (and has its span)
    // however long a loaded machine takes to get there.
    let trigger = cancel.clone();
    let slow = Tool::new_async("wait", "Waits", Value::Null, move |_, _| {
        let trigger = trigger.clone();
        async move {
            trigger.cancel();
            tokio::time::sleep(Duration::from_secs(5)).await;
            Ok(json!("late"))
        }
    });
    let agent = create_agent(AgentDefinition::new("waiter").tool(slow)).unwrap();
    let mut options = RunOptions::new("go", scripted([call("c1", "wait", "{}")]));
    options.cancel = Some(cancel);
    let state = agent.run(options).await.unwrap();
    assert_eq!(state.status(), RunStatus::Cancelled);
    let spans = spans_of(&state, 3);
    let run = one(&spans, "invoke_agent waiter");
    assert_eq!(run.attr("phaseo.run.cancelled").as_deref(), Some("true"));
    assert_eq!(run.attr("error.type").as_deref(), Some("cancelled"));
    let tool = one(&spans, "execute_tool wait");
    assert_eq!(tool.attr("error.type").as_deref(), Some("cancelled"));
}

fn approver() -> phaseo_agent::Agent {
    let send = Tool::new("send", "Sends", Value::Null, |_, _| Ok(json!("sent"))).require_approval();
    create_agent(AgentDefinition::new("mailer").tool(send)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continue_lands_in_the_trace_of_the_paused_run() {
    let _turn = LOCK.lock().await;
    enable(false);
    let agent = approver();
    let paused = agent
        .run(RunOptions::new(
            "mail bob",
            scripted([call("c1", "send", "{}")]),
        ))
        .await
        .unwrap();
    assert_eq!(paused.status(), RunStatus::WaitingForHuman);
    let (trace, first_span) = ids(&paused);
    let json = paused.to_json();
    assert!(json.contains(&format!("\"traceparent\":\"00-{trace}-{first_span}-01\"")));

    let schema: Value = serde_json::from_str(include_str!("../state.schema.json")).unwrap();
    let schema = jsonschema::draft202012::new(&schema).unwrap();
    let mut value: Value = serde_json::from_str(&json).unwrap();
    assert!(
        schema.is_valid(&value),
        "state.schema.json accepts a traced state"
    );
    value["run"]["traceparent"] = json!("not-a-traceparent");
    assert!(
        !schema.is_valid(&value),
        "the schema checks the traceparent's form"
    );

    let forged = json.replace(&format!("00-{trace}-{first_span}-01"), "00-XYZ-1-01");
    let err = RunResult::from_json(&forged).unwrap_err();
    assert_eq!(err.code(), ErrorCode::StateInvalid);
    assert!(
        err.message().contains("`run.traceparent`"),
        "{}",
        err.message()
    );

    // Another process would read the JSON: only the text crosses over.
    let restored = RunResult::from_json(&json).unwrap();
    let done = agent
        .continue_run(
            &restored,
            ContinueOptions::new(scripted([text("done")])).approve("c1"),
        )
        .await
        .unwrap();
    assert_eq!(done.status(), RunStatus::Completed);
    let (same_trace, second_span) = ids(&done);
    assert_eq!(same_trace, trace, "one trace across the pause");
    assert_ne!(second_span, first_span);

    let spans = spans_of(&done, 5);
    let runs = named(&spans, "invoke_agent mailer");
    assert_eq!(runs.len(), 2);
    let first = runs.iter().find(|s| s.span_id() == first_span).unwrap();
    assert_eq!(
        first.attr("phaseo.run.status").as_deref(),
        Some("waiting_for_human")
    );
    assert_eq!(
        first.attr("phaseo.pause.kind").as_deref(),
        Some("tool_approval")
    );
    assert_eq!(
        first.attr("phaseo.pause.id").as_deref(),
        Some(paused.run.pause.as_ref().unwrap().id.as_str())
    );
    let second = runs.iter().find(|s| s.span_id() == second_span).unwrap();
    assert_eq!(
        second.parent_id(),
        first_span,
        "the continue is a child of the paused run"
    );
    assert_eq!(second.links(), [(trace.clone(), first_span.clone())]);
    assert_eq!(second.attr("phaseo.run.resumed").as_deref(), Some("true"));
    let tool = one(&spans, "execute_tool send");
    assert_eq!(tool.parent_id(), second_span);
    assert_eq!(
        tool.attr("phaseo.tool.approval").as_deref(),
        Some("approved")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejection_is_a_tool_span_with_the_decision() {
    let _turn = LOCK.lock().await;
    enable(false);
    let agent = approver();
    let paused = agent
        .run(RunOptions::new(
            "mail bob",
            scripted([call("c1", "send", "{}")]),
        ))
        .await
        .unwrap();
    let done = agent
        .continue_run(
            &paused,
            ContinueOptions::new(scripted([text("ok")])).reject("c1"),
        )
        .await
        .unwrap();
    let spans = spans_of(&done, 5);
    let tool = one(&spans, "execute_tool send");
    assert_eq!(
        tool.attr("phaseo.tool.approval").as_deref(),
        Some("rejected")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_current_span_is_the_parent_of_a_run_and_a_link_of_a_continue() {
    let _turn = LOCK.lock().await;
    enable(false);
    let host_trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let host_span = "00f067aa0ba902b7";
    let host = format!("00-{host_trace}-{host_span}-01");
    let agent = approver();
    let paused = agent
        .run(RunOptions::new("mail", scripted([call("c1", "send", "{}")])).traceparent(&host))
        .await
        .unwrap();
    assert_eq!(ids(&paused).0, host_trace);
    let spans = spans_of(&paused, 2);
    assert_eq!(one(&spans, "invoke_agent mailer").parent_id(), host_span);

    let other_host = "00-11111111111111111111111111111111-2222222222222222-01";
    let done = agent
        .continue_run(
            &paused,
            ContinueOptions::new(scripted([text("ok")]))
                .approve("c1")
                .traceparent(other_host),
        )
        .await
        .unwrap();
    assert_eq!(ids(&done).0, host_trace, "the stored trace wins");
    let spans = spans_of(&done, 5);
    let second = spans.iter().find(|s| s.span_id() == ids(&done).1).unwrap();
    assert_eq!(second.parent_id(), ids(&paused).1);
    assert!(second.links().contains(&(
        "11111111111111111111111111111111".to_owned(),
        "2222222222222222".to_owned()
    )));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn off_records_nothing_and_old_states_still_continue() {
    let _turn = LOCK.lock().await;
    telemetry::shutdown().unwrap();
    assert!(!telemetry::is_enabled());
    let before = receiver().spans().len();
    let agent = approver();
    let paused = agent
        .run(RunOptions::new(
            "mail",
            scripted([call("c1", "send", "{}")]),
        ))
        .await
        .unwrap();
    assert_eq!(paused.run.traceparent, None);
    assert!(
        !paused.to_json().contains("traceparent"),
        "untraced states are unchanged"
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(receiver().spans().len(), before);

    // A state written without tracing continues under tracing as a new trace.
    enable(false);
    let restored = RunResult::from_json(&paused.to_json()).unwrap();
    let done = agent
        .continue_run(
            &restored,
            ContinueOptions::new(scripted([text("ok")])).approve("c1"),
        )
        .await
        .unwrap();
    let spans = spans_of(&done, 3);
    let run = one(&spans, "invoke_agent mailer");
    assert_eq!(run.parent_id(), "");
    assert!(run.links().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_options_are_refused_by_name() {
    let _turn = LOCK.lock().await;
    let err = telemetry::enable(TracingOptions {
        endpoint: Some("not a url".to_owned()),
        ..Default::default()
    })
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::DefinitionInvalid);
    assert!(
        err.message().contains("endpoint 'not a url'"),
        "{}",
        err.message()
    );
    let err = telemetry::enable(TracingOptions {
        headers: BTreeMap::from([("bad header".to_owned(), "v".to_owned())]),
        ..Default::default()
    })
    .unwrap_err();
    assert!(
        err.message().contains("header name 'bad header'"),
        "{}",
        err.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_call_is_an_extension_tool_span_with_its_server() {
    let _turn = LOCK.lock().await;
    let dir = mcp_support::markers();
    let Some(server) = mcp_support::test_server("files", &dir) else {
        return;
    };
    enable(false);
    let agent = create_agent(AgentDefinition::new("mcp-user").mcp_server(server.tool_prefix("fs")))
        .unwrap();
    let state = agent
        .run(RunOptions::new(
            "echo",
            scripted([call("c1", "fs_echo", r#"{"text":"hi"}"#), text("ok")]),
        ))
        .await
        .unwrap();
    assert_eq!(state.status(), RunStatus::Completed);
    agent.close().await;
    let spans = spans_of(&state, 4);
    let tool = one(&spans, "execute_tool fs_echo");
    assert_eq!(tool.attr("gen_ai.tool.type").as_deref(), Some("extension"));
    assert_eq!(tool.attr("mcp.method.name").as_deref(), Some("tools/call"));
    assert_eq!(
        tool.attr("phaseo.mcp.server.name").as_deref(),
        Some("files")
    );
    assert_eq!(tool.attr("phaseo.mcp.tool.name").as_deref(), Some("echo"));
    assert_eq!(tool.attr("network.transport").as_deref(), Some("pipe"));
    assert_eq!(tool.attr("error.type"), None);
}

/// A chat-completions server answering every request with one text reply.
fn model_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut writer = stream;
                let mut len = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end().to_ascii_lowercase();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; len];
                let _ = reader.read_exact(&mut body);
                let reply = json!({
                    "id": "chatcmpl-42", "model": "served-model",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": "hello"}}],
                    "usage": {"prompt_tokens": 9, "completion_tokens": 2}
                })
                .to_string();
                let _ = write!(
                    writer,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                    reply.len()
                );
            });
        }
    });
    base
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_key_is_never_in_any_attribute() {
    let _turn = LOCK.lock().await;
    enable(true);
    const KEY: &str = "sk-test-very-secret-0123456789";
    let client = Arc::new(
        OpenAICompatibleClient::new()
            .base_url(model_server())
            .api_key(KEY),
    );
    let agent = create_agent(AgentDefinition::new("keyed").model("served-model")).unwrap();
    let state = agent.run(RunOptions::new("hi", client)).await.unwrap();
    assert_eq!(state.status(), RunStatus::Completed);
    let spans = spans_of(&state, 2);
    let chat = one(&spans, "chat served-model");
    assert_eq!(
        chat.attr("gen_ai.response.id").as_deref(),
        Some("chatcmpl-42")
    );
    assert_eq!(
        chat.attr("gen_ai.response.model").as_deref(),
        Some("served-model")
    );
    assert_eq!(
        chat.attr("gen_ai.response.finish_reasons").as_deref(),
        Some("stop")
    );
    assert_eq!(chat.int("gen_ai.usage.input_tokens"), Some(9));
    for s in &spans {
        assert!(!s.all_text().contains(KEY), "{}", s.all_text());
        assert!(!s.all_text().contains("sk-test"), "{}", s.all_text());
    }
    telemetry::shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_run_says_how_it_was_claimed_and_continues_by_id_in_its_trace() {
    let _turn = LOCK.lock().await;
    enable(false);
    let store: Arc<dyn phaseo_agent::store::RunStore> =
        Arc::new(phaseo_agent::store::InMemoryRunStore::new());
    let agent = approver();
    let paused = agent
        .run(RunOptions::new("mail", scripted([call("c1", "send", "{}")])).store(store.clone()))
        .await
        .unwrap();
    let done = agent
        .continue_by_id(
            paused.run.id.clone(),
            ContinueOptions::new(scripted([text("ok")]))
                .approve("c1")
                .store(store.clone()),
        )
        .await
        .unwrap();
    assert_eq!(
        ids(&done).0,
        ids(&paused).0,
        "the stored state carried the trace"
    );
    let spans = spans_of(&done, 5);
    let first = spans
        .iter()
        .find(|s| s.span_id() == ids(&paused).1)
        .unwrap();
    let second = spans.iter().find(|s| s.span_id() == ids(&done).1).unwrap();
    assert_eq!(first.attr("phaseo.store.claim").as_deref(), Some("run"));
    assert_eq!(
        second.attr("phaseo.store.claim").as_deref(),
        Some("continue")
    );
    assert_eq!(second.parent_id(), first.span_id());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_mcp_call_is_a_tool_span_under_the_clients_trace() {
    use phaseo_agent::mcp_server::{serve_mcp_on, McpServeOptions};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let _turn = LOCK.lock().await;
    enable(false);
    let add = Tool::new("add", "Adds", json!({"type": "object"}), |i, _rt| {
        Ok(json!(
            i["a"].as_i64().unwrap_or(0) + i["b"].as_i64().unwrap_or(0)
        ))
    });
    let (client, server) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server);
    let _served = serve_mcp_on(
        vec![add],
        McpServeOptions::new("served"),
        server_read,
        server_write,
    )
    .unwrap();
    let (read, mut write) = tokio::io::split(client);
    let mut lines = BufReader::new(read).lines();
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "add", "arguments": {"a": 2, "b": 3},
            "_meta": {"traceparent": format!("00-{trace_id}-00f067aa0ba902b7-01")}}}),
    ] {
        write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    loop {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        if answer["id"] == json!(2) {
            assert_eq!(answer["result"]["content"][0]["text"], "5");
            break;
        }
    }
    telemetry::flush().expect("flushed");
    let spans = receiver().trace(trace_id, 2);
    let tool = one(&spans, "execute_tool add");
    let call = one(&spans, "invoke_agent served");
    assert_eq!(tool.span.parent_span_id, call.span.span_id);
}
