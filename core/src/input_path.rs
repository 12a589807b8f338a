//! Where in a tool's input a problem is, as the JSON pointer that starts every
//! `Invalid tool input: <path>: <reason>` message (docs/behaviour.md §2, §20): the core's
//! schema check and every host decoder (serde, Pydantic, a Standard Schema validator,
//! `encoding/json`) name the place the same way.

use serde_json::Value;

/// One step into a value: an object member or an array element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathStep {
    /// An object member, by key.
    Key(String),
    /// An array element, by index.
    Index(usize),
}

/// The JSON pointer (RFC 6901) of `steps`; the root is `"/"`, as in the core's schema
/// messages.
pub fn json_pointer<'a>(steps: impl IntoIterator<Item = &'a PathStep>) -> String {
    let mut out = String::new();
    for step in steps {
        out.push('/');
        match step {
            PathStep::Key(key) => out.push_str(&key.replace('~', "~0").replace('/', "~1")),
            PathStep::Index(i) => out.push_str(&i.to_string()),
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// The pointer of a path a host decoder reports as a JSON array: each string is a key,
/// each non-negative integer an index, anything else is written as its JSON text.
pub fn json_pointer_of_values(path: &[Value]) -> String {
    let steps: Vec<PathStep> = path
        .iter()
        .map(|v| match v {
            Value::String(s) => PathStep::Key(s.clone()),
            Value::Number(n) => match n.as_u64() {
                Some(i) => PathStep::Index(i as usize),
                None => PathStep::Key(n.to_string()),
            },
            other => PathStep::Key(other.to_string()),
        })
        .collect();
    json_pointer(&steps)
}

/// `"<pointer>: <reason>"`: what follows `Invalid tool input: ` when a host decoder
/// rejects a call's arguments.
pub fn input_problem(path: &[Value], reason: &str) -> String {
    format!("{}: {reason}", json_pointer_of_values(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_escape_keys_and_name_the_root() {
        assert_eq!(json_pointer(&[]), "/");
        let steps = [
            PathStep::Key("a/b".into()),
            PathStep::Index(3),
            PathStep::Key("m~n".into()),
        ];
        assert_eq!(json_pointer(&steps), "/a~1b/3/m~0n");
        assert_eq!(
            input_problem(&[json!("items"), json!(0), json!("qty")], "not an integer"),
            "/items/0/qty: not an integer"
        );
        assert_eq!(
            input_problem(&[], "missing field `sku`"),
            "/: missing field `sku`"
        );
    }
}
