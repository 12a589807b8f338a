//! Request controls (docs/behaviour.md §12): which tool the model must call (`toolChoice`), whether it
//! may call several at once (`parallelToolCalls`), and the strict-compatibility check of a
//! schema sent with `strict: true`.

use serde_json::{json, Map, Value};

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

/// Why `schema` cannot be used with `strict: true`, or `None` when it can: every object
/// schema in it (at any depth) must have `"additionalProperties": false` and list all of
/// its `properties` in `required`. The message names the offending schema by its JSON
/// pointer inside `schema` (`/` for the root).
pub fn strict_problem(schema: &Value) -> Option<String> {
    let mut problem = None;
    walk(schema, &mut String::new(), &mut problem);
    problem
}

/// Whether `schema` can be sent with `strict: true` (see [`strict_problem`]).
pub fn is_strict_compatible(schema: &Value) -> bool {
    strict_problem(schema).is_none()
}

fn is_object_schema(m: &Map<String, Value>) -> bool {
    match m.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => m.contains_key("properties"),
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn pointer_text(pointer: &str) -> &str {
    if pointer.is_empty() {
        "/"
    } else {
        pointer
    }
}

fn walk(schema: &Value, pointer: &mut String, problem: &mut Option<String>) {
    if problem.is_some() {
        return;
    }
    let Value::Object(m) = schema else { return };
    if is_object_schema(m) {
        if m.get("additionalProperties") != Some(&Value::Bool(false)) {
            *problem = Some(format!(
                "the object schema at {} must set \"additionalProperties\": false",
                pointer_text(pointer)
            ));
            return;
        }
        let required: Vec<&str> = m
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let missing: Vec<&str> = m
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| {
                p.keys()
                    .map(String::as_str)
                    .filter(|k| !required.contains(k))
                    .collect()
            })
            .unwrap_or_default();
        if !missing.is_empty() {
            *problem = Some(format!(
                "the object schema at {} must list every property in \"required\" (missing: {})",
                pointer_text(pointer),
                missing.join(", ")
            ));
            return;
        }
    }
    // Subschemas that hold one schema, a map of schemas, or a list of schemas.
    const ONE: &[&str] = &[
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
    ];
    const MAP: &[&str] = &[
        "properties",
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
    ];
    const LIST: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
    for key in ONE {
        if let Some(sub) = m.get(*key) {
            descend(sub, pointer, &[key], problem);
        }
    }
    for key in MAP {
        if let Some(Value::Object(subs)) = m.get(*key) {
            for (name, sub) in subs {
                descend(sub, pointer, &[key, &escape(name)], problem);
            }
        }
    }
    for key in LIST {
        if let Some(Value::Array(subs)) = m.get(*key) {
            for (i, sub) in subs.iter().enumerate() {
                descend(sub, pointer, &[key, &i.to_string()], problem);
            }
        }
    }
}

fn descend(sub: &Value, pointer: &mut String, parts: &[&str], problem: &mut Option<String>) {
    let len = pointer.len();
    for p in parts {
        pointer.push('/');
        pointer.push_str(p);
    }
    walk(sub, pointer, problem);
    pointer.truncate(len);
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

    #[test]
    fn strict_check_names_the_schema() {
        let ok = json!({
            "type": "object", "additionalProperties": false, "required": ["a", "b"],
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "array", "items": {
                    "type": "object", "additionalProperties": false, "required": ["c"],
                    "properties": {"c": {"type": "number"}}}}
            }
        });
        assert_eq!(strict_problem(&ok), None);
        let root = json!({"type": "object", "properties": {"a": {}}, "required": ["a"]});
        assert_eq!(
            strict_problem(&root).unwrap(),
            "the object schema at / must set \"additionalProperties\": false"
        );
        let nested = json!({
            "type": "object", "additionalProperties": false, "required": ["a/b"],
            "properties": {"a/b": {"anyOf": [{"type": "string"}, {
                "type": "object", "additionalProperties": false,
                "properties": {"x": {}, "y": {}}, "required": ["x"]}]}}
        });
        assert_eq!(
            strict_problem(&nested).unwrap(),
            "the object schema at /properties/a~1b/anyOf/1 must list every property in \
             \"required\" (missing: y)"
        );
    }
}
