//! What the two HTTP model clients share: the `reqwest` client (rustls on ring, system CA
//! certificates, environment/system proxies), settings with a redacted API key, sending a
//! JSON request with a timeout and cancellation, turning HTTP failures into gateway errors
//! (with `Retry-After`), and a small server-sent-events reader.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use reqwest::StatusCode;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::GatewayErrorInfo;
use crate::model::{
    is_retryable_status, DeltaSink, ModelError, ModelFailure, ModelResponse, RetryHint,
};
use crate::state::Usage;

/// Default request timeout of both clients.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Longest reason kept from an error body.
const MAX_REASON_CHARS: usize = 500;

/// Longest SSE line accepted (a line longer than this is a malformed stream).
const MAX_SSE_LINE: usize = 16 * 1024 * 1024;

/// Most bytes read of one response (a whole body, or an event stream from its first byte to
/// its last): more is a broken or hostile endpoint, which would otherwise fill the memory
/// (a body must only end within the timeout, a stream only keep sending).
const MAX_BODY: usize = 128 * 1024 * 1024;

/// What replaces an API key wherever it might otherwise be shown.
const REDACTED: &str = "[redacted]";

/// Settings common to both clients. `Debug` never shows the key.
#[derive(Clone)]
pub(crate) struct HttpSettings {
    pub(crate) base_url: String,
    pub(crate) api_key: Option<String>,
    pub(crate) timeout: Duration,
    pub(crate) headers: Vec<(String, String)>,
}

impl HttpSettings {
    pub(crate) fn new(base_url: &str, api_key: Option<String>) -> Self {
        Self {
            base_url: trim_base(base_url),
            api_key: api_key.filter(|k| !k.is_empty()),
            timeout: DEFAULT_TIMEOUT,
            headers: Vec::new(),
        }
    }

    pub(crate) fn set_base_url(&mut self, url: &str) {
        self.base_url = trim_base(url);
    }

    /// Adds a header, replacing an earlier one of the same name (case-insensitive).
    pub(crate) fn set_header(&mut self, name: String, value: String) {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
        self.headers.push((name, value));
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base_url, path)
    }

    /// Replaces every occurrence of the API key in `text` (an endpoint may echo it).
    pub(crate) fn redact(&self, text: &str) -> String {
        match &self.api_key {
            Some(key) if key.len() >= 6 && text.contains(key.as_str()) => {
                text.replace(key.as_str(), REDACTED)
            }
            _ => text.to_owned(),
        }
    }

    /// The failure with the API key redacted from its message and reason.
    pub(crate) fn redact_failure(&self, mut f: ModelFailure) -> ModelFailure {
        f.error.message = self.redact(&f.error.message);
        if let Some(g) = &mut f.error.gateway {
            g.reason = g.reason.as_deref().map(|r| self.redact(r));
        }
        f
    }
}

impl fmt::Debug for HttpSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(n, v)| {
                let sensitive = n.eq_ignore_ascii_case("authorization")
                    || n.to_ascii_lowercase().contains("key")
                    || n.to_ascii_lowercase().contains("token");
                (n.as_str(), if sensitive { REDACTED } else { v.as_str() })
            })
            .collect();
        f.debug_struct("HttpSettings")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| REDACTED))
            .field("timeout", &self.timeout)
            .field("headers", &headers)
            .finish()
    }
}

fn trim_base(url: &str) -> String {
    url.trim().trim_end_matches('/').to_owned()
}

/// An environment variable, `None` when unset or empty.
pub(crate) fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The process-wide HTTP client: HTTP/1.1, rustls with the ring provider and the platform
/// verifier (the system's CA certificates), proxies from `HTTPS_PROXY`/`HTTP_PROXY`/
/// `ALL_PROXY`/`NO_PROXY` (and the macOS/Windows system settings). Shared so the CA
/// certificates are loaded once and connections are pooled.
pub(crate) fn http_client() -> Result<reqwest::Client, ModelError> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .tls_backend_preconfigured(tls_config())
                .user_agent(concat!("phaseo-agent/", env!("CARGO_PKG_VERSION")))
                .build()
                .map_err(|e| format!("could not build the HTTP client: {}", error_chain(&e)))
        })
        .clone()
        .map_err(ModelError::new)
}

