//! Core errors as JS errors. napi cannot create Error subclasses, so the reason carries a
//! marker and the error as JSON (`{code, message, target, gateway, result}`); the JS
//! layer rethrows the matching class.

use phaseo_agent::AgentError;

/// Prefix of an encoded SDK error in a napi error reason.
pub const MARKER: &str = "\u{1}phaseo:";

/// A core error as a napi error the JS layer decodes.
pub fn to_napi(error: AgentError) -> napi::Error {
    napi::Error::from_reason(format!("{MARKER}{}", error.to_json()))
}

/// Runs a native entry point so that a Rust panic becomes an SDK error, never an abort
/// (a panic unwinding out of a napi callback aborts the process).
pub fn no_panic<T>(f: impl FnOnce() -> napi::Result<T>) -> napi::Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => Err(to_napi(AgentError::new(
            phaseo_agent::ErrorCode::ToolFailed,
            format!(
                "internal error: {}",
                phaseo_agent::panic_message(p.as_ref())
            ),
        ))),
    }
}
