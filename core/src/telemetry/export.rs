//! The process-wide tracer: installed by [`enable`], flushed by [`flush`], removed by
//! [`shutdown`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry::InstrumentationScope;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use opentelemetry_sdk::Resource;

use super::options::TracingOptions;
use crate::error::AgentError;

/// The installed tracer and what every run reads from it.
pub(crate) struct Installed {
    pub(crate) tracer: SdkTracer,
    pub(crate) capture_content: bool,
    provider: SdkTracerProvider,
}

/// Read on every run: a run of a process that never enabled tracing costs this load.
static ENABLED: AtomicBool = AtomicBool::new(false);
static INSTALLED: RwLock<Option<Arc<Installed>>> = RwLock::new(None);

/// The tracer, when tracing is on.
pub(crate) fn installed() -> Option<Arc<Installed>> {
    if !ENABLED.load(Ordering::Relaxed) {
        return None;
    }
    INSTALLED.read().ok().and_then(|g| g.clone())
}

/// Whether tracing is on.
pub fn is_enabled() -> bool {
    installed().is_some()
}

/// Turns tracing on for the whole process: every later run records spans and exports them
/// over OTLP HTTP/protobuf in the background. Called again, it replaces the exporter (the
/// previous one is flushed first). Fails with `definition_invalid` naming the bad option
/// (an endpoint that is not a URL, a header that is not a valid HTTP header).
pub fn enable(options: TracingOptions) -> Result<(), AgentError> {
    let invalid =
        |m: String| AgentError::definition_invalid(format!("Invalid tracing options: {m}"));
    for (name, value) in &options.headers {
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(invalid(format!(
                "header name '{name}' is not a valid HTTP header name"
            )));
        }
        if reqwest::header::HeaderValue::from_str(value).is_err() {
            return Err(invalid(format!(
                "the value of header '{name}' is not a valid HTTP header value"
            )));
        }
    }
    let client = blocking_client().map_err(invalid)?;
    let mut builder = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_http_client(client)
        .with_timeout(Duration::from_secs(10));
    if let Some(url) = options.traces_url() {
        if reqwest::Url::parse(&url).is_err() {
            return Err(invalid(format!(
                "endpoint '{}' is not a URL",
                options.endpoint.as_deref().unwrap_or_default()
            )));
        }
        builder = builder.with_endpoint(url);
    }
    if !options.headers.is_empty() {
        builder = builder.with_headers(
            options
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<HashMap<_, _>>(),
        );
    }
    let exporter = builder.build().map_err(|e| invalid(e.to_string()))?;
    let mut resource = Resource::builder();
    if let Some(name) = options.service_name.clone().filter(|n| !n.is_empty()) {
        resource = resource.with_service_name(name);
    }
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource.build())
        .build();
    let scope = InstrumentationScope::builder("phaseo-agent")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build();
    let installed = Arc::new(Installed {
        tracer: provider.tracer_with_scope(scope),
        capture_content: options.capture_content,
        provider,
    });
    let previous = {
        let mut slot = INSTALLED.write().unwrap_or_else(|p| p.into_inner());
        slot.replace(installed)
    };
    ENABLED.store(true, Ordering::Relaxed);
    if let Some(previous) = previous {
        let _ = previous.provider.shutdown();
    }
    Ok(())
}

/// Exports every span ended so far; waits for the export (a short process calls it, or
/// [`shutdown`], before it exits). A no-op when tracing is off. Fails with the exporter's
/// reason when the collector could not be reached.
pub fn flush() -> Result<(), String> {
    match INSTALLED.read().ok().and_then(|g| g.clone()) {
        None => Ok(()),
        Some(i) => i.provider.force_flush().map_err(|e| e.to_string()),
    }
}

/// Exports what is left and turns tracing off (runs started later record nothing).
pub fn shutdown() -> Result<(), String> {
    ENABLED.store(false, Ordering::Relaxed);
    let taken = INSTALLED.write().unwrap_or_else(|p| p.into_inner()).take();
    match taken {
        None => Ok(()),
        Some(i) => i.provider.shutdown().map_err(|e| e.to_string()),
    }
}

/// A blocking reqwest client on the model clients' TLS (rustls on ring, the platform
/// verifier). Blocking, because the SDK's batch processor exports from its own thread, so
/// exporting needs no host runtime; built on a fresh thread, because a blocking client
/// may not be built inside an async runtime (the application may enable tracing there).
fn blocking_client() -> Result<reqwest::blocking::Client, String> {
    std::thread::spawn(|| {
        reqwest::blocking::Client::builder()
            .tls_backend_preconfigured(crate::clients::tls_config())
            .user_agent(concat!("phaseo-agent/", env!("CARGO_PKG_VERSION")))
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| format!("could not build the OTLP HTTP client: {e}"))
    })
    .join()
    .map_err(|_| "could not build the OTLP HTTP client".to_owned())?
}
