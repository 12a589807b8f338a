//! Tracing from PHP (docs/behaviour.md, tracing): `AgentSdk::enableTracing`, `flushTracing`,
//! `shutdownTracing`. The spans are the core's (`telemetry`, feature `otel`); this module
//! only reads the options; `lib.rs` waits for exports on the calling PHP thread (a PHP
//! process has no other thread to keep serving while it waits).

use std::collections::BTreeMap;

use phaseo_agent::telemetry::{self, TracingOptions};
use phaseo_agent::Value;

use crate::error::NativeError;

/// Reads `{endpoint?, headers?, serviceName?, captureContent?}` (JSON text).
fn options(text: &str) -> Result<TracingOptions, NativeError> {
    let bad = |m: String| NativeError::definition(format!("Invalid tracing options: {m}"));
    let value = phaseo_agent::parse_json_text(text).map_err(|e| bad(e.to_string()))?;
    let Value::Object(mut obj) = value else {
        return Err(bad("expected an object".into()));
    };
    let text_field = |v: Option<Value>, name: &str| match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(bad(format!("{name} must be a string, got {other}"))),
    };
    let endpoint = text_field(obj.remove("endpoint"), "endpoint")?;
    let service_name = text_field(obj.remove("serviceName"), "serviceName")?;
    let capture_content = match obj.remove("captureContent") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => b,
        Some(other) => {
            return Err(bad(format!(
                "captureContent must be a boolean, got {other}"
            )))
        }
    };
    let mut headers = BTreeMap::new();
    match obj.remove("headers") {
        None | Some(Value::Null) => {}
        Some(Value::Object(fields)) => {
            for (name, value) in fields {
                let Value::String(text) = value else {
                    return Err(bad(format!(
                        "the value of header '{name}' must be a string"
                    )));
                };
                headers.insert(name, text);
            }
        }
        // An empty PHP array is a JSON list.
        Some(Value::Array(a)) if a.is_empty() => {}
        Some(other) => return Err(bad(format!("headers must be a map, got {other}"))),
    }
    if let Some(name) = obj.keys().next() {
        return Err(bad(format!("unknown option '{name}'")));
    }
    Ok(TracingOptions {
        endpoint,
        headers,
        service_name,
        capture_content,
    })
}

/// Turns tracing on from its options' JSON text (`definition_invalid` naming a bad one).
pub fn enable(options_json: &str) -> Result<(), NativeError> {
    telemetry::enable(options(options_json)?)?;
    Ok(())
}
