//! An MCP `CallToolResult` as a tool result (docs/behaviour.md §11): `structuredContent` when present,
//! else a single text item's text, else the content list as JSON; `isError: true` is a
//! tool error whose message is the text content.

use serde_json::Value;

use crate::error::ToolError;

/// Maps the raw result object.
pub(crate) fn tool_result(result: Value) -> Result<Value, ToolError> {
    let Value::Object(mut result) = result else {
        return Err(ToolError::new("MCP tool result is not an object"));
    };
    let content = match result.remove("content") {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let texts: Vec<&str> = content
            .iter()
            .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|c| c.get("text").and_then(Value::as_str))
            .collect();
        let message = if texts.is_empty() {
            Value::Array(content.clone()).to_string()
        } else {
            texts.join("\n")
        };
        return Err(ToolError::new(message));
    }
    if let Some(structured) = result.remove("structuredContent") {
        return Ok(structured);
    }
    if let [only] = content.as_slice() {
        if only.get("type").and_then(Value::as_str) == Some("text") {
            if let Some(text) = only.get("text").and_then(Value::as_str) {
                return Ok(Value::String(text.to_owned()));
            }
        }
    }
    Ok(Value::Array(content))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_each_shape() {
        let r = |v| tool_result(v);
        assert_eq!(
            r(json!({"content": [{"type": "text", "text": "{}"}], "structuredContent": {"a": 1}})),
            Ok(json!({"a": 1}))
        );
        assert_eq!(
            r(json!({"content": [{"type": "text", "text": "hi"}]})),
            Ok(json!("hi"))
        );
        let two = json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]);
        assert_eq!(r(json!({"content": two})), Ok(two));
        assert_eq!(
            r(json!({"content": [{"type": "text", "text": "bad"}], "isError": true}))
                .unwrap_err()
                .message,
            "bad"
        );
    }
}
