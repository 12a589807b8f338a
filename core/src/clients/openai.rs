//! The OpenAI-compatible client: `POST {base}/chat/completions`, for any server speaking
//! chat completions (OpenAI, vLLM, Ollama, llama.cpp server, LM Studio).

use std::collections::BTreeMap;
use std::future::Future;

use reqwest::header::HeaderMap;
use serde_json::{json, Map, Value};

use super::http::{self, HttpSettings};
use super::wire::{self, wire_client_impls, WireFormat};
use crate::model::{
    DeltaSink, ModelFailure, ModelMessage, ModelRequest, ModelResponse, ModelToolCall,
};
use crate::state::{Message, Role, Usage};

/// A chat-completions endpoint: `POST {base}/chat/completions`.
///
/// Built with [`OpenAICompatibleClient::from_env`] (`OPENAI_BASE_URL`, default
/// `https://api.openai.com/v1`; `OPENAI_API_KEY`, optional since local servers need none)
/// or [`OpenAICompatibleClient::new`], then the builder methods. Instructions become the
/// first system message, tools the function format, the agent's output schema a
/// `response_format` JSON Schema; the run's `context` is never sent. Streams (SSE, with
/// `stream_options.include_usage`) when the run is streamed. HTTP errors become gateway
/// errors (`Gateway request failed: <status> <statusText> - <reason>`), retried by
/// `modelRetry` for 408, 409, 429 and 5xx, honouring `Retry-After`.
///
/// The API key is sent only in the `Authorization` header: `Debug` shows it redacted and
/// error messages never contain it.
#[derive(Clone)]
pub struct OpenAICompatibleClient {
    settings: HttpSettings,
    model: Option<String>,
}

impl OpenAICompatibleClient {
    /// The default base URL.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.openai.com/v1";

    /// A client for the default base URL, without a key or model.
    pub fn new() -> Self {
        Self {
            settings: HttpSettings::new(Self::DEFAULT_BASE_URL, None),
            model: None,
        }
    }

    /// A client configured from the environment: `OPENAI_BASE_URL` (default
    /// `https://api.openai.com/v1`) and `OPENAI_API_KEY` (optional). Empty variables count
    /// as unset.
    pub fn from_env() -> Self {
        let base = http::env_var("OPENAI_BASE_URL");
        Self {
            settings: HttpSettings::new(
                base.as_deref().unwrap_or(Self::DEFAULT_BASE_URL),
                http::env_var("OPENAI_API_KEY"),
            ),
            model: None,
        }
    }

    super::http::http_builder_methods!();

