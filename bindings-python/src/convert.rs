//! Values across the boundary: JSON values ↔ Python objects, and the snake_case spelling of
//! the SDK's structural keys (user data is never renamed).

use phaseo_agent::{ToolError, Value};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Map;

use crate::limits::MAX_DEPTH;
use crate::reader::{read, ReadError};

/// A caller's own argument `what` (run input, context, definitions …) as a JSON value:
/// beyond the limits a `ValueError`, not JSON a `TypeError`, both naming `what`.
pub fn arg_value(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    read(obj, MAX_DEPTH).map_err(|e| e.into_arg_error(what))
}

/// A value a host callback returned (validators, hooks, predicates): a refused value is
/// the callback's error.
pub fn returned_value(obj: &Bound<'_, PyAny>) -> Result<Value, ToolError> {
    returned(obj, MAX_DEPTH, ToolError::new)
}

/// A tool result (executors, `on_tool_called`, `on_response_received`): a refused value is
/// an invalid output (`tool_output_invalid`).
pub fn result_value(obj: &Bound<'_, PyAny>) -> Result<Value, ToolError> {
    returned(obj, MAX_DEPTH, crate::limits::invalid_output)
}

/// Reads a returned value within `limit`, mapping a refusal with `refuse`.
pub fn returned(
    obj: &Bound<'_, PyAny>,
    limit: usize,
    refuse: fn(String) -> ToolError,
) -> Result<Value, ToolError> {
    read(obj, limit).map_err(|e| match e {
        ReadError::Raised(err) => crate::errors::to_tool_error(obj.py(), err),
        other => refuse(other.message(obj.py())),
    })
}

/// Deepest value handed to Python: values in the SDK are bounded (docs/behaviour.md §7 plus the state's
/// own nesting); this only keeps a corrupt one from exhausting the stack.
const MAX_PY_DEPTH: usize = 512;

/// A JSON value as a Python object.
pub fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    write(py, value, 0)
}

fn write<'py>(py: Python<'py>, value: &Value, depth: usize) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => pyo3::types::PyString::new(py, s).into_any(),
        Value::Array(items) => {
            if depth >= MAX_PY_DEPTH {
                return Err(PyValueError::new_err(
                    "value is nested too deeply for Python",
                ));
            }
            let list = PyList::empty(py);
            for item in items {
                list.append(write(py, item, depth + 1)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            if depth >= MAX_PY_DEPTH {
                return Err(PyValueError::new_err(
                    "value is nested too deeply for Python",
                ));
            }
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, write(py, v, depth + 1)?)?;
            }
            dict.into_any()
        }
    })
}

/// A call as a `phaseo_agent.AgentToolCall`: a dict `{"id", "name", "input"}` whose keys
/// read as attributes too (`call.id`, as in the product's SDK).
pub fn tool_call_record<'py>(
    py: Python<'py>,
    call: &phaseo_agent::ToolCall,
) -> PyResult<Bound<'py, PyAny>> {
    static CLASS: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    let class = CLASS.get_or_try_init(py, || {
        Ok::<_, PyErr>(
            py.import("phaseo_agent._records")?
                .getattr("AgentToolCall")?
                .unbind(),
        )
    })?;
    class
        .bind(py)
        .call1((&*call.id, &*call.name, to_py(py, &call.input)?))
}

/// `toolCallId` → `tool_call_id` (the core's spelling of its format's keys).
pub use phaseo_agent::spec::snake_case as snake;

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
