//! Status codes, error texts and the panic guard every exported function runs under.

use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use phaseo_agent::{AgentError, ErrorCode, Value};

/// What an exported function reports. On `PHASEO_STATUS_ERROR` the function's `out_error`
/// (when not NULL) receives a JSON object `{"code", "message", "state"?}` that the caller
/// frees with `phaseo_string_free`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PhaseoStatus {
    /// Success.
    Ok = 0,
    /// Failure: see `out_error`.
    Error = 1,
    /// A stream has no further events (`phaseo_stream_next`).
    End = 2,
    /// A driven run waits for something; poll it again once woken (`phaseo_run_poll`).
    Pending = 3,
}

/// An error crossing the ABI: a docs/behaviour.md §9 code (or `invalid_argument` for a misuse of the
/// ABI itself: a NULL pointer, text that is not UTF-8), its message and, for a failed run,
/// the failed state's canonical JSON.
#[derive(Debug)]
pub struct CError {
    code: String,
    message: String,
    state: Option<String>,
    /// The whole JSON text, when the error was already serialized (a run's outcome).
    raw: Option<String>,
}

impl CError {
    /// An error with a core code.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code: code.as_str().to_owned(),
            message: message.into(),
            state: None,
            raw: None,
        }
    }

    /// A misuse of the ABI (NULL pointer, invalid text).
    pub fn argument(message: impl Into<String>) -> Self {
        Self {
            code: "invalid_argument".to_owned(),
            message: message.into(),
            state: None,
            raw: None,
        }
    }

    /// A `definition_invalid` error (bad definitions and options).
    pub fn definition(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::DefinitionInvalid, message)
    }

    /// An error already serialized by [`CError::to_json`].
    pub fn raw(json: String) -> Self {
        Self {
            code: String::new(),
            message: String::new(),
            state: None,
            raw: Some(json),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The JSON text handed to the caller.
    pub fn to_json(&self) -> String {
        if let Some(raw) = &self.raw {
            return raw.clone();
        }
        let mut obj = serde_json::Map::new();
        obj.insert("code".into(), Value::String(self.code.clone()));
        obj.insert("message".into(), Value::String(self.message.clone()));
        let mut text = phaseo_agent::json::to_canonical_string(&Value::Object(obj));
        if let Some(state) = &self.state {
            // The state is already canonical JSON text: spliced in, not re-serialized.
            text.pop();
            text.push_str(",\"state\":");
            text.push_str(state);
            text.push('}');
        }
        text
    }
}

impl From<AgentError> for CError {
    fn from(mut e: AgentError) -> Self {
        let state = e.take_result().map(|r| r.to_json());
        Self {
            code: e.code().as_str().to_owned(),
            message: e.message().to_owned(),
            state,
            raw: None,
        }
    }
}

/// A C string the caller owns (freed with `phaseo_string_free`). Interior NUL characters,
/// impossible in JSON text, are replaced in messages.
pub fn owned_string(text: String) -> *mut c_char {
    match CString::new(text) {
        Ok(s) => s.into_raw(),
        Err(e) => {
            let bytes: Vec<u8> = e
                .into_vec()
                .into_iter()
                .map(|b| if b == 0 { b' ' } else { b })
                .collect();
            CString::new(bytes).map_or(std::ptr::null_mut(), CString::into_raw)
        }
    }
}

/// Writes `text` to `out` when `out` is not NULL.
pub unsafe fn write_out(out: *mut *mut c_char, text: String) {
    if !out.is_null() {
        *out = owned_string(text);
    }
}

/// Reads a NUL-terminated UTF-8 argument.
pub unsafe fn read_str<'a>(ptr: *const c_char, what: &str) -> Result<&'a str, CError> {
    if ptr.is_null() {
        return Err(CError::argument(format!("{what} is NULL")));
    }
    CStr::from_ptr(ptr)
        .to_str()
        .map_err(|e| CError::argument(format!("{what} is not UTF-8: {e}")))
}

/// Reads an optional NUL-terminated UTF-8 argument (NULL = absent).
pub unsafe fn read_opt_str<'a>(ptr: *const c_char, what: &str) -> Result<Option<&'a str>, CError> {
    if ptr.is_null() {
        Ok(None)
    } else {
        read_str(ptr, what).map(Some)
    }
}

/// Runs the body of an exported function: its error goes to `out_error`, and a panic
/// becomes an error instead of unwinding into the host. `out_error` is NULL or writable.
pub unsafe fn guard<F>(out_error: *mut *mut c_char, body: F) -> PhaseoStatus
where
    F: FnOnce() -> Result<PhaseoStatus, CError>,
{
    if !out_error.is_null() {
        // SAFETY: the caller passes a writable pointer or NULL (checked).
        unsafe { *out_error = std::ptr::null_mut() };
    }
    let error = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(status)) => return status,
        Ok(Err(e)) => e,
        Err(panic) => CError::new(
            ErrorCode::ToolFailed,
            format!(
                "internal error: {}",
                phaseo_agent::panic_message(panic.as_ref())
            ),
        ),
    };
    // SAFETY: as above.
    unsafe { write_out(out_error, error.to_json()) };
    PhaseoStatus::Error
}

/// Frees a string the SDK returned (`out_error`, `out_json`, …). NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn phaseo_string_free(text: *mut c_char) {
    if !text.is_null() {
        drop(CString::from_raw(text));
    }
}

/// The length in bytes (without its NUL) of a string the SDK gave (a call's arguments, a
/// result's JSON): for hosts that copy it without a C library at hand. 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn phaseo_string_len(text: *const c_char) -> usize {
    if text.is_null() {
        return 0;
    }
    // SAFETY: the ABI contract: a NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(text) }.count_bytes()
}
