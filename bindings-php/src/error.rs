//! Errors crossing into PHP: a JSON object `{"code", "message", "state"?}` carried as the
//! message of the `\Exception` a native function throws; the PHP layer turns it into the
//! `AgentError` subclass of the code (`Errors::fromNative`).

use ext_php_rs::exception::PhpException;
use phaseo_agent::{AgentError, ErrorCode, Value};

/// An error: a docs/behaviour.md §9 code (or `invalid_argument` for a misuse of the low-level API), its
/// message, for a failed run the failed state's canonical JSON text, and the details some
/// codes carry (gateway HTTP details, the validation target).
#[derive(Debug)]
pub struct NativeError {
    code: String,
    message: String,
    state: Option<String>,
    /// The HTTP details of a `gateway` error (`status`, `statusText`, `requestId`, `reason`).
    gateway: Option<Box<Value>>,
    /// What a schema-validation code checked (`tool_input`, `tool_output`, …).
    target: Option<&'static str>,
}

impl NativeError {
    /// An error with a core code.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code: code.as_str().to_owned(),
            message: message.into(),
            state: None,
            gateway: None,
            target: None,
        }
    }

    /// A misuse of the low-level API (an unknown handle).
    pub fn argument(message: impl Into<String>) -> Self {
        Self {
            code: "invalid_argument".to_owned(),
            message: message.into(),
            state: None,
            gateway: None,
            target: None,
        }
    }

    /// A `definition_invalid` error (bad definitions and options).
    pub fn definition(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::DefinitionInvalid, message)
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// `{"code", "message", "state"?}` with the state as its JSON text (kept verbatim so
    /// that it round-trips exactly).
    pub fn to_value(&self) -> Value {
        let mut obj = serde_json::Map::new();
        obj.insert("code".into(), Value::String(self.code.clone()));
        obj.insert("message".into(), Value::String(self.message.clone()));
        if let Some(state) = &self.state {
            obj.insert("state".into(), Value::String(state.clone()));
        }
        if let Some(gateway) = &self.gateway {
            obj.insert("gateway".into(), (**gateway).clone());
        }
        if let Some(target) = self.target {
            obj.insert("target".into(), Value::from(target));
        }
        Value::Object(obj)
    }
}

impl From<AgentError> for NativeError {
    fn from(mut e: AgentError) -> Self {
        let state = e.take_result().map(|r| r.to_json());
        Self {
            code: e.code().as_str().to_owned(),
            message: e.message().to_owned(),
            state,
            gateway: e
                .gateway_info()
                .and_then(|g| serde_json::to_value(g).ok())
                .map(Box::new),
            target: e.target(),
        }
    }
}

impl From<NativeError> for PhpException {
    fn from(e: NativeError) -> Self {
        PhpException::from_message(phaseo_agent::json::to_canonical_string(&e.to_value()))
    }
}