/// rustls on ring with the platform verifier. Without any system CA certificate, HTTPS
/// fails with that reason (plain HTTP, e.g. a local server, still works).
pub(crate) fn tls_config() -> rustls::ClientConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions");
    let verifier: Arc<dyn rustls::client::danger::ServerCertVerifier> =
        match rustls_platform_verifier::Verifier::new(provider.clone()) {
            Ok(v) => Arc::new(v),
            Err(e) => Arc::new(NoRoots {
                reason: e.to_string(),
                provider,
            }),
        };
    let mut config = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config
}

/// Verifier used when no CA certificate could be loaded: rejects every certificate.
#[derive(Debug)]
struct NoRoots {
    reason: String,
    provider: Arc<rustls::crypto::CryptoProvider>,
}

impl rustls::client::danger::ServerCertVerifier for NoRoots {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Err(rustls::Error::General(format!(
            "cannot verify the server certificate: {}",
            self.reason
        )))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

// ---------------------------------------------------------------------------------------
// Failures

fn failure(message: String, retry: RetryHint) -> ModelFailure {
    ModelFailure {
        error: ModelError::new(message),
        retry,
    }
}

fn timeout_failure(timeout: Duration) -> ModelFailure {
    failure(
        format!("request timed out after {}ms", timeout.as_millis()),
        RetryHint::RETRY,
    )
}

/// A response longer than [`MAX_BODY`] (not retried).
fn too_long(what: &str) -> ModelFailure {
    malformed(format!("the {what} is longer than {} MiB", MAX_BODY >> 20))
}

/// A body that could not be understood. Not retried: the endpoint would likely answer the
/// same way again.
pub(crate) fn malformed(detail: impl fmt::Display) -> ModelFailure {
    failure(
        format!("malformed response body: {detail}"),
        RetryHint::NEVER,
    )
}

/// An error event inside an otherwise successful stream (retryable, like a 5xx).
pub(crate) fn stream_error(event: &Value) -> ModelFailure {
    let message = reason_from_json(event)
        .or_else(|| event.get("response").and_then(reason_from_json))
        .unwrap_or_else(|| truncate(&event.to_string()));
    failure(format!("model stream failed: {message}"), RetryHint::RETRY)
}

/// An error and all its sources, joined with `: `, skipping repeats.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = current {
        let text = err.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        current = err.source();
    }
    parts.join(": ")
}

/// A transport failure: connection refused or reset, DNS, TLS, a body cut short.
fn transport_failure(url: &str, e: reqwest::Error) -> ModelFailure {
    if e.is_builder() {
        return failure(
            format!(
                "invalid request to {url}: {}",
                error_chain(&e.without_url())
            ),
            RetryHint::NEVER,
        );
    }
    failure(
        format!(
            "connection failed: {url}: {}",
            error_chain(&e.without_url())
        ),
        RetryHint::RETRY,
    )
}

/// The URL as shown in messages: without user info or query.
fn display_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.to_string()
        }
        Err(_) => url.to_owned(),
    }
}

fn truncate(text: &str) -> String {
    match text.char_indices().nth(MAX_REASON_CHARS) {
        Some((i, _)) => text[..i].to_owned(),
        None => text.to_owned(),
    }
}

