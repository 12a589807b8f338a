//! Values from JavaScript, as JSON text: parsed, and checked against the limits every
//! value the SDK accepts keeps (docs/behaviour.md §7: nested at most 64 levels deep).
//!
//! The JS layer writes values (its serializer refuses cycles, integers beyond 64 bits and
//! values it cannot read); the depth is checked here, where the text is parsed anyway, so
//! that the common path in JS stays `JSON.stringify`. Not the core's `parse_json_text`:
//! `JSON.stringify(1e20)` is `100000000000000000000`, a float that JS wrote without an
//! exponent, which must stay a float rather than be refused as a huge integer.

use phaseo_agent::{check_value, Value, ValueLimitError};

/// The message of a value nested deeper than the limit.
pub fn too_deep() -> String {
    ValueLimitError::TooDeep.to_string()
}

/// Parses the JSON text of a host value and checks its depth; the error is the message.
pub fn parse_value(text: &str) -> Result<Value, String> {
    let value: Value = serde_json::from_str(text)
        .or_else(|e| {
            // `JSON.stringify` escapes a lone surrogate, which has no UTF-8 form: it becomes
            // U+FFFD, as in any string JS hands to Rust (only on this failure: rare).
            if text.contains("\\ud") || text.contains("\\uD") {
                serde_json::from_str(&without_lone_surrogates(text))
            } else {
                Err(e)
            }
        })
        .map_err(|e| {
            // serde_json stops at 128 levels, past the limit: that is the same refusal.
            if e.to_string().starts_with("recursion limit exceeded") {
                too_deep()
            } else {
                format!("value is not JSON-compatible: {e}")
            }
        })?;
    check_value(&value).map_err(|e| e.to_string())?;
    Ok(value)
}

/// `text` with each escaped lone surrogate (`\\uD800`–`\\uDFFF` not in a pair) as `\\uFFFD`.
fn without_lone_surrogates(text: &str) -> String {
    let bytes = text.as_bytes();
    let unit = |at: usize| -> Option<u16> {
        if bytes.get(at) == Some(&b'\\') && bytes.get(at + 1) == Some(&b'u') {
            let hex = text.get(at + 2..at + 6)?;
            u16::from_str_radix(hex, 16).ok()
        } else {
            None
        }
    };
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut copied = 0;
    while at < bytes.len() {
        if bytes[at] != b'\\' {
            at += 1;
            continue;
        }
        match unit(at) {
            Some(0xD800..=0xDBFF) if matches!(unit(at + 6), Some(0xDC00..=0xDFFF)) => at += 12,
            Some(0xD800..=0xDFFF) => {
                out.push_str(&text[copied..at]);
                out.push_str("\\uFFFD");
                at += 6;
                copied = at;
            }
            Some(_) => at += 6,
            None => at += 2,
        }
    }
    out.push_str(&text[copied.min(text.len())..]);
    out
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

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let text = r#"["\ud800","a\udc00b","\ud83d\ude00","\\ud800","\ud83d"]"#;
        assert_eq!(
            parse_value(text).unwrap(),
            serde_json::json!(["\u{FFFD}", "a\u{FFFD}b", "\u{1F600}", "\\ud800", "\u{FFFD}"])
        );
    }
}
