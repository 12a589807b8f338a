//! The futures of a run, a continue and a recover stay a few kilobytes. A binding moves
//! each one whole when it boxes it to drive it, and it is the first memory a run touches:
//! a future awaited inline (or passed by value into an `async fn`, which holds it twice)
//! can double them unnoticed. The bounds leave room over today's sizes (7,064, 10,872 and
//! 11,344 bytes, in debug and release builds alike).

mod common;

use common::*;
use phaseo_agent::{AgentDefinition, ContinueOptions, RunOptions};

const KIB: usize = 1024;

#[test]
fn a_runs_futures_stay_a_few_kilobytes() {
    let agent = agent(AgentDefinition::new("sizes").tool(echo("echo")));
    let client = scripted([text("done")]);
    let state = runtime(1)
        .block_on(agent.run(RunOptions::new("go", client.clone())))
        .expect("the run ends");
    let (run_bound, continue_bound) = (8 * KIB, 12 * KIB);

    let run = std::mem::size_of_val(&agent.run(RunOptions::new("go", client.clone())));
    let continued =
        std::mem::size_of_val(&agent.continue_run(&state, ContinueOptions::new(client.clone())));
    let recovered =
        std::mem::size_of_val(&agent.recover("run", ContinueOptions::new(client.clone())));
    println!("run {run} B, continue {continued} B, recover {recovered} B");
    assert!(
        run <= run_bound,
        "a run's future is {run} bytes (bound {run_bound})"
    );
    assert!(
        continued <= continue_bound,
        "a continue's future is {continued} bytes"
    );
    assert!(
        recovered <= continue_bound,
        "a recover's future is {recovered} bytes"
    );
}