fn non_empty_str(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// `error.message`, `message`, `reason`, `error` (a string), `detail`, `description`.
fn reason_from_json(body: &Value) -> Option<String> {
    let error = body.get("error");
    non_empty_str(error.and_then(|e| e.get("message")))
        .or_else(|| non_empty_str(body.get("message")))
        .or_else(|| non_empty_str(body.get("reason")))
        .or_else(|| non_empty_str(error))
        .or_else(|| non_empty_str(body.get("detail")))
        .or_else(|| non_empty_str(body.get("description")))
        .map(|r| truncate(&r))
}

/// The request id an endpoint reported in its headers.
pub(crate) fn header_request_id(headers: &HeaderMap) -> Option<String> {
    ["x-request-id", "request-id", "x-phaseo-request-id"]
        .iter()
        .find_map(|name| headers.get(*name)?.to_str().ok())
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// `Retry-After` (seconds or an HTTP date) or `retry-after-ms`.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64(ms.min(86_400_000.0) / 1000.0));
        }
    }
    let value = get("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0)
            .then(|| Duration::from_secs_f64(secs.min(86_400.0)));
    }
    let at = parse_http_date(value)?;
    Some(
        at.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the HTTP date format.
fn parse_http_date(value: &str) -> Option<SystemTime> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let rest = value.split_once(", ")?.1;
    let parts: Vec<&str> = rest.split_whitespace().collect();
    let [day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let month = MONTHS.iter().position(|m| m == month)? + 1;
    let rfc3339 = format!(
        "{year:0>4}-{month:02}-{day:0>2}T{time}Z",
        day = day,
        year = year
    );
    humantime::parse_rfc3339(&rfc3339).ok()
}

/// The failure of an HTTP status ≥ 400: a gateway error (docs/behaviour.md §8).
fn http_failure(status: StatusCode, headers: &HeaderMap, body: &str) -> ModelFailure {
    let json: Option<Value> = serde_json::from_str(body).ok();
    let reason = match &json {
        Some(v) => reason_from_json(v),
        None => None,
    }
    .or_else(|| {
        let text = body.trim();
        (!text.is_empty()).then(|| truncate(text))
    });
    let request_id = header_request_id(headers).or_else(|| {
        json.as_ref()
            .and_then(|v| non_empty_str(v.get("request_id")))
    });
    let status_text = status.canonical_reason().unwrap_or("").to_owned();
    let head = format!("{} {}", status.as_u16(), status_text);
    let message = match &reason {
        Some(r) => format!("Gateway request failed: {} - {r}", head.trim_end()),
        None => format!("Gateway request failed: {}", head.trim_end()),
    };
    ModelFailure {
        error: ModelError {
            message,
            gateway: Some(GatewayErrorInfo {
                status: status.as_u16(),
                status_text,
                request_id,
                reason,
            }),
        },
        retry: RetryHint {
            retryable: is_retryable_status(status.as_u16()),
            retry_after: retry_after(headers),
        },
    }
}

// ---------------------------------------------------------------------------------------
// Sending

/// Runs `fut`, or fails with a non-retryable error as soon as `cancel` fires (dropping
/// `fut` aborts the HTTP request).
pub(crate) async fn cancellable<T>(
    cancel: &CancellationToken,
    fut: impl Future<Output = Result<T, ModelFailure>>,
) -> Result<T, ModelFailure> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(failure("model request cancelled".to_owned(), RetryHint::NEVER)),
        r = fut => r,
    }
}

/// What a POST returned.
pub(crate) enum Reply {
    /// A JSON body (also when a streaming request got a plain JSON answer).
    Json(Value, HeaderMap),
    /// An event stream.
    Events(Box<SseReader>),
}

/// POSTs `body` as JSON to `{base}/{path}`. Non-streaming: the whole exchange must finish
/// within the timeout. Streaming: the headers must arrive within the timeout, then each
/// read of the stream (an idle timeout). HTTP errors become gateway errors; the API key is
/// redacted from every message.
pub(crate) async fn post(
    settings: &HttpSettings,
    path: &str,
    body: &Value,
    stream: bool,
    extra_default_headers: &[(&'static str, &'static str)],
) -> Result<Reply, ModelFailure> {
    post_inner(settings, path, body, stream, extra_default_headers)
        .await
        .map_err(|f| settings.redact_failure(f))
}

async fn post_inner(
    settings: &HttpSettings,
    path: &str,
    body: &Value,
    stream: bool,
    extra_default_headers: &[(&'static str, &'static str)],
) -> Result<Reply, ModelFailure> {
    let client = http_client().map_err(|error| ModelFailure {
        error,
        retry: RetryHint::NEVER,
    })?;
    let url = settings.url(path);
    let shown_url = display_url(&url);
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(
        ACCEPT,
        HeaderValue::from_static(if stream {
            "text/event-stream"
        } else {
            "application/json"
        }),
    );
    for (name, value) in extra_default_headers {
        headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_str(value).expect("valid default header"),
        );
    }
    if let Some(key) = &settings.api_key {
        let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
            failure(
                "the API key contains characters not allowed in an HTTP header".to_owned(),
                RetryHint::NEVER,
            )
        })?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
    }
    for (name, value) in &settings.headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| failure(format!("invalid header name: {name}"), RetryHint::NEVER))?;
        let mut value = HeaderValue::from_str(value)
            .map_err(|_| failure(format!("invalid value for header {name}"), RetryHint::NEVER))?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    let payload = serde_json::to_vec(body).expect("request bodies are JSON");
    let timeout = settings.timeout;
    let exchange = async {
        let response = client
            .post(&url)
            .headers(headers)
            .body(payload)
            .send()
            .await
            .map_err(|e| transport_failure(&shown_url, e))?;
        let status = response.status();
        let headers = response.headers().clone();
        let is_events = headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().starts_with("text/event-stream"));
        if stream && status.is_success() && is_events {
            return Ok(Raw::Events(Box::new(SseReader {
                response,
                timeout,
                url: shown_url.clone(),
                headers,
                buf: Vec::new(),
                scanned: 0,
                read: 0,
                parser: SseParser::default(),
                ended: false,
            })));
        }
        let mut response = response;
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| transport_failure(&shown_url, e))?
        {
            if bytes.len() + chunk.len() > MAX_BODY {
                return Err(too_long("response body"));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(Raw::Full(status, headers, bytes))
    };
    let (status, headers, bytes) = match tokio::time::timeout(timeout, exchange).await {
        Err(_) => return Err(timeout_failure(timeout)),
        Ok(Err(f)) => return Err(f),
        Ok(Ok(Raw::Events(reader))) => return Ok(Reply::Events(reader)),
        Ok(Ok(Raw::Full(status, headers, bytes))) => (status, headers, bytes),
    };
    if status.as_u16() >= 400 {
        return Err(http_failure(
            status,
            &headers,
            &String::from_utf8_lossy(&bytes),
        ));
    }
    if !status.is_success() {
        return Err(malformed(format!("unexpected HTTP status {status}")));
    }
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        if text.is_empty() {
            malformed("empty body")
        } else {
            malformed(format!("{e}: {}", truncate(text)))
        }
    })?;
    if !value.is_object() {
        return Err(malformed(format!(
            "expected a JSON object, got {}",
            truncate(&value.to_string())
        )));
    }
    Ok(Reply::Json(value, headers))
}

