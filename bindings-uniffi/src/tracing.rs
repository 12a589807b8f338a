//! Tracing: turning the core's OpenTelemetry spans on from Kotlin/Swift. The
//! host's current span reaches a run as its `traceparent` option (the Kotlin layer reads
//! the OpenTelemetry Java API's current span when that API is on the classpath).

use std::collections::HashMap;

use phaseo_agent::telemetry::{self, TracingOptions as CoreOptions};

use crate::PhaseoError;

/// Options of [`tracing_enable`]; unset ones come from the `OTEL_*` environment variables.
#[derive(uniffi::Record, Default)]
pub struct TracingOptions {
    /// OTLP/HTTP base URL, e.g. `http://localhost:4318` (`/v1/traces` is appended).
    #[uniffi(default)]
    pub endpoint: Option<String>,
    /// Extra HTTP headers of every export (never recorded on a span).
    #[uniffi(default)]
    pub headers: HashMap<String, String>,
    /// The `service.name` resource attribute.
    #[uniffi(default)]
    pub service_name: Option<String>,
    /// Records tool arguments/results and model messages on the spans.
    #[uniffi(default)]
    pub capture_content: bool,
}

/// Records OpenTelemetry GenAI spans of every run and exports them over OTLP HTTP/protobuf.
#[uniffi::export]
pub fn tracing_enable(options: TracingOptions) -> Result<(), PhaseoError> {
    telemetry::enable(CoreOptions {
        endpoint: options.endpoint,
        headers: options.headers.into_iter().collect(),
        service_name: options.service_name,
        capture_content: options.capture_content,
    })
    .map_err(PhaseoError::from)
}

/// Exports every span ended so far (blocks until the collector answered).
#[uniffi::export]
pub fn tracing_flush() -> Result<(), PhaseoError> {
    telemetry::flush().map_err(PhaseoError::definition)
}

/// Exports what is left and turns tracing off.
#[uniffi::export]
pub fn tracing_shutdown() -> Result<(), PhaseoError> {
    telemetry::shutdown().map_err(PhaseoError::definition)
}
