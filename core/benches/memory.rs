//! Memory held by paused runs: 10,000 `RunResult`s parsed from distinct states, measured
//! with a counting global allocator. Prints "bytes per paused run: N".

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use phaseo_agent::{
    create_agent, json, AgentDefinition, Message, ModelResponse, RunOptions, RunResult,
    ScriptedClient, Tool, Value,
};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const RUNS: usize = 10_000;

/// A run paused on an approval, with a short earlier conversation: 6 messages.
fn template() -> RunResult {
    let gated =
        Tool::new("refund", "Refunds an order", Value::Null, |i, _| Ok(i)).require_approval();
    let agent = create_agent(AgentDefinition::new("support").tool(gated)).unwrap();
    let earlier = vec![
        Message::user("Hi, my order #1234 arrived broken."),
        Message::assistant("Sorry to hear that! Could you send a photo of the damage?"),
        Message::user("Sure, here it is. I'd like a refund please."),
    ];
    let client = Arc::new(ScriptedClient::from_responses([ModelResponse::tool_calls(
        [("call_1", "refund", r#"{"order":"1234","amount":49.9}"#)],
    )
    .with_usage(420, 25)]));
    let options = RunOptions::new("Please refund it.", client)
        .messages(earlier)
        .context(json!({"customer": "c-42", "tier": "gold"}));
    phaseo_agent::exec::block_on(agent.run(options)).unwrap()
}

fn main() {
    let template = template();
    let text = template.to_json();
    let id = template.run.id.clone();
    let texts: Vec<String> = (0..RUNS)
        .map(|i| text.replace(&id, &format!("00000000-0000-4000-8000-{i:012}")))
        .collect();
    let before = LIVE.load(Ordering::SeqCst);
    let runs: Vec<RunResult> = texts
        .iter()
        .map(|t| RunResult::from_json(t).unwrap())
        .collect();
    let after = LIVE.load(Ordering::SeqCst);
    assert_eq!(runs.len(), RUNS);
    assert_ne!(runs[0].run.id, runs[1].run.id);
    let per_run = (after - before) / RUNS;
    println!(
        "paused run: {} messages, {} bytes of state JSON, size_of::<RunResult>() = {}",
        template.messages().len(),
        text.len(),
        std::mem::size_of::<RunResult>()
    );
    println!("bytes per paused run: {per_run}");
}
