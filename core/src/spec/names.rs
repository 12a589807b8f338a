//! The format's key names, for bindings that spell them differently (Ruby's snake_case
//! keywords): definition errors name keys as the format spells them, and a binding
//! respells them in its own.

use crate::{AgentError, ErrorCode};

/// The format's keys a binding may spell differently (its multi-word camelCase keys, and
/// `bearer`), as a definition error may name them.
pub const KEYS: [&str; 65] = [
    "timeoutMs",
    "requireApproval",
    "onError",
    "inputSchema",
    "outputSchema",
    "eventSchema",
    "onToolCalled",
    "onResponseReceived",
    "nextTurnParams",
    "inputExamples",
    "toolConcurrency",
    "maxOutputChars",
    "maxRetries",
    "backoffMs",
    "durationMs",
    "renewEveryMs",
    "stepCountIs",
    "maxTokensUsed",
    "maxCost",
    "maxDuration",
    "hasToolCall",
    "finishReasonIs",
    "maxOutputTokens",
    "topP",
    "maxSteps",
    "stopWhen",
    "modelRetry",
    "toolExecution",
    "humanReview",
    "stateSecret",
    "stateSecrets",
    "toolChoice",
    "parallelToolCalls",
    "activeTools",
    "mcpServers",
    "allowTools",
    "denyTools",
    "toolPrefix",
    "cacheTtlMs",
    "onElicitation",
    "toolCallId",
    "toolOutputs",
    "humanInput",
    "toolTimeoutsMs",
    "bearer",
    "apiKey",
    "baseUrl",
    "bearerToken",
    "toolTimeouts",
    "clientOptions",
    "requestOptions",
    "fetchImpl",
    "bodyDefaults",
    "gatewayTools",
    "responseFormat",
    "includeMeta",
    "webSearchOptions",
    "providerOptions",
    "promptCacheKey",
    "maxCalls",
    "maxAttempts",
    "maxToolCalls",
    "deferLoading",
    "editedInput",
    "parseOutput",
];

/// `toolCallId` → `tool_call_id`.
pub fn snake_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A definition error with every key of [`KEYS`] in its message (as a whole word) spelled by
/// `spell`; other errors are returned unchanged.
pub fn respell_keys(e: AgentError, spell: impl Fn(&str) -> String) -> AgentError {
    if e.code() != ErrorCode::DefinitionInvalid {
        return e;
    }
    let message = e.message();
    let mut out = String::with_capacity(message.len() + 8);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if KEYS.contains(&word.as_str()) {
            out.push_str(&spell(word));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in message.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    AgentError::definition_invalid(out)
}
