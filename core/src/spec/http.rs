//! The options of the core's HTTP model clients (feature `http`): `{apiKey?, baseUrl?,
//! model?, timeoutMs?, headers?, preset?, bodyDefaults?}`, and the client `kind`.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{invalid, read};
use crate::{AgentError, GatewayClient, HttpClientOptions, ModelClient, OpenAICompatibleClient};

/// What the error messages call the options.
const WHAT: &str = "HTTP client options";

/// The options as the format spells them.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct HttpSpec {
    api_key: Option<String>,
    base_url: Option<String>,
    model: Option<String>,
    timeout_ms: Option<f64>,
    headers: Option<BTreeMap<String, String>>,
    preset: Option<String>,
    body_defaults: Option<Map<String, Value>>,
}

/// Reads HTTP client options: `{apiKey?, baseUrl?, model?, timeoutMs?, headers?, preset?,
/// bodyDefaults?}` (`null` or an absent key: the environment's value or the default;
/// `preset` and `bodyDefaults` are gateway options, see [`http_client`]). A leading `@` of
/// `preset` is dropped (`"@fast"` and `"fast"` are the same preset). A wrong value is
/// `definition_invalid` naming the field: `Invalid HTTP client options: timeoutMs: …`.
/// The binding adds its own `X-Phaseo-Client` header to the result.
pub fn http_client_options(value: Value) -> Result<HttpClientOptions, AgentError> {
    let value = match value {
        Value::Null => Value::Object(Map::new()),
        // serde would also read a struct from an array, by position.
        Value::Object(_) => value,
        other => {
            return Err(invalid(format!(
                "Invalid {WHAT}: an object is required, got {other}"
            )))
        }
    };
    let spec: HttpSpec = read(value, WHAT)?;
    if let Some(ms) = spec.timeout_ms.filter(|ms| !(*ms > 0.0 && ms.is_finite())) {
        return Err(invalid(format!(
            "Invalid {WHAT}: timeoutMs must be a positive number of milliseconds, got {ms}"
        )));
    }
    let preset = match spec.preset {
        Some(p) if p.trim_start_matches('@').is_empty() => {
            return Err(invalid(format!(
                "Invalid {WHAT}: preset must be a non-empty name, got {p:?}"
            )))
        }
        Some(p) => Some(p.trim_start_matches('@').to_owned()),
        None => None,
    };
    Ok(HttpClientOptions {
        api_key: spec.api_key,
        base_url: spec.base_url,
        model: spec.model,
        timeout_ms: spec.timeout_ms,
        headers: spec.headers.unwrap_or_default().into_iter().collect(),
        preset,
        body_defaults: spec.body_defaults.unwrap_or_default(),
    })
}

