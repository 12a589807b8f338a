//! Ruby binding of the Phaseo Agent SDK: the native extension
//! `phaseo_agent_sdk/phaseo_agent_sdk.so`. The public, idiomatic layer is
//! `lib/phaseo_agent_sdk.rb`; this crate only adapts Ruby callables to the core's traits
//! and converts values. Threads: see [`host`].

mod adapters;
mod agent;
mod convert;
mod host;
mod model;
mod runtime;
mod spec;
mod store;
mod tracing;

use magnus::{Error, Ruby};

/// `PhaseoAgentSdk::Native.set_wake_fd(fd)`: the Ruby layer's wake pipe (see [`host`]).
fn native_wake(ruby: &Ruby, module: magnus::RModule) -> Result<(), Error> {
    use magnus::{function, Module, Object};
    let _ = ruby;
    let native = module.define_module("Native")?;
    native.define_singleton_method("set_wake_fd", function!(host::set_wake_fd, 1))?;
    Ok(())
}

#[magnus::init(name = "phaseo_agent_sdk")]
fn init(ruby: &Ruby) -> Result<(), Error> {
    let module = ruby.define_module("PhaseoAgentSdk")?;
    runtime::init(ruby, module)?;
    agent::init(ruby, module)?;
    store::init(ruby, module)?;
    model::init(ruby, module)?;
    tracing::init(ruby, module)?;
    native_wake(ruby, module)?;
    Ok(())
}
