//! MCP servers' tools as agent tools (docs/behaviour.md §11), on the official Rust SDK `rmcp`.
//!
//! Layout (one concept per file): [`config`] (how a server is declared), `process`
//! (stdio children: never outliving the host, stderr drained), `connection` (the `rmcp`
//! client: connect, list, call, cancel, restart — the only place naming `rmcp` types
//! besides the stdio pipes), `tools` (filters, prefix, approval, the per-run tool set),
//! `result` (an MCP result as a tool result) and `error` (`mcp_failed`).

pub mod config;
mod connection;
mod error;
mod process;
mod progress;
mod result;
mod tools;

pub use config::{
    McpApproval, McpElicitationHandler, McpServer, McpToolFilter, McpToolInfo, McpTransport,
};
pub(crate) use tools::McpSet;
