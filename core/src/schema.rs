//! JSON Schema validation (draft 2020-12) compiled once by the `jsonschema` crate, and the
//! [`Validator`] trait that host-native validators implement.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::error::ToolError;

/// Validates (and may transform) a value: tool input, tool output, progress values or the
/// agent's final output. Host bindings implement it for their native validators (a
/// function, a zod-like object, a Pydantic model …).
#[async_trait]
pub trait Validator: Send + Sync {
    /// Returns the accepted (possibly transformed) value, or the validator's message.
    async fn validate(&self, value: Value) -> Result<Value, ToolError>;

    /// A JSON Schema describing what the validator accepts, when it can describe itself
    /// (used as a tool's `parameters` when those are absent).
    fn json_schema(&self) -> Option<Value> {
        None
    }
}

/// A compiled JSON Schema. Cheap to clone.
#[derive(Clone)]
pub struct JsonSchema {
    schema: Arc<Value>,
    validator: Arc<jsonschema::Validator>,
}

impl std::fmt::Debug for JsonSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("JsonSchema").field(&self.schema).finish()
    }
}

impl JsonSchema {
    /// Compiles a schema (draft 2020-12). The error names what is wrong with the schema.
    pub fn compile(schema: &Value) -> Result<Self, String> {
        if !(schema.is_object() || schema.is_boolean()) {
            return Err(format!(
                "a JSON Schema must be an object or a boolean, got {schema}"
            ));
        }
        let validator = jsonschema::draft202012::new(schema).map_err(|e| {
            let path = e.instance_path().as_str();
            if path.is_empty() {
                e.to_string()
            } else {
                format!("{path}: {e}")
            }
        })?;
        Ok(Self {
            schema: Arc::new(schema.clone()),
            validator: Arc::new(validator),
        })
    }

    /// The schema document.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Checks a value; the error is `<instance path as a JSON pointer, "/" for the root>:
    /// <reason>`.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        match self.validator.validate(value) {
            Ok(()) => Ok(()),
            Err(e) => {
                let path = e.instance_path().as_str();
                let path = if path.is_empty() { "/" } else { path };
                Err(format!("{path}: {e}"))
            }
        }
    }

    /// Whether a value is valid.
    pub fn is_valid(&self, value: &Value) -> bool {
        self.validator.is_valid(value)
    }
}

#[async_trait]
impl Validator for JsonSchema {
    async fn validate(&self, value: Value) -> Result<Value, ToolError> {
        self.check(&value).map_err(ToolError::from)?;
        Ok(value)
    }

    fn json_schema(&self) -> Option<Value> {
        Some(self.schema().clone())
    }
}

/// Wraps a [`JsonSchema`] as a shareable validator.
pub fn json_schema_validator(schema: &Value) -> Result<Arc<dyn Validator>, String> {
    Ok(Arc::new(JsonSchema::compile(schema)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_start_with_the_instance_pointer() {
        let s = JsonSchema::compile(
            &json!({"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}),
        )
        .unwrap();
        assert!(s.check(&json!({"n": 1})).is_ok());
        let e = s.check(&json!({"n": "x"})).unwrap_err();
        assert!(e.starts_with("/n: "), "{e}");
        let e = s.check(&json!({})).unwrap_err();
        assert!(e.starts_with("/: "), "{e}");
    }

    #[test]
    fn invalid_schemas_are_refused() {
        assert!(JsonSchema::compile(&json!({"type": 5})).is_err());
        assert!(JsonSchema::compile(&json!("string")).is_err());
    }
}
