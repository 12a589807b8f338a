//! The model client contract (docs/behaviour.md §8): requests, responses and the [`ModelClient`] trait.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::controls::ToolChoice;
use crate::error::GatewayErrorInfo;
use crate::state::{Message, Usage};

/// A tool as offered to the model.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    /// The id the model calls it by.
    pub id: String,
    /// Its description.
    pub description: String,
    /// Its JSON Schema.
    pub parameters: Value,
    /// Whether the model is asked for schema-exact arguments (docs/behaviour.md §12); `parameters` is
    /// then strict-compatible. Absent from the JSON when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub strict: bool,
    /// Example argument objects, sent where the client has a place for them. Absent from
    /// the JSON when there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_examples: Option<Vec<Value>>,
}

/// One model request. Borrowed from the run, so building it never copies the history.
#[derive(Clone, Debug)]
pub struct ModelRequest<'a> {
    /// The agent id.
    pub agent_id: &'a str,
    /// Model id, if any.
    pub model: Option<String>,
    /// Instructions, sent once per request (never also as a system message).
    pub instructions: Option<String>,
    /// The conversation so far.
    pub messages: &'a [Message],
    /// Tools offered for this request.
    pub tools: Arc<Vec<ToolSpec>>,
    /// The application context.
    pub context: &'a Value,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Output token limit.
    pub max_output_tokens: Option<u64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Whether the run is streamed (clients may stream deltas).
    pub stream: bool,
    /// The agent's output schema, when it is a JSON Schema (for structured output).
    pub output_schema: Option<&'a Value>,
    /// Which tool the model must call (docs/behaviour.md §12); `None` = unset (the client's default).
    pub tool_choice: Option<ToolChoice>,
    /// Whether the model may request several calls in one turn; `None` = unset.
    pub parallel_tool_calls: Option<bool>,
}

impl ModelRequest<'_> {
    /// The request as canonical camelCase JSON (what host model clients receive).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("agentId".into(), Value::from(self.agent_id));
        m.insert("model".into(), opt(self.model.clone()));
        m.insert("instructions".into(), opt(self.instructions.clone()));
        m.insert(
            "messages".into(),
            serde_json::to_value(self.messages).expect("messages are JSON"),
        );
        m.insert(
            "tools".into(),
            serde_json::to_value(self.tools.as_slice()).expect("tool specs are JSON"),
        );
        m.insert("context".into(), self.context.clone());
        m.insert("temperature".into(), opt(self.temperature));
        m.insert("maxOutputTokens".into(), opt(self.max_output_tokens));
        m.insert("topP".into(), opt(self.top_p));
        m.insert("stream".into(), Value::Bool(self.stream));
        m.insert(
            "toolChoice".into(),
            opt(self.tool_choice.as_ref().map(ToolChoice::to_value)),
        );
        m.insert("parallelToolCalls".into(), opt(self.parallel_tool_calls));
        Value::Object(m)
    }
}

fn opt<T: Into<Value>>(v: Option<T>) -> Value {
    v.map(Into::into).unwrap_or(Value::Null)
}

/// A call requested by the model, with its raw JSON argument text.
///
/// Read from host JSON, a call carries `arguments` (the raw JSON text; any other JSON
/// value is written as JSON text) or, as the product's clients return it, `input` (the
/// already parsed value, written as JSON text).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "RawToolCall")]
pub struct ModelToolCall {
    /// Call id.
    pub id: String,
    /// Tool id.
    pub name: String,
    /// The raw JSON string the model sent (may be invalid JSON).
    #[serde(default)]
    pub arguments: String,
}

/// A tool call as a host hands it over: `arguments` text or value, or a parsed `input`.
#[derive(Deserialize)]
struct RawToolCall {
    id: String,
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default)]
    input: Option<Value>,
}

impl From<RawToolCall> for ModelToolCall {
    fn from(raw: RawToolCall) -> Self {
        Self {
            id: raw.id,
            name: raw.name,
            arguments: call_arguments(raw.arguments.as_ref(), raw.input.as_ref()),
        }
    }
}

