//! Plain Ruby values ↔ JSON values. Ruby gets String keys; Symbol keys (and Symbol values)
//! are accepted on input, as Ruby users write them.

use magnus::value::ReprValue;
use magnus::{
    r_hash::ForEach, Error, Float, Integer, IntoValue, RArray, RHash, RString, Ruby, Symbol,
    Value as RValue,
};
use phaseo_agent::Value;

/// Nesting deeper than this is refused (as every binding does, SPEC §2).
const MAX_DEPTH: usize = phaseo_agent::MAX_DEPTH;

/// A Ruby value as JSON; `what` names the argument in the `TypeError`/`ArgumentError`.
pub fn to_json(ruby: &Ruby, v: RValue, what: &str) -> Result<Value, Error> {
    read(ruby, v, what, 0)
}

fn read(ruby: &Ruby, v: RValue, what: &str, depth: usize) -> Result<Value, Error> {
    if depth > MAX_DEPTH {
        return Err(Error::new(
            ruby.exception_arg_error(),
            format!("{what}: nested deeper than {MAX_DEPTH} levels (or a cycle)"),
        ));
    }
    if v.is_nil() {
        return Ok(Value::Null);
    }
    if v.is_kind_of(ruby.class_true_class()) {
        return Ok(Value::Bool(true));
    }
    if v.is_kind_of(ruby.class_false_class()) {
        return Ok(Value::Bool(false));
    }
    if let Some(i) = Integer::from_value(v) {
        if let Ok(n) = i.to_i64() {
            return Ok(Value::from(n));
        }
        if let Ok(n) = i.to_u64() {
            return Ok(Value::from(n));
        }
        return Err(Error::new(
            ruby.exception_range_error(),
            format!("{what}: integer beyond 64 bits"),
        ));
    }
    if let Some(f) = Float::from_value(v) {
        let f = f.to_f64();
        return serde_json::Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| {
                Error::new(
                    ruby.exception_arg_error(),
                    format!("{what}: {f} is not a JSON number"),
                )
            });
    }
    if let Some(s) = RString::from_value(v) {
        return Ok(Value::String(s.to_string()?));
    }
    if let Some(s) = Symbol::from_value(v) {
        return Ok(Value::String(s.name()?.into_owned()));
    }
    if let Some(a) = RArray::from_value(v) {
        let mut out = Vec::with_capacity(a.len());
        for item in a.into_iter() {
            out.push(read(ruby, item, what, depth + 1)?);
        }
        return Ok(Value::Array(out));
    }
    if let Some(h) = RHash::from_value(v) {
        let mut out = serde_json::Map::new();
        let mut failure = None;
        h.foreach(|k: RValue, item: RValue| {
            let key = if let Some(s) = RString::from_value(k) {
                s.to_string()?
            } else if let Some(s) = Symbol::from_value(k) {
                s.name()?.into_owned()
            } else {
                failure = Some(Error::new(
                    ruby.exception_type_error(),
                    format!("{what}: Hash keys must be Strings or Symbols"),
                ));
                return Ok(ForEach::Stop);
            };
            match read(ruby, item, what, depth + 1) {
                Ok(value) => {
                    out.insert(key, value);
                    Ok(ForEach::Continue)
                }
                Err(e) => {
                    failure = Some(e);
                    Ok(ForEach::Stop)
                }
            }
        })?;
        if let Some(e) = failure {
            return Err(e);
        }
        return Ok(Value::Object(out));
    }
    Err(Error::new(
        ruby.exception_type_error(),
        format!(
            "{what}: a {} is not a JSON value (use Hash, Array, String, Integer, Float, true, false or nil)",
            unsafe { v.classname() }
        ),
    ))
}

/// A JSON value as plain Ruby (String keys).
pub fn to_ruby(ruby: &Ruby, v: &Value) -> RValue {
    match v {
        Value::Null => ruby.qnil().as_value(),
        Value::Bool(b) => b.into_value_with(ruby),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_value_with(ruby)
            } else if let Some(u) = n.as_u64() {
                u.into_value_with(ruby)
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_value_with(ruby)
            }
        }
        Value::String(s) => ruby.str_new(s).as_value(),
        Value::Array(items) => {
            let a = ruby.ary_new_capa(items.len());
            for item in items {
                let _ = a.push(to_ruby(ruby, item));
            }
            a.as_value()
        }
        Value::Object(map) => {
            let h = ruby.hash_new();
            for (k, item) in map {
                let _ = h.aset(ruby.str_new(k), to_ruby(ruby, item));
            }
            h.as_value()
        }
    }
}
