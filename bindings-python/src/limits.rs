//! The value limits of docs/behaviour.md §7 as the binding applies them while converting host values
//! (64 levels, no cycle, 64-bit integers; texts from the core's [`ValueLimitError`]), and
//! where a refused value goes: a tool result becomes an invalid output, a progress value
//! an invalid event.

use phaseo_agent::{ToolError, ToolRuntime, ValueLimitError};

pub use phaseo_agent::MAX_DEPTH;

/// Deepest nesting of a state dict: the values' limit plus the state's own nesting, and
/// the paused agent tools' states it holds, as the core's state reader accepts (it then
/// checks each state from its own root).
pub const STATE_DEPTH: usize = phaseo_agent::MAX_STATE_DEPTH;

/// Deepest nesting of a model response from host code: a tool call's `arguments` sit 4
/// levels down (`{"message": {"tool_calls": [{"arguments": …}]}}`), and the core checks
/// the arguments themselves (`tool_input_invalid`).
pub const RESPONSE_DEPTH: usize = MAX_DEPTH + 4;

/// A value nested deeper than the limit (inside a state or a model response too, it is
/// the values that are limited to 64 levels).
pub fn too_deep() -> String {
    ValueLimitError::TooDeep.to_string()
}

/// A value that contains itself.
pub fn cycle() -> String {
    ValueLimitError::Cycle.to_string()
}

/// An integer outside i64/u64 (`digits`: its decimal digits, or its size).
pub fn int_too_big(digits: String) -> String {
    ValueLimitError::IntegerTooLarge(digits).to_string()
}

/// A tool result that cannot be converted: `tool_output_invalid`,
/// `Invalid tool output: <message>`, whatever `onError` says.
pub fn invalid_output(message: String) -> ToolError {
    ToolError::invalid_output(message)
}

/// A progress value that cannot be converted: fails the call with `tool_event_invalid`,
/// `Invalid tool event: <message>`.
pub fn reject_progress(runtime: &ToolRuntime, message: &str) {
    runtime.reject_progress(message);
}