/// A call's argument text from `arguments` (text kept as is, another value as JSON text)
/// or, when there is none, from a parsed `input` (always as JSON text). A call with
/// neither (both absent or `null`) has no arguments: `{}`; text, even empty, is what the
/// model wrote, and text that is not JSON is invalid input (docs/behaviour.md §2.7).
fn call_arguments(arguments: Option<&Value>, input: Option<&Value>) -> String {
    match (arguments, input) {
        (Some(Value::String(s)), _) => s.clone(),
        (Some(v), _) if !v.is_null() => value_text(v),
        (_, Some(v)) if !v.is_null() => value_text(v),
        _ => "{}".to_owned(),
    }
}

/// Arguments given as a value, as the text the argument parser reads back to that same
/// value. Not the canonical (JavaScript) form: it writes an integral float such as 5.4e16
/// as integer digits, which would read back as an integer.
fn value_text(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| crate::json::to_canonical_string(v))
}

/// The assistant message of a response.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelMessage {
    /// Text.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub content: String,
    /// Requested calls.
    #[serde(default, deserialize_with = "null_as_default")]
    pub tool_calls: Vec<ModelToolCall>,
    /// Reasoning text.
    #[serde(default)]
    pub reasoning: Option<String>,
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

fn null_as_default<'de, D: serde::Deserializer<'de>, T: Deserialize<'de> + Default>(
    d: D,
) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A model response.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelResponse {
    /// The assistant message.
    #[serde(default)]
    pub message: ModelMessage,
    /// Token usage (`totalTokens` defaults to input + output).
    #[serde(default)]
    pub usage: Usage,
    /// Why the model stopped (`tool_calls` when it requested calls, else `stop`).
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// The endpoint's request id.
    #[serde(default)]
    pub request_id: Option<String>,
    /// The model that answered.
    #[serde(default)]
    pub model: Option<String>,
    /// The provider that answered.
    #[serde(default)]
    pub provider: Option<String>,
    /// Cost of the request.
    #[serde(default)]
    pub cost: Option<f64>,
}

