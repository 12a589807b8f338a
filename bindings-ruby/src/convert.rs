//! Plain Ruby values ↔ JSON values. Ruby gets String keys; Symbol keys (and Symbol values)
//! are accepted on input, as Ruby users write them.
//!
//! A Ruby value enters the SDK within the limits of docs/behaviour.md §7 (docs/behaviour.md): at most
//! [`MAX_DEPTH`] levels of nesting (a scalar is depth 0, `{"a" => 1}` depth 1), no cycle,
//! integers that fit 64 bits. The reader counts its depth and keeps the containers of the
//! current path, so it never recurses more than its limit whatever the value (10,000
//! levels deep, an Array that holds itself): the limit errors come before any stack could
//! run out, with the core's own texts ([`phaseo_agent::ValueLimitError`]).

use magnus::encoding::{EncodingCapable, RbEncoding};
use magnus::r_hash::ForEach;
use magnus::rb_sys::AsRawValue;
use magnus::value::ReprValue;
use magnus::{
    Error, ExceptionClass, Float, Integer, IntoValue, RArray, RHash, RString, Ruby, Symbol,
    Value as RValue,
};
use phaseo_agent::{Value, ValueLimitError};

/// Nesting deeper than this is refused (as every binding does, docs/behaviour.md §2).
pub const MAX_DEPTH: usize = phaseo_agent::MAX_DEPTH;

/// The deepest nesting of a state given as a Hash: the values' limit plus the state's own
/// nesting, and the paused agent tools' states it holds, as the core's state reader
/// accepts (it then checks each state from its own root).
pub const STATE_DEPTH: usize = phaseo_agent::MAX_STATE_DEPTH;

/// The deepest nesting of what wraps values in the SDK's own structure (a host model
/// client's response: a tool call's `arguments` sit 4 levels down; an agent definition: a
/// tool's `inputExamples[i]` 4 levels down): the values inside are limited by the core
/// where it reads them.
pub const WRAPPED_DEPTH: usize = MAX_DEPTH + 8;

/// Integers with more bits than this are named by their size, not their digits (printing
/// a huge Bignum takes long and makes an unreadable message).
const PRINTABLE_BITS: u64 = 4096;

/// Why a Ruby value cannot be read as JSON: the Ruby exception class a caller's own
/// argument raises (ArgumentError for the limits and text, RangeError for integers,
/// TypeError for what is not JSON) and the problem in words.
pub struct Problem {
    kind: Kind,
    /// The problem, without the argument's name.
    pub message: String,
}

#[derive(Clone, Copy)]
enum Kind {
    Argument,
    Range,
    Type,
}

impl Problem {
    fn new(kind: Kind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// The problem as the exception a caller's argument `what` raises.
    pub fn into_error(self, ruby: &Ruby, what: &str) -> Error {
        let class: ExceptionClass = match self.kind {
            Kind::Argument => ruby.exception_arg_error(),
            Kind::Range => ruby.exception_range_error(),
            Kind::Type => ruby.exception_type_error(),
        };
        Error::new(class, format!("{what}: {}", self.message))
    }
}

/// A Ruby value as JSON within [`MAX_DEPTH`]; `what` names the argument in the
/// `TypeError`/`ArgumentError`/`RangeError`.
pub fn to_json(ruby: &Ruby, v: RValue, what: &str) -> Result<Value, Error> {
    to_json_within(ruby, v, what, MAX_DEPTH)
}

/// [`to_json`] with another depth limit (for what wraps values: a state, a response).
pub fn to_json_within(ruby: &Ruby, v: RValue, what: &str, max: usize) -> Result<Value, Error> {
    read(ruby, v, max).map_err(|p| p.into_error(ruby, what))
}

/// Reads a Ruby value as JSON nested at most `max` levels.
pub fn read(ruby: &Ruby, v: RValue, max: usize) -> Result<Value, Problem> {
    Reader {
        ruby,
        max,
        path: Vec::new(),
    }
    .read(v, 0)
}

/// The UTF-8 text of a Ruby String: a UTF-8, US-ASCII or binary (ASCII-8BIT) String is
/// read as UTF-8 bytes (binary is what IO and HTTP bodies give), one of another encoding
/// is transcoded. `Err` says what is wrong with the text.
pub fn text(ruby: &Ruby, s: RString) -> Result<String, String> {
    let enc = s.enc_get();
    let utf8 = ruby.utf8_encindex();
    if enc == utf8 || enc == ruby.usascii_encindex() || enc == ruby.ascii8bit_encindex() {
        // The bytes are copied before any Ruby code can run.
        return utf8_bytes(unsafe { s.as_slice() });
    }
    // rb_str_conv_enc gives the String back unchanged when it cannot convert it.
    match s.conv_enc(ruby.utf8_encoding()) {
        Ok(converted) if converted.enc_get() == utf8 => utf8_bytes(unsafe { converted.as_slice() }),
        _ => Err(format!(
            "text in {} that cannot be converted to UTF-8",
            RbEncoding::from(enc).name()
        )),
    }
}

fn utf8_bytes(bytes: &[u8]) -> Result<String, String> {
    std::str::from_utf8(bytes).map(str::to_owned).map_err(|e| {
        format!(
            "text is not valid UTF-8 (byte 0x{:02X} at offset {})",
            bytes[e.valid_up_to()],
            e.valid_up_to()
        )
    })
}

struct Reader<'r> {
    ruby: &'r Ruby,
    max: usize,
    /// The Arrays and Hashes from the root to the value being read (a cycle comes back to
    /// one of them).
    path: Vec<rb_sys::VALUE>,
}

