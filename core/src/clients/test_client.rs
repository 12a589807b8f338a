//! The test client: calls every offered tool once with arguments generated from its
//! schema, then answers with a summary of the results (like Pydantic AI's TestModel).

use async_trait::async_trait;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::model::{
    ModelClient, ModelError, ModelMessage, ModelRequest, ModelResponse, ModelToolCall,
};
use crate::state::Role;

/// Offline client for trying tools out: the first request of a conversation calls every
/// offered tool once; later requests answer with a summary of the tool messages.
#[derive(Clone, Debug, Default)]
pub struct TestClient;

impl TestClient {
    /// A test client.
    pub fn new() -> Self {
        Self
    }
}

/// A value satisfying a JSON Schema, preferring its `default`, `examples`, `const` and
/// `enum` over values made up from its `type`.
pub fn example_value(schema: &Value) -> Value {
    let Some(s) = schema.as_object() else {
        return json!({});
    };
    if let Some(v) = s.get("default") {
        return v.clone();
    }
    if let Some(v) = s
        .get("examples")
        .and_then(|e| e.as_array())
        .and_then(|a| a.first())
    {
        return v.clone();
    }
    if let Some(v) = s.get("const") {
        return v.clone();
    }
    if let Some(v) = s
        .get("enum")
        .and_then(|e| e.as_array())
        .and_then(|a| a.first())
    {
        return v.clone();
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(first) = s
            .get(key)
            .and_then(|a| a.as_array())
            .and_then(|a| a.first())
        {
            return example_value(first);
        }
    }
    let ty = match s.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if s.contains_key("properties") => "object",
        _ => "null",
    };
    match ty {
        "object" => {
            let mut out = Map::new();
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                for (name, sub) in props {
                    out.insert(name.clone(), example_value(sub));
                }
            }
            Value::Object(out)
        }
        "array" => {
            let n = s.get("minItems").and_then(Value::as_u64).unwrap_or(1);
            let item = s.get("items").map(example_value).unwrap_or(Value::Null);
            Value::Array((0..n).map(|_| item.clone()).collect())
        }
        "string" => {
            let n = s
                .get("minLength")
                .and_then(Value::as_u64)
                .unwrap_or(1)
                .max(1) as usize;
            Value::String("a".repeat(n))
        }
        "integer" => {
            let min = s.get("minimum").and_then(Value::as_i64);
            let xmin = s
                .get("exclusiveMinimum")
                .and_then(Value::as_i64)
                .map(|v| v + 1);
            json!(min.or(xmin).unwrap_or(0))
        }
        "number" => {
            let min = s.get("minimum").and_then(Value::as_f64);
            let xmin = s
                .get("exclusiveMinimum")
                .and_then(Value::as_f64)
                .map(|v| v + 1.0);
            json!(min.or(xmin).unwrap_or(0.0))
        }
        "boolean" => Value::Bool(false),
        _ => Value::Null,
    }
}

#[async_trait]
impl ModelClient for TestClient {
    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        _cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        let already_called = request
            .messages
            .iter()
            .any(|m| m.role == Role::Assistant && m.tool_calls.is_some());
        if !already_called && !request.tools.is_empty() {
            let turn = request.messages.len();
            let tool_calls = request
                .tools
                .iter()
                .enumerate()
                .map(|(i, t)| ModelToolCall {
                    id: format!("test_call_{turn}_{i}"),
                    name: t.id.clone(),
                    arguments: crate::json::to_canonical_string(&example_value(&t.parameters)),
                })
                .collect();
            return Ok(ModelResponse {
                message: ModelMessage {
                    content: String::new(),
                    tool_calls,
                    reasoning: None,
                },
                finish_reason: Some("tool_calls".into()),
                model: Some("test".into()),
                provider: Some("test".into()),
                ..Default::default()
            });
        }
        let last_call_turn = request
            .messages
            .iter()
            .rposition(|m| m.role == Role::Assistant && m.tool_calls.is_some());
        let results: Vec<String> = match last_call_turn {
            Some(i) => request.messages[i + 1..]
                .iter()
                .filter(|m| m.role == Role::Tool)
                .map(|m| format!("{}: {}", m.name.as_deref().unwrap_or("tool"), m.content))
                .collect(),
            None => Vec::new(),
        };
        let text = if results.is_empty() {
            "No tool results.".to_owned()
        } else {
            format!("Tool results — {}", results.join("; "))
        };
        Ok(ModelResponse {
            message: ModelMessage {
                content: text,
                ..Default::default()
            },
            finish_reason: Some("stop".into()),
            model: Some("test".into()),
            provider: Some("test".into()),
            ..Default::default()
        })
    }
}
