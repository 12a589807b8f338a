//! JSON comparison with the suite's rules: numbers by value, absent equals null.

use serde_json::Value;

/// Deep equality where `2` equals `2.0` and an absent object key equals `null`.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y,
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            let null = Value::Null;
            x.keys()
                .chain(y.keys())
                .all(|k| json_eq(x.get(k).unwrap_or(&null), y.get(k).unwrap_or(&null)))
        }
        _ => a == b,
    }
}

/// Compact text of a value for difference messages.
pub fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 300 {
        let cut: String = s.chars().take(300).collect();
        format!("{cut}…")
    } else {
        s
    }
}
