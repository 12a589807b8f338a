//! The shapes a definition's fields take: a host function, a validator, a per-turn value,
//! one-or-many.

use std::sync::Arc;

use serde::Deserialize;

use super::{invalid, HostCallbacks};
use crate::{AgentError, JsonSchema, TurnValue, Validator, Value};

/// `{"$callback": id}`: a host function.
#[derive(Deserialize, Clone, Copy, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct Callback {
    #[serde(rename = "$callback")]
    pub(crate) id: u64,
}

/// A host validator `{"$callback": id, "schema"?: {...}}` (the schema describes it to the
/// model) or a JSON Schema compiled in the core.
#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum ValidatorSpec {
    Host {
        #[serde(rename = "$callback")]
        id: u64,
        schema: Option<Value>,
    },
    Schema(Value),
}

impl ValidatorSpec {
    /// The core validator; `what` names the field in a schema's compile error.
    pub(crate) fn build(
        self,
        host: &dyn HostCallbacks,
        what: &str,
    ) -> Result<Arc<dyn Validator>, AgentError> {
        match self {
            ValidatorSpec::Host { id, schema } => {
                Ok(host.validator(id, schema.filter(|s| !s.is_null())))
            }
            ValidatorSpec::Schema(schema) => JsonSchema::compile(&schema)
                .map(|s| Arc::new(s) as Arc<dyn Validator>)
                .map_err(|e| invalid(format!("Invalid {what}: {e}"))),
        }
    }
}

/// A value, or a host function (of the turn, or of the call for `nextTurnParams`).
#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum ValueOrCallback {
    Callback(Callback),
    Value(Value),
}

impl ValueOrCallback {
    /// A per-turn value; null is no value.
    pub(crate) fn turn_value(self, host: &dyn HostCallbacks) -> Option<TurnValue> {
        match self {
            ValueOrCallback::Callback(cb) => Some(TurnValue::Dynamic(host.turn_value(cb.id))),
            ValueOrCallback::Value(Value::Null) => None,
            ValueOrCallback::Value(v) => Some(TurnValue::Fixed(v)),
        }
    }
}

/// One item or a list of them.
#[derive(Deserialize)]
#[serde(untagged, expecting = "one value or a list of them")]
pub(crate) enum OneOrMany<T> {
    Many(Vec<T>),
    One(T),
}

impl<T> OneOrMany<T> {
    /// The items.
    pub(crate) fn into_vec(self) -> Vec<T> {
        match self {
            OneOrMany::Many(v) => v,
            OneOrMany::One(x) => vec![x],
        }
    }
}

/// A non-negative count from a JSON number (negatives read as 0, fractions truncated).
pub(crate) fn count(n: f64) -> usize {
    n.max(0.0) as usize
}

/// A number of steps (`maxSteps`): a whole number, 0 or more. A negative or fractional
/// number is refused naming the field rather than read as another limit than the one
/// written (a negative one would make every run fail at its first step).
pub(crate) struct StepCount(pub(crate) usize);

impl<'de> Deserialize<'de> for StepCount {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let n = f64::deserialize(deserializer)?;
        whole_number(n, "steps")
            .map(StepCount)
            .map_err(serde::de::Error::custom)
    }
}

/// A number of characters (`toolExecution.maxOutputChars`): a whole number, 0 or more,
/// refused otherwise as [`StepCount`] is (a negative limit would cut every tool message to
/// the notice alone).
pub(crate) struct CharCount(pub(crate) usize);

impl<'de> Deserialize<'de> for CharCount {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let n = f64::deserialize(deserializer)?;
        whole_number(n, "characters")
            .map(CharCount)
            .map_err(serde::de::Error::custom)
    }
}

/// A limit written as a whole number of `unit`, 0 or more (at most 2³² − 1), or the
/// message saying what it is not.
pub(crate) fn whole_number(n: f64, unit: &str) -> Result<usize, String> {
    if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= f64::from(u32::MAX) {
        Ok(n as usize)
    } else {
        Err(format!(
            "must be a whole number of {unit}, 0 or more, got {n}"
        ))
    }
}
