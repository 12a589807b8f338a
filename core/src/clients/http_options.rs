//! Options of the HTTP clients as every binding receives them, so each binding only maps
//! its own option names onto this struct.

use super::{GatewayClient, OpenAICompatibleClient};

/// Settings of an HTTP model client. Unset fields keep what the environment gives
/// (`PHASEO_*` for the gateway, `OPENAI_*` for OpenAI-compatible servers).
#[derive(Clone, Default)]
pub struct HttpClientOptions {
    /// API key (never written to state, events, errors or logs).
    pub api_key: Option<String>,
    /// Base URL.
    pub base_url: Option<String>,
    /// Model used when the agent names none.
    pub model: Option<String>,
    /// Request timeout in milliseconds.
    pub timeout_ms: Option<f64>,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Gateway only: a preset (`"fast"` or `"@fast"`), used as the model `@<preset>` when no
    /// model is set.
    pub preset: Option<String>,
    /// Gateway only: body fields sent unless the request sets them (see
    /// [`GatewayClient::body_defaults`]).
    pub body_defaults: serde_json::Map<String, serde_json::Value>,
}

impl std::fmt::Debug for HttpClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClientOptions")
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("timeout_ms", &self.timeout_ms)
            .field("preset", &self.preset)
            .field("body_defaults", &self.body_defaults)
            .finish()
    }
}

macro_rules! apply_options {
    ($client:expr, $o:expr) => {{
        let mut client = $client;
        if let Some(key) = &$o.api_key {
            client = client.api_key(key.clone());
        }
        if let Some(url) = &$o.base_url {
            client = client.base_url(url);
        }
        if let Some(model) = &$o.model {
            client = client.model(model.clone());
        }
        if let Some(ms) = $o.timeout_ms.filter(|ms| ms.is_finite() && *ms > 0.0) {
            client = client.timeout($crate::duration::from_ms(ms));
        }
        for (name, value) in &$o.headers {
            client = client.header(name.clone(), value.clone());
        }
        client
    }};
}

impl GatewayClient {
    /// The environment's gateway client with `options` applied over it.
    pub fn from_options(options: &HttpClientOptions) -> Self {
        let mut client = apply_options!(Self::from_env(), options);
        if options.model.is_none() {
            // Hosts write a preset with or without its `@`.
            let preset = options.preset.as_deref().map(|p| p.trim_start_matches('@'));
            if let Some(preset) = preset.filter(|p| !p.is_empty()) {
                client = client.model(format!("@{preset}"));
            }
        }
        client.body_defaults(options.body_defaults.clone())
    }
}

impl OpenAICompatibleClient {
    /// The environment's OpenAI-compatible client with `options` applied over it.
    pub fn from_options(options: &HttpClientOptions) -> Self {
        apply_options!(Self::from_env(), options)
    }
}