/// The HTTP client of `kind` — `"gateway"` ([`GatewayClient`], the Responses API) or
/// `"openai-compatible"` ([`OpenAICompatibleClient`], Chat Completions) — with `options`
/// applied over the environment's. An unknown kind, or gateway options (`preset`,
/// `bodyDefaults`) given to an OpenAI-compatible client, is `definition_invalid`.
pub fn http_client(
    kind: &str,
    options: &HttpClientOptions,
) -> Result<Arc<dyn ModelClient>, AgentError> {
    match kind {
        "gateway" => Ok(Arc::new(GatewayClient::from_options(options))),
        "openai-compatible" => {
            if options.preset.is_some() || !options.body_defaults.is_empty() {
                return Err(invalid(format!(
                    "Invalid {WHAT}: preset and bodyDefaults are gateway options"
                )));
            }
            Ok(Arc::new(OpenAICompatibleClient::from_options(options)))
        }
        other => Err(invalid(format!(
            "Unknown HTTP client kind {other:?}: use \"gateway\" or \"openai-compatible\""
        ))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn error(value: Value) -> String {
        http_client_options(value).unwrap_err().message().to_owned()
    }

    #[test]
    fn every_option_is_read() {
        let o = http_client_options(json!({
            "apiKey": "sk-1", "baseUrl": "http://127.0.0.1:9/v1", "model": "m",
            "timeoutMs": 1500, "headers": {"X-B": "2", "X-A": "1"}, "preset": "@fast",
            "bodyDefaults": {"store": true}
        }))
        .unwrap();
        assert_eq!(o.api_key.as_deref(), Some("sk-1"));
        assert_eq!(o.base_url.as_deref(), Some("http://127.0.0.1:9/v1"));
        assert_eq!(o.model.as_deref(), Some("m"));
        assert_eq!(o.timeout_ms, Some(1500.0));
        assert_eq!(
            o.headers,
            vec![("X-A".into(), "1".into()), ("X-B".into(), "2".into())]
        );
        assert_eq!(o.preset.as_deref(), Some("fast"));
        assert_eq!(
            o.body_defaults,
            json!({"store": true}).as_object().cloned().unwrap()
        );
        let client = GatewayClient::from_options(&o);
        assert_eq!(client.base_url_str(), "http://127.0.0.1:9/v1");
        assert!(client.has_api_key());
    }

    #[test]
    fn absent_and_null_values_keep_the_defaults() {
        for value in [
            json!(null),
            json!({}),
            json!({"apiKey": null, "headers": null}),
        ] {
            let o = http_client_options(value).unwrap();
            assert!(o.api_key.is_none() && o.preset.is_none() && o.timeout_ms.is_none());
            assert!(o.headers.is_empty() && o.body_defaults.is_empty());
        }
    }

    #[test]
    fn wrong_values_are_refused_naming_the_field() {
        assert_eq!(
            error(json!({"apikey": "k"})),
            "Invalid HTTP client options: unknown field `apikey`, expected one of `apiKey`, `baseUrl`, `model`, `timeoutMs`, `headers`, `preset`, `bodyDefaults`"
        );
        assert!(error(json!({"headers": {"X-N": 5}}))
            .starts_with("Invalid HTTP client options: headers.X-N: invalid type: integer `5`"));
        assert!(error(json!({"bodyDefaults": [1]}))
            .starts_with("Invalid HTTP client options: bodyDefaults: invalid type: sequence"));
        assert!(error(json!({"timeoutMs": "5"}))
            .starts_with("Invalid HTTP client options: timeoutMs: invalid type: string"));
        assert_eq!(
            error(json!({"timeoutMs": -5})),
            "Invalid HTTP client options: timeoutMs must be a positive number of milliseconds, got -5"
        );
        assert_eq!(
            error(json!({"preset": "@"})),
            "Invalid HTTP client options: preset must be a non-empty name, got \"@\""
        );
        assert_eq!(
            error(json!(["k"])),
            "Invalid HTTP client options: an object is required, got [\"k\"]"
        );
        let e = http_client_options(json!({"model": 1})).unwrap_err();
        assert_eq!(e.code(), crate::ErrorCode::DefinitionInvalid);
    }

    #[test]
    fn the_kind_picks_the_client_and_gateway_options_stay_gateway_only() {
        let plain = http_client_options(json!({"baseUrl": "http://127.0.0.1:9"})).unwrap();
        assert!(http_client("gateway", &plain).is_ok());
        assert!(http_client("openai-compatible", &plain).is_ok());
        let gateway = http_client_options(json!({"preset": "p"})).unwrap();
        assert!(http_client("gateway", &gateway).is_ok());
        let message = |r: Result<Arc<dyn ModelClient>, AgentError>| {
            r.err().map(|e| e.message().to_owned()).unwrap()
        };
        assert_eq!(
            message(http_client("openai-compatible", &gateway)),
            "Invalid HTTP client options: preset and bodyDefaults are gateway options"
        );
        let body = http_client_options(json!({"bodyDefaults": {"x": 1}})).unwrap();
        assert!(http_client("openai-compatible", &body).is_err());
        assert_eq!(
            message(http_client("anthropic", &plain)),
            "Unknown HTTP client kind \"anthropic\": use \"gateway\" or \"openai-compatible\""
        );
    }
}
