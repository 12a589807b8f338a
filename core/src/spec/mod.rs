//! The canonical definition format: agent definitions, tools and run/continue options as
//! JSON (camelCase keys, the names of docs/behaviour.md), read into core values.
//!
//! Every binding whose host values are not Rust (the C ABI, Node, Ruby, PHP) hands its
//! definitions to this module in one format, so the reading — defaults, checks and error
//! messages — is written once. Wherever docs/behaviour.md allows a host function, the JSON holds
//! `{"$callback": <id>}`; the binding's [`HostCallbacks`] turns each id into the core trait
//! object of that kind (an executor, a validator, a hook…).
//!
//! | key | form |
//! |---|---|
//! | a function | `{"$callback": id}` |
//! | a validator (`inputSchema`, `outputSchema`, `eventSchema`) | `{"$callback": id, "schema"?: {...}}` or a JSON Schema compiled in the core |
//! | a per-turn value (`model`, `instructions`, `temperature`, `maxOutputTokens`, `topP`, `toolChoice`, `activeTools`) | the value, or a function of the turn |
//! | `requireApproval` of a tool | `true`/`false` or a function |
//! | `nextTurnParams` | an object or a function |
//! | `stopWhen` | one condition or a list: `{"stepCountIs": n}`, `{"maxTokensUsed": n}`, `{"maxCost": x}`, `{"maxDuration": ms}`, `{"hasToolCall": "name"}`, `{"finishReasonIs": "r"}` or a function |
//! | `mcpServers` | see [`mcp_server`] (feature `mcp`) |
//! | served MCP options | see [`serve_options`] (feature `mcp-server`) |
//! | HTTP client options | see [`http_client_options`] (feature `http`) |
//!
//! Unknown keys are refused with `definition_invalid` naming the key.

mod agent;
mod callbacks;
mod forms;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "mcp")]
mod mcp;
mod model_choice;
mod names;
mod options;
#[cfg(feature = "mcp-server")]
mod serve;
mod settings;
mod stop;
#[cfg(test)]
mod tests;
mod text;
mod tool;

pub use agent::agent_definition;
pub use callbacks::HostCallbacks;
#[cfg(feature = "mcp")]
pub use callbacks::McpCallbacks;
#[cfg(feature = "http")]
pub use http::{http_client, http_client_options};
#[cfg(feature = "mcp")]
pub use mcp::mcp_server;
pub use names::{respell_keys, snake_case, KEYS};
pub use options::{
    continue_options, decisions, overrides, run_options, tool_outputs, ContinueSpec, RunSpec,
};
#[cfg(feature = "mcp-server")]
pub use serve::{serve_options, serve_transport};
pub use settings::{at_least_one, tool_concurrency, tool_retry, whole_count};
pub use stop::stop_conditions;
#[cfg(feature = "mcp-server")]
pub use text::serve_options_text;
pub use text::{agent_definition_text, continue_options_text, run_options_text};
pub use tool::tool;

use serde_path_to_error::Segment;

use crate::AgentError;

/// A definition error (`definition_invalid`) with `message`.
pub(crate) fn invalid(message: impl Into<String>) -> AgentError {
    AgentError::definition_invalid(message)
}

/// Reads `value` as `T`; a mismatch is `definition_invalid`: `Invalid {what}: {path}:
/// {serde's message}`, the path naming the field (`tools[0].timeoutMs`).
pub(crate) fn read<T: serde::de::DeserializeOwned>(
    value: serde_json::Value,
    what: &str,
) -> Result<T, AgentError> {
    read_at(value, what, "")
}

/// As [`read`], for the value at key `at` of the object being read (`""`: the object).
pub(crate) fn read_at<T: serde::de::DeserializeOwned>(
    value: serde_json::Value,
    what: &str,
    at: &str,
) -> Result<T, AgentError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let inner = e.inner().to_string();
        let mut segments: Vec<_> = e.path().iter().collect();
        // serde names an unknown key itself: the path is where it stands.
        if inner.starts_with("unknown field") {
            segments.pop();
        }
        let mut path = at.to_owned();
        for segment in segments {
            match segment {
                Segment::Seq { index } => path.push_str(&format!("[{index}]")),
                Segment::Map { key } if path.is_empty() => path.push_str(key),
                Segment::Map { key } => path.push_str(&format!(".{key}")),
                Segment::Enum { .. } | Segment::Unknown => {}
            }
        }
        let path = if path.is_empty() { path } else { path + ": " };
        invalid(format!("Invalid {what}: {path}{inner}"))
    })
}
