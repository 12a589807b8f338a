//! Tracing for C hosts: turn the OpenTelemetry export on, flush it, shut it
//! down. A run's parent span is given per run as the `traceparent` key of its options (read
//! by the core's `phaseo_agent::spec`). A C host has no exit hook the SDK could use: it calls
//! `phaseo_tracing_shutdown` (or `phaseo_tracing_flush`) before it exits.

use std::collections::BTreeMap;
use std::ffi::c_char;

use phaseo_agent::telemetry::{self, TracingOptions};
use serde::Deserialize;

use crate::error::{guard, read_opt_str, CError, PhaseoStatus};

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TracingSpec {
    endpoint: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    service_name: Option<String>,
    #[serde(default)]
    capture_content: bool,
}

/// Turns tracing on for the whole process. `options_json` (NULL = `{}`) is `{"endpoint"?,
/// "headers"?, "serviceName"?, "captureContent"?}`; unset fields come from the
/// `OTEL_EXPORTER_OTLP_*` / `OTEL_SERVICE_NAME` environment variables. Called again, it
/// replaces the exporter. A bad option is a `definition_invalid` error naming it.
#[no_mangle]
pub unsafe extern "C" fn phaseo_tracing_enable(
    options_json: *const c_char,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let spec: TracingSpec = match read_opt_str(options_json, "options_json")? {
            None => TracingSpec::default(),
            Some(text) => serde_json::from_str(text)
                .map_err(|e| CError::definition(format!("Invalid tracing options: {e}")))?,
        };
        telemetry::enable(TracingOptions {
            endpoint: spec.endpoint,
            headers: spec.headers,
            service_name: spec.service_name,
            capture_content: spec.capture_content,
        })?;
        Ok(PhaseoStatus::Ok)
    })
}

/// Whether tracing is on.
#[no_mangle]
pub extern "C" fn phaseo_tracing_is_enabled() -> bool {
    telemetry::is_enabled()
}

/// Exports every span ended so far and waits for the export (blocking: not from a
/// callback). A no-op when tracing is off; an unreachable collector is an error.
#[no_mangle]
pub unsafe extern "C" fn phaseo_tracing_flush(out_error: *mut *mut c_char) -> PhaseoStatus {
    guard(out_error, || {
        telemetry::flush().map_err(export_error)?;
        Ok(PhaseoStatus::Ok)
    })
}

/// Exports what is left and turns tracing off (blocking: not from a callback).
#[no_mangle]
pub unsafe extern "C" fn phaseo_tracing_shutdown(out_error: *mut *mut c_char) -> PhaseoStatus {
    guard(out_error, || {
        telemetry::shutdown().map_err(export_error)?;
        Ok(PhaseoStatus::Ok)
    })
}

/// Not a docs/behaviour.md §9 error (no run is involved): the code `tracing_export_failed`.
fn export_error(message: String) -> CError {
    CError::raw(
        serde_json::json!({
            "code": "tracing_export_failed",
            "message": format!("Tracing export failed: {message}"),
        })
        .to_string(),
    )
}
