//! The work of whole runs, counted rather than timed: the run-loop benchmark's two runs (one
//! turn of 1,000 calls of a trivial tool, or 200 one-call turns), `RUNS` times in a row, so
//! that an instruction-counting profiler gives the same figure on a busy machine as on an
//! idle one. The difference between two counts (e.g. 22 and 2 runs) is the cost of 20 runs,
//! set-up and the process's own start excluded:
//!
//! ```text
//! cargo build --release -p phaseo-agent --example run_cost
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/run_cost fan-out 22
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/run_cost fan-out 2
//! ```
//!
//! `run_cost fan-out|sequential [RUNS]` (RUNS: 20); it prints the mean wall time of a run.

use std::sync::Arc;
use std::time::Instant;

use phaseo_agent::{
    create_agent, json, AgentDefinition, ModelResponse, RunOptions, ScriptedClient, Tool,
    ToolExecutionConfig, Value,
};

/// The allocator every binding's library is built with, so that the counts are theirs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The scripted model of one run: a turn of `calls` calls, or `turns` turns of one call.
fn client(workload: &str) -> Arc<ScriptedClient> {
    let turns: Vec<ModelResponse> = match workload {
        "sequential" => (0..200)
            .map(|i| ModelResponse::tool_calls([(format!("c{i}"), "k", "{}")]))
            .collect(),
        _ => vec![ModelResponse::tool_calls(
            (0..1_000).map(|i| (format!("c{i}"), "k".to_owned(), "{}".to_owned())),
        )],
    };
    Arc::new(ScriptedClient::from_responses(
        turns.into_iter().chain([ModelResponse::text("done")]),
    ))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let workload = args.next().unwrap_or_else(|| "fan-out".to_owned());
    let runs: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let tool = Tool::new_async("k", "Constant", Value::Null, |_, _| async { Ok(json!(1)) });
    let agent = create_agent(
        AgentDefinition::new("bench")
            .tool(tool)
            .max_steps(1_000)
            .tool_execution(ToolExecutionConfig::default().tool_concurrency(1_000)),
    )
    .expect("a valid agent");
    let started = Instant::now();
    for _ in 0..runs {
        let result = runtime
            .block_on(agent.run(RunOptions::new("go", client(&workload))))
            .expect("the run ends");
        std::hint::black_box(result);
    }
    println!("{workload}: {:?} per run", started.elapsed() / runs.max(1));
}