impl ModelResponse {
    /// A text-only response.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            message: ModelMessage {
                content: content.into(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// A response requesting calls: `(id, name, arguments JSON text)`.
    pub fn tool_calls<I, S1, S2, S3>(calls: I) -> Self
    where
        I: IntoIterator<Item = (S1, S2, S3)>,
        S1: Into<String>,
        S2: Into<String>,
        S3: Into<String>,
    {
        Self {
            message: ModelMessage {
                tool_calls: calls
                    .into_iter()
                    .map(|(id, name, arguments)| ModelToolCall {
                        id: id.into(),
                        name: name.into(),
                        arguments: arguments.into(),
                    })
                    .collect(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// Sets the usage (builder style).
    pub fn with_usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.usage.input_tokens = input_tokens;
        self.usage.output_tokens = output_tokens;
        self
    }

    /// Sets the cost (builder style).
    pub fn with_cost(mut self, cost: f64) -> Self {
        self.cost = Some(cost);
        self
    }

    /// Parses a response from host JSON (camelCase keys). The error names the problem.
    pub fn from_value(value: Value) -> Result<Self, String> {
        serde_json::from_value(value).map_err(|e| format!("invalid model response: {e}"))
    }

    /// Parses a scripted entry, the short form every binding accepts:
    /// `{text?, toolCalls?: [{id, name, arguments | input}], reasoning?, usage?, cost?, finishReason?,
    /// requestId?, model?, provider?}`, or `{fail: "message" | {message}}` for a failing
    /// attempt. A full response (`{message: {...}, ...}`) is accepted too. Arguments given
    /// as a JSON value instead of a string are written as JSON text that reads back to the
    /// same value (a float stays a float).
    pub fn from_script_entry(entry: &Value) -> Result<Result<Self, ModelError>, String> {
        let Some(obj) = entry.as_object() else {
            return Err(format!(
                "a scripted response must be an object, got {entry}"
            ));
        };
        if let Some(fail) = obj.get("fail") {
            let message = match fail {
                Value::String(s) => s.clone(),
                other => other
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("scripted model failure")
                    .to_owned(),
            };
            return Ok(Err(ModelError::new(message)));
        }
        if obj.contains_key("message") {
            return Self::from_value(entry.clone()).map(Ok);
        }
        let text = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_owned);
        let mut tool_calls = Vec::new();
        for (i, call) in obj
            .get("toolCalls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let field = |k: &str| call.get(k).and_then(Value::as_str).map(str::to_owned);
            tool_calls.push(ModelToolCall {
                id: field("id").unwrap_or_else(|| format!("call_{i}")),
                name: field("name").ok_or_else(|| format!("toolCalls[{i}] has no name"))?,
                arguments: call_arguments(call.get("arguments"), call.get("input")),
            });
        }
        let usage = match obj.get("usage") {
            Some(u) => serde_json::from_value(u.clone()).map_err(|e| format!("usage: {e}"))?,
            None => Usage::default(),
        };
        Ok(Ok(ModelResponse {
            message: ModelMessage {
                content: text("text").unwrap_or_default(),
                tool_calls,
                reasoning: text("reasoning"),
            },
            usage,
            finish_reason: text("finishReason"),
            request_id: text("requestId"),
            model: text("model"),
            provider: text("provider"),
            cost: obj.get("cost").and_then(Value::as_f64),
        }))
    }

    /// The step usage: `totalTokens` defaulted to input + output and `cost` from the
    /// response.
    pub(crate) fn normalized_usage(&self) -> Usage {
        let mut usage = self.usage;
        if usage.total_tokens == 0 {
            usage.total_tokens = usage.input_tokens.saturating_add(usage.output_tokens);
        }
        if let Some(cost) = self.cost {
            usage.cost = if cost.is_finite() { cost } else { 0.0 };
        }
        usage
    }

    pub(crate) fn finish_reason_or_default(&self) -> String {
        self.finish_reason.clone().unwrap_or_else(|| {
            if self.message.tool_calls.is_empty() {
                "stop".to_owned()
            } else {
                "tool_calls".to_owned()
            }
        })
    }

    /// The response as camelCase JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("responses are JSON")
    }
}

/// Why a model request failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ModelError {
    /// The message (for HTTP errors: `Gateway request failed: <status> <statusText> - <reason>`).
    pub message: String,
    /// HTTP details, when the failure was an HTTP error of a model endpoint.
    pub gateway: Option<GatewayErrorInfo>,
}

impl ModelError {
    /// A non-HTTP failure.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            gateway: None,
        }
    }

    /// Whether `modelRetry` may try again after this error (docs/behaviour.md §8): an HTTP error is
    /// retryable when its status is 408, 409, 429 or 5xx ([`is_retryable_status`]); every
    /// other failure (a host client raising, a scripted failure, a connection error) is.
    pub fn retryable(&self) -> bool {
        self.gateway
            .as_ref()
            .is_none_or(|g| is_retryable_status(g.status))
    }
}

/// Whether an HTTP status is worth retrying: 408, 409, 429 and every 5xx.
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429 | 500..=599)
}

/// How the run loop may retry a failed model request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryHint {
    /// Whether another attempt may succeed. `false` ends the attempts at once.
    pub retryable: bool,
    /// How long the endpoint asked to wait (`Retry-After`); replaces the computed backoff
    /// for the next wait (the loop caps it at 60 s).
    pub retry_after: Option<Duration>,
}

impl RetryHint {
    /// Retry after the usual backoff.
    pub const RETRY: RetryHint = RetryHint {
        retryable: true,
        retry_after: None,
    };
    /// Never retry.
    pub const NEVER: RetryHint = RetryHint {
        retryable: false,
        retry_after: None,
    };
}

/// A failed model attempt with its retry classification: what
/// [`ModelClient::attempt`] returns.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelFailure {
    /// The error.
    pub error: ModelError,
    /// Whether and when to retry.
    pub retry: RetryHint,
}

