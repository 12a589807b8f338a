//! Ruby binding of the Phaseo Agent SDK: the native extension
//! `phaseo_agent_sdk/phaseo_agent_sdk.so`. The public, idiomatic layer is
//! `lib/phaseo_agent_sdk.rb`; this crate only adapts Ruby callables to the core's traits
//! and converts values. Threads: see [`host`].

mod adapters;
mod agent;
mod convert;
mod drain;
mod host;
mod model;
mod runtime;
mod serve;
mod spec;
mod state;
mod store;
mod tracing;

use magnus::{Error, Ruby};

/// `PhaseoAgentSdk::Native.set_wake_fd(fd)`: the Ruby layer's wake pipe (see [`host`]);
/// `stop_drain`: see [`drain`].
fn native_wake(ruby: &Ruby, module: magnus::RModule) -> Result<(), Error> {
    use magnus::{function, Module, Object};
    let _ = ruby;
    let native = module.define_module("Native")?;
    native.define_singleton_method("set_wake_fd", function!(host::set_wake_fd, 1))?;
    native.define_singleton_method("stop_drain", function!(drain::stop, 0))?;
    Ok(())
}

#[magnus::init(name = "phaseo_agent_sdk")]
fn init(ruby: &Ruby) -> Result<(), Error> {
    let module = ruby.define_module("PhaseoAgentSdk")?;
    runtime::init(ruby, module)?;
    agent::init(ruby, module)?;
    state::init(ruby, module)?;
    store::init(ruby, module)?;
    model::init(ruby, module)?;
    tracing::init(ruby, module)?;
    serve::init(ruby, module)?;
    native_wake(ruby, module)?;
    resolve_wrapped_classes(ruby);
    Ok(())
}

/// Looks up, once and now, the Ruby class of every wrapped Rust value. Each is otherwise
/// looked up on first use through a lazy cell whose lookup calls Ruby (`const_get`), which
/// may hand the GVL to another thread: one that then reaches the same cell waits for it
/// while holding the GVL, and the first can never finish (every run of the process hangs).
/// At load time no other thread uses the extension yet.
fn resolve_wrapped_classes(ruby: &Ruby) {
    use magnus::TypedData;
    let _ = agent::NativeAgent::class(ruby);
    let _ = agent::NativeStream::class(ruby);
    let _ = agent::NativeHttpClient::class(ruby);
    let _ = agent::NativeCancelToken::class(ruby);
    let _ = state::NativeState::class(ruby);
    let _ = model::StreamSink::class(ruby);
    let _ = runtime::RbToolRuntime::class(ruby);
    let _ = runtime::Completion::class(ruby);
    let _ = store::NativeRunStore::class(ruby);
    let _ = serve::NativeMcpServer::class(ruby);
}
