//! Definitions and options as JSON text, read by the core's canonical reader
//! ([`phaseo_agent::spec`]); this file only parses the text and makes the adapter of each
//! `{"$callback": id}` ([`phaseo_agent::json_host`]), which the host's `invoke` receives
//! with the call.

use std::sync::Arc;

use phaseo_agent::json_host::JsonCallbacks;
use phaseo_agent::spec::{self as core_spec, ContinueSpec, RunSpec};
use phaseo_agent::{AgentDefinition, Value};

use crate::error::CError;
use crate::host::{Host, HostFn};

/// The callbacks of one host: every id is served by its `invoke`.
fn callbacks(host: &Arc<Host>) -> JsonCallbacks<impl Fn(u64) -> HostFn + '_> {
    JsonCallbacks(move |id| HostFn {
        host: host.clone(),
        id,
    })
}

/// Parses a JSON text argument (`{what} is not valid JSON` / `{what} are not valid JSON`).
fn parse(text: &str, what: &str, verb: &str) -> Result<Value, CError> {
    phaseo_agent::parse_json_text(text)
        .map_err(|e| CError::definition(format!("{what} {verb} not valid JSON: {e}")))
}

/// The core definition of an agent definition's JSON text; its callbacks are served by
/// `host`.
pub fn agent(host: &Arc<Host>, text: &str) -> Result<AgentDefinition, CError> {
    let value = parse(text, "agent definition", "is")?;
    Ok(core_spec::agent_definition(&callbacks(host), value)?)
}

/// Reads run options (`None`: all defaults).
pub fn run_options(host: &Arc<Host>, text: Option<&str>) -> Result<RunSpec, CError> {
    let value = text
        .map(|t| parse(t, "run options", "are"))
        .transpose()?
        .unwrap_or(Value::Null);
    Ok(core_spec::run_options(&callbacks(host), value)?)
}

/// Reads continue options (`None`: all defaults).
pub fn continue_options(host: &Arc<Host>, text: Option<&str>) -> Result<ContinueSpec, CError> {
    let value = text
        .map(|t| parse(t, "continue options", "are"))
        .transpose()?
        .unwrap_or(Value::Null);
    Ok(core_spec::continue_options(&callbacks(host), value)?)
}
