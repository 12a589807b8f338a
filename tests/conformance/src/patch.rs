//! The `editState` step: a JSON Patch (RFC 6902: `add`, `remove`, `replace`) applied to
//! the state's JSON text, as an attacker editing a stored state would.

use phaseo_agent::Value;

/// Applies the operations to the JSON text; the edited text, or what is wrong with the patch.
pub fn apply(text: &str, ops: &Value) -> Result<String, String> {
    let mut doc: Value = serde_json::from_str(text).map_err(|e| format!("state text: {e}"))?;
    for op in ops
        .as_array()
        .ok_or("editState must be a list of operations")?
    {
        let obj = op
            .as_object()
            .ok_or("editState: an operation must be an object")?;
        for k in obj.keys() {
            if !["op", "path", "value"].contains(&k.as_str()) {
                return Err(format!("editState: unsupported key {k:?}"));
            }
        }
        let path = obj
            .get("path")
            .and_then(Value::as_str)
            .ok_or("editState: operation without path")?;
        let kind = obj.get("op").and_then(Value::as_str).unwrap_or("");
        let value = || {
            obj.get("value")
                .cloned()
                .ok_or_else(|| format!("editState: {kind} {path} without value"))
        };
        match kind {
            "add" => add(&mut doc, path, value()?)?,
            "remove" => {
                remove(&mut doc, path)?;
            }
            "replace" => {
                let v = value()?;
                *doc.pointer_mut(path)
                    .ok_or_else(|| format!("editState: no such path {path:?}"))? = v;
            }
            other => return Err(format!("editState: unsupported op {other:?}")),
        }
    }
    Ok(doc.to_string())
}

fn split(path: &str) -> Result<(String, String), String> {
    let (parent, last) = path
        .rsplit_once('/')
        .ok_or_else(|| format!("editState: bad path {path:?}"))?;
    Ok((
        parent.to_owned(),
        last.replace("~1", "/").replace("~0", "~"),
    ))
}

fn parent<'a>(doc: &'a mut Value, path: &str) -> Result<(&'a mut Value, String), String> {
    let (parent, last) = split(path)?;
    let target = doc
        .pointer_mut(&parent)
        .ok_or_else(|| format!("editState: no such path {parent:?}"))?;
    Ok((target, last))
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (target, key) = parent(doc, path)?;
    match target {
        Value::Object(m) => {
            m.insert(key, value);
        }
        Value::Array(a) if key == "-" => a.push(value),
        Value::Array(a) => {
            let i: usize = key
                .parse()
                .ok()
                .filter(|i| *i <= a.len())
                .ok_or_else(|| format!("editState: bad index {path:?}"))?;
            a.insert(i, value);
        }
        _ => return Err(format!("editState: {path:?} is not in a container")),
    }
    Ok(())
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, String> {
    let (target, key) = parent(doc, path)?;
    let removed = match target {
        Value::Object(m) => m.shift_remove(&key),
        Value::Array(a) => key
            .parse::<usize>()
            .ok()
            .filter(|i| *i < a.len())
            .map(|i| a.remove(i)),
        _ => None,
    };
    removed.ok_or_else(|| format!("editState: no such path {path:?}"))
}