    /// The JSON body sent for `request` (`stream` adds `stream` and `stream_options`).
    pub fn request_body(&self, request: &ModelRequest<'_>, stream: bool) -> Value {
        let mut body = Map::new();
        if let Some(model) = request.model.clone().or_else(|| self.model.clone()) {
            body.insert("model".into(), Value::String(model));
        }
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if let Some(instructions) = request.instructions.as_deref().filter(|i| !i.is_empty()) {
            messages.push(json!({"role": "system", "content": instructions}));
        }
        messages.extend(request.messages.iter().map(chat_message));
        body.insert("messages".into(), Value::Array(messages));
        if !request.tools.is_empty() {
            let tools = request
                .tools
                .iter()
                .map(|t| {
                    let mut function = json!({
                        "name": t.id,
                        "description": http::tool_description(t),
                        "parameters": http::parameters(&t.parameters),
                    });
                    if t.strict {
                        function["strict"] = Value::Bool(true);
                    }
                    json!({"type": "function", "function": function})
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        wire::insert_controls(
            &mut body,
            request,
            |name| json!({"type": "function", "function": {"name": name}}),
            "max_tokens",
        );
        if let Some(schema) = request.output_schema {
            body.insert(
                "response_format".into(),
                json!({
                    "type": "json_schema",
                    "json_schema": {
                        "name": "output",
                        "schema": schema,
                        "strict": crate::strict_schema::is_strict_compatible(schema),
                    },
                }),
            );
        }
        if stream {
            body.insert("stream".into(), Value::Bool(true));
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        Value::Object(body)
    }
}

impl WireFormat for OpenAICompatibleClient {
    const PATH: &'static str = "chat/completions";

    fn settings(&self) -> &HttpSettings {
        &self.settings
    }

    fn body(&self, request: &ModelRequest<'_>, stream: bool) -> Value {
        self.request_body(request, stream)
    }

    fn parse(body: &Value, headers: &HeaderMap) -> Result<ModelResponse, String> {
        parse_response(body, headers)
    }

    fn read_stream(
        reader: http::SseReader,
        deltas: &dyn DeltaSink,
    ) -> impl Future<Output = Result<ModelResponse, ModelFailure>> + Send + '_ {
        read_stream(reader, deltas)
    }
}

wire_client_impls!(OpenAICompatibleClient);

/// One conversation message in chat-completions form.
fn chat_message(m: &Message) -> Value {
    match m.role {
        Role::System => json!({"role": "system", "content": m.content}),
        Role::User => json!({"role": "user", "content": m.content}),
        Role::Tool => json!({
            "role": "tool",
            "tool_call_id": m.tool_call_id.clone().unwrap_or_default(),
            "content": m.content,
        }),
        Role::Assistant => {
            let calls: Vec<Value> = m
                .tool_calls
                .iter()
                .flatten()
                .map(|c| {
                    json!({
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": http::input_text(&c.input)},
                    })
                })
                .collect();
            if calls.is_empty() {
                json!({"role": "assistant", "content": m.content})
            } else {
                let content = if m.content.is_empty() {
                    Value::Null
                } else {
                    Value::from(m.content.as_str())
                };
                json!({"role": "assistant", "content": content, "tool_calls": calls})
            }
        }
    }
}

/// Message text: a string, or an array of `{type: "text", text}` parts.
fn content_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// Reasoning text under the names servers use (`reasoning_content`, `reasoning`).
fn reasoning_text(v: &Value) -> Option<&str> {
    v.get("reasoning_content")
        .or_else(|| v.get("reasoning"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn parse_response(body: &Value, headers: &HeaderMap) -> Result<ModelResponse, String> {
    let Some(choice) = body
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
    else {
        if let Some(error) = body.get("error").filter(|e| !e.is_null()) {
            return Err(format!("the response carries an error: {error}"));
        }
        return Err("no `choices`".to_owned());
    };
    let message = choice
        .get("message")
        .ok_or_else(|| "`choices[0]` has no `message`".to_owned())?;
    let tool_calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| ModelToolCall {
            id: http::string(c.get("id")).unwrap_or_else(|| format!("call_{i}")),
            name: http::string(c.pointer("/function/name")).unwrap_or_else(|| "tool".into()),
            arguments: http::arguments_text(c.pointer("/function/arguments")),
        })
        .collect();
    Ok(ModelResponse {
        message: ModelMessage {
            content: content_text(message.get("content")),
            tool_calls,
            reasoning: reasoning_text(message).map(str::to_owned),
        },
        usage: http::usage(body.get("usage")),
        finish_reason: http::string(choice.get("finish_reason")),
        request_id: http::string(body.get("id")).or_else(|| http::header_request_id(headers)),
        model: http::string(body.get("model")),
        provider: http::string(body.get("provider")),
        cost: http::cost(body),
    })
}

/// A tool call assembled from stream fragments.
#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
    /// Whether `tool.input_started` was reported (then `id` and `name` are final).
    announced: bool,
}

impl PartialCall {
    /// Reports the call's start once its name is known (the wire gives the id and name in a
    /// call's first fragment only), with the fragments that came before it as one delta;
    /// `force` reports a call that never got a name, under the final call's defaults.
    /// From then on its id and name stay as reported.
    fn announce(&mut self, index: u64, deltas: &dyn DeltaSink, force: bool) {
        if self.announced || (self.name.is_empty() && !force) {
            return;
        }
        self.announced = true;
        if self.id.is_empty() {
            self.id = format!("call_{index}");
        }
        if self.name.is_empty() {
            self.name = "tool".to_owned();
        }
        deltas.tool_input_start(&self.id, &self.name);
        if !self.arguments.is_empty() {
            deltas.tool_input_delta(&self.id, &self.arguments);
        }
    }
}

/// Reads a chat-completions stream: content and reasoning deltas as they arrive, tool-call
/// fragments accumulated by `index`, usage from the final chunk.
async fn read_stream(
    mut reader: http::SseReader,
    deltas: &dyn DeltaSink,
) -> Result<ModelResponse, ModelFailure> {
    let headers = reader.headers().clone();
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut calls: BTreeMap<u64, PartialCall> = BTreeMap::new();
    let mut finish_reason = None;
    let mut usage = Usage::default();
    let mut cost = None;
    let mut id = None;
    let mut model = None;
    let mut provider = None;
    while let Some(event) = reader.next_event().await? {
        let data = event.data.trim();
        if data == "[DONE]" {
            break;
        }
        if data.is_empty() {
            continue;
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| http::malformed(format!("stream chunk is not JSON: {e}")))?;
        if chunk.get("error").is_some_and(|e| !e.is_null()) {
            return Err(http::stream_error(&chunk));
        }
        id = id.or_else(|| http::string(chunk.get("id")));
        model = model.or_else(|| http::string(chunk.get("model")));
        provider = provider.or_else(|| http::string(chunk.get("provider")));
        if chunk.get("usage").is_some_and(Value::is_object) {
            usage = http::usage(chunk.get("usage"));
        }
        cost = http::cost(&chunk).or(cost);
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            continue;
        };
        if let Some(reason) = http::string(choice.get("finish_reason")) {
            finish_reason = Some(reason);
        }
        let Some(delta) = choice.get("delta") else {
            continue;
        };
        if let Some(r) = reasoning_text(delta) {
            reasoning.push_str(r);
            deltas.reasoning_delta(r);
        }
        let piece = content_text(delta.get("content"));
        if !piece.is_empty() {
            text.push_str(&piece);
            deltas.text_delta(&piece);
        }
        for (n, fragment) in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let index = fragment
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(n as u64);
            let call = calls.entry(index).or_default();
            if let Some(id) = fragment.get("id").and_then(Value::as_str) {
                if call.id.is_empty() {
                    call.id = id.to_owned();
                }
            }
            if let Some(name) = fragment.pointer("/function/name").and_then(Value::as_str) {
                if call.name.is_empty() {
                    call.name = name.to_owned();
                }
            }
            let piece = match fragment.pointer("/function/arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(v @ Value::Object(_)) => http::arguments_text(Some(v)),
                _ => String::new(),
            };
            if call.announced {
                if !piece.is_empty() {
                    deltas.tool_input_delta(&call.id, &piece);
                }
                call.arguments.push_str(&piece);
            } else {
                call.arguments.push_str(&piece);
                call.announce(index, deltas, false);
            }
        }
    }
    for (index, call) in calls.iter_mut() {
        call.announce(*index, deltas, true);
    }
    let tool_calls = calls
        .into_iter()
        .map(|(index, c)| ModelToolCall {
            id: if c.id.is_empty() {
                format!("call_{index}")
            } else {
                c.id
            },
            name: if c.name.is_empty() {
                "tool".to_owned()
            } else {
                c.name
            },
            arguments: http::no_arguments_as_empty_object(c.arguments),
        })
        .collect();
    Ok(ModelResponse {
        message: ModelMessage {
            content: text,
            tool_calls,
            reasoning: (!reasoning.is_empty()).then_some(reasoning),
        },
        usage,
        finish_reason,
        request_id: id.or_else(|| http::header_request_id(&headers)),
        model,
        provider,
        cost,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_completion() {
        let body = json!({
            "id": "chatcmpl-1",
            "model": "llama",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [{"id": "c1", "type": "function",
                                "function": {"name": "add", "arguments": "{\"a\":1}"}}]}}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10,
                      "prompt_tokens_details": {"cached_tokens": 2}}
        });
        let r = parse_response(&body, &HeaderMap::new()).unwrap();
        assert_eq!(r.message.content, "");
        assert_eq!(r.message.tool_calls[0].name, "add");
        assert_eq!(r.usage.input_tokens, 7);
        assert_eq!(r.usage.cached_tokens, 2);
        assert_eq!(r.request_id.as_deref(), Some("chatcmpl-1"));
        assert!(parse_response(&json!({"object": "list"}), &HeaderMap::new()).is_err());
    }
}
