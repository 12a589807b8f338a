//! The one rule for values entering the SDK (docs/behaviour.md §7): a value the SDK accepts is a value
//! it can store and read back — JSON nested at most [`MAX_DEPTH`] levels, integers that fit
//! 64 bits, no cycles.

use serde_json::Value;

/// The deepest nesting a value may have: a scalar is depth 0, `{"a":1}` depth 1.
pub const MAX_DEPTH: usize = 64;

/// How deep the state's own structure nests user values (`run.pause.pendingToolCalls[i]
/// .call.input` is 6 levels down), with a margin: the state reader accepts
/// `MAX_DEPTH + STATE_NESTING` levels in each state, counted from that state's root.
pub(crate) const STATE_NESTING: usize = 8;

/// How deep a paused agent tool's state stands in the state that holds it
/// (`run.pause.nestedRuns.<callId>`).
const NESTED_STATE_LEVELS: usize = 4;

/// The deepest nesting a whole state's text may have: each state's own allowance
/// (`MAX_DEPTH` + 8) below the levels of the paused agent tools' states that hold it, at
/// most [`MAX_AGENT_NESTING`](crate::MAX_AGENT_NESTING) of them. Hosts that walk a state
/// object bound their walk by this; the state reader then checks each state on its own.
pub const MAX_STATE_DEPTH: usize =
    MAX_DEPTH + STATE_NESTING + NESTED_STATE_LEVELS * crate::agent_tool::MAX_AGENT_NESTING;

/// Why a value was refused at the boundary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueLimitError {
    /// Nested deeper than [`MAX_DEPTH`].
    #[error("value is nested more than 64 levels deep")]
    TooDeep,
    /// A host value refers to itself (bindings detect this while converting).
    #[error("value contains a cycle")]
    Cycle,
    /// An integer beyond the signed and unsigned 64-bit ranges (its digits).
    #[error("integer {0} does not fit in 64 bits")]
    IntegerTooLarge(String),
}

/// Checks that a value is nested at most [`MAX_DEPTH`] levels. Iterative, so any value is
/// checked without growing the stack.
pub fn check_value(value: &Value) -> Result<(), ValueLimitError> {
    check_depth(value, MAX_DEPTH)
}

/// [`check_value`] with another limit.
pub(crate) fn check_depth(value: &Value, max: usize) -> Result<(), ValueLimitError> {
    check_depth_apart_from(value, max, None)
}

/// [`check_depth`], leaving out one part of the value (`apart`, compared by address): a
/// part checked on its own.
fn check_depth_apart_from(
    value: &Value,
    max: usize,
    apart: Option<&Value>,
) -> Result<(), ValueLimitError> {
    if !matches!(value, Value::Array(_) | Value::Object(_)) {
        return Ok(()); // a scalar (most tool results): nothing to walk
    }
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((v, depth)) = stack.pop() {
        let depth = depth + 1;
        match v {
            _ if apart.is_some_and(|apart| std::ptr::eq(apart, v)) => {}
            Value::Array(_) | Value::Object(_) if depth > max => {
                return Err(ValueLimitError::TooDeep)
            }
            Value::Array(items) => stack.extend(items.iter().map(|c| (c, depth))),
            Value::Object(map) => stack.extend(map.values().map(|c| (c, depth))),
            _ => {}
        }
    }
    Ok(())
}

/// Parses JSON text from a model (tool-call arguments): JSON, nested at most
/// [`MAX_DEPTH`] levels, and every integer literal within 64 bits (a larger one is refused,
/// never turned into a float). The error is what follows `"Invalid tool input: "`.
pub fn parse_json_text(text: &str) -> Result<Value, String> {
    parse_json_text_within(text, MAX_DEPTH)
}

/// As [`parse_json_text`] for a text that holds values a few levels below its root (run
/// options: `messages[i].toolCalls[j].input`): nested at most `MAX_DEPTH + STATE_NESTING`
/// levels, as a state; each value in it is then checked against [`MAX_DEPTH`] on its own,
/// so that a value within the limit is not refused for where it stands.
pub(crate) fn parse_json_container_text(text: &str) -> Result<Value, String> {
    parse_json_text_within(text, MAX_DEPTH + STATE_NESTING)
}

