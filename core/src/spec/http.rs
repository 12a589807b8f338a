//! The options of the core's HTTP model clients (feature `http`): `{apiKey?, baseUrl?,
//! model?, timeoutMs?, headers?, preset?, bodyDefaults?}`, the product's spellings of them
//! (`clientOptions`, `requestOptions` and the gateway's named body options), and the
//! client `kind`. Every check is here; a binding only respells keys.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::invalid;
use crate::{AgentError, GatewayClient, HttpClientOptions, ModelClient, OpenAICompatibleClient};

/// What the error messages call the options.
const WHAT: &str = "HTTP client options";

/// The format's keys, then the product's.
const KEYS: [&str; 11] = [
    "apiKey",
    "baseUrl",
    "model",
    "timeoutMs",
    "headers",
    "preset",
    "bodyDefaults",
    "clientOptions",
    "requestOptions",
    "client",
    "gatewayTools",
];

/// The keys of `clientOptions` (the product's SDK client options).
const CLIENT_OPTION_KEYS: [&str; 6] = [
    "apiKey",
    "baseURL",
    "baseUrl",
    "timeoutMs",
    "headers",
    "fetchImpl",
];

/// The gateway's named body options: `(option, body field)`.
pub const GATEWAY_BODY_OPTIONS: [(&str, &str); 14] = [
    ("provider", "provider"),
    ("reasoning", "reasoning"),
    ("temperature", "temperature"),
    ("maxOutputTokens", "max_output_tokens"),
    ("parallelToolCalls", "parallel_tool_calls"),
    ("metadata", "metadata"),
    ("user", "user"),
    ("responseFormat", "response_format"),
    ("includeMeta", "meta"),
    ("webSearchOptions", "web_search_options"),
    ("plugins", "plugins"),
    ("toolChoice", "tool_choice"),
    ("providerOptions", "provider_options"),
    ("promptCacheKey", "prompt_cache_key"),
];

fn bad(message: impl std::fmt::Display) -> AgentError {
    invalid(format!("Invalid {WHAT}: {message}"))
}

/// The value of `key` in `obj`; absent and null are none.
fn take(obj: &mut Map<String, Value>, key: &str) -> Option<Value> {
    obj.remove(key).filter(|v| !v.is_null())
}

fn string(obj: &mut Map<String, Value>, key: &str, at: &str) -> Result<Option<String>, AgentError> {
    match take(obj, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(bad(format!("{at}{key} must be a string, got {other}"))),
    }
}

fn timeout(obj: &mut Map<String, Value>, at: &str) -> Result<Option<f64>, AgentError> {
    match take(obj, "timeoutMs") {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(ms) if ms > 0.0 && ms.is_finite() => Ok(Some(ms)),
            _ => Err(bad(format!(
                "{at}timeoutMs must be a positive number of milliseconds, got {v}"
            ))),
        },
    }
}

fn headers(obj: &mut Map<String, Value>, at: &str) -> Result<Vec<(String, String)>, AgentError> {
    match take(obj, "headers") {
        None => Ok(Vec::new()),
        Some(Value::Object(map)) => map
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(v) => Ok((k, v)),
                other => Err(bad(format!(
                    "{at}headers.{k} must be a string, got {other}"
                ))),
            })
            .collect(),
        Some(other) => Err(bad(format!(
            "{at}headers must be an object of strings, got {other}"
        ))),
    }
}

fn object(obj: &mut Map<String, Value>, key: &str) -> Result<Map<String, Value>, AgentError> {
    match take(obj, key) {
        None => Ok(Map::new()),
        Some(Value::Object(map)) => Ok(map),
        Some(other) => Err(bad(format!(
            "{key} must be an object of request body fields, got {other}"
        ))),
    }
}

fn unknown_key(obj: &Map<String, Value>, known: &[&str], at: &str) -> Result<(), AgentError> {
    let mut unknown: Vec<&String> = obj
        .keys()
        .filter(|k| !known.contains(&k.as_str()))
        .collect();
    unknown.sort();
    match unknown.first() {
        None => Ok(()),
        Some(key) => Err(bad(format!(
            "unknown {at}option '{key}' (known: {})",
            known.join(", ")
        ))),
    }
}

