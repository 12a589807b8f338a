//! Reading a Python object as a JSON value within the limits of docs/behaviour.md §7: at most `limit`
//! levels of nesting (a scalar is depth 0, `{"a": 1}` depth 1), no cycle, integers that fit
//! 64 bits. The reader counts its depth and keeps the containers of the current path, so
//! it never recurses more than `limit` frames whatever the object (deep, cyclic,
//! misbehaving `__len__`/`keys()`): the limit errors come before any stack could run out.

use phaseo_agent::Value;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PyMapping,
    PySequence, PySet, PyString, PyTuple, PyType,
};
use serde_json::{Map, Number};

use crate::limits;

/// Why a host value cannot enter the SDK.
#[derive(Debug)]
pub enum ReadError {
    /// Beyond the limits: nested too deep, a cycle, an integer beyond 64 bits.
    Limit(String),
    /// Not a JSON value: an unsupported type, a key that is not a string, text that is not
    /// valid Unicode.
    Type(String),
    /// Host code raised while the value was read (a `__len__`, `keys()`, `model_dump` …).
    Raised(PyErr),
}

impl ReadError {
    /// The problem, as text (a raised exception's best-effort message).
    pub fn message(&self, py: Python<'_>) -> String {
        match self {
            Self::Limit(m) | Self::Type(m) => m.clone(),
            Self::Raised(e) => crate::errors::host_message(py, e),
        }
    }

    /// A host interrupt (`KeyboardInterrupt`, `SystemExit`) raised while reading: it must
    /// propagate as it is.
    pub fn interrupt(&self, py: Python<'_>) -> Option<PyErr> {
        match self {
            Self::Raised(e) if crate::errors::is_interrupt(py, e) => Some(e.clone_ref(py)),
            _ => None,
        }
    }

    /// As the exception a caller's own argument `what` raises: `ValueError` for the limits,
    /// `TypeError` for what is not JSON, the host's own exception when its code raised.
    pub fn into_arg_error(self, what: &str) -> PyErr {
        match self {
            Self::Limit(m) => pyo3::exceptions::PyValueError::new_err(format!("{what}: {m}")),
            Self::Type(m) => pyo3::exceptions::PyTypeError::new_err(format!("{what}: {m}")),
            Self::Raised(e) => e,
        }
    }
}

impl From<PyErr> for ReadError {
    fn from(e: PyErr) -> Self {
        Self::Raised(e)
    }
}

type Read<T> = Result<T, ReadError>;

/// Reads `obj` as a JSON value nested at most `limit` levels deep.
pub fn read(obj: &Bound<'_, PyAny>, limit: usize) -> Read<Value> {
    Reader {
        limit,
        path: Vec::new(),
        transparent: 0,
    }
    .value(obj)
}

struct Reader {
    limit: usize,
    /// The containers enclosing the value being read (their addresses): a cycle is a
    /// container met again on its own path.
    path: Vec<usize>,
    /// Entries of `path` that add no level (models read through their dump).
    transparent: usize,
}

impl Reader {
    fn enter(&mut self, obj: &Bound<'_, PyAny>, transparent: bool) -> Read<()> {
        let id = obj.as_ptr() as usize;
        if self.path.contains(&id) {
            return Err(ReadError::Limit(limits::cycle()));
        }
        // A chain of dumps that never ends is bounded too.
        if self.path.len() - self.transparent >= self.limit || self.path.len() >= 2 * self.limit {
            return Err(ReadError::Limit(limits::too_deep()));
        }
        self.path.push(id);
        self.transparent += usize::from(transparent);
        Ok(())
    }

    fn leave(&mut self, transparent: bool) {
        self.path.pop();
        self.transparent -= usize::from(transparent);
    }