fn parse_json_text_within(text: &str, max_depth: usize) -> Result<Value, String> {
    scan_then_parse(text, max_depth).map(|(value, _)| value)
}

/// The text scanned, then parsed, with what the scan found (`None`: the scan found text
/// that is not JSON, which the parser then reports).
fn scan_then_parse(text: &str, max_depth: usize) -> Result<(Value, Option<TextScan>), String> {
    // Scan first: the parser would fail on deep text with its own recursion message, and
    // would quietly turn a huge integer into a float.
    let scan = match scan_text(text, max_depth, true) {
        Ok(scan) => Some(scan),
        Err(Scan::NotJson) => None,
        Err(Scan::Limit(e)) => return Err(e.to_string()),
    };
    let value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok((value, scan))
}

/// As [`parse_json_text`], also telling whether `text` is already the value's canonical
/// JSON text (docs/behaviour.md §7), byte for byte: then a writer may copy the text instead
/// of writing the value again. Only text that is plainly so counts: compact, integers of
/// at most 18 characters, no escape in a string but those the canonical writer uses
/// itself, no key twice in an object.
pub(crate) fn parse_json_text_canonical(text: &str) -> Result<(Value, bool), String> {
    let (value, scan) = scan_then_parse(text, MAX_DEPTH)?;
    // A key given twice leaves one entry: the members the text has and the entries the
    // value holds then differ (the scan bounded the depth walked here).
    let canonical = scan.is_some_and(|s| s.canonical && s.members == entries(&value));
    Ok((value, canonical))
}

/// How many members the objects in `value` hold, nested ones included.
fn entries(value: &Value) -> usize {
    fn nested(n: usize, value: &Value) -> usize {
        match value {
            Value::Object(_) | Value::Array(_) => n + entries(value),
            _ => n,
        }
    }
    match value {
        Value::Object(map) => map.values().fold(map.len(), nested),
        Value::Array(items) => items.iter().fold(0, nested),
        _ => 0,
    }
}

/// Scans state text: its nesting within [`MAX_STATE_DEPTH`]. Text that is not JSON is left
/// for the parser to report. Long integer literals are not refused here: canonical JSON
/// writes an integral float below 1e21 with all its digits (`1.5e20` →
/// `150000000000000000000`), so a stored float may read as one; typed counters still
/// refuse it. Returns whether the text is nested within one state's own allowance: when it
/// is not, the parsed value must still pass [`check_state_depth`].
pub(crate) fn check_state_text(text: &str) -> Result<bool, ValueLimitError> {
    match scan_text(text, MAX_STATE_DEPTH, false) {
        Ok(scan) => Ok(scan.deepest <= MAX_DEPTH + STATE_NESTING),
        Err(Scan::NotJson) => Ok(false),
        Err(Scan::Limit(e)) => Err(e),
    }
}

/// Checks a state's nesting: the state's own structure and values within
/// `MAX_DEPTH + STATE_NESTING` levels of its root, and each paused agent tool's state in
/// `run.pause.nestedRuns` the same from its own root, at most
/// [`MAX_AGENT_NESTING`](crate::MAX_AGENT_NESTING) states deep.
pub(crate) fn check_state_depth(state: &Value) -> Result<(), ValueLimitError> {
    let mut states = vec![(state, 0usize)];
    while let Some((state, level)) = states.pop() {
        if level > crate::agent_tool::MAX_AGENT_NESTING {
            return Err(ValueLimitError::TooDeep);
        }
        let nested = state
            .pointer("/run/pause/nestedRuns")
            .filter(|n| n.is_object());
        check_depth_apart_from(state, MAX_DEPTH + STATE_NESTING, nested)?;
        if let Some(Value::Object(runs)) = nested {
            states.extend(runs.values().map(|run| (run, level + 1)));
        }
    }
    Ok(())
}

enum Scan {
    NotJson,
    Limit(ValueLimitError),
}

/// What a scan of JSON text found besides its limits.
struct TextScan {
    /// No whitespace between tokens, every number a plain integer of at most 18 characters
    /// other than `-0`, and no escape in a string but `\"`, `\\`, `\b`, `\f`, `\n`, `\r`,
    /// `\t` (what the canonical writer writes for them).
    canonical: bool,
    /// The `:` outside strings: the members of all its objects.
    members: usize,
    /// The deepest nesting of its arrays and objects.
    deepest: usize,
}

