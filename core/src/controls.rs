//! Request controls (docs/behaviour.md §12): which tool the model must call (`toolChoice`) and
//! whether it may call several at once (`parallelToolCalls`). The strict-compatibility check
//! of a schema sent with `strict: true` is in `strict_schema`.

use serde_json::{json, Value};

/// Which tool, if any, the model must call in a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides (the default of most endpoints).
    Auto,
    /// The model must call at least one tool.
    Required,
    /// The model must not call a tool.
    None,
    /// The model must call this tool.
    Tool(String),
}

impl ToolChoice {
    /// Parses `"auto"`, `"required"`, `"none"` or `{"toolId": id}`; the error names what is
    /// wrong.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        match value {
            Value::String(s) => match s.as_str() {
                "auto" => Ok(ToolChoice::Auto),
                "required" => Ok(ToolChoice::Required),
                "none" => Ok(ToolChoice::None),
                other => Err(format!(
                    "toolChoice must be \"auto\", \"required\", \"none\" or {{\"toolId\": id}}, \
                     got \"{other}\""
                )),
            },
            Value::Object(m) => match (m.len(), m.get("toolId").or_else(|| m.get("tool_id"))) {
                (1, Some(Value::String(id))) if !id.is_empty() => Ok(ToolChoice::Tool(id.clone())),
                _ => Err(format!(
                    "toolChoice must be \"auto\", \"required\", \"none\" or {{\"toolId\": id}} \
                     with a non-empty id, got {}",
                    crate::json::to_canonical_string(value)
                )),
            },
            other => Err(format!(
                "toolChoice must be \"auto\", \"required\", \"none\" or {{\"toolId\": id}}, got {}",
                crate::json::to_canonical_string(other)
            )),
        }
    }

    /// As JSON: a string, or `{"toolId": id}`.
    pub fn to_value(&self) -> Value {
        match self {
            ToolChoice::Auto => Value::from("auto"),
            ToolChoice::Required => Value::from("required"),
            ToolChoice::None => Value::from("none"),
            ToolChoice::Tool(id) => json!({ "toolId": id }),
        }
    }

    /// The tool this choice names, if any.
    pub fn tool_id(&self) -> Option<&str> {
        match self {
            ToolChoice::Tool(id) => Some(id),
            _ => None,
        }
    }
}

impl serde::Serialize for ToolChoice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for ToolChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        ToolChoice::from_value(&value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_choice_round_trips() {
        for v in [
            json!("auto"),
            json!("required"),
            json!("none"),
            json!({"toolId": "x"}),
        ] {
            assert_eq!(ToolChoice::from_value(&v).unwrap().to_value(), v);
        }
        assert!(ToolChoice::from_value(&json!("any")).is_err());
        assert!(ToolChoice::from_value(&json!({"toolId": ""})).is_err());
        assert!(ToolChoice::from_value(&json!({"toolId": "x", "y": 1})).is_err());
    }
}
