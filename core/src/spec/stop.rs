//! `stopWhen`: built-in conditions as one-key objects, or host functions.

use std::sync::Arc;

use serde::Deserialize;

use super::forms::{Callback, OneOrMany};
use super::{invalid, read, HostCallbacks};
use crate::stop::{at_least, Threshold};
use crate::{finish_reason_is, has_tool_call, max_cost, AgentError, StopCondition, Value};

/// A stop condition: `{"stepCountIs": n}`, `{"maxTokensUsed": n}`, `{"maxCost": x}`,
/// `{"maxDuration": ms}`, `{"hasToolCall": "name"}`, `{"finishReasonIs": "r"}` or a
/// callback.
#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "a condition such as {\"stepCountIs\": 3} or {\"$callback\": id}"
)]
pub(crate) enum StopSpec {
    Callback(Callback),
    Builtin(serde_json::Map<String, Value>),
}

/// The `stopWhen` of a definition or of options (one condition or a list).
pub(crate) type StopWhen = OneOrMany<StopSpec>;

/// Reads `stopWhen` (one condition or a list) into core conditions.
pub fn stop_conditions(
    host: &dyn HostCallbacks,
    value: Value,
) -> Result<Vec<Arc<dyn StopCondition>>, AgentError> {
    build(host, read(value, "stopWhen")?)
}

/// The core conditions of `specs`.
pub(crate) fn build(
    host: &dyn HostCallbacks,
    specs: StopWhen,
) -> Result<Vec<Arc<dyn StopCondition>>, AgentError> {
    specs
        .into_vec()
        .into_iter()
        .map(|s| match s {
            StopSpec::Callback(cb) => Ok(host.stop_condition(cb.id)),
            StopSpec::Builtin(fields) => builtin(fields),
        })
        .collect()
}

fn builtin(fields: serde_json::Map<String, Value>) -> Result<Arc<dyn StopCondition>, AgentError> {
    let mut entries = fields.into_iter();
    let (Some((kind, v)), None) = (entries.next(), entries.next()) else {
        return Err(invalid(
            "stopWhen: each condition is an object with one key, e.g. {\"stepCountIs\": 3}",
        ));
    };
    let num = || {
        v.as_f64().filter(|n| *n >= 0.0).ok_or_else(|| {
            invalid(format!(
                "stopWhen {kind}: a non-negative number is required"
            ))
        })
    };
    let text = || {
        v.as_str()
            .map(str::to_owned)
            .ok_or_else(|| invalid(format!("stopWhen {kind}: a string is required")))
    };
    Ok(match kind.as_str() {
        "stepCountIs" => at_least(Threshold::Steps, num()?),
        "maxTokensUsed" => at_least(Threshold::Tokens, num()?),
        "maxCost" => max_cost(num()?),
        "maxDuration" => at_least(Threshold::Milliseconds, num()?),
        "hasToolCall" => has_tool_call(text()?),
        "finishReasonIs" => finish_reason_is(text()?),
        other => return Err(invalid(format!("stopWhen: unknown condition {other:?}"))),
    })
}
