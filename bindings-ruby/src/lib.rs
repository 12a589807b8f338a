//! Ruby binding of the Phaseo Agent SDK: the native extension
//! `phaseo_agent_sdk/phaseo_agent_sdk.so`. The public, idiomatic layer is
//! `lib/phaseo_agent_sdk.rb`; this crate only adapts Ruby callables to the core's traits
//! and converts values. Threads: see [`host`].

mod adapters;
mod agent;
mod convert;
mod host;
mod runtime;
mod spec;

use magnus::{Error, Ruby};

#[magnus::init(name = "phaseo_agent_sdk")]
fn init(ruby: &Ruby) -> Result<(), Error> {
    let module = ruby.define_module("PhaseoAgentSdk")?;
    runtime::init(ruby, module)?;
    agent::init(ruby, module)?;
    Ok(())
}
