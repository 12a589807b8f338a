//! Errors: one error type with a stable [`ErrorCode`] (docs/behaviour.md §9), and the small error a host
//! callback returns.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::state::RunResult;

/// Stable machine-readable error codes, identical in every binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Arguments fail `parameters`/`inputSchema`, or are not JSON.
    ToolInputInvalid,
    /// A result (or a supplied output) fails `outputSchema`.
    ToolOutputInvalid,
    /// A progress value fails `eventSchema`.
    ToolEventInvalid,
    /// The final text fails the agent's `outputSchema`.
    AgentOutputInvalid,
    /// The model called a tool id the agent does not have.
    UnknownTool,
    /// A call ran past its `timeoutMs`.
    ToolTimeout,
    /// An executor or hook threw.
    ToolFailed,
    /// `maxSteps` reached.
    MaxSteps,
    /// A continue was refused.
    ContinueInvalid,
    /// State JSON malformed or of an unsupported version.
    StateInvalid,
    /// Every model attempt failed with a non-HTTP error.
    ModelFailed,
    /// Every model attempt failed and the last one was an HTTP error.
    Gateway,
    /// A tool or agent definition is invalid.
    DefinitionInvalid,
    /// The run was cancelled.
    Cancelled,
    /// A run store operation failed (I/O, connection, SQL).
    StoreFailed,
    /// Another worker took over the run's lease.
    LeaseLost,
    /// An MCP server could not start, died, or broke the protocol (docs/behaviour.md §11).
    McpFailed,
}

impl ErrorCode {
    /// Every code, in the order of docs/behaviour.md §9.
    pub const ALL: [ErrorCode; 17] = [
        ErrorCode::ToolInputInvalid,
        ErrorCode::ToolOutputInvalid,
        ErrorCode::ToolEventInvalid,
        ErrorCode::AgentOutputInvalid,
        ErrorCode::UnknownTool,
        ErrorCode::ToolTimeout,
        ErrorCode::ToolFailed,
        ErrorCode::MaxSteps,
        ErrorCode::ContinueInvalid,
        ErrorCode::StateInvalid,
        ErrorCode::ModelFailed,
        ErrorCode::Gateway,
        ErrorCode::DefinitionInvalid,
        ErrorCode::Cancelled,
        ErrorCode::StoreFailed,
        ErrorCode::LeaseLost,
        ErrorCode::McpFailed,
    ];