enum Raw {
    Events(Box<SseReader>),
    Full(StatusCode, HeaderMap, Vec<u8>),
}

// ---------------------------------------------------------------------------------------
// Server-sent events

/// One server-sent event: its `event:` name (empty when none) and its `data:` lines.
#[derive(Debug, PartialEq)]
pub(crate) struct SseEvent {
    pub(crate) event: String,
    pub(crate) data: String,
}

/// The line-level SSE state machine (`data:`, `event:`, comments, blank-line dispatch).
#[derive(Default)]
struct SseParser {
    data: String,
    has_data: bool,
    event: String,
}

impl SseParser {
    /// Feeds one line (without its line ending); returns an event when the line ends one.
    fn feed(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = value.to_owned(),
            _ => {}
        }
        None
    }

    /// Ends the current event, if it has data.
    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = std::mem::take(&mut self.event);
        if !std::mem::take(&mut self.has_data) {
            return None;
        }
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        })
    }
}

/// Reads server-sent events from a response, with an idle timeout per read.
pub(crate) struct SseReader {
    response: reqwest::Response,
    headers: HeaderMap,
    timeout: Duration,
    url: String,
    buf: Vec<u8>,
    scanned: usize,
    /// Bytes read so far (at most [`MAX_BODY`]).
    read: usize,
    parser: SseParser,
    ended: bool,
}

