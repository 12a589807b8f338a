//! The readers over JSON text, for hosts that hand definitions and options over as text
//! (the C ABI, PHP): a text that is not JSON is refused with the same words everywhere.

use super::{
    agent_definition, continue_options, invalid, run_options, ContinueSpec, HostCallbacks, RunSpec,
};
use crate::{AgentDefinition, AgentError, Value};

/// Parses a JSON text argument with the core's limits (`{what} {verb} not valid JSON: …`).
fn parse(text: &str, what: &str, verb: &str) -> Result<Value, AgentError> {
    crate::parse_json_text(text).map_err(|e| invalid(format!("{what} {verb} not valid JSON: {e}")))
}

/// Parses optional options text (`None`: all defaults). The values the options carry
/// (`input`, `context`, a message's call input) sit a few levels below the root: the text
/// may be as deep as a state, and each value is checked against the value limit where it
/// is used (`Invalid run input: value is nested more than 64 levels deep`).
fn parse_options(text: Option<&str>, what: &str) -> Result<Value, AgentError> {
    Ok(text
        .map(|t| {
            crate::limits::parse_json_container_text(t)
                .map_err(|e| invalid(format!("{what} are not valid JSON: {e}")))
        })
        .transpose()?
        .unwrap_or(Value::Null))
}

/// [`agent_definition`] of a definition's JSON text.
pub fn agent_definition_text(
    host: &dyn HostCallbacks,
    text: &str,
) -> Result<AgentDefinition, AgentError> {
    agent_definition(host, parse(text, "agent definition", "is")?)
}

/// [`run_options`] of the options' JSON text (`None`: all defaults).
pub fn run_options_text(
    host: &dyn HostCallbacks,
    text: Option<&str>,
) -> Result<RunSpec, AgentError> {
    run_options(host, parse_options(text, "run options")?)
}

/// [`continue_options`] of the options' JSON text (`None`: all defaults).
pub fn continue_options_text(
    host: &dyn HostCallbacks,
    text: Option<&str>,
) -> Result<ContinueSpec, AgentError> {
    continue_options(host, parse_options(text, "continue options")?)
}

/// [`super::serve_options`] of the options' JSON text (PHP and the C ABI).
#[cfg(feature = "mcp-server")]
pub fn serve_options_text(
    host: &dyn HostCallbacks,
    text: &str,
) -> Result<(Vec<crate::Tool>, crate::mcp_server::McpServeOptions), AgentError> {
    super::serve_options(host, parse(text, "MCP server options", "are")?)
}
