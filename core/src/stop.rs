//! Stop conditions (docs/behaviour.md §3.2): checked after every step that did not pause.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::error::ToolError;
use crate::json::number_text;
use crate::state::{StepResult, Usage};

/// What a stop condition sees.
#[derive(Clone, Copy, Debug)]
pub struct StopState<'a> {
    /// What each step produced so far.
    pub steps: &'a [StepResult],
    /// Cumulative usage.
    pub usage: &'a Usage,
    /// Milliseconds since the run was created.
    pub elapsed_ms: u64,
    /// Steps completed (model responses).
    pub step_count: usize,
}

impl StopState<'_> {
    /// As camelCase JSON (for host predicates): `{steps, usage, elapsedMs, stepCount,
    /// toolCalls, finishReason}`, the last two of the latest step (the product's other
    /// SDKs hand these to custom conditions; `[]` and `null` before any step).
    pub fn to_value(&self) -> Value {
        let last = self.steps.last();
        json!({
            "steps": self.steps,
            "usage": self.usage,
            "elapsedMs": self.elapsed_ms,
            "stepCount": self.step_count,
            "toolCalls": last.map(|s| s.tool_calls.as_slice()).unwrap_or_default(),
            "finishReason": last.and_then(|s| s.finish_reason.as_deref()),
        })
    }
}

/// A stop condition: `Some(reason)` ends the run with status `stopped`.
#[async_trait]
pub trait StopCondition: Send + Sync {
    /// Checks the run after a step.
    async fn check(&self, state: &StopState<'_>) -> Result<Option<String>, ToolError>;
}

struct Builtin<F>(F);

#[async_trait]
impl<F> StopCondition for Builtin<F>
where
    F: Fn(&StopState<'_>) -> Option<String> + Send + Sync,
{
    async fn check(&self, state: &StopState<'_>) -> Result<Option<String>, ToolError> {
        Ok((self.0)(state))
    }
}

fn builtin<F>(f: F) -> Arc<dyn StopCondition>
where
    F: Fn(&StopState<'_>) -> Option<String> + Send + Sync + 'static,
{
    Arc::new(Builtin(f))
}

/// Fires when at least `n` steps completed: reason `step_count:<n>`.
pub fn step_count_is(n: usize) -> Arc<dyn StopCondition> {
    builtin(move |s| (s.step_count >= n).then(|| format!("step_count:{n}")))
}

/// Fires when total tokens ≥ `n`: reason `max_tokens:<n>`.
pub fn max_tokens_used(n: u64) -> Arc<dyn StopCondition> {
    builtin(move |s| (s.usage.total_tokens >= n).then(|| format!("max_tokens:{n}")))
}

/// Fires when cumulative cost ≥ `x`: reason `max_cost:<x>` (shortest number text).
pub fn max_cost(x: f64) -> Arc<dyn StopCondition> {
    builtin(move |s| (s.usage.cost >= x).then(|| format!("max_cost:{}", number_text(x))))
}

/// Fires when the run is at least `ms` milliseconds old: reason `max_duration:<ms>`.
pub fn max_duration(ms: u64) -> Arc<dyn StopCondition> {
    builtin(move |s| (s.elapsed_ms >= ms).then(|| format!("max_duration:{ms}")))
}

/// [`step_count_is`], [`max_tokens_used`] and [`max_duration`] with a threshold read from a
/// JSON number (the definition format, which the bindings of untyped numbers use): `kind`
/// names the condition. The count or time fires when it reaches the threshold as written,
/// a fraction included (`stepCountIs(1.5)` fires after 2 steps), and the reason writes the
/// threshold as a canonical JSON number (`max_tokens:20.5`).
pub(crate) fn at_least(kind: Threshold, n: f64) -> Arc<dyn StopCondition> {
    let reason = move || format!("{}:{}", kind.reason(), number_text(n));
    match kind {
        Threshold::Steps => builtin(move |s| (s.step_count as f64 >= n).then(reason)),
        Threshold::Tokens => builtin(move |s| (s.usage.total_tokens as f64 >= n).then(reason)),
        Threshold::Milliseconds => builtin(move |s| (s.elapsed_ms as f64 >= n).then(reason)),
    }
}

/// What a numeric threshold of [`at_least`] counts.
#[derive(Clone, Copy)]
pub(crate) enum Threshold {
    /// Completed steps (`stepCountIs`).
    Steps,
    /// Total tokens (`maxTokensUsed`).
    Tokens,
    /// Milliseconds since the run was created (`maxDuration`).
    Milliseconds,
}

impl Threshold {
    fn reason(self) -> &'static str {
        match self {
            Threshold::Steps => "step_count",
            Threshold::Tokens => "max_tokens",
            Threshold::Milliseconds => "max_duration",
        }
    }
}

/// Fires when any step called `name`: reason `tool_call:<name>`.
pub fn has_tool_call(name: impl Into<String>) -> Arc<dyn StopCondition> {
    let name = name.into();
    builtin(move |s| {
        s.steps
            .iter()
            .any(|step| step.tool_calls.iter().any(|c| *c.name == *name))
            .then(|| format!("tool_call:{name}"))
    })
}

/// Fires when any step finished with `reason`: reason `finish_reason:<reason>`.
pub fn finish_reason_is(reason: impl Into<String>) -> Arc<dyn StopCondition> {
    let reason = reason.into();
    builtin(move |s| {
        s.steps
            .iter()
            .any(|step| step.finish_reason.as_deref() == Some(reason.as_str()))
            .then(|| format!("finish_reason:{reason}"))
    })
}

/// A host predicate's answer: `true` → `custom_condition`, a string → that reason.
pub fn reason_from_answer(answer: &Value) -> Option<String> {
    match answer {
        Value::Bool(true) => Some("custom_condition".to_owned()),
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}
