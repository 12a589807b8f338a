//! Core errors as JS errors. napi cannot create Error subclasses, so the reason carries a
//! marker and the error as JSON (`{code, message, target, gateway, result}`); the JS
//! layer rethrows the matching class.

use phaseo_agent::AgentError;
use serde_json::json;

/// Prefix of an encoded SDK error in a napi error reason.
pub const MARKER: &str = "\u{1}phaseo:";

/// A core error as a napi error the JS layer decodes.
pub fn to_napi(mut error: AgentError) -> napi::Error {
    let result = error.take_result().map(|r| r.to_json());
    let mut body = json!({
        "code": error.code().as_str(),
        "message": error.message(),
        "target": error.target(),
        "gateway": error.gateway_info(),
    })
    .to_string();
    // The state goes in as its canonical text: re-parsing it here could only lose digits
    // or hit a recursion limit (and used to panic).
    if let Some(state) = result {
        body.pop();
        body.push_str(",\"result\":");
        body.push_str(&state);
        body.push('}');
    }
    napi::Error::from_reason(format!("{MARKER}{body}"))
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
