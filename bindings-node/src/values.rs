//! Values from JavaScript, as JSON text: parsed, and checked against the limits every
//! value the SDK accepts keeps (SPEC §7: nested at most 64 levels deep).
//!
//! The JS layer writes values (its serializer refuses cycles, integers beyond 64 bits and
//! values it cannot read); the depth is checked here, where the text is parsed anyway, so
//! that the common path in JS stays `JSON.stringify`.

use phaseo_agent::Value;

/// How deep a value may be nested (a scalar is depth 0, `{"a": 1}` depth 1).
pub const MAX_DEPTH: usize = 64;

/// The message of a value nested deeper than [`MAX_DEPTH`].
pub fn too_deep() -> String {
    format!("value is nested more than {MAX_DEPTH} levels deep")
}

/// Parses the JSON text of a host value and checks its depth; the error is the message.
pub fn parse_value(text: &str) -> Result<Value, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        // serde_json stops at 128 levels, past the limit: that is the same refusal.
        if e.to_string().starts_with("recursion limit exceeded") {
            too_deep()
        } else {
            format!("value is not JSON-compatible: {e}")
        }
    })?;
    if depth_exceeds(&value, MAX_DEPTH) {
        return Err(too_deep());
    }
    Ok(value)
}

/// Whether `value` is nested more than `limit` levels deep.
fn depth_exceeds(value: &Value, limit: usize) -> bool {
    match value {
        Value::Array(items) => limit == 0 || items.iter().any(|v| depth_exceeds(v, limit - 1)),
        Value::Object(map) => limit == 0 || map.values().any(|v| depth_exceeds(v, limit - 1)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> String {
        "[".repeat(levels) + &"]".repeat(levels)
    }

    #[test]
    fn depth_is_limited_at_64() {
        assert!(parse_value(&nested(64)).is_ok());
        assert_eq!(parse_value(&nested(65)).unwrap_err(), too_deep());
        assert_eq!(parse_value(&nested(500)).unwrap_err(), too_deep());
        assert_eq!(parse_value("1").unwrap(), Value::from(1));
    }
}