impl Reader<'_> {
    fn read(&mut self, v: RValue, depth: usize) -> Result<Value, Problem> {
        let ruby = self.ruby;
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
            return integer(ruby, i);
        }
        if let Some(f) = Float::from_value(v) {
            return float(f.to_f64());
        }
        if let Some(s) = RString::from_value(v) {
            return text(ruby, s)
                .map(Value::String)
                .map_err(|e| Problem::new(Kind::Argument, format!("a String whose {e}")));
        }
        if let Some(s) = Symbol::from_value(v) {
            return symbol(s).map(Value::String);
        }
        let array = RArray::from_value(v);
        let hash = RHash::from_value(v);
        if array.is_none() && hash.is_none() {
            return Err(Problem::new(
                Kind::Type,
                format!(
                    "a {} is not a JSON value (use Hash, Array, String, Integer, Float, true, false or nil)",
                    unsafe { v.classname() }
                ),
            ));
        }
        // A container at `depth` makes the value `depth + 1` levels deep.
        if depth >= self.max {
            return Err(Problem::new(
                Kind::Argument,
                ValueLimitError::TooDeep.to_string(),
            ));
        }
        let id = v.as_raw();
        if self.path.contains(&id) {
            return Err(Problem::new(
                Kind::Argument,
                ValueLimitError::Cycle.to_string(),
            ));
        }
        self.path.push(id);
        let out = match (array, hash) {
            (Some(a), _) => self.array(a, depth),
            (_, Some(h)) => self.hash(h, depth),
            _ => unreachable!("an Array or a Hash"),
        };
        self.path.pop();
        out
    }

    fn array(&mut self, a: RArray, depth: usize) -> Result<Value, Problem> {
        let mut out = Vec::with_capacity(a.len());
        // By index, not by a slice: the Array is Ruby's memory and is read one entry at a
        // time (no Ruby code runs meanwhile, but nothing is assumed about its length).
        let mut i = 0;
        while i < a.len() {
            let item: RValue = a
                .entry(i as isize)
                .unwrap_or_else(|_| self.ruby.qnil().as_value());
            out.push(self.read(item, depth + 1)?);
            i += 1;
        }
        Ok(Value::Array(out))
    }

    fn hash(&mut self, h: RHash, depth: usize) -> Result<Value, Problem> {
        let mut out = serde_json::Map::new();
        let mut failure = None;
        // The closure never returns Err (that would raise through the Hash iteration): the
        // first problem is kept and the iteration stopped.
        let walked = h.foreach(|k: RValue, item: RValue| {
            let key = match key(self.ruby, k) {
                Ok(key) => key,
                Err(p) => {
                    failure = Some(p);
                    return Ok(ForEach::Stop);
                }
            };
            match self.read(item, depth + 1) {
                Ok(value) => {
                    out.insert(key, value);
                    Ok(ForEach::Continue)
                }
                Err(p) => {
                    failure = Some(p);
                    Ok(ForEach::Stop)
                }
            }
        });
        if let Some(p) = failure {
            return Err(p);
        }
        if walked.is_err() {
            return Err(Problem::new(Kind::Argument, "a Hash changed while read"));
        }
        Ok(Value::Object(out))
    }
}

fn key(ruby: &Ruby, k: RValue) -> Result<String, Problem> {
    if let Some(s) = RString::from_value(k) {
        return text(ruby, s)
            .map_err(|e| Problem::new(Kind::Argument, format!("a Hash key whose {e}")));
    }
    if let Some(s) = Symbol::from_value(k) {
        return symbol(s);
    }
    Err(Problem::new(
        Kind::Type,
        format!("Hash keys must be Strings or Symbols, got a {}", unsafe {
            k.classname()
        }),
    ))
}

fn symbol(s: Symbol) -> Result<String, Problem> {
    s.name().map(|n| n.into_owned()).map_err(|_| {
        Problem::new(
            Kind::Argument,
            "a Symbol whose name is not valid UTF-8".to_owned(),
        )
    })
}

fn integer(ruby: &Ruby, i: Integer) -> Result<Value, Problem> {
    if let Ok(n) = i.to_i64() {
        return Ok(Value::from(n));
    }
    if let Ok(n) = i.to_u64() {
        return Ok(Value::from(n));
    }
    let bits: Option<u64> = i.funcall("bit_length", ()).ok();
    let digits = match bits {
        Some(b) if b <= PRINTABLE_BITS => i.to_string(),
        Some(b) => format!("of {b} bits"),
        None => "of unknown size".to_owned(),
    };
    let _ = ruby;
    Err(Problem::new(
        Kind::Range,
        ValueLimitError::IntegerTooLarge(digits).to_string(),
    ))
}

fn float(f: f64) -> Result<Value, Problem> {
    serde_json::Number::from_f64(f)
        .map(Value::Number)
        .ok_or_else(|| {
            // As Ruby writes them (`Float::NAN.to_s`).
            let name = if f.is_nan() {
                "NaN"
            } else if f > 0.0 {
                "Infinity"
            } else {
                "-Infinity"
            };
            Problem::new(Kind::Argument, format!("{name} is not a JSON number"))
        })
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
