//! Tracing from Ruby (docs/behaviour.md, tracing): `PhaseoAgentSdk.enable_tracing`,
//! `flush_tracing`, `shutdown_tracing`. The spans are the core's; this module only switches
//! them on. Exports wait on a thread of their own while the calling Ruby thread waits in
//! Ruby (GVL released, interruptible), as a run does.

use std::collections::BTreeMap;
use std::time::Duration;

use magnus::value::ReprValue;
use magnus::{Error, RHash, Ruby};
use phaseo_agent::telemetry::{self, TracingOptions};
use phaseo_agent::Value;

use crate::convert::to_json;
use crate::host::{serve_until, Slot};

/// `Native.enable_tracing(endpoint, headers, service_name, capture_content)`.
fn enable_tracing(
    ruby: &Ruby,
    endpoint: Option<String>,
    headers: Option<RHash>,
    service_name: Option<String>,
    capture_content: bool,
) -> Result<(), Error> {
    let mut map = BTreeMap::new();
    if let Some(h) = headers {
        let Value::Object(fields) = to_json(ruby, h.as_value(), "enable_tracing headers")? else {
            unreachable!("a Hash reads as an object")
        };
        for (name, value) in fields {
            let Value::String(text) = value else {
                return Err(Error::new(
                    ruby.exception_type_error(),
                    format!("enable_tracing headers: the value of '{name}' must be a String"),
                ));
            };
            map.insert(name, text);
        }
    }
    telemetry::enable(TracingOptions {
        endpoint,
        headers: map,
        service_name,
        capture_content,
    })
    .map_err(|e| crate::agent::raise(ruby, e))
}

/// Runs `job` (an export that waits for the collector) on a thread of its own; this Ruby
/// thread waits without the GVL. Its error is a RuntimeError.
fn exporting(ruby: &Ruby, job: fn() -> Result<(), String>) -> Result<(), Error> {
    let slot = Slot::new();
    let filled = slot.clone();
    std::thread::spawn(move || filled.fill(job()));
    serve_until(ruby, &*slot, &|| {}, Duration::ZERO)?;
    slot.take()
        .unwrap_or(Ok(()))
        .map_err(|e| Error::new(ruby.exception_runtime_error(), e))
}

/// `Native.flush_tracing`: exports every span ended so far and waits for the answer.
fn flush_tracing(ruby: &Ruby) -> Result<(), Error> {
    exporting(ruby, telemetry::flush)
}

/// `Native.shutdown_tracing`: exports what is left and turns tracing off.
fn shutdown_tracing(ruby: &Ruby) -> Result<(), Error> {
    exporting(ruby, telemetry::shutdown)
}

/// `Native.tracing_enabled?`.
fn tracing_enabled() -> bool {
    telemetry::is_enabled()
}

/// Defines the tracing functions of `PhaseoAgentSdk::Native`.
pub fn init(ruby: &Ruby, module: magnus::RModule) -> Result<(), Error> {
    use magnus::{function, Module, Object};
    let _ = ruby;
    let native = module.define_module("Native")?;
    native.define_singleton_method("enable_tracing", function!(enable_tracing, 4))?;
    native.define_singleton_method("flush_tracing", function!(flush_tracing, 0))?;
    native.define_singleton_method("shutdown_tracing", function!(shutdown_tracing, 0))?;
    native.define_singleton_method("tracing_enabled?", function!(tracing_enabled, 0))?;
    Ok(())
}
