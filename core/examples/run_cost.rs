//! The work of whole runs, counted rather than timed: the run-loop benchmark's two runs (one
//! turn of 1,000 calls of a trivial tool, or 200 one-call turns), `RUNS` times in a row, so
//! that an instruction-counting profiler gives the same figure on a busy machine as on an
//! idle one. The difference between two counts (e.g. 22 and 2 runs) is the cost of 20 runs,
//! set-up and the process's own start excluded:
//!
//! ```text
//! cargo build --release -p phaseo-agent --features mimalloc --example run_cost
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/run_cost fan-out 22
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/run_cost fan-out 2
//! ```
//!
//! `run_cost fan-out|sequential|host-fan-out|host-sequential|empty [RUNS]` (RUNS: 20); it
//! prints the mean wall time of a run. `empty` is a run whose one model turn returns the
//! final text (the run loop's own floor). The `host-` workloads call a tool the way every
//! binding's tools are called: through the core's JSON host adapter
//! (`phaseo_agent::json_host`), with `{"a": 1, "b": 2}` checked against the tool's JSON
//! Schema, the arguments written as JSON text for the host and the host's answer read back
//! from text; the host itself answers at once. The others call a Rust closure with no
//! schema. With `RUN_COST_TEXT=whole` or `without-items` each run's state is also written
//! as that text (`RunResult::to_json`, `to_json_without_items`), as a binding's run end
//! does; `print` prints the text without items. `RUN_COST_ARGS` replaces the `host-`
//! workloads' argument text (an object with integers `a` and `b`, other members allowed).

use std::sync::Arc;
use std::time::Instant;

use phaseo_agent::json_host::{CallKind, JsonArgs, JsonExecutor, JsonHostFn};
use phaseo_agent::{
    async_trait, create_agent, json, AgentDefinition, HostStreamSender, ModelResponse, RunOptions,
    ScriptedClient, Tool, ToolError, ToolExecutionConfig, ToolRuntime, Value,
};

/// The allocator every binding's library is built with, so that the counts are theirs.
#[global_allocator]
static GLOBAL: phaseo_agent::allocator::MiMalloc = phaseo_agent::allocator::MiMalloc;

/// A host that answers every call at once, as a binding's host would after its function
/// returned: the arguments written as JSON text (as the C ABI writes them for Go and C#),
/// the answer read from JSON text.
struct TextHost;

#[async_trait]
impl JsonHostFn for TextHost {
    async fn call(
        &self,
        _kind: CallKind,
        args: JsonArgs<'_>,
        _runtime: Option<&ToolRuntime>,
    ) -> Result<Value, ToolError> {
        // What the C ABI hands its hosts (Go, C#).
        std::hint::black_box(args.to_canonical_text());
        serde_json::from_str("3").map_err(|e| ToolError::new(e.to_string()))
    }

    async fn call_streaming(
        &self,
        _args: JsonArgs<'_>,
        _events: HostStreamSender,
    ) -> Result<Value, ToolError> {
        Err(ToolError::new("not a model"))
    }
}

/// The scripted model of one run: a turn of `calls` calls, or `turns` turns of one call;
/// `host_arguments` is the argument text of the `host-` workloads' calls.
fn client(workload: &str, host_arguments: &str) -> Arc<ScriptedClient> {
    let arguments = match workload.starts_with("host-") {
        true => host_arguments,
        false => "{}",
    };
    let turns: Vec<ModelResponse> = match workload.ends_with("sequential") {
        _ if workload == "empty" => Vec::new(),
        true => (0..200)
            .map(|i| ModelResponse::tool_calls([(format!("c{i}"), "k", arguments)]))
            .collect(),
        false => {
            vec![ModelResponse::tool_calls((0..1_000).map(|i| {
                (format!("c{i}"), "k".to_owned(), arguments.to_owned())
            }))]
        }
    };
    Arc::new(ScriptedClient::from_responses(
        turns.into_iter().chain([ModelResponse::text("done")]),
    ))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let workload = args.next().unwrap_or_else(|| "fan-out".to_owned());
    let runs: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let text = std::env::var("RUN_COST_TEXT").ok();
    let host_arguments =
        std::env::var("RUN_COST_ARGS").unwrap_or_else(|_| r#"{"a":1,"b":2}"#.to_owned());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let tool = match workload.starts_with("host-") {
        true => Tool::with_executor(
            "k",
            "Adds two integers",
            json!({
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"]
            }),
            Arc::new(JsonExecutor(TextHost)),
        ),
        false => Tool::new_async("k", "Constant", Value::Null, |_, _| async { Ok(json!(1)) }),
    };
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
            .block_on(agent.run(RunOptions::new("go", client(&workload, &host_arguments))))
            .expect("the run ends");
        match text.as_deref() {
            Some("whole") => drop(std::hint::black_box(result.to_json())),
            Some("without-items") => drop(std::hint::black_box(result.to_json_without_items())),
            Some("print") => println!("{}", result.to_json_without_items()),
            _ => drop(std::hint::black_box(result)),
        }
    }
    println!("{workload}: {:?} per run", started.elapsed() / runs.max(1));
}