impl From<ModelError> for ModelFailure {
    /// Classifies the error with [`ModelError::retryable`], without a `Retry-After`.
    fn from(error: ModelError) -> Self {
        let retryable = error.retryable();
        Self {
            error,
            retry: RetryHint {
                retryable,
                retry_after: None,
            },
        }
    }
}

impl From<crate::error::ToolError> for ModelError {
    fn from(e: crate::error::ToolError) -> Self {
        Self::new(e.message)
    }
}

/// Receives streamed deltas while a streaming client produces a response.
pub trait DeltaSink: Send + Sync {
    /// A text delta (`response.output_text.delta`).
    fn text_delta(&self, delta: &str);
    /// A reasoning delta (`response.reasoning.delta`).
    fn reasoning_delta(&self, delta: &str);
    /// An output item streamed by the client (`response.item`). A client that streams any
    /// item of its successful attempt owns that step's items: the run then does not add
    /// the items it would derive from the response. Ignored by default.
    fn item(&self, item: &crate::state::Item) {
        let _ = item;
    }
    /// The model began writing the arguments of call `tool_call_id` to tool `tool_name`
    /// (`tool.input_started`, docs/behaviour.md §16). Ignored by default.
    fn tool_input_start(&self, tool_call_id: &str, tool_name: &str) {
        let _ = (tool_call_id, tool_name);
    }
    /// The next fragment of call `tool_call_id`'s arguments text (`tool.input_delta`); the
    /// fragments of one call, in order, make its final arguments. Ignored by default.
    fn tool_input_delta(&self, tool_call_id: &str, delta: &str) {
        let _ = (tool_call_id, delta);
    }
}

/// A [`DeltaSink`] that ignores every delta: a stream read for a run that is not streamed.
pub struct NoDeltas;

impl DeltaSink for NoDeltas {
    fn text_delta(&self, _delta: &str) {}
    fn reasoning_delta(&self, _delta: &str) {}
}

/// A model: turns a request into a response. Any host object with `generate(request)` is
/// adapted to this trait by its binding.
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// Produces one response. `cancel` is cancelled when the run is cancelled.
    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError>;

    /// Produces one response while reporting deltas (used when the run is streamed).
    /// Defaults to `generate`.
    async fn stream(
        &self,
        request: &ModelRequest<'_>,
        cancel: &CancellationToken,
        deltas: &dyn DeltaSink,
    ) -> Result<ModelResponse, ModelError> {
        let _ = deltas;
        self.generate(request, cancel).await
    }

    /// One attempt as the run loop makes it: `stream` when `deltas` is given, else
    /// `generate`, with the failure classified for `modelRetry`. The default classifies
    /// with [`ModelError::retryable`]; the HTTP clients override it to report
    /// `Retry-After` and to never retry a malformed body. A client wrapping another should
    /// forward this method too, or the inner client's `Retry-After` is lost.
    async fn attempt(
        &self,
        request: &ModelRequest<'_>,
        cancel: &CancellationToken,
        deltas: Option<&dyn DeltaSink>,
    ) -> Result<ModelResponse, ModelFailure> {
        match deltas {
            Some(sink) => self.stream(request, cancel, sink).await,
            None => self.generate(request, cancel).await,
        }
        .map_err(ModelFailure::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_host_call_reads_its_arguments_text_input_or_none() {
        let call = |v: Value| {
            serde_json::from_value::<ModelToolCall>(v)
                .unwrap()
                .arguments
        };
        assert_eq!(
            call(json!({"id": "c", "name": "t", "arguments": "{\"a\":1}"})),
            "{\"a\":1}"
        );
        assert_eq!(
            call(json!({"id": "c", "name": "t", "input": {"a": 1}})),
            "{\"a\":1}"
        );
        // No arguments at all: the empty object; text the model wrote stays as written.
        assert_eq!(call(json!({"id": "c", "name": "t"})), "{}");
        assert_eq!(
            call(json!({"id": "c", "name": "t", "arguments": null})),
            "{}"
        );
        assert_eq!(call(json!({"id": "c", "name": "t", "arguments": ""})), "");
    }
}
