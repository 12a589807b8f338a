//! Definitions and options reach Rust in the core's canonical format
//! ([`phaseo_agent::spec`]: camelCase JSON, `{"$callback": id}` for JS functions), written
//! by the JS layer; every callback becomes the core's `json_host` adapter of its place over
//! the registered JS function.

use phaseo_agent::json_host::JsonCallbacks;

use crate::host::HostFn;

/// The JS registry's functions: ids are the registry's (32-bit) keys. An MCP server's
/// approval predicate is called like the agent's, `(toolCall, context)`.
pub static JS_CALLBACKS: JsonCallbacks<fn(u64) -> HostFn> =
    JsonCallbacks::with_agent_shaped_mcp_approval(func);

fn func(id: u64) -> HostFn {
    // The JS layer writes registry keys, which are below 2^32.
    HostFn { id: id as u32 }
}