/// One pass over the text outside strings: bracket depth and (when `integers`) integer
/// literals.
fn scan_text(text: &str, max_depth: usize, integers: bool) -> Result<TextScan, Scan> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut canonical = true;
    let mut members = 0usize;
    let mut deepest = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        canonical &= matches!(
                            bytes.get(i + 1),
                            Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't')
                        );
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
                if i >= bytes.len() {
                    return Err(Scan::NotJson);
                }
                i += 1;
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > max_depth {
                    return Err(Scan::Limit(ValueLimitError::TooDeep));
                }
                deepest = deepest.max(depth);
                i += 1;
            }
            b']' | b'}' => {
                depth = depth.checked_sub(1).ok_or(Scan::NotJson)?;
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                let mut plain = true;
                while i < bytes.len()
                    && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    plain &= matches!(bytes[i], b'-' | b'0'..=b'9');
                    i += 1;
                }
                let literal = &bytes[start..i];
                canonical &= plain && literal.len() <= 18 && literal != b"-0";
                // A literal of up to 18 characters is never an integer beyond 64 bits.
                if !integers || literal.len() <= 18 {
                    continue;
                }
                // Only ASCII bytes were taken: a slice of the text at character boundaries.
                let literal = &text[start..i];
                let integral = !literal.contains(['.', 'e', 'E']);
                if integral
                    && literal.parse::<i64>().is_err()
                    && literal.parse::<u64>().is_err()
                    && !is_canonical_float(literal)
                {
                    // A malformed literal (`--1`) is the parser's to report.
                    let digits = literal.strip_prefix('-').unwrap_or(literal);
                    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                        return Err(Scan::Limit(ValueLimitError::IntegerTooLarge(
                            literal.to_owned(),
                        )));
                    }
                    return Err(Scan::NotJson);
                }
            }
            b':' => {
                members += 1;
                i += 1;
            }
            b' ' | b'\t' | b'\n' | b'\r' => {
                canonical = false;
                i += 1;
            }
            _ => i += 1,
        }
    }
    Ok(TextScan {
        canonical,
        members,
        deepest,
    })
}

