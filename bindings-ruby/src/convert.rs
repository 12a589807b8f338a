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
    to_json_bare(ruby, v, what).map_err(|(e, _)| e)
}

/// [`to_json`], also giving the problem without the argument's name (the core's own text
/// for the value limits of SPEC §7: the message of an invalid output or event).
pub fn to_json_bare(ruby: &Ruby, v: RValue, what: &str) -> Result<Value, (Error, String)> {
    read(ruby, v, 0)
        .map_err(|(class, message)| (Error::new(class, format!("{what}: {message}")), message))
}

type Problem = (magnus::ExceptionClass, String);

fn read(ruby: &Ruby, v: RValue, depth: usize) -> Result<Value, Problem> {
    if depth > MAX_DEPTH {
        // A cycle ends here too, as a value nested too deep.
        return Err((
            ruby.exception_arg_error(),
            phaseo_agent::ValueLimitError::TooDeep.to_string(),
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
        return Err((
            ruby.exception_range_error(),
            phaseo_agent::ValueLimitError::IntegerTooLarge(i.to_string()).to_string(),
        ));
    }
    if let Some(f) = Float::from_value(v) {
        let f = f.to_f64();
        return serde_json::Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| {
                (
                    ruby.exception_arg_error(),
                    format!("{f} is not a JSON number"),
                )
            });
    }
    if let Some(s) = RString::from_value(v) {
        return s.to_string().map(Value::String).map_err(|_| {
            (
                ruby.exception_arg_error(),
                "a String that is not valid UTF-8".into(),
            )
        });
    }
    if let Some(s) = Symbol::from_value(v) {
        return Ok(Value::String(s.to_string()));
    }
    if let Some(a) = RArray::from_value(v) {
        let mut out = Vec::with_capacity(a.len());
        for item in a.into_iter() {
            out.push(read(ruby, item, depth + 1)?);
        }
        return Ok(Value::Array(out));
    }
    if let Some(h) = RHash::from_value(v) {
        let mut out = serde_json::Map::new();
        let mut failure = None;
        let walked = h.foreach(|k: RValue, item: RValue| {
            let key = if let Some(s) = RString::from_value(k) {
                match s.to_string() {
                    Ok(s) => s,
                    Err(_) => {
                        failure = Some((
                            ruby.exception_arg_error(),
                            "a Hash key that is not valid UTF-8".into(),
                        ));
                        return Ok(ForEach::Stop);
                    }
                }
            } else if let Some(s) = Symbol::from_value(k) {
                s.to_string()
            } else {
                failure = Some((
                    ruby.exception_type_error(),
                    "Hash keys must be Strings or Symbols".into(),
                ));
                return Ok(ForEach::Stop);
            };
            match read(ruby, item, depth + 1) {
                Ok(value) => {
                    out.insert(key, value);
                    Ok(ForEach::Continue)
                }
                Err(e) => {
                    failure = Some(e);
                    Ok(ForEach::Stop)
                }
            }
        });
        if walked.is_err() && failure.is_none() {
            return Err((
                ruby.exception_arg_error(),
                "a Hash changed while read".into(),
            ));
        }
        if let Some(e) = failure {
            return Err(e);
        }
        return Ok(Value::Object(out));
    }
    Err((
        ruby.exception_type_error(),
        format!(
            "a {} is not a JSON value (use Hash, Array, String, Integer, Float, true, false or nil)",
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
