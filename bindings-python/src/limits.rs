//! The value limits of SPEC §7 as the binding applies them (64 levels, no cycle, 64-bit
//! integers), with the core's exact texts, and where a refused value goes: a tool result
//! becomes an invalid output, a progress value an invalid event.

use phaseo_agent::{ToolError, ToolRuntime};

/// Deepest nesting of a value that enters the SDK (a scalar is depth 0, `{"a": 1}` 1).
pub const MAX_DEPTH: usize = 64;

/// Deepest nesting of a state dict: the values' limit plus the state's own nesting, as the
/// core's state reader accepts (`run.pause.pendingToolCalls[i].call.input` is 6 levels
/// down).
pub const STATE_DEPTH: usize = MAX_DEPTH + 8;

/// Deepest nesting of a model response from host code: a tool call's `arguments` sit 4
/// levels down (`{"message": {"tool_calls": [{"arguments": …}]}}`), and the core checks
/// the arguments themselves (`tool_input_invalid`).
pub const RESPONSE_DEPTH: usize = MAX_DEPTH + 4;

/// A value that contains itself.
pub const CYCLE: &str = "value contains a cycle";

/// A value nested deeper than the limit (the values inside a state or a model response
/// are what is limited to 64 levels, whatever structure holds them).
pub const TOO_DEEP: &str = "value is nested more than 64 levels deep";

/// An integer outside i64/u64 (`digits`: its decimal digits, or its size).
pub fn int_too_big(digits: &str) -> String {
    format!("integer {digits} does not fit in 64 bits")
}

/// A tool result that cannot be converted: `tool_output_invalid`,
/// `Invalid tool output: <message>`.
pub fn invalid_output(message: String) -> ToolError {
    ToolError::new(format!("Invalid tool output: {message}"))
}

/// A progress value that cannot be converted: fails the call with `tool_event_invalid`,
/// `Invalid tool event: <message>`. Returns whether the core took it (otherwise the
/// caller raises it in the tool).
pub fn reject_progress(runtime: &ToolRuntime, message: &str) -> bool {
    let _ = (runtime, message);
    false
}