/// Whether an integral literal beyond 64 bits is exactly how canonical JSON writes a float
/// (`1e20` → `100000000000000000000`): such a literal is that float, kept exactly, while
/// any other long literal (`18446744073709551616`) would lose digits and is refused.
fn is_canonical_float(literal: &str) -> bool {
    literal
        .parse::<f64>()
        .is_ok_and(|f| f.is_finite() && crate::json::number_text(f) == literal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        let mut s = "1".to_owned();
        for _ in 0..depth {
            s = format!("{{\"a\":{s}}}");
        }
        s
    }

    #[test]
    fn depth_is_counted_from_scalars() {
        assert!(parse_json_text(&nested(64)).is_ok());
        assert_eq!(
            parse_json_text(&nested(65)).unwrap_err(),
            "value is nested more than 64 levels deep"
        );
        assert_eq!(
            parse_json_text(&"[".repeat(100_000)).unwrap_err(),
            "value is nested more than 64 levels deep"
        );
        let v: Value = serde_json::from_str(&nested(64)).unwrap();
        assert_eq!(check_value(&v), Ok(()));
        let v = serde_json::json!({ "x": v });
        assert_eq!(check_value(&v), Err(ValueLimitError::TooDeep));
    }

    #[test]
    fn integers_must_fit_64_bits() {
        assert!(parse_json_text("[18446744073709551615,-9223372036854775808,1.5e300]").is_ok());
        assert_eq!(
            parse_json_text("{\"n\":18446744073709551616}").unwrap_err(),
            "integer 18446744073709551616 does not fit in 64 bits"
        );
        assert_eq!(
            parse_json_text("-9223372036854775809").unwrap_err(),
            "integer -9223372036854775809 does not fit in 64 bits"
        );
        assert!(parse_json_text("\"99999999999999999999999 [[[\"").is_ok());
        assert!(parse_json_text("--1").is_err());
        // A float that canonical JSON writes with all its digits reads back as that float.
        let text = crate::json::to_canonical_string(&serde_json::json!({"f": 1e20}));
        assert_eq!(text, r#"{"f":100000000000000000000}"#);
        assert_eq!(
            parse_json_text(&text).unwrap()["f"],
            serde_json::json!(1e20)
        );
        assert!(parse_json_text("\"unterminated").is_err());
    }

    /// Texts said to be canonical are exactly what the canonical writer makes of their
    /// value; the others are any that might not be.
    #[test]
    fn canonical_argument_text_is_told_only_when_it_is() {
        let canonical = [
            r#"{"a":1,"b":2}"#,
            r#"{}"#,
            r#"[]"#,
            r#"{"s":"q\"uote\\ back\nline\ttab\rret\bbs\fff","u":"é😀"}"#,
            "{\"del\":\"\u{7f}\"}",
            r#"{"n":[-1,0,123456789012345678,-12345678901234567],"t":true,"f":false,"z":null}"#,
            r#"{"deep":{"deeper":[{"a":{}},{"a":[]}]},"a":{"a":{"a":1}}}"#,
            r#""text""#,
            "42",
        ];
        let not_canonical = [
            r#"{"a": 1}"#,
            r#" {"a":1}"#,
            "{\"a\":1}\n",
            "{\"a\":\t1}",
            r#"{"a":1.0}"#,
            r#"{"a":1.5}"#,
            r#"{"a":1e3}"#,
            r#"{"a":1E3}"#,
            r#"{"a":-0}"#,
            r#"{"a":1234567890123456789}"#,
            r#"{"a":"\u00e9"}"#,
            r#"{"a":"\u0001"}"#,
            r#"{"a":"a\/b"}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"x":{"a":1,"a":2},"y":3}"#,
            r#"[{"a":1},{"b":2,"b":3}]"#,
        ];
        for (texts, want) in [(&canonical[..], true), (&not_canonical[..], false)] {
            for text in texts {
                let (value, told) = parse_json_text_canonical(text).expect(text);
                assert_eq!(told, want, "{text}");
                assert_eq!(value, parse_json_text(text).unwrap(), "{text}");
                if told {
                    assert_eq!(crate::json::to_canonical_string(&value), *text);
                }
            }
        }
        assert!(parse_json_text_canonical(r#"{"a":"#).is_err());
        assert_eq!(
            parse_json_text_canonical(&nested(65)).unwrap_err(),
            "value is nested more than 64 levels deep"
        );
        assert!(parse_json_text_canonical(&nested(64)).unwrap().1);
    }

    #[test]
    fn strings_are_passed_over_whole_whatever_they_hold() {
        // Long enough for the vectorized search, with escapes at its start, middle and end,
        // and brackets, colons and quotes inside that must count for nothing.
        let long = "x".repeat(70);
        let canonical = [
            format!(r#"{{"s":"{long}\"{long}\\{long}"}}"#),
            format!(r#"{{"s":"\\{long}","t":"{long}\\"}}"#),
            format!(r#"{{"s":"[[[{{{{:{long}:]]]}}}}","n":1}}"#),
            format!(r#"["{long}","\"","\\","{long}"]"#),
        ];
        for text in &canonical {
            let (value, told) = parse_json_text_canonical(text).expect(text);
            assert!(told, "{text}");
            assert_eq!(crate::json::to_canonical_string(&value), *text);
        }
        let not_canonical = [
            format!(r#"{{"s":"{long}\u0041{long}"}}"#),
            format!(r#"{{"s":"{long}\/"}}"#),
        ];
        for text in &not_canonical {
            let (value, told) = parse_json_text_canonical(text).expect(text);
            assert!(!told, "{text}");
            assert_eq!(value, parse_json_text(text).unwrap(), "{text}");
        }
        // Ends inside a string, right after a backslash, or after an escaped quote.
        for text in [
            format!(r#"{{"s":"{long}"#),
            format!(r#"{{"s":"{long}\"#),
            format!(r#"{{"s":"{long}\""#),
            r#"""#.to_owned(),
            r#""\"#.to_owned(),
        ] {
            assert!(parse_json_text_canonical(&text).is_err(), "{text}");
            assert!(parse_json_text(&text).is_err(), "{text}");
        }
        // Brackets inside a string are not nesting: 64 levels around a string of brackets
        // are 64 levels.
        let deep = format!(
            "{}\"{}\"{}",
            "[".repeat(64),
            "[".repeat(100),
            "]".repeat(64)
        );
        assert!(parse_json_text_canonical(&deep).unwrap().1);
    }
}
