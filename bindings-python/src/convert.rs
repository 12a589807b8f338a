//! Values across the boundary: JSON values ↔ Python objects, and the snake_case spelling of
//! the SDK's structural keys (user data is never renamed).

use phaseo_agent::Value;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use serde_json::Map;

/// A Python object as a JSON value; Pydantic models are dumped in JSON mode first.
pub fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    match pythonize::depythonize::<Value>(obj) {
        Ok(v) => Ok(v),
        Err(first) => {
            if obj.hasattr("model_dump")? {
                let kwargs = pyo3::types::PyDict::new(obj.py());
                kwargs.set_item("mode", "json")?;
                let dumped = obj.call_method("model_dump", (), Some(&kwargs))?;
                return pythonize::depythonize::<Value>(&dumped)
                    .map_err(|e| PyTypeError::new_err(e.to_string()));
            }
            Err(PyTypeError::new_err(format!(
                "value of type {} is not JSON-compatible: {first}",
                obj.get_type().name()?
            )))
        }
    }
}

/// A JSON value as a Python object.
pub fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(|e| PyTypeError::new_err(e.to_string()))
}

/// `toolCallId` → `tool_call_id`.
pub fn snake(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `tool_call_id` → `toolCallId`.
pub fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Keys whose values are user data and keep their spelling.
const OPAQUE: &[&str] = &[
    "input",
    "output",
    "result",
    "context",
    "payload",
    "value",
    "parameters",
    "arguments",
    "item_input",
    "preliminary_results",
    "content",
    "delta",
    "input_examples",
];

/// Renames structural keys with `rename`, leaving user data untouched.
pub fn rename_keys(value: Value, rename: fn(&str) -> String) -> Value {
    match value {
        Value::Object(m) => {
            let mut out = Map::with_capacity(m.len());
            for (k, v) in m {
                let key = rename(&k);
                let opaque = OPAQUE.contains(&snake(&k).as_str());
                out.insert(key, if opaque { v } else { rename_keys(v, rename) });
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(|v| rename_keys(v, rename)).collect()),
        other => other,
    }
}

/// Structural keys to snake_case.
pub fn snake_keys(value: Value) -> Value {
    rename_keys(value, snake)
}

/// Structural keys to camelCase.
pub fn camel_keys(value: Value) -> Value {
    rename_keys(value, camel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renames_structure_but_not_user_data() {
        let v = json!({"toolCallId": "c", "output": {"keepMe": 1}, "usage": {"inputTokens": 2}});
        assert_eq!(
            snake_keys(v.clone()),
            json!({"tool_call_id": "c", "output": {"keepMe": 1}, "usage": {"input_tokens": 2}})
        );
        assert_eq!(camel_keys(snake_keys(v.clone())), v);
    }
}
