//! What the application sets when it enables tracing.

use std::collections::BTreeMap;

/// Options of [`super::enable`]. Every field left unset falls back to the standard
/// OpenTelemetry environment variables (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
/// `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`,
/// `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`),
/// then to the OTLP defaults (`http://localhost:4318`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TracingOptions {
    /// The OTLP/HTTP base URL, e.g. `http://localhost:4318` (`/v1/traces` is appended
    /// unless the URL already ends with it).
    pub endpoint: Option<String>,
    /// Extra HTTP headers of every export (e.g. an `authorization` header of the collector;
    /// never recorded on a span).
    pub headers: BTreeMap<String, String>,
    /// The `service.name` resource attribute.
    pub service_name: Option<String>,
    /// Records tool arguments and results and the model's input and output messages on
    /// the spans (off: they may hold personal data).
    pub capture_content: bool,
}

impl TracingOptions {
    /// The OTLP traces URL of an explicit endpoint.
    pub(crate) fn traces_url(&self) -> Option<String> {
        let base = self.endpoint.as_deref()?.trim();
        if base.is_empty() {
            return None;
        }
        let base = base.trim_end_matches('/');
        Some(if base.ends_with("/v1/traces") {
            base.to_owned()
        } else {
            format!("{base}/v1/traces")
        })
    }
}
