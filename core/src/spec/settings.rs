//! `toolExecution`, `modelRetry` and `lease`.

use serde::Deserialize;

use super::forms::{count, whole_number, CharCount};
use super::invalid;
use crate::store::LeaseConfig;
use crate::{AgentError, ModelRetry, OnError, ToolExecutionConfig, ToolRetry};

/// `{"toolConcurrency"?, "onError"?, "maxOutputChars"?, "maxToolCalls"?}`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ToolExecutionSpec {
    tool_concurrency: Option<f64>,
    on_error: Option<String>,
    max_output_chars: Option<CharCount>,
    max_tool_calls: Option<f64>,
}

impl ToolExecutionSpec {
    /// The core settings (an unknown `onError` policy is refused).
    pub(crate) fn build(self) -> Result<ToolExecutionConfig, AgentError> {
        Ok(ToolExecutionConfig {
            tool_concurrency: self.tool_concurrency.map(tool_concurrency),
            on_error: self
                .on_error
                .map(|p| OnError::parse(&p))
                .transpose()
                .map_err(invalid)?,
            max_output_chars: self.max_output_chars.map(|n| n.0),
            max_tool_calls: self
                .max_tool_calls
                .map(|n| at_least_one(n, "toolExecution.maxToolCalls"))
                .transpose()?
                .map(|n| n as usize),
        })
    }
}

/// A limit that is a whole number of `unit`, 0 or more (`maxSteps`: steps,
/// `toolExecution.maxOutputChars`: characters), else `definition_invalid` naming `what`
/// (`maxSteps: must be a whole number of steps, 0 or more, got -1`), as the definition
/// reader says it.
pub fn whole_count(n: f64, what: &str, unit: &str) -> Result<usize, AgentError> {
    whole_number(n, unit).map_err(|m| invalid(format!("{what}: {m}")))
}

/// `toolConcurrency` from a number, as the definition reader reads it: a negative one is 0
/// and a fraction is cut off (0, like 1, runs a turn's calls one at a time).
pub fn tool_concurrency(n: f64) -> usize {
    count(n)
}

/// A whole number ≥ 1 (a call budget), else `definition_invalid` naming `what`.
pub fn at_least_one(n: f64, what: &str) -> Result<u32, AgentError> {
    if n.fract() == 0.0 && (1.0..=f64::from(u32::MAX)).contains(&n) {
        Ok(n as u32)
    } else {
        Err(invalid(format!(
            "{what} must be a whole number of at least 1, got {n}"
        )))
    }
}

/// A tool's `retry` (docs/behaviour.md §15): `maxAttempts` a whole number ≥ 1, `backoffMs`
/// (default 0) a non-negative number of milliseconds; else `definition_invalid` naming the
/// key (`retry.maxAttempts`, `retry.backoffMs`).
pub fn tool_retry(max_attempts: f64, backoff_ms: Option<f64>) -> Result<ToolRetry, AgentError> {
    let attempts = at_least_one(max_attempts, "retry.maxAttempts")?;
    let backoff = match backoff_ms {
        None => 0,
        Some(ms) if ms.is_finite() && ms >= 0.0 => ms.ceil() as u64,
        Some(ms) => {
            return Err(invalid(format!(
                "retry.backoffMs must be a non-negative number of milliseconds, got {ms}"
            )))
        }
    };
    Ok(ToolRetry::new(attempts, backoff))
}

/// `{"maxRetries"?, "backoffMs"?}` (defaults: [`ModelRetry::default`]).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ModelRetrySpec {
    max_retries: Option<f64>,
    backoff_ms: Option<f64>,
}

impl ModelRetrySpec {
    /// The core retry policy.
    pub(crate) fn build(self) -> ModelRetry {
        ModelRetry::from_numbers(self.max_retries, self.backoff_ms)
    }
}

/// `{"durationMs"?: 30000, "renewEveryMs"?: 10000}` of store-backed runs.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct LeaseSpec {
    duration_ms: Option<f64>,
    renew_every_ms: Option<f64>,
}

impl LeaseSpec {
    /// The core lease; it needs `0 < renewEveryMs < durationMs`.
    pub(crate) fn build(self) -> Result<LeaseConfig, AgentError> {
        LeaseConfig::from_ms(
            self.duration_ms.unwrap_or(30_000.0),
            self.renew_every_ms.unwrap_or(10_000.0),
            ["durationMs", "renewEveryMs"],
        )
    }
}