    fn value(&mut self, obj: &Bound<'_, PyAny>) -> Read<Value> {
        if obj.is_none() {
            return Ok(Value::Null);
        }
        if let Ok(b) = obj.cast::<PyBool>() {
            return Ok(Value::Bool(b.is_true()));
        }
        if let Ok(i) = obj.cast::<PyInt>() {
            return int(i);
        }
        if let Ok(f) = obj.cast::<PyFloat>() {
            // Not a JSON number (NaN, ±inf): null, as JSON encoders of other languages do.
            return Ok(Number::from_f64(f.value()).map_or(Value::Null, Value::Number));
        }
        if let Ok(s) = obj.cast::<PyString>() {
            return text(s).map(Value::String);
        }
        if let Ok(d) = obj.cast::<PyDict>() {
            // A snapshot of the items: host code run meanwhile cannot change what we iterate.
            let items = d.items();
            return self.container(obj, |r| r.object(items.iter().map(Ok)));
        }
        if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
            return self.container(obj, |r| r.array(obj.try_iter()?));
        }
        if obj.is_instance_of::<PyBytes>() || obj.is_instance_of::<PyByteArray>() {
            return Err(unsupported(obj));
        }
        if obj.is_instance_of::<PySet>() || obj.is_instance_of::<PyFrozenSet>() {
            return self.container(obj, |r| r.array(obj.try_iter()?));
        }
        if obj.is_instance_of::<PyType>() {
            return Err(unsupported(obj));
        }
        if let Ok(seq) = obj.cast::<PySequence>() {
            let len = seq.len()?;
            return self.container(obj, |r| r.array((0..len).map(|i| seq.get_item(i))));
        }
        if let Ok(map) = obj.cast::<PyMapping>() {
            let items = map.items()?;
            return self.container(obj, |r| r.object(items.iter().map(Ok)));
        }
        // Dataclasses and Pydantic models say so on their class (an object answering any
        // attribute, like a mock, is neither).
        let class = obj.get_type();
        if let Some(fields) = class.getattr_opt("__dataclass_fields__")? {
            let names = fields.cast::<PyDict>().map_err(PyErr::from)?.keys();
            return self.container(obj, |r| {
                r.object(names.iter().map(|name| {
                    let value = obj.getattr(name.cast::<PyString>()?)?;
                    PyTuple::new(obj.py(), [name, value])
                }))
            });
        }
        if class.hasattr("model_dump")? {
            // A Pydantic model: its JSON-mode dump, read in place of the model.
            let kwargs = PyDict::new(obj.py());
            kwargs.set_item("mode", "json")?;
            let dumped = obj.call_method("model_dump", (), Some(&kwargs))?;
            // The dump stands in for the model, at the same depth.
            self.enter(obj, true)?;
            let value = self.value(&dumped);
            self.leave(true);
            return value;
        }
        Err(unsupported(obj))
    }

    fn container(
        &mut self,
        obj: &Bound<'_, PyAny>,
        read: impl FnOnce(&mut Self) -> Read<Value>,
    ) -> Read<Value> {
        self.enter(obj, false)?;
        let value = read(self);
        self.leave(false);
        value
    }

    fn array<'py>(
        &mut self,
        items: impl Iterator<Item = PyResult<Bound<'py, PyAny>>>,
    ) -> Read<Value> {
        let mut out = Vec::new();
        for item in items {
            out.push(self.value(&item?)?);
        }
        Ok(Value::Array(out))
    }

    fn object<'py, P>(&mut self, pairs: impl Iterator<Item = PyResult<P>>) -> Read<Value>
    where
        P: AsRef<Bound<'py, PyAny>>,
    {
        let mut out = Map::new();
        for pair in pairs {
            let pair = pair?;
            let pair = pair.as_ref();
            let key = pair.get_item(0)?;
            let Ok(key) = key.cast::<PyString>() else {
                return Err(ReadError::Type(format!(
                    "object keys must be strings, got {}",
                    type_name(&key)
                )));
            };
            let key = text(key)?;
            let value = self.value(&pair.get_item(1)?)?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

fn int(i: &Bound<'_, PyInt>) -> Read<Value> {
    if let Ok(v) = i.extract::<i64>() {
        return Ok(Value::Number(v.into()));
    }
    if let Ok(v) = i.extract::<u64>() {
        return Ok(Value::Number(v.into()));
    }
    // `str()` of an int has a digit limit (Python ≥ 3.11): name its size instead.
    let digits = i
        .py()
        .get_type::<PyInt>()
        .call_method1("__repr__", (i,))
        .and_then(|s| s.extract::<String>())
        .or_else(|_| {
            i.call_method0("bit_length")
                .and_then(|b| b.extract::<u64>())
                .map(|b| format!("of {b} bits"))
        })
        .unwrap_or_else(|_| "of unknown size".to_owned());
    Err(ReadError::Limit(limits::int_too_big(digits)))
}

fn text(s: &Bound<'_, PyString>) -> Read<String> {
    s.to_cow().map(|c| c.into_owned()).map_err(|e| {
        let reason = crate::errors::host_message(s.py(), &e);
        ReadError::Type(format!("text is not valid Unicode ({reason})"))
    })
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".to_owned())
}

fn unsupported(obj: &Bound<'_, PyAny>) -> ReadError {
    ReadError::Type(format!(
        "value of type {} is not JSON-compatible",
        type_name(obj)
    ))
}
