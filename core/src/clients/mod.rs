//! Model clients shipped with the core: scripted and test (offline), and — with the `http`
//! feature (on by default) — the Phaseo gateway ([`GatewayClient`], Responses API) and any
//! OpenAI-compatible chat-completions server ([`OpenAICompatibleClient`]).

#[cfg(feature = "http")]
mod gateway;
#[cfg(feature = "http")]
pub(crate) mod http;
#[cfg(feature = "http")]
mod http_options;
#[cfg(feature = "http")]
mod openai;
mod scripted;
mod test_client;
#[cfg(feature = "http")]
mod wire;

#[cfg(feature = "http")]
pub use gateway::GatewayClient;
#[cfg(feature = "http")]
pub use http_options::HttpClientOptions;
#[cfg(feature = "http")]
pub use openai::OpenAICompatibleClient;
pub use scripted::ScriptedClient;

/// The TLS configuration of the model clients (rustls on ring, the platform verifier), for
/// the OTLP exporter's own client.
#[cfg(feature = "otel")]
pub(crate) fn tls_config() -> rustls::ClientConfig {
    http::tls_config()
}

/// The process-wide HTTP client (rustls on ring), shared with the MCP HTTP transport.
#[cfg(feature = "mcp")]
pub(crate) fn shared_http_client() -> Result<reqwest::Client, String> {
    http::http_client().map_err(|e| e.to_string())
}
pub use test_client::{example_value, TestClient};
