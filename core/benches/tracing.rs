//! Tracing overhead on the run-loop benchmarks' two heavy shapes: a fan-out of
//! 1,000 calls in one turn and a 400-turn sequential run. `off`: the `otel` feature built
//! in but tracing not enabled (what every application pays); `on`: tracing enabled,
//! exporting over OTLP HTTP/protobuf to a receiver on 127.0.0.1 that answers 200.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use phaseo_agent::telemetry::{self, TracingOptions};
use phaseo_agent::{
    create_agent, json, Agent, AgentDefinition, ModelResponse, RunOptions, RunResult,
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

fn agent(concurrency: usize) -> Agent {
    let tool = Tool::new_async("k", "Constant", Value::Null, |_, _| async { Ok(json!(1)) });
    create_agent(
        AgentDefinition::new("bench")
            .tool(tool)
            .max_steps(1_000)
            .tool_execution(ToolExecutionConfig::default().tool_concurrency(concurrency)),
    )
    .unwrap()
}

fn fan_out_client() -> Arc<ScriptedClient> {
    let turn = ModelResponse::tool_calls(
        (0..1_000).map(|i| (format!("c{i}"), "k".to_owned(), "{}".to_owned())),
    );
    Arc::new(ScriptedClient::from_responses([
        turn,
        ModelResponse::text("done"),
    ]))
}

fn sequential_client() -> Arc<ScriptedClient> {
    let steps = (0..400).map(|i| ModelResponse::tool_calls([(format!("c{i}"), "k", "{}")]));
    Arc::new(ScriptedClient::from_responses(
        steps.chain([ModelResponse::text("done")]),
    ))
}

fn run(agent: &Agent, client: Arc<ScriptedClient>) -> RunResult {
    rt().block_on(agent.run(RunOptions::new("go", client)))
        .unwrap()
}

/// An OTLP endpoint that accepts every export (the spans are not decoded: the cost measured
/// is the SDK's, not a collector's).
fn receiver() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut writer = stream;
                loop {
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
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    let _ = writer.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
                }
            });
        }
    });
    base
}

fn bench(c: &mut Criterion, mode: &str) {
    let mut group = c.benchmark_group("tracing");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    let wide = agent(1_000);
    group.throughput(Throughput::Elements(1_000));
    group.bench_function(format!("fan_out_1000_calls/{mode}"), |b| {
        b.iter_batched(fan_out_client, |c| run(&wide, c), BatchSize::SmallInput)
    });
    let long = agent(1);
    group.throughput(Throughput::Elements(400));
    group.bench_function(format!("sequential_400_turns/{mode}"), |b| {
        b.iter_batched(sequential_client, |c| run(&long, c), BatchSize::SmallInput)
    });
    group.finish();
}

fn off(c: &mut Criterion) {
    telemetry::shutdown().unwrap();
    bench(c, "off");
}

fn on(c: &mut Criterion) {
    telemetry::enable(TracingOptions {
        endpoint: Some(receiver()),
        service_name: Some("bench".to_owned()),
        ..Default::default()
    })
    .unwrap();
    bench(c, "on");
    telemetry::shutdown().unwrap();
}

criterion_group!(benches, off, on);
criterion_main!(benches);
