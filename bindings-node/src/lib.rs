//! Node binding of the Phaseo Agent SDK: the private native module behind
//! `@phaseo/agent-sdk` (the public layer is `index.js` over `lib/`, + `index.d.ts`).

// napi-rs registers exports outside test builds, so a test build sees them as unused.
#![cfg_attr(test, allow(dead_code))]

mod adapters;
mod agent;
mod driver;
mod errors;
mod host;
mod serve;
mod spec;
mod store;
mod tracing;
mod values;

/// mimalloc for everything the addon allocates: runs allocate many small short-lived
/// values on the runtime's threads, where glibc keeps growing and trimming its arenas.
#[global_allocator]
static ALLOCATOR: phaseo_agent::allocator::MiMalloc = phaseo_agent::allocator::MiMalloc;

/// The tokio runtime of the addon. A run is one task (its concurrent tool calls are futures
/// of that task), and the JavaScript thread needs a core of its own to run the tools, so
/// the runtime gets one worker per core but one (at least one): on a 2-core machine a
/// second worker only competes with the JavaScript thread for CPU. `PHASEO_TOKIO_WORKERS`
/// (a positive integer) sets the number of workers instead.
#[napi_derive::module_init]
fn init() {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let workers = std::env::var("PHASEO_TOKIO_WORKERS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(cores.saturating_sub(1).max(1));
    if let Ok(rt) = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
    {
        napi::bindgen_prelude::create_custom_tokio_runtime(rt);
    }
}
