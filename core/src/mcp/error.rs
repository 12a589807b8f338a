//! `mcp_failed` (docs/behaviour.md §9, §11): a server that cannot start, died, or broke the protocol.

use crate::error::{AgentError, ErrorCode, ToolError};

/// Why a server could not be used.
pub(crate) enum McpFailure {
    /// Spawning or the `initialize` handshake failed.
    Start(String),
    /// The server exited (or its connection closed) during a request; a note on why.
    Died(String),
    /// An answer that is not what the protocol says.
    Protocol(String),
}

impl McpFailure {
    /// The error message, `MCP server '<name>' …`.
    pub(crate) fn message(&self, server: &str) -> String {
        match self {
            McpFailure::Start(d) => format!("MCP server '{server}' could not start: {d}"),
            McpFailure::Died(d) => format!("MCP server '{server}' exited{d}"),
            McpFailure::Protocol(d) => format!("MCP server '{server}' broke the protocol: {d}"),
        }
    }
}

/// A call's `mcp_failed` error (follows the tool's `onError`).
pub(crate) fn mcp_failed(message: String) -> ToolError {
    ToolError::with_code(ErrorCode::McpFailed, message)
}

/// A run's `mcp_failed` error (a listing failed).
pub(crate) fn run_failed(message: String) -> AgentError {
    AgentError::new(ErrorCode::McpFailed, message)
}
