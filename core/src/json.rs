//! Canonical JSON text (docs/behaviour.md §7): compact, keys in insertion order, numbers written as
//! JavaScript writes them (`Number.prototype.toString`: shortest round-trip digits,
//! integral values without a fraction, `1e-6` → `0.000001`, `1e21` → `1e+21`), so that
//! every language produces the same text, and a state written by Node's `JSON.stringify`
//! is byte for byte the one the core writes.

use std::io;

use serde::Serialize;
use serde_json::ser::Formatter;

/// A `serde_json` formatter writing floats as ECMAScript does (`2.0` → `2`, `1e-7` →
/// `1e-7`, `1e21` → `1e+21`); integers keep their exact digits.
#[derive(Clone, Copy, Debug, Default)]
pub struct CanonicalFormatter;

fn write_float<W: ?Sized + io::Write>(writer: &mut W, value: f64) -> io::Result<()> {
    if !value.is_finite() {
        // JSON has no NaN or infinity; `JSON.stringify` writes `null` for them too.
        return writer.write_all(b"null");
    }
    if value == 0.0 {
        // `-0` is written `0` by JavaScript.
        return writer.write_all(b"0");
    }
    let mut buf = ryu_js::Buffer::new();
    writer.write_all(buf.format_finite(value).as_bytes())
}

impl Formatter for CanonicalFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        write_float(writer, value)
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        write_float(writer, f64::from(value))
    }
}

/// Serializes a value as canonical JSON text.
pub fn to_canonical_string<T: Serialize + ?Sized>(value: &T) -> String {
    to_canonical_string_with_capacity(value, 128)
}

/// [`to_canonical_string`] into a buffer that starts with `capacity` bytes (a text known to
/// be large then grows without a chain of reallocations).
pub fn to_canonical_string_with_capacity<T: Serialize + ?Sized>(
    value: &T,
    capacity: usize,
) -> String {
    let mut out = Vec::with_capacity(capacity);
    write_canonical(&mut out, value);
    json_text(out)
}

/// The JSON text `out` holds, made of [`write_canonical`]'s output, ASCII and whole slices
/// of such texts, as a `String`, without checking it again (as `serde_json`'s own
/// `to_string` does not): the check cost about 150 instructions a tool call, in writing its
/// arguments for the host. Debug builds check it.
pub(crate) fn json_text(out: Vec<u8>) -> String {
    debug_assert!(std::str::from_utf8(&out).is_ok(), "JSON text is UTF-8");
    // SAFETY: every caller fills `out` only with serde_json's output (UTF-8, as it writes
    // `str`s and ASCII), ASCII literals, and slices of such text cut at ASCII bytes (quotes
    // and commas), so every byte sequence is whole UTF-8.
    unsafe { String::from_utf8_unchecked(out) }
}

/// Appends the canonical JSON text of a value to `out` (UTF-8).
pub fn write_canonical<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let mut ser = serde_json::Serializer::with_formatter(out, CanonicalFormatter);
    value
        .serialize(&mut ser)
        .expect("serializing to memory cannot fail for JSON-compatible values");
}

/// The shortest JSON text of a number, integral values without a fraction
/// (`2.0` → `2`, `0.5` → `0.5`), as used in stop reasons.
pub fn number_text(value: f64) -> String {
    let mut out = Vec::new();
    write_float(&mut out, value).expect("writing to memory cannot fail");
    String::from_utf8(out).expect("ASCII")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integral_floats_lose_their_fraction() {
        assert_eq!(
            to_canonical_string(&json!({"a": 2.0, "b": 0.5, "c": [1, 0.3]})),
            r#"{"a":2,"b":0.5,"c":[1,0.3]}"#
        );
        assert_eq!(number_text(2.0), "2");
        assert_eq!(number_text(0.5), "0.5");
        assert_eq!(number_text(-0.0), "0");
    }

    #[test]
    fn numbers_are_written_as_javascript_writes_them() {
        // Expected texts are what `String(n)` / `JSON.stringify(n)` give in JavaScript.
        let cases: [(f64, &str); 14] = [
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.2345e22, "1.2345e+22"),
            (-1e21, "-1e+21"),
            (123456789.125, "123456789.125"),
            (0.1 + 0.2, "0.30000000000000004"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (-2.5, "-2.5"),
            (f64::NAN, "null"),
            (f64::INFINITY, "null"),
        ];
        for (value, text) in cases {
            assert_eq!(number_text(value), text, "{value:e}");
        }
        assert_eq!(
            to_canonical_string(&json!({"small": 1e-6, "big": 1e21, "int": u64::MAX})),
            r#"{"small":0.000001,"big":1e+21,"int":18446744073709551615}"#
        );
    }

    #[test]
    fn keys_keep_insertion_order() {
        let v: serde_json::Value = serde_json::from_str(r#"{"z":1,"a":2}"#).unwrap();
        assert_eq!(to_canonical_string(&v), r#"{"z":1,"a":2}"#);
    }
}
