//! Model clients: scripted, test, HTTP (gateway / OpenAI-compatible) and PHP callables.

use std::collections::BTreeMap;
use std::sync::Arc;

use phaseo_agent::json_host::{JsonModel, JsonModelFunctions};
use phaseo_agent::{ModelClient, ScriptedClient, Value};
use serde::Deserialize;

use crate::error::NativeError;
use crate::handles::{Client, CLIENTS};
use crate::host::{Host, HostFn};

/// A scripted client over a JSON array of entries, skipping the first `used`.
pub fn scripted(text: &str, used: usize) -> Result<i64, NativeError> {
    let entries: Vec<Value> = serde_json::from_str(text).map_err(|e| {
        NativeError::definition(format!(
            "ScriptedClient: responses must be a JSON array ({e})"
        ))
    })?;
    let client = ScriptedClient::from_script(&entries)
        .map_err(|e| NativeError::definition(format!("ScriptedClient: {e}")))?;
    let client = Arc::new(client.skipping(used));
    Ok(CLIENTS.insert(Client {
        client: client.clone(),
        scripted: Some(client),
    }))
}

/// The scripted client's cursor (0 for other clients).
pub fn cursor(id: i64) -> usize {
    CLIENTS
        .get(id)
        .ok()
        .and_then(|c| c.scripted)
        .map_or(0, |s| s.cursor())
}

/// The test client.
pub fn test() -> i64 {
    CLIENTS.insert(Client {
        client: Arc::new(phaseo_agent::TestClient::new()),
        scripted: None,
    })
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct HttpSpec {
    api_key: Option<String>,
    base_url: Option<String>,
    model: Option<String>,
    timeout_ms: Option<f64>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    preset: Option<String>,
    body_defaults: Option<serde_json::Map<String, Value>>,
}

/// An HTTP client.
pub fn http(kind: &str, options: Option<&str>) -> Result<i64, NativeError> {
    let spec: HttpSpec = match options {
        None => HttpSpec::default(),
        Some(t) => serde_json::from_str(t)
            .map_err(|e| NativeError::definition(format!("Invalid HTTP client options: {e}")))?,
    };
    let gateway_only = spec.preset.is_some() || spec.body_defaults.is_some();
    let options = phaseo_agent::HttpClientOptions {
        api_key: spec.api_key,
        base_url: spec.base_url,
        model: spec.model,
        timeout_ms: spec.timeout_ms,
        headers: spec.headers.into_iter().collect(),
        preset: spec.preset.map(|p| p.trim_start_matches('@').to_owned()),
        body_defaults: spec.body_defaults.unwrap_or_default(),
    };
    let client: Arc<dyn ModelClient> = match kind {
        "gateway" => Arc::new(phaseo_agent::GatewayClient::from_options(&options)),
        "openai-compatible" if !gateway_only => {
            Arc::new(phaseo_agent::OpenAICompatibleClient::from_options(&options))
        }
        "openai-compatible" => {
            return Err(NativeError::definition(
                "HTTP client options: preset and bodyDefaults are gateway options",
            ))
        }
        other => {
            return Err(NativeError::definition(format!(
                "Unknown HTTP client kind {other:?}: use \"gateway\" or \"openai-compatible\""
            )))
        }
    };
    Ok(CLIENTS.insert(Client {
        client,
        scripted: None,
    }))
}

/// A client whose `generate` is a PHP callable, and `stream` another one (`0`: none).
pub fn host(callback: u64, stream: u64) -> i64 {
    let func = |id| HostFn {
        host: Arc::new(Host),
        id,
    };
    let client: Arc<dyn ModelClient> = if stream == 0 {
        Arc::new(JsonModel(func(callback)))
    } else {
        Arc::new(
            JsonModelFunctions {
                generate: Some(func(callback)),
                stream: Some(func(stream)),
            }
            .into_client(),
        )
    };
    CLIENTS.insert(Client {
        client,
        scripted: None,
    })
}
