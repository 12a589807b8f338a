//! Schemas sent with `strict: true` (docs/behaviour.md §12, §20): the check that a schema can be
//! sent so ([`strict_problem`]) and the strict form of a generated one ([`make_strict`]), which a
//! tool defined from a host type asks for instead of writing it by hand.

use serde_json::{json, Map, Value};

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
        let required = required_names(m);
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

/// Keywords whose value is one subschema.
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
/// Keywords whose value maps names to subschemas.
const MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords whose value is a list of subschemas.
const LIST: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// The strict form of `schema`: every object schema (at any depth) gets
/// `"additionalProperties": false` and lists all of its `properties` in `required`; a
/// property that was optional becomes nullable instead (its type gains `"null"`, or its
/// schema is wrapped in `anyOf` with `{"type": "null"}`), so a value the model leaves out
/// is sent as `null`. An object whose `additionalProperties` is itself a schema (a map) is
/// left as it is: it has no strict form, and [`crate::strict_problem`] names it.
pub fn make_strict(schema: &Value) -> Value {
    let mut out = schema.clone();
    tighten(&mut out);
    out
}

/// The names an object schema lists in `required` (none when it lists none).
fn required_names(m: &Map<String, Value>) -> Vec<&str> {
    m.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn is_object_schema(m: &Map<String, Value>) -> bool {
    match m.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => m.contains_key("properties"),
    }
}

fn nullable(schema: &mut Value) {
    let Value::Object(m) = schema else { return };
    match m.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = t.clone();
            m.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(ts)) => {
            if !ts.iter().any(|t| t == "null") {
                ts.push(json!("null"));
            }
        }
        Some(_) => {}
        None => {
            if m.is_empty() {
                return; // `{}` already admits null
            }
            let inner = Value::Object(std::mem::take(m));
            m.insert("anyOf".into(), json!([inner, {"type": "null"}]));
        }
    }
    if let Some(Value::Array(values)) = m.get_mut("enum") {
        if !values.iter().any(Value::is_null) {
            values.push(Value::Null);
        }
    }
}

fn tighten(schema: &mut Value) {
    let Value::Object(m) = schema else { return };
    if is_object_schema(m) {
        let map_like = matches!(m.get("additionalProperties"), Some(Value::Object(_)));
        if !map_like {
            m.insert("additionalProperties".into(), Value::Bool(false));
            let required: Vec<String> = required_names(m).into_iter().map(str::to_owned).collect();
            if let Some(Value::Object(props)) = m.get_mut("properties") {
                let mut all = Vec::with_capacity(props.len());
                for (name, sub) in props.iter_mut() {
                    if !required.contains(name) {
                        nullable(sub);
                    }
                    all.push(Value::String(name.clone()));
                }
                m.insert("required".into(), Value::Array(all));
            } else {
                m.insert("properties".into(), json!({}));
                m.insert("required".into(), json!([]));
            }
        }
    }
    for key in [
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
    ] {
        if let Some(sub) = m.get_mut(key) {
            tighten(sub);
        }
    }
    for key in [
        "properties",
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
    ] {
        if let Some(Value::Object(subs)) = m.get_mut(key) {
            subs.values_mut().for_each(tighten);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(subs)) = m.get_mut(key) {
            subs.iter_mut().for_each(tighten);
        }
    }
}

/// Undoes what [`make_strict`] asks of the model: in `input`, a `null` given for a member
/// that `loose` (the schema before its strict form) leaves optional and does not admit
/// `null` itself is removed, at every depth `loose` describes (`$ref`s into the same
/// document followed), so a host type decodes "left out" and applies its default.
pub fn drop_strict_nulls(input: &mut Value, loose: &Value) {
    drop_nulls(input, loose, loose, 0);
}