impl SseReader {
    /// The response headers.
    pub(crate) fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The next event; `None` at the end of the stream.
    pub(crate) async fn next_event(&mut self) -> Result<Option<SseEvent>, ModelFailure> {
        loop {
            if let Some(offset) = self.buf[self.scanned..].iter().position(|&b| b == b'\n') {
                let end = self.scanned + offset;
                let mut line: Vec<u8> = self.buf.drain(..=end).collect();
                self.scanned = 0;
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                if let Some(event) = self.parser.feed(&String::from_utf8_lossy(&line)) {
                    return Ok(Some(event));
                }
                continue;
            }
            self.scanned = self.buf.len();
            if self.ended {
                if !self.buf.is_empty() {
                    let line = std::mem::take(&mut self.buf);
                    self.scanned = 0;
                    if let Some(event) = self.parser.feed(&String::from_utf8_lossy(&line)) {
                        return Ok(Some(event));
                    }
                }
                return Ok(self.parser.dispatch());
            }
            if self.buf.len() > MAX_SSE_LINE {
                return Err(malformed("an event-stream line is longer than 16 MiB"));
            }
            match tokio::time::timeout(self.timeout, self.response.chunk()).await {
                Err(_) => return Err(timeout_failure(self.timeout)),
                Ok(Err(e)) => return Err(transport_failure(&self.url, e)),
                Ok(Ok(None)) => self.ended = true,
                Ok(Ok(Some(bytes))) => {
                    self.read += bytes.len();
                    if self.read > MAX_BODY {
                        return Err(too_long("event stream"));
                    }
                    self.buf.extend_from_slice(&bytes);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Response helpers shared by both formats

/// A non-negative integer field (also accepts floats and numeric strings).
pub(crate) fn count(v: Option<&Value>) -> u64 {
    match v {
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
            .unwrap_or(0),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0),
        _ => 0,
    }
}

/// A number field (also accepts numeric strings).
pub(crate) fn number(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A string field.
pub(crate) fn string(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::to_owned)
}

/// Usage from either naming: `input_tokens`/`output_tokens` (Responses) or
/// `prompt_tokens`/`completion_tokens` (chat completions), cached tokens from
/// `input_tokens_details`/`prompt_tokens_details`.
pub(crate) fn usage(v: Option<&Value>) -> Usage {
    let Some(u) = v.filter(|u| u.is_object()) else {
        return Usage::default();
    };
    let pick = |a: &str, b: &str| count(u.get(a).or_else(|| u.get(b)));
    let details = u
        .get("input_tokens_details")
        .or_else(|| u.get("prompt_tokens_details"));
    Usage {
        input_tokens: pick("input_tokens", "prompt_tokens"),
        output_tokens: pick("output_tokens", "completion_tokens"),
        cached_tokens: count(details.and_then(|d| d.get("cached_tokens"))),
        total_tokens: count(u.get("total_tokens")),
        cost: 0.0,
    }
}

/// Cost: `cost`, `cost_usd`, `usage.cost`, `meta.cost`, `meta.cost_usd`, else
/// `cost_nanos / 1e9`.
pub(crate) fn cost(body: &Value) -> Option<f64> {
    let usage = body.get("usage");
    let meta = body.get("meta");
    number(body.get("cost"))
        .or_else(|| number(body.get("cost_usd")))
        .or_else(|| number(usage.and_then(|u| u.get("cost"))))
        .or_else(|| number(meta.and_then(|m| m.get("cost"))))
        .or_else(|| number(meta.and_then(|m| m.get("cost_usd"))))
        .or_else(|| number(body.get("cost_nanos")).map(|n| n / 1e9))
}

/// A tool call's arguments as JSON text: a string as is, any other value serialized. A
/// provider writes a call without arguments as no text at all (absent, `null`, `""`):
/// that is the empty object (docs/behaviour.md §8), where text a model wrote that is not
/// JSON is invalid input.
pub(crate) fn arguments_text(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "{}".to_owned(),
        Some(Value::String(s)) => no_arguments_as_empty_object(s.clone()),
        Some(other) => crate::json::to_canonical_string(other),
    }
}

/// Arguments text that is empty or only whitespace (a call without arguments) as `{}`.
pub(crate) fn no_arguments_as_empty_object(arguments: String) -> String {
    match arguments.trim().is_empty() {
        true => "{}".to_owned(),
        false => arguments,
    }
}

/// The JSON text sent back to the model for a recorded call's input: the raw text when the
/// model sent arguments that were not JSON (kept as a string), else the JSON.
pub(crate) fn input_text(input: &Value) -> String {
    match input {
        Value::String(s) => s.clone(),
        other => crate::json::to_canonical_string(other),
    }
}

/// A tool's parameters, defaulting to an open object schema.
/// The description sent for a tool: its own, then its `inputExamples` (neither wire has a
/// field for them) in a fixed format, one canonical JSON object per line:
/// `<description>\n\nExamples of valid arguments:\n{"a":1}\n{"a":2}`.
pub(crate) fn tool_description(spec: &crate::model::ToolSpec) -> String {
    match spec.input_examples.as_deref() {
        None | Some([]) => spec.description.clone(),
        Some(examples) => {
            let mut text = spec.description.clone();
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str("Examples of valid arguments:");
            for e in examples {
                text.push('\n');
                text.push_str(&crate::json::to_canonical_string(e));
            }
            text
        }
    }
}

pub(crate) fn parameters(p: &Value) -> Value {
    if p.is_object() {
        p.clone()
    } else {
        serde_json::json!({"type": "object", "additionalProperties": true})
    }
}

/// A JSON reply as a response: parsed by `parse` (its error says why the body is
/// malformed), its text and reasoning replayed to `deltas` when the run is streamed.
pub(crate) fn json_response(
    body: &Value,
    headers: &HeaderMap,
    deltas: Option<&dyn DeltaSink>,
    parse: fn(&Value, &HeaderMap) -> Result<ModelResponse, String>,
) -> Result<ModelResponse, String> {
    let response = parse(body, headers)?;
    if let Some(sink) = deltas {
        replay_deltas(&response, sink);
    }
    Ok(response)
}

/// Where an event stream's deltas go: the run's sink, or nowhere.
pub(crate) fn sink_or_none(deltas: Option<&dyn DeltaSink>) -> &dyn DeltaSink {
    deltas.unwrap_or(&crate::model::NoDeltas)
}

/// For a streaming request answered with a plain JSON body: report the text as one delta,
/// and each call's arguments as one `tool.input_delta` after its `tool.input_started`.
pub(crate) fn replay_deltas(response: &ModelResponse, deltas: &dyn DeltaSink) {
    if let Some(r) = response
        .message
        .reasoning
        .as_deref()
        .filter(|r| !r.is_empty())
    {
        deltas.reasoning_delta(r);
    }
    if !response.message.content.is_empty() {
        deltas.text_delta(&response.message.content);
    }
    for call in &response.message.tool_calls {
        deltas.tool_input_start(&call.id, &call.name);
        if !call.arguments.is_empty() {
            deltas.tool_input_delta(&call.id, &call.arguments);
        }
    }
}

/// The builder methods both HTTP clients share (each holds `settings: HttpSettings` and
/// `model: Option<String>`).
macro_rules! http_builder_methods {
    () => {
        /// Sets the API key (sent as `Authorization: Bearer <key>`).
        pub fn api_key(mut self, key: impl Into<String>) -> Self {
            self.settings.api_key = Some(key.into()).filter(|k| !k.is_empty());
            self
        }

        /// Sets the base URL (the part before the endpoint path; a trailing `/` is
        /// ignored), e.g. `http://localhost:11434/v1` for Ollama.
        pub fn base_url(mut self, url: impl AsRef<str>) -> Self {
            self.settings.set_base_url(url.as_ref());
            self
        }

        /// Sets the model used when the request names none (the agent's model wins).
        pub fn model(mut self, model: impl Into<String>) -> Self {
            self.model = Some(model.into());
            self
        }

        /// Sets the request timeout (default 60 s): the whole exchange for a plain
        /// request; for a stream, the wait for the headers and then for each piece.
        pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
            self.settings.timeout = timeout;
            self
        }

        /// Adds a header to every request (replacing a default one of the same name, e.g.
        /// `X-Phaseo-Client`). Header values are never shown by `Debug`.
        pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
            self.settings.set_header(name.into(), value.into());
            self
        }

        /// The base URL in use.
        pub fn base_url_str(&self) -> &str {
            &self.settings.base_url
        }

        /// Whether an API key is set.
        pub fn has_api_key(&self) -> bool {
            self.settings.api_key.is_some()
        }
    };
}
pub(crate) use http_builder_methods;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_and_dates() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("3"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        h.insert(
            "retry-after",
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(1500)));
        assert!(parse_http_date("Wed, 21 Oct 2065 07:28:00 GMT").unwrap() > SystemTime::now());
    }

    #[test]
    fn reasons_in_order() {
        let r = |v: Value| reason_from_json(&v);
        assert_eq!(
            r(serde_json::json!({"error": {"message": "a"}, "message": "b"})),
            Some("a".into())
        );
        assert_eq!(
            r(serde_json::json!({"message": "b", "reason": "c"})),
            Some("b".into())
        );
        assert_eq!(r(serde_json::json!({"reason": "c"})), Some("c".into()));
        assert_eq!(r(serde_json::json!({"error": "d"})), Some("d".into()));
        assert_eq!(r(serde_json::json!({"other": 1})), None);
    }

    #[test]
    fn sse_lines() {
        let mut p = SseParser::default();
        let events: Vec<SseEvent> = [
            ": comment",
            "event: response.output_text.delta",
            "data: {\"a\":",
            "data:1}",
            "",
            "",
            "data: [DONE]",
            "",
        ]
        .iter()
        .filter_map(|l| p.feed(l))
        .collect();
        assert_eq!(
            events,
            vec![
                SseEvent {
                    event: "response.output_text.delta".into(),
                    data: "{\"a\":\n1}".into()
                },
                SseEvent {
                    event: String::new(),
                    data: "[DONE]".into()
                }
            ]
        );
    }

    #[test]
    fn debug_redacts_the_key() {
        let mut s = HttpSettings::new("http://x/", Some("sk-secret-123".into()));
        s.set_header("X-Api-Key".into(), "other-secret".into());
        let shown = format!("{s:?}");
        assert!(!shown.contains("sk-secret-123"));
        assert!(!shown.contains("other-secret"));
        assert_eq!(s.base_url, "http://x");
        assert_eq!(s.redact("bad key sk-secret-123"), "bad key [redacted]");
    }
}
