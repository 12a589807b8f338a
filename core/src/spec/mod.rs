//! The canonical definition format: agent definitions, tools and run/continue options as
//! JSON (camelCase keys, the SPEC's names), read into core values.
//!
//! Every binding whose host values are not Rust (the C ABI, Node, Ruby, PHP) hands its
//! definitions to this module in one format, so the reading — defaults, checks and error
//! messages — is written once. Wherever the SPEC allows a host function, the JSON holds
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
//!
//! Unknown keys are refused with `definition_invalid` naming the key.

mod agent;
mod callbacks;
mod forms;
#[cfg(feature = "mcp")]
mod mcp;
mod options;
mod settings;
mod stop;
#[cfg(test)]
mod tests;
mod tool;

pub use agent::agent_definition;
pub use callbacks::HostCallbacks;
#[cfg(feature = "mcp")]
pub use mcp::mcp_server;
pub use options::{
    continue_options, decisions, overrides, run_options, tool_outputs, ContinueSpec, RunSpec,
};
pub use stop::stop_conditions;
pub use tool::tool;

use crate::AgentError;

/// A definition error (`definition_invalid`) with `message`.
pub(crate) fn invalid(message: impl Into<String>) -> AgentError {
    AgentError::definition_invalid(message)
}

/// Reads `value` as `T`; a mismatch is `definition_invalid`: `Invalid {what}: {serde's
/// message}` (which names the field).
pub(crate) fn read<T: serde::de::DeserializeOwned>(
    value: serde_json::Value,
    what: &str,
) -> Result<T, AgentError> {
    serde_json::from_value(value).map_err(|e| invalid(format!("Invalid {what}: {e}")))
}