fn admits_null(schema: &Value) -> bool {
    let Value::Object(m) = schema else {
        return true;
    };
    match m.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
        _ => {
            ["anyOf", "oneOf"].iter().any(|k| {
                m.get(*k)
                    .and_then(Value::as_array)
                    .is_some_and(|subs| subs.iter().any(admits_null))
            }) || m.is_empty()
        }
    }
}

fn drop_nulls(value: &mut Value, schema: &Value, root: &Value, depth: usize) {
    if depth > crate::limits::MAX_DEPTH {
        return;
    }
    let Value::Object(s) = schema else { return };
    if let Some(Value::String(target)) = s.get("$ref") {
        if let Some(resolved) = target.strip_prefix('#').and_then(|p| root.pointer(p)) {
            drop_nulls(value, resolved, root, depth + 1);
        }
        return;
    }
    match value {
        Value::Object(members) => {
            let Some(Value::Object(props)) = s.get("properties") else {
                return;
            };
            let required = required_names(s);
            members.retain(|key, v| {
                !(v.is_null()
                    && !required.contains(&key.as_str())
                    && props.get(key).is_some_and(|sub| !admits_null(sub)))
            });
            for (key, v) in members.iter_mut() {
                if let Some(sub) = props.get(key) {
                    drop_nulls(v, sub, root, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = s.get("items") {
                for v in items {
                    drop_nulls(v, item, root, depth + 1);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nulls_for_optional_members_are_dropped_where_the_loose_schema_does_not_admit_them() {
        let loose = json!({
            "type": "object",
            "properties": {
                "days": {"type": "integer"},
                "note": {"type": ["string", "null"]},
                "stops": {"type": "array", "items": {"$ref": "#/$defs/Stop"}}
            },
            "required": ["stops"],
            "$defs": {"Stop": {"type": "object", "properties": {"name": {"type": "string"},
                      "nights": {"type": "integer"}}, "required": ["name"]}}
        });
        let mut input = json!({"days": null, "note": null,
                               "stops": [{"name": "a", "nights": null}, {"name": "b", "nights": 2}]});
        drop_strict_nulls(&mut input, &loose);
        assert_eq!(
            input,
            json!({"note": null, "stops": [{"name": "a"}, {"name": "b", "nights": 2}]})
        );
    }

    #[test]
    fn optional_fields_become_required_and_nullable_at_every_depth() {
        let schema = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "units": {"type": "string", "enum": ["c", "f"]},
                "stops": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "note": {"$ref": "#/$defs/Note"}},
                    "required": ["name"]}}
            },
            "required": ["city", "stops"],
            "$defs": {"Note": {"type": "object", "properties": {"text": {"type": "string"}}}}
        });
        let strict = make_strict(&schema);
        assert_eq!(strict_problem(&strict), None);
        assert_eq!(strict["required"], json!(["city", "units", "stops"]));
        assert_eq!(strict["properties"]["city"]["type"], json!("string"));
        assert_eq!(
            strict["properties"]["units"]["type"],
            json!(["string", "null"])
        );
        assert_eq!(
            strict["properties"]["units"]["enum"],
            json!(["c", "f", null])
        );
        let item = &strict["properties"]["stops"]["items"];
        assert_eq!(item["required"], json!(["name", "note"]));
        assert_eq!(
            item["properties"]["note"],
            json!({"anyOf": [{"$ref": "#/$defs/Note"}, {"type": "null"}]})
        );
        assert_eq!(
            strict["$defs"]["Note"]["additionalProperties"],
            json!(false)
        );
        assert_eq!(
            schema["required"],
            json!(["city", "stops"]),
            "the input is untouched"
        );
    }

    #[test]
    fn a_map_keeps_its_value_schema_and_is_still_named_as_not_strict() {
        let schema = json!({"type": "object", "additionalProperties": {"type": "number"}});
        let strict = make_strict(&schema);
        assert_eq!(strict["additionalProperties"], json!({"type": "number"}));
        assert!(strict_problem(&strict).is_some());
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