    /// The snake_case code string, e.g. `"tool_input_invalid"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::ToolInputInvalid => "tool_input_invalid",
            ErrorCode::ToolOutputInvalid => "tool_output_invalid",
            ErrorCode::ToolEventInvalid => "tool_event_invalid",
            ErrorCode::AgentOutputInvalid => "agent_output_invalid",
            ErrorCode::UnknownTool => "unknown_tool",
            ErrorCode::ToolTimeout => "tool_timeout",
            ErrorCode::ToolFailed => "tool_failed",
            ErrorCode::MaxSteps => "max_steps",
            ErrorCode::ContinueInvalid => "continue_invalid",
            ErrorCode::StateInvalid => "state_invalid",
            ErrorCode::ModelFailed => "model_failed",
            ErrorCode::Gateway => "gateway",
            ErrorCode::DefinitionInvalid => "definition_invalid",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::StoreFailed => "store_failed",
            ErrorCode::LeaseLost => "lease_lost",
            ErrorCode::McpFailed => "mcp_failed",
        }
    }

    /// Parses a code string; `None` for an unknown code.
    pub fn parse(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == code)
    }

    /// The validation target of a schema error code (`tool_input`, …), if it is one.
    pub fn schema_target(self) -> Option<&'static str> {
        match self {
            ErrorCode::ToolInputInvalid => Some("tool_input"),
            ErrorCode::ToolOutputInvalid => Some("tool_output"),
            ErrorCode::ToolEventInvalid => Some("tool_event"),
            ErrorCode::AgentOutputInvalid => Some("agent_output"),
            _ => None,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Details of an HTTP failure of a model endpoint (docs/behaviour.md §8).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayErrorInfo {
    /// HTTP status code.
    pub status: u16,
    /// HTTP reason phrase, e.g. `Too Many Requests`.
    #[serde(default)]
    pub status_text: String,
    /// The request id reported by the endpoint, if any.
    #[serde(default)]
    pub request_id: Option<String>,
    /// The reason given in the response body, if any.
    #[serde(default)]
    pub reason: Option<String>,
}

/// The error of every fallible SDK operation.
///
/// `code()` is stable across languages; `message()` is the docs/behaviour.md §9 text. An error raised
/// because the run itself failed carries that run's final state in [`AgentError::result`].
#[derive(Clone, Debug, thiserror::Error)]
#[error("{message}")]
pub struct AgentError {
    code: ErrorCode,
    message: String,
    gateway: Option<GatewayErrorInfo>,
    result: Option<Box<RunResult>>,
}

impl AgentError {
    /// Creates an error with a code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            gateway: None,
            result: None,
        }
    }

    /// A `gateway` error carrying the HTTP details.
    pub fn gateway(message: impl Into<String>, info: GatewayErrorInfo) -> Self {
        Self {
            gateway: Some(info),
            ..Self::new(ErrorCode::Gateway, message)
        }
    }

    /// Shorthand for a refused continue (`continue_invalid`).
    pub fn continue_invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::ContinueInvalid, message)
    }

    /// Shorthand for invalid state (`state_invalid`).
    pub fn state_invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::StateInvalid, message)
    }

    /// Shorthand for a failed run store operation (`store_failed`).
    pub fn store_failed(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::StoreFailed, message)
    }

    /// Shorthand for an invalid definition (`definition_invalid`).
    pub fn definition_invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::DefinitionInvalid, message)
    }

    /// The stable error code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The human-readable message (identical in every language).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// For schema errors, the validation target (`tool_input`, `tool_output`, `tool_event`,
    /// `agent_output`).
    pub fn target(&self) -> Option<&'static str> {
        self.code.schema_target()
    }

    /// HTTP details of a `gateway` error.
    pub fn gateway_info(&self) -> Option<&GatewayErrorInfo> {
        self.gateway.as_ref()
    }

    /// The failed run's final state, when the run itself failed.
    pub fn result(&self) -> Option<&RunResult> {
        self.result.as_deref()
    }

    /// Takes the failed run's final state out of the error.
    pub fn take_result(&mut self) -> Option<RunResult> {
        self.result.take().map(|b| *b)
    }

    /// The error as JSON text `{code, message, target, gateway, result?}` (what the Node
    /// and Ruby layers decode into their error classes). The failed state goes in as its
    /// canonical text: re-parsing it could only lose digits or hit a recursion limit.
    pub fn to_json(&self) -> String {
        let mut body = serde_json::json!({
            "code": self.code.as_str(),
            "message": self.message,
            "target": self.target(),
            "gateway": self.gateway_info(),
        })
        .to_string();
        if let Some(state) = self.result() {
            body.pop();
            body.push_str(",\"result\":");
            body.push_str(&state.to_json());
            body.push('}');
        }
        body
    }

    pub(crate) fn with_result(mut self, result: RunResult) -> Self {
        self.result = Some(Box::new(result));
        self
    }

    pub(crate) fn with_gateway(mut self, info: Option<GatewayErrorInfo>) -> Self {
        self.gateway = info;
        self
    }
}

/// The error a host callback (executor, validator, hook, predicate, model client) returns:
/// just a message. Bindings build it from a host exception's text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// The message, used verbatim in errors and tool messages.
    pub message: String,
    /// The executor's result could not be converted (too deep, a cycle, a huge integer).
    invalid_output: bool,
    /// The code the call fails with, when not `tool_failed` (an MCP server's failure).
    code: Option<ErrorCode>,
}

impl ToolError {
    /// Creates a callback error from its message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            invalid_output: false,
            code: None,
        }
    }

    /// A call error with its own code instead of `tool_failed` (e.g. `mcp_failed`); it
    /// follows the tool's `onError` policy like any other executor error.
    pub fn with_code(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            invalid_output: false,
            code: Some(code),
        }
    }

    /// The code a call failing with this error gets (`tool_failed` unless set).
    pub fn code(&self) -> ErrorCode {
        self.code.unwrap_or(ErrorCode::ToolFailed)
    }

    /// An executor's host result that cannot be converted to a storable JSON value
    /// (e.g. [`crate::ValueLimitError`]'s text). The engine reports it as
    /// `tool_output_invalid` (`Invalid tool output: <message>`) and fails the run whatever
    /// `onError` says, as an `outputSchema` failure does.
    pub fn invalid_output(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            invalid_output: true,
            code: None,
        }
    }

    /// Whether this is an [`ToolError::invalid_output`] error.
    pub fn is_invalid_output(&self) -> bool {
        self.invalid_output
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

impl From<serde_json::Error> for ToolError {
    fn from(e: serde_json::Error) -> Self {
        Self::new(e.to_string())
    }
}

impl From<std::io::Error> for ToolError {
    fn from(e: std::io::Error) -> Self {
        Self::new(e.to_string())
    }
}

impl From<AgentError> for ToolError {
    fn from(e: AgentError) -> Self {
        Self::new(e.message)
    }
}
