//! Definitions and options reach Rust in the core's canonical format
//! ([`phaseo_agent::spec`]: camelCase JSON, `{"$callback": id}` for JS functions), written
//! by the JS layer; every callback becomes the core's `json_host` adapter of its place over
//! the registered JS function.

use phaseo_agent::json_host::JsonCallbacks;
use phaseo_agent::Value;

use crate::host::HostFn;

/// The key of the object the JS layer hands over in place of a definition or options
/// object that holds a `BigInt` (an integer beyond 2^53, which the object conversion
/// cannot carry): `{"$phaseoJsonText": <the object's JSON text, digits kept>}`.
const JSON_TEXT: &str = "$phaseoJsonText";

/// A definition or options object from the JS layer, read from its JSON text when it
/// came as text (see [`JSON_TEXT`]), nested at most as deep as the core's readers over
/// text allow.
pub fn spec_value(spec: Value) -> napi::Result<Value> {
    match &spec {
        Value::Object(map) if map.len() == 1 => match map.get(JSON_TEXT) {
            Some(Value::String(text)) => phaseo_agent::parse_json_text(text).map_err(|e| {
                crate::errors::to_napi(phaseo_agent::AgentError::definition_invalid(format!(
                    "Invalid definition: {e}"
                )))
            }),
            _ => Ok(spec),
        },
        _ => Ok(spec),
    }
}

/// The JS registry's functions: ids are the registry's (32-bit) keys. An MCP server's
/// approval predicate is called like the agent's, `(toolCall, context)`.
pub static JS_CALLBACKS: JsonCallbacks<fn(u64) -> HostFn> =
    JsonCallbacks::with_agent_shaped_mcp_approval(func);

fn func(id: u64) -> HostFn {
    // The JS layer writes registry keys, which are below 2^32.
    HostFn { id: id as u32 }
}
