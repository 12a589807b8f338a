//! Tracing from Node: `enableTracing`, `flushTracing`, `shutdownTracing`. The
//! host's current span (`@opentelemetry/api`) is read by the JS layer (`tracing.js`) and
//! passed with each run as its `traceparent`.

use std::collections::HashMap;

use napi_derive::napi;
use phaseo_agent::telemetry::{self, TracingOptions};

use crate::errors::to_napi;

/// Options of `enableTracing` (unset: the `OTEL_*` environment variables).
#[napi(object)]
pub struct TracingSpec {
    pub endpoint: Option<String>,
    pub headers: Option<HashMap<String, String>>,
    pub service_name: Option<String>,
    pub capture_content: Option<bool>,
}

/// Turns tracing on for the process.
#[napi(js_name = "enableTracing")]
pub fn enable_tracing(spec: Option<TracingSpec>) -> napi::Result<()> {
    let spec = spec.unwrap_or(TracingSpec {
        endpoint: None,
        headers: None,
        service_name: None,
        capture_content: None,
    });
    telemetry::enable(TracingOptions {
        endpoint: spec.endpoint,
        headers: spec.headers.unwrap_or_default().into_iter().collect(),
        service_name: spec.service_name,
        capture_content: spec.capture_content.unwrap_or(false),
    })
    .map_err(to_napi)
}

/// Exports every ended span (off the JS thread).
#[napi(js_name = "flushTracing")]
pub async fn flush_tracing() -> napi::Result<()> {
    blocking(telemetry::flush).await
}

/// Exports what is left and turns tracing off.
#[napi(js_name = "shutdownTracing")]
pub async fn shutdown_tracing() -> napi::Result<()> {
    blocking(telemetry::shutdown).await
}

async fn blocking(f: fn() -> Result<(), String>) -> napi::Result<()> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| napi::Error::from_reason(e.to_string()))?
        .map_err(napi::Error::from_reason)
}
