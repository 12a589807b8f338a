//! Canonical JSON text (SPEC §7): compact, keys in insertion order, numbers in shortest
//! round-trip form with integral floats written without a fraction, so that every
//! language produces the same text.

use std::io;

use serde::Serialize;
use serde_json::ser::Formatter;

/// A `serde_json` formatter writing integral floats as integers (`2.0` → `2`).
#[derive(Clone, Copy, Debug, Default)]
pub struct CanonicalFormatter;

fn write_float<W: ?Sized + io::Write>(writer: &mut W, value: f64) -> io::Result<()> {
    if value.is_finite() && value.fract() == 0.0 && value.abs() < 1e21 {
        if value == 0.0 {
            return writer.write_all(b"0");
        }
        write!(writer, "{value:.0}")
    } else if value.is_finite() {
        let mut buf = ryu_like(value);
        if buf.ends_with(".0") {
            buf.truncate(buf.len() - 2);
        }
        writer.write_all(buf.as_bytes())
    } else {
        writer.write_all(b"null")
    }
}

/// Shortest round-trip text of a float, as `serde_json` (ryu) writes it.
fn ryu_like(value: f64) -> String {
    serde_json::Number::from_f64(value)
        .map(|n| n.to_string())
        .unwrap_or_else(|| "null".to_owned())
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
    let mut out = Vec::with_capacity(128);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, CanonicalFormatter);
    value
        .serialize(&mut ser)
        .expect("serializing to memory cannot fail for JSON-compatible values");
    String::from_utf8(out).expect("serde_json writes UTF-8")
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
    fn keys_keep_insertion_order() {
        let v: serde_json::Value = serde_json::from_str(r#"{"z":1,"a":2}"#).unwrap();
        assert_eq!(to_canonical_string(&v), r#"{"z":1,"a":2}"#);
    }
}
