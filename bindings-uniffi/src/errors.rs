//! The two error types: [`PhaseoError`] (every SDK error, with its docs/behaviour.md §9 code) and
//! [`ToolError`] (what a host callback throws).

use phaseo_agent as pa;

/// HTTP details of a `gateway` error (docs/behaviour.md §8).
#[derive(Clone, Debug, uniffi::Record)]
pub struct GatewayErrorInfo {
    /// HTTP status code.
    pub status: u16,
    /// HTTP reason phrase.
    pub status_text: String,
    /// The endpoint's request id.
    pub request_id: Option<String>,
    /// The reason given in the response body.
    pub reason: Option<String>,
}

/// Every error of the SDK. `code` is the stable docs/behaviour.md §9 code (`tool_failed`,
/// `continue_invalid`, …) and `message` the documented text, identical in every language. An error
/// raised because the run itself failed carries the failed run's canonical state JSON in
/// `state_json`; a refused continue carries none (the state passed in is still current).
#[derive(Clone, Debug, thiserror::Error, uniffi::Error)]
pub enum PhaseoError {
    /// The SDK error.
    #[error("{message}")]
    Failed {
        /// docs/behaviour.md §9 code.
        code: String,
        /// Message.
        message: String,
        /// The failed run's state (`RunResult::to_json`), when the run itself failed.
        state_json: Option<String>,
        /// HTTP details of a `gateway` error.
        gateway: Option<GatewayErrorInfo>,
    },
}

impl PhaseoError {
    /// An error with a code and message, without state.
    pub fn new(code: pa::ErrorCode, message: impl Into<String>) -> Self {
        PhaseoError::Failed {
            code: code.as_str().to_owned(),
            message: message.into(),
            state_json: None,
            gateway: None,
        }
    }

    /// A `definition_invalid` error (bad definitions and options).
    pub fn definition(message: impl Into<String>) -> Self {
        Self::new(pa::ErrorCode::DefinitionInvalid, message)
    }

    /// An internal failure (a panic caught at the boundary), reported as `tool_failed`.
    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::new(
            pa::ErrorCode::ToolFailed,
            format!("internal error: {message}"),
        )
    }
}

impl From<pa::AgentError> for PhaseoError {
    fn from(mut e: pa::AgentError) -> Self {
        let state_json = e.take_result().map(|r| r.to_json());
        PhaseoError::Failed {
            code: e.code().as_str().to_owned(),
            message: e.message().to_owned(),
            state_json,
            gateway: e.gateway_info().map(|g| GatewayErrorInfo {
                status: g.status,
                status_text: g.status_text.clone(),
                request_id: g.request_id.clone(),
                reason: g.reason.clone(),
            }),
        }
    }
}

/// What a host callback (executor, validator, hook, predicate, model client) throws: its
/// message becomes the tool error (or model failure) text. Any other exception thrown by a
/// host callback is accepted too and reported with its message.
#[derive(Clone, Debug, thiserror::Error, uniffi::Error)]
pub enum ToolError {
    /// The callback failed.
    #[error("{reason}")]
    Failed {
        /// The message, used verbatim in errors and tool messages.
        reason: String,
    },
    /// What the callback gave back has no JSON form (a cycle, an object of no JSON type,
    /// too deep a value): for a tool's result this is `tool_output_invalid`, which fails the
    /// run whatever `onError` says, as in every binding.
    #[error("{reason}")]
    InvalidValue {
        /// What is wrong with the value.
        reason: String,
    },
}

impl ToolError {
    /// A callback error with this message.
    pub fn new(reason: impl Into<String>) -> Self {
        ToolError::Failed {
            reason: reason.into(),
        }
    }

    pub(crate) fn into_core(self) -> pa::ToolError {
        match self {
            ToolError::Failed { reason } => pa::ToolError::new(reason),
            ToolError::InvalidValue { reason } => pa::ToolError::invalid_output(reason),
        }
    }
}

impl From<uniffi::UnexpectedUniFFICallbackError> for ToolError {
    /// A host exception other than `ToolError`: the foreign side reports its `toString()`
    /// (`java.lang.IllegalStateException: boom`); keep only the message, as the other
    /// bindings do (`str(exc)`, `error.message`).
    fn from(e: uniffi::UnexpectedUniFFICallbackError) -> Self {
        ToolError::new(strip_exception_class(&e.reason))
    }
}

/// `pkg.Name: message` → `message` (a JVM `Throwable.toString()`); `pkg.Name` alone → `pkg.Name`.
fn strip_exception_class(text: &str) -> String {
    if let Some((head, rest)) = text.split_once(": ") {
        let looks_like_class = !head.is_empty()
            && head.contains('.')
            && head
                .chars()
                .all(|c| c.is_alphanumeric() || c == '.' || c == '$' || c == '_');
        if looks_like_class {
            return rest.to_owned();
        }
    }
    text.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exception_class_names_are_stripped() {
        assert_eq!(
            strip_exception_class("java.lang.IllegalStateException: boom: x"),
            "boom: x"
        );
        assert_eq!(
            strip_exception_class("kotlin.NotImplementedError"),
            "kotlin.NotImplementedError"
        );
        assert_eq!(strip_exception_class("plain: message"), "plain: message");
    }
}
