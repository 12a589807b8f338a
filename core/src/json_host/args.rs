//! The arguments of a call, serialized without copying a tool's input.

use serde::ser::{Serialize, SerializeMap, SerializeTuple, Serializer};

use crate::tool_runtime::IdempotencyKey;
use crate::{ToolRuntime, Value};

/// The JSON array a host function receives.
pub enum JsonArgs<'a> {
    /// These values.
    List(Vec<Value>),
    /// `[value, runtime]`, the runtime as [`runtime_value`] writes it.
    WithRuntime(&'a Value, &'a ToolRuntime),
}

impl JsonArgs<'_> {
    /// The arguments as a JSON value (an array).
    pub fn into_value(self) -> Value {
        match self {
            Self::List(items) => Value::Array(items),
            Self::WithRuntime(value, rt) => Value::Array(vec![value.clone(), runtime_value(rt)]),
        }
    }
}

impl Serialize for JsonArgs<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::List(items) => items.serialize(s),
            Self::WithRuntime(value, rt) => {
                let mut seq = s.serialize_tuple(2)?;
                seq.serialize_element(value)?;
                seq.serialize_element(&RuntimeView(rt))?;
                seq.end()
            }
        }
    }
}

/// `{runId, agentId, stepIndex, context, toolCall, toolAnnotations?}`, as
/// [`runtime_value`] builds it.
struct RuntimeView<'a>(&'a ToolRuntime);

impl Serialize for RuntimeView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let rt = self.0;
        let annotations = rt.tool_annotations();
        let mut map = s.serialize_map(Some(7 + usize::from(annotations.is_some())))?;
        map.serialize_entry("runId", rt.run_id())?;
        map.serialize_entry("agentId", rt.agent_id())?;
        map.serialize_entry("stepIndex", &rt.step_index())?;
        map.serialize_entry("context", rt.context())?;
        map.serialize_entry("toolCall", rt.tool_call())?;
        map.serialize_entry("attempt", &rt.attempt())?;
        map.serialize_entry("idempotencyKey", &Displayed(IdempotencyKey(rt)))?;
        if let Some(annotations) = annotations {
            map.serialize_entry("toolAnnotations", annotations)?;
        }
        map.end()
    }
}

/// A value written as its text (`Display`), with no string built first.
struct Displayed<T>(T);

impl<T: std::fmt::Display> Serialize for Displayed<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// The runtime argument of a call: `{runId, agentId, stepIndex, context, toolCall, attempt,
/// idempotencyKey}` (docs/behaviour.md §15), plus
/// `toolAnnotations` for an MCP tool (docs/behaviour.md §11: approval predicates receive
/// the annotations).
pub fn runtime_value(rt: &ToolRuntime) -> Value {
    let mut obj = serde_json::Map::new();
    obj.insert("runId".into(), Value::from(rt.run_id()));
    obj.insert("agentId".into(), Value::from(rt.agent_id()));
    obj.insert("stepIndex".into(), Value::from(rt.step_index()));
    obj.insert("context".into(), rt.context().clone());
    obj.insert(
        "toolCall".into(),
        serde_json::to_value(rt.tool_call()).unwrap_or(Value::Null),
    );
    obj.insert("attempt".into(), Value::from(rt.attempt()));
    obj.insert("idempotencyKey".into(), Value::from(rt.idempotency_key()));
    if let Some(annotations) = rt.tool_annotations() {
        obj.insert("toolAnnotations".into(), annotations.clone());
    }
    Value::Object(obj)
}
