//! Definitions and options as JSON text, read by the core's canonical reader
//! ([`phaseo_agent::spec`]); this file only makes the adapter of each `{"$callback": id}`
//! ([`phaseo_agent::json_host`]), which the host's `invoke` receives with the call.

use std::sync::Arc;

use phaseo_agent::json_host::JsonCallbacks;
use phaseo_agent::spec::{self as core_spec, ContinueSpec, RunSpec};
use phaseo_agent::AgentDefinition;

use crate::error::CError;
use crate::host::{Host, HostFn};

/// The callbacks of one host: every id is served by its `invoke`.
fn callbacks(host: &Arc<Host>) -> JsonCallbacks<impl Fn(u64) -> HostFn + '_> {
    JsonCallbacks::new(move |id| HostFn {
        host: host.clone(),
        id,
    })
}

/// The core definition of an agent definition's JSON text; its callbacks are served by
/// `host`.
pub fn agent(host: &Arc<Host>, text: &str) -> Result<AgentDefinition, CError> {
    Ok(core_spec::agent_definition_text(&callbacks(host), text)?)
}

/// Reads run options (`None`: all defaults).
pub fn run_options(host: &Arc<Host>, text: Option<&str>) -> Result<RunSpec, CError> {
    Ok(core_spec::run_options_text(&callbacks(host), text)?)
}

/// Reads continue options (`None`: all defaults).
pub fn continue_options(host: &Arc<Host>, text: Option<&str>) -> Result<ContinueSpec, CError> {
    Ok(core_spec::continue_options_text(&callbacks(host), text)?)
}

/// Reads served MCP options: the served tools and the server's options.
pub fn serve_options(
    host: &Arc<Host>,
    text: &str,
) -> Result<
    (
        Vec<phaseo_agent::Tool>,
        phaseo_agent::mcp_server::McpServeOptions,
    ),
    CError,
> {
    Ok(core_spec::serve_options_text(&callbacks(host), text)?)
}
