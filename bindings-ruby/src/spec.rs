//! Definitions and options reach Rust in the core's canonical format
//! ([`phaseo_agent::spec`]: camelCase JSON, `{"$callback": id}` for Ruby callables), written
//! by the Ruby layer from the user's snake_case keywords; this file makes the adapter of
//! each registered callable and speaks the core's definition errors in Ruby's names.

use phaseo_agent::json_host::JsonCallbacks;
use phaseo_agent::spec::{respell_keys, snake_case};
use phaseo_agent::{AgentError, Value};
use serde::Deserialize;

use crate::adapters::HostFn;

/// The registry's callables (`Internal::REGISTRY` ids), each behind the core's `json_host`
/// adapter of its place. An MCP server's approval predicate is called like the agent's,
/// `->(tool_call, runtime)`.
pub static RB_CALLBACKS: JsonCallbacks<fn(u64) -> HostFn> =
    JsonCallbacks::with_agent_shaped_mcp_approval(HostFn);

/// What `Agent#run`/`continue_run`/`recover`/`stream` pass: the canonical run or continue
/// options, and what only the Ruby binding has (client, listener, run id, streaming; the
/// state to continue is an argument of its own).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallSpec {
    /// Run or continue options (canonical format).
    #[serde(default)]
    pub options: Value,
    pub on_event: Option<u64>,
    /// Continue (or with `recover`, recover) the stored run of this id.
    pub run_id: Option<String>,
    #[serde(default)]
    pub recover: bool,
    /// Stream the run (`Agent#stream`).
    #[serde(default)]
    pub stream: bool,
    /// `[responses, used]` of a scripted client, or `"test"`.
    #[serde(default)]
    pub client: Value,
}

/// Reads a spec from its JSON form; a mismatch is a definition error naming the field.
pub fn parse<T: for<'de> Deserialize<'de>>(v: Value, what: &str) -> Result<T, AgentError> {
    serde_json::from_value(v)
        .map_err(|e| AgentError::definition_invalid(format!("Invalid {what}: {e}")))
}

/// The Ruby keyword of a key of the format (`stopWhen` → `stop_when`).
pub fn ruby_keyword(key: &str) -> String {
    match key {
        "toolTimeoutsMs" => "tool_timeouts".to_owned(),
        "bearer" => "bearer_token".to_owned(),
        key => snake_case(key),
    }
}

/// A definition error of the core's reader with the format's key names spelled as the Ruby
/// keywords the user wrote (`stopWhen stepCountIs` → `stop_when step_count_is`).
pub fn ruby_names(e: AgentError) -> AgentError {
    respell_keys(e, ruby_keyword)
}
