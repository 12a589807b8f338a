//! How a served tool is listed: `inputSchema` = `parameters`, `outputSchema` when
//! defined, annotations from the tool's options (docs/behaviour.md §19).

use serde_json::{json, Map, Value};

use crate::tool::{Approval, Tool};

/// The `tools/list` entry of a tool.
pub(crate) fn tool_entry(tool: &Tool) -> Value {
    let mut entry = Map::new();
    entry.insert("name".into(), json!(tool.id));
    entry.insert("description".into(), json!(tool.description));
    entry.insert("inputSchema".into(), input_schema(&tool.parameters));
    if let Some(schema) = tool.output_schema.as_ref().and_then(|v| v.json_schema()) {
        // MCP describes structured results as objects only.
        if schema.get("type") == Some(&json!("object")) {
            entry.insert("outputSchema".into(), schema);
        }
    }
    let mut annotations = match tool.annotations.as_deref() {
        Some(Value::Object(a)) => a.clone(),
        _ => Map::new(),
    };
    if !matches!(tool.approval, Approval::Never) && !annotations.contains_key("destructiveHint") {
        annotations.insert("destructiveHint".into(), json!(true));
    }
    if let Some(title) = annotations.get("title").cloned() {
        entry.insert("title".into(), title);
    }
    if !annotations.is_empty() {
        entry.insert("annotations".into(), Value::Object(annotations));
    }
    Value::Object(entry)
}

/// MCP requires an object schema; a tool's parameters always describe an object, but a
/// schema without `type` (a bare `{}`) says so explicitly here.
fn input_schema(parameters: &Value) -> Value {
    match parameters {
        Value::Object(p) if !p.contains_key("type") => {
            let mut p = p.clone();
            p.insert("type".into(), json!("object"));
            Value::Object(p)
        }
        other => other.clone(),
    }
}
