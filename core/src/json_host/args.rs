//! The arguments of a call, serialized without copying a tool's input.

use serde::ser::{Serialize, SerializeMap, SerializeTuple, Serializer};

use crate::json::{to_canonical_string, write_canonical};
use crate::tool_runtime::{IdempotencyKey, IdsJson, PhaseHead};
use crate::{ToolRuntime, Value};

/// The JSON array a host function receives.
pub enum JsonArgs<'a> {
    /// These values.
    List(Vec<Value>),
    /// `[value, runtime]`, the runtime as [`runtime_value`] writes it.
    WithRuntime(&'a Value, &'a ToolRuntime),
}

impl JsonArgs<'_> {
    /// The arguments as canonical JSON text: the same text as
    /// [`to_canonical_string`](crate::json::to_canonical_string) of `self`, with the part of
    /// a call's runtime that every call of its tool phase shares (run and agent ids, step,
    /// context) written once per phase instead of once per call.
    pub fn to_canonical_text(&self) -> String {
        let Self::WithRuntime(value, rt) = self else {
            return to_canonical_string(self);
        };
        let head = rt.phase_json_head(|| phase_head(rt));
        let call = rt.tool_call();
        let mut out = Vec::with_capacity(head.text.len() + 256);
        out.push(b'[');
        let own_input = std::ptr::eq(*value, &*call.input);
        let value_at = out.len();
        match call.input_text().filter(|_| own_input) {
            Some(text) => out.extend_from_slice(text.as_bytes()),
            None => write_canonical(&mut out, *value),
        }
        let value_end = out.len();
        out.push(b',');
        out.extend_from_slice(head.text.as_bytes());
        // `toolCall` is `{"id","name","input"}` (the field order of `ToolCall`), written
        // here rather than through its `Serialize`: an executor's value is the call's own
        // input, whose text was just written, and the id's text is wanted again below.
        out.extend_from_slice(br#","toolCall":{"id":"#);
        let id_at = out.len();
        write_canonical(&mut out, &call.id);
        let id_end = out.len();
        out.extend_from_slice(br#","name":"#);
        write_canonical(&mut out, &call.name);
        out.extend_from_slice(br#","input":"#);
        if own_input {
            out.extend_from_within(value_at..value_end);
        } else {
            write_canonical(&mut out, &call.input);
        }
        out.extend_from_slice(br#"},"attempt":"#);
        write_canonical(&mut out, &rt.attempt());
        out.extend_from_slice(br#","idempotencyKey":"#);
        // `"<runId>:<toolCallId>"`: the run id's JSON text from the head and the id's text
        // from above, joined inside one pair of quotes (cheaper than formatting the key).
        out.extend_from_slice(&head.text.as_bytes()[RUN_ID_AT..head.run_id_end - 1]);
        out.push(b':');
        out.extend_from_within(id_at + 1..id_end);
        if let Some(annotations) = rt.tool_annotations() {
            out.extend_from_slice(br#","toolAnnotations":"#);
            write_canonical(&mut out, annotations);
        }
        out.extend_from_slice(b"}]");
        crate::json::json_text(out)
    }

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

/// `{runId, agentId, stepIndex, context, toolCall, attempt, idempotencyKey,
/// toolAnnotations?}`, as [`runtime_value`] builds it (and [`JsonArgs::to_canonical_text`]
/// writes it, the first four entries from [`phase_head`]).
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

/// Where the run id's text begins in a [`PhaseHead`] (its opening quote).
const RUN_ID_AT: usize = r#"{"runId":"#.len();

/// The entries of a runtime that the calls of one phase share, `{runId, agentId, stepIndex,
/// context}`, as [`RuntimeView`] writes them, the closing brace left off; the keys are
/// written as they are (no key needs escaping), the values as canonical JSON.
fn phase_head(rt: &ToolRuntime) -> PhaseHead {
    let ids = rt.ids_json(|| ids_json(rt));
    let mut text = Vec::with_capacity(ids.text.len() + 64);
    text.extend_from_slice(ids.text.as_bytes());
    text.extend_from_slice(br#","stepIndex":"#);
    write_canonical(&mut text, &rt.step_index());
    text.extend_from_slice(br#","context":"#);
    write_canonical(&mut text, rt.context());
    PhaseHead {
        text: crate::json::json_text(text),
        run_id_end: ids.run_id_end,
    }
}

/// The first two entries of a runtime, `{"runId":…,"agentId":…`, as [`RuntimeView`] writes
/// them (see [`IdsJson`]).
fn ids_json(rt: &ToolRuntime) -> IdsJson {
    let mut text = Vec::with_capacity(64);
    text.extend_from_slice(br#"{"runId":"#);
    write_canonical(&mut text, rt.run_id());
    let run_id_end = text.len();
    text.extend_from_slice(br#","agentId":"#);
    write_canonical(&mut text, rt.agent_id());
    IdsJson {
        text: crate::json::json_text(text),
        run_id_end,
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