/// Reads HTTP client options (`null` or an absent key: the environment's value or the
/// default; `preset` and the body options are gateway options, see [`http_client`]):
/// - the format's `{apiKey?, baseUrl?, model?, timeoutMs?, headers?, preset?,
///   bodyDefaults?}`; a leading `@` of `preset` is dropped;
/// - the product's `clientOptions: {apiKey?, baseURL?, timeoutMs?, headers?}` (the keys
///   above win; headers are merged), `requestOptions` (any body field) and the named body
///   options ([`GATEWAY_BODY_OPTIONS`]: `toolChoice` is the body's `tool_choice`, …), which
///   win over `requestOptions` and `bodyDefaults`; the product's `client` (an SDK
///   instance), `gatewayTools` and `clientOptions.fetchImpl` are refused, naming why.
///
/// A wrong value is `definition_invalid` naming the key: `Invalid HTTP client options:
/// timeoutMs must be …`. The binding adds its own `X-Phaseo-Client` header to the result.
pub fn http_client_options(value: Value) -> Result<HttpClientOptions, AgentError> {
    let mut obj = match value {
        Value::Null => Map::new(),
        Value::Object(obj) => obj,
        other => return Err(bad(format!("an object is required, got {other}"))),
    };
    let named: Vec<&str> = GATEWAY_BODY_OPTIONS.iter().map(|(k, _)| *k).collect();
    let known: Vec<&str> = KEYS.iter().copied().chain(named.iter().copied()).collect();
    unknown_key(&obj, &known, "")?;
    if take(&mut obj, "client").is_some() {
        return Err(bad(
            "client (an SDK instance) is not supported: pass clientOptions instead",
        ));
    }
    if take(&mut obj, "gatewayTools").is_some() {
        return Err(bad(
            "gatewayTools is not supported: define the tools on the agent",
        ));
    }
    let mut inner = match take(&mut obj, "clientOptions") {
        None => Map::new(),
        Some(Value::Object(map)) => map,
        Some(other) => return Err(bad(format!("clientOptions must be an object, got {other}"))),
    };
    unknown_key(&inner, &CLIENT_OPTION_KEYS, "clientOptions ")?;
    if take(&mut inner, "fetchImpl").is_some() {
        return Err(bad(
            "clientOptions.fetchImpl is not supported: requests are made by the native core (use baseUrl and headers)",
        ));
    }
    let inner_base = match string(&mut inner, "baseURL", "clientOptions.")? {
        Some(url) => Some(url),
        None => string(&mut inner, "baseUrl", "clientOptions.")?,
    };
    let mut all_headers = headers(&mut inner, "clientOptions.")?;
    for (k, v) in headers(&mut obj, "")? {
        all_headers.retain(|(key, _)| *key != k);
        all_headers.push((k, v));
    }
    all_headers.sort();
    let preset = match string(&mut obj, "preset", "")? {
        Some(p) if p.trim_start_matches('@').is_empty() => {
            return Err(bad(format!("preset must be a non-empty name, got {p:?}")))
        }
        Some(p) => Some(p.trim_start_matches('@').to_owned()),
        None => None,
    };
    let mut body = object(&mut obj, "bodyDefaults")?;
    body.extend(object(&mut obj, "requestOptions")?);
    for (option, field) in GATEWAY_BODY_OPTIONS {
        if let Some(v) = take(&mut obj, option) {
            body.insert(field.to_owned(), v);
        }
    }
    Ok(HttpClientOptions {
        api_key: match string(&mut obj, "apiKey", "")? {
            Some(key) => Some(key),
            None => string(&mut inner, "apiKey", "clientOptions.")?,
        },
        base_url: string(&mut obj, "baseUrl", "")?.or(inner_base),
        model: string(&mut obj, "model", "")?,
        timeout_ms: match timeout(&mut obj, "")? {
            Some(ms) => Some(ms),
            None => timeout(&mut inner, "clientOptions.")?,
        },
        headers: all_headers,
        preset,
        body_defaults: body,
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
                    "Invalid {WHAT}: preset, requestOptions and the body options (bodyDefaults, \
                     toolChoice, responseFormat, …) are gateway options"
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
    fn the_products_spellings_are_read() {
        let o = http_client_options(json!({
            "clientOptions": {"apiKey": "inner", "baseURL": "http://inner", "timeoutMs": 9,
                              "headers": {"X-A": "inner", "X-B": "b"}},
            "baseUrl": "http://outer", "headers": {"X-A": "outer"},
            "requestOptions": {"store": true, "tool_choice": "none"},
            "toolChoice": "auto", "includeMeta": true, "maxOutputTokens": 64
        }))
        .unwrap();
        assert_eq!(o.api_key.as_deref(), Some("inner"));
        assert_eq!(o.base_url.as_deref(), Some("http://outer"));
        assert_eq!(o.timeout_ms, Some(9.0));
        assert_eq!(
            o.headers,
            vec![("X-A".into(), "outer".into()), ("X-B".into(), "b".into())]
        );
        assert_eq!(
            Value::Object(o.body_defaults),
            json!({"store": true, "tool_choice": "auto", "meta": true, "max_output_tokens": 64})
        );
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
        assert!(error(json!({"apikey": "k"})).starts_with(
            "Invalid HTTP client options: unknown option 'apikey' (known: apiKey, baseUrl, model, timeoutMs, headers, preset, bodyDefaults, clientOptions, requestOptions, client, gatewayTools, provider,"
        ));
        assert_eq!(
            error(json!({"headers": {"X-N": 5}})),
            "Invalid HTTP client options: headers.X-N must be a string, got 5"
        );
        assert_eq!(
            error(json!({"bodyDefaults": [1]})),
            "Invalid HTTP client options: bodyDefaults must be an object of request body fields, got [1]"
        );
        assert_eq!(
            error(json!({"timeoutMs": "5"})),
            "Invalid HTTP client options: timeoutMs must be a positive number of milliseconds, got \"5\""
        );
        assert_eq!(
            error(json!({"clientOptions": {"fetchImpl": 1}})),
            "Invalid HTTP client options: clientOptions.fetchImpl is not supported: requests are made by the native core (use baseUrl and headers)"
        );
        assert!(error(json!({"clientOptions": {"baseurl": "x"}}))
            .starts_with("Invalid HTTP client options: unknown clientOptions option 'baseurl' (known: apiKey, baseURL,"));
        assert_eq!(
            error(json!({"client": {}})),
            "Invalid HTTP client options: client (an SDK instance) is not supported: pass clientOptions instead"
        );
        assert_eq!(
            error(json!({"requestOptions": "x"})),
            "Invalid HTTP client options: requestOptions must be an object of request body fields, got \"x\""
        );
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
            "Invalid HTTP client options: preset, requestOptions and the body options (bodyDefaults, toolChoice, responseFormat, …) are gateway options"
        );
        let body = http_client_options(json!({"bodyDefaults": {"x": 1}})).unwrap();
        assert!(http_client("openai-compatible", &body).is_err());
        assert_eq!(
            message(http_client("anthropic", &plain)),
            "Unknown HTTP client kind \"anthropic\": use \"gateway\" or \"openai-compatible\""
        );
    }
}
