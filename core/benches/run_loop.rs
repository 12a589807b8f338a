//! Run-loop benchmarks: fan-out of 1,000 calls in one turn, long sequential runs, and the
//! state round trip. Figures of interest: per call, per turn, per round trip.

use std::hint::black_box;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use phaseo_agent::{
    create_agent, json, Agent, AgentDefinition, Message, ModelResponse, RunOptions, RunResult,
    ScriptedClient, Tool, ToolExecutionConfig, Value,
};
use tokio::runtime::Runtime;

fn rt() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap()
    })
}

fn async_tool() -> Tool {
    Tool::new_async("k", "Constant", Value::Null, |_, _| async { Ok(json!(1)) })
}

fn sync_tool() -> Tool {
    Tool::new("k", "Constant", Value::Null, |_, _| Ok(json!(1)))
}

fn agent(tool: Tool, concurrency: usize) -> Agent {
    create_agent(
        AgentDefinition::new("bench")
            .tool(tool)
            .max_steps(1_000)
            .tool_execution(ToolExecutionConfig::default().tool_concurrency(concurrency)),
    )
    .unwrap()
}

fn fan_out_client(calls: usize) -> Arc<ScriptedClient> {
    let turn = ModelResponse::tool_calls(
        (0..calls).map(|i| (format!("c{i}"), "k".to_owned(), "{}".to_owned())),
    );
    Arc::new(ScriptedClient::from_responses([
        turn,
        ModelResponse::text("done"),
    ]))
}

fn sequential_client(turns: usize) -> Arc<ScriptedClient> {
    let steps = (0..turns).map(|i| ModelResponse::tool_calls([(format!("c{i}"), "k", "{}")]));
    Arc::new(ScriptedClient::from_responses(
        steps.chain([ModelResponse::text("done")]),
    ))
}

fn run(agent: &Agent, client: Arc<ScriptedClient>) -> RunResult {
    rt().block_on(agent.run(RunOptions::new("go", client)))
        .unwrap()
}

fn fan_out(c: &mut Criterion) {
    let mut group = c.benchmark_group("fan_out");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    for (name, tool) in [("async", async_tool()), ("sync", sync_tool())] {
        let agent = agent(tool, 1_000);
        for calls in [1, 1_000] {
            group.throughput(Throughput::Elements(calls as u64));
            group.bench_function(format!("{name}/{calls}_calls"), |b| {
                b.iter_batched(
                    || fan_out_client(calls),
                    |client| run(&agent, client),
                    BatchSize::SmallInput,
                )
            });
        }
    }
    group.finish();
}

fn sequential(c: &mut Criterion) {
    let mut group = c.benchmark_group("sequential");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    let agent = agent(async_tool(), 1);
    for turns in [25, 200, 400] {
        group.throughput(Throughput::Elements(turns as u64));
        group.bench_function(format!("{turns}_turns"), |b| {
            b.iter_batched(
                || sequential_client(turns),
                |client| run(&agent, client),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

fn gated() -> Tool {
    Tool::new("send", "Send", Value::Null, |i, _| Ok(i)).require_approval()
}

fn pause_on_send(
    def: AgentDefinition,
    mut script: Vec<ModelResponse>,
    options: RunOptions,
) -> RunResult {
    script.push(ModelResponse::tool_calls([(
        "send_1",
        "send",
        r#"{"to":"ops"}"#,
    )]));
    let agent = create_agent(def.tool(gated()).max_steps(100)).unwrap();
    let client = Arc::new(ScriptedClient::from_responses(script));
    let state = rt()
        .block_on(agent.run(RunOptions { client, ..options }))
        .unwrap();
    assert_eq!(state.messages().len(), 100);
    state
}

/// A chat paused on an approval: 99 earlier messages, then the call; one step.
fn paused_chat() -> RunResult {
    let earlier = (0..98)
        .map(|i| match i % 2 {
            0 => Message::user(format!(
                "Question {i}: what about topic number {i} and its details?"
            )),
            _ => Message::assistant(format!(
                "Answer {i}: topic {i} is in section {i} of the handbook."
            )),
        })
        .collect();
    let options = RunOptions::new("Send it.", fan_out_client(0)).messages(earlier);
    pause_on_send(AgentDefinition::new("bench"), Vec::new(), options)
}

/// A run paused on an approval after 49 tool turns: 100 messages, 50 steps.
fn paused_tool_history() -> RunResult {
    let search = Tool::new("search", "Search", Value::Null, |input, _| {
        Ok(json!({"hits": [{"title": "Result", "score": 0.93, "query": input["q"]}]}))
    });
    let script = (0..49)
        .map(|i| {
            let args =
                json!({"q": format!("what about topic number {i}?"), "limit": 5}).to_string();
            ModelResponse::tool_calls([(format!("call_{i:04}"), "search", args)])
                .with_usage(850, 40)
        })
        .collect();
    let options = RunOptions::new(
        "Research the topics, then send a summary.",
        fan_out_client(0),
    );
    pause_on_send(AgentDefinition::new("bench").tool(search), script, options)
}

fn state_round_trip(c: &mut Criterion) {
    let mut group = c.benchmark_group("state_100_messages");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(2));
    for (name, state) in [
        ("chat", paused_chat()),
        ("tool_history", paused_tool_history()),
    ] {
        let text = state.to_json();
        println!(
            "state_100_messages/{name}: {} bytes of state JSON",
            text.len()
        );
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(format!("{name}/to_json+from_json"), |b| {
            b.iter(|| RunResult::from_json(&black_box(&state).to_json()).unwrap())
        });
        group.bench_function(format!("{name}/to_json"), |b| {
            b.iter(|| black_box(&state).to_json())
        });
        group.bench_function(format!("{name}/from_json"), |b| {
            b.iter(|| RunResult::from_json(black_box(&text)).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, fan_out, sequential, state_round_trip);
criterion_main!(benches);
