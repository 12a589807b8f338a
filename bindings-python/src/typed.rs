//! What the typed-tool layer (`@tool` on a typed function, docs/behaviour.md §20) takes
//! from the core: the JSON-pointer message of a decoding error.

use pyo3::prelude::*;

use crate::convert::arg_value;

/// `"<JSON pointer>: <reason>"` for a decoding error at `path` (keys and indices).
#[pyfunction]
pub fn _input_problem(path: &Bound<'_, PyAny>, reason: &str) -> PyResult<String> {
    let path = arg_value(path, "path")?;
    let steps = path.as_array().map(Vec::as_slice).unwrap_or_default();
    Ok(phaseo_agent::input_problem(steps, reason))
}
