//! The Phaseo gateway client: `POST {base}/responses` with a Responses-style body
//! (docs/behaviour.md §8).

use std::future::Future;

use reqwest::header::HeaderMap;
use serde_json::{json, Map, Value};

use super::http::{self, HttpSettings};
use super::wire::{self, wire_client_impls, WireFormat};
use crate::model::{
    DeltaSink, ModelFailure, ModelMessage, ModelRequest, ModelResponse, ModelToolCall,
};
use crate::state::{Message, Role};

/// The Phaseo gateway (a Responses-style API): `POST {base}/responses`.
///
/// Built with [`GatewayClient::from_env`] (key from `PHASEO_API_KEY`, base URL from
/// `PHASEO_BASE_URL`, default `https://api.phaseo.app/v1`) or [`GatewayClient::new`], then
/// the builder methods. Messages become `input` items (`message`, `function_call`,
/// `function_call_output`), tools flat `{type: "function", name, description, parameters}`,
/// the agent's output schema the `text.format` JSON Schema. The run's `context` is never
/// sent. Streams (SSE) when the run is streamed. HTTP errors become gateway errors
/// (`Gateway request failed: <status> <statusText> - <reason>`), retried by `modelRetry`
/// for 408, 409, 429 and 5xx, honouring `Retry-After`.
///
/// The API key is sent only in the `Authorization` header: `Debug` shows it redacted and
/// error messages never contain it.
#[derive(Clone)]
pub struct GatewayClient {
    settings: HttpSettings,
    model: Option<String>,
    body_defaults: Map<String, Value>,
}

impl GatewayClient {
    /// The default base URL.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.phaseo.app/v1";

    /// A client for the default base URL, without a key or model.
    pub fn new() -> Self {
        Self {
            settings: HttpSettings::new(Self::DEFAULT_BASE_URL, None),
            model: None,
            body_defaults: Map::new(),
        }
    }

    /// A client configured from the environment: `PHASEO_API_KEY` and `PHASEO_BASE_URL`
    /// (default `https://api.phaseo.app/v1`). Empty variables count as unset.
    pub fn from_env() -> Self {
        let base = http::env_var("PHASEO_BASE_URL");
        Self {
            settings: HttpSettings::new(
                base.as_deref().unwrap_or(Self::DEFAULT_BASE_URL),
                http::env_var("PHASEO_API_KEY"),
            ),
            model: None,
            body_defaults: Map::new(),
        }
    }

    super::http::http_builder_methods!();

    /// Adds body fields sent with every request unless the request sets them itself: the
    /// product's client options (`tool_choice`, `parallel_tool_calls`, `provider`,
    /// `reasoning`, `metadata`, `user`, `response_format`, …) and its `request_options`
    /// (any other Responses body field). What the agent and run set (model, input,
    /// instructions, tools, temperature, …) wins; an object both set (`metadata`, `text`)
    /// is merged key by key, the request's keys winning. Later calls add to earlier ones.
    pub fn body_defaults(mut self, fields: Map<String, Value>) -> Self {
        self.body_defaults.extend(fields);
        self
    }

    /// The JSON body sent for `request` (`stream` adds `"stream": true`).
    pub fn request_body(&self, request: &ModelRequest<'_>, stream: bool) -> Value {
        let mut body = Map::new();
        if let Some(model) = request.model.clone().or_else(|| self.model.clone()) {
            body.insert("model".into(), Value::String(model));
        }
        body.insert("input".into(), Value::Array(input_items(request.messages)));
        if let Some(instructions) = request.instructions.as_deref().filter(|i| !i.is_empty()) {
            body.insert("instructions".into(), Value::from(instructions));
        }
        if !request.tools.is_empty() {
            let tools = request
                .tools
                .iter()
                .map(|t| {
                    // Always explicit: a Responses endpoint treats an absent `strict` as
                    // true, which would reject the many schemas that are not strict.
                    json!({
                        "type": "function",
                        "name": t.id,
                        "description": http::tool_description(t),
                        "parameters": http::parameters(&t.parameters),
                        "strict": t.strict,
                    })
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        wire::insert_controls(
            &mut body,
            request,
            |name| json!({"type": "function", "name": name}),
            "max_output_tokens",
        );
        if let Some(schema) = request.output_schema {
            body.insert(
                "text".into(),
                json!({"format": {
                    "type": "json_schema",
                    "name": "output",
                    "schema": schema,
                    "strict": crate::strict_schema::is_strict_compatible(schema),
                }}),
            );
        }
        body.insert(
            "metadata".into(),
            json!({ "phaseo_agent_id": request.agent_id }),
        );
        if stream {
            body.insert("stream".into(), Value::Bool(true));
        }
        for (key, default) in &self.body_defaults {
            match (body.get_mut(key), default) {
                (None, _) => {
                    body.insert(key.clone(), default.clone());
                }
                (Some(Value::Object(own)), Value::Object(fill)) => {
                    for (k, v) in fill {
                        own.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
                (Some(_), _) => {}
            }
        }
        Value::Object(body)
    }
}

impl WireFormat for GatewayClient {
    const PATH: &'static str = "responses";
    const HEADERS: &'static [(&'static str, &'static str)] = &[
        ("x-phaseo-client", "phaseo-agent-rust"),
        ("x-phaseo-client-version", env!("CARGO_PKG_VERSION")),
    ];

    fn settings(&self) -> &HttpSettings {
        &self.settings
    }

    fn precheck(&self) -> Option<String> {
        self.settings.api_key.is_none().then(|| {
            "PHASEO_API_KEY is required: set it in the environment or give the gateway \
             client an API key"
                .to_owned()
        })
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

wire_client_impls!(GatewayClient);

/// The conversation as Responses `input` items.
fn input_items(messages: &[Message]) -> Vec<Value> {
    let mut items = Vec::with_capacity(messages.len());
    for m in messages {
        match m.role {
            Role::Tool => items.push(json!({
                "type": "function_call_output",
                "call_id": m.tool_call_id.clone().unwrap_or_default(),
                "output": m.content,
            })),
            Role::User => items.push(json!({
                "type": "message",
                "role": "user",
                "content": m.content,
            })),
            Role::System | Role::Assistant => {
                let role = if m.role == Role::System {
                    "system"
                } else {
                    "assistant"
                };
                if !m.content.is_empty() {
                    items.push(json!({
                        "type": "message",
                        "role": role,
                        "content": m.content,
                    }));
                }
                for call in m.tool_calls.iter().flatten() {
                    items.push(json!({
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": http::input_text(&call.input),
                    }));
                }
            }
        }
    }
    items
}

/// Parses a Responses body (also the `response` of a `response.completed` event).
fn parse_response(body: &Value, headers: &HeaderMap) -> Result<ModelResponse, String> {
    let items = body
        .get("output_items")
        .or_else(|| body.get("output"))
        .and_then(Value::as_array);
    let top_text = body.get("output_text").and_then(Value::as_str);
    if items.is_none() && top_text.is_none() {
        if let Some(reason) = body.get("error").filter(|e| !e.is_null()) {
            return Err(format!("the response carries an error: {reason}"));
        }
        return Err("no `output` array and no `output_text`".to_owned());
    }
    let items = items.map(Vec::as_slice).unwrap_or_default();
    let mut parts = String::new();
    let mut reasoning = String::new();
    let mut tool_calls = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if part.get("type").and_then(Value::as_str) == Some("output_text") {
                        parts.push_str(part.get("text").and_then(Value::as_str).unwrap_or(""));
                    }
                }
                if let Some(text) = item.get("content").and_then(Value::as_str) {
                    parts.push_str(text);
                }
            }
            Some("function_call") => tool_calls.push(ModelToolCall {
                id: http::string(item.get("call_id"))
                    .or_else(|| http::string(item.get("id")))
                    .unwrap_or_else(|| format!("tool_call_{i}")),
                name: http::string(item.get("name")).unwrap_or_else(|| "tool".to_owned()),
                arguments: http::arguments_text(item.get("arguments")),
            }),
            Some("reasoning") => {
                for key in ["summary", "content"] {
                    for part in item
                        .get(key)
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        if let Some(text) = part.get("text").and_then(Value::as_str) {
                            if !reasoning.is_empty() {
                                reasoning.push('\n');
                            }
                            reasoning.push_str(text);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let content = if parts.is_empty() {
        top_text.unwrap_or_default().to_owned()
    } else {
        parts
    };
    let finish_reason = if !tool_calls.is_empty() {
        "tool_calls".to_owned()
    } else if let Some(reason) =
        http::string(body.get("finish_reason")).or_else(|| http::string(body.get("stop_reason")))
    {
        reason
    } else {
        match body.get("status").and_then(Value::as_str) {
            None | Some("completed") => "stop".to_owned(),
            Some("incomplete") => {
                match body
                    .pointer("/incomplete_details/reason")
                    .and_then(Value::as_str)
                {
                    Some("max_output_tokens") | None => "length".to_owned(),
                    Some(other) => other.to_owned(),
                }
            }
            Some(other) => other.to_owned(),
        }
    };
    Ok(ModelResponse {
        message: ModelMessage {
            content,
            tool_calls,
            reasoning: (!reasoning.is_empty()).then_some(reasoning),
        },
        usage: http::usage(body.get("usage")),
        finish_reason: Some(finish_reason),
        request_id: http::header_request_id(headers)
            .or_else(|| http::string(body.get("request_id")))
            .or_else(|| http::string(body.get("id"))),
        model: http::string(body.get("model")),
        provider: http::string(body.get("provider"))
            .or_else(|| http::string(body.pointer("/meta/provider"))),
        cost: http::cost(body),
    })
}

/// Reads a Responses event stream: text and reasoning deltas as they arrive, the final
/// response from `response.completed` (or, when the stream ends without it, assembled
/// from the deltas and finished output items).
async fn read_stream(
    mut reader: http::SseReader,
    deltas: &dyn DeltaSink,
) -> Result<ModelResponse, ModelFailure> {
    let headers = reader.headers().clone();
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut done_items: Vec<Value> = Vec::new();
    let mut last: Option<Value> = None;
    let mut calls = StreamedCalls::default();
    while let Some(event) = reader.next_event().await? {
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" {
            if data == "[DONE]" {
                break;
            }
            continue;
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| http::malformed(format!("stream event is not JSON: {e}")))?;
        let kind = chunk
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(event.event.as_str())
            .to_owned();
        match kind.as_str() {
            "response.completed" | "response.incomplete" | "response.done" => {
                let response = chunk.get("response").unwrap_or(&chunk);
                last = Some(response.clone());
                break;
            }
            "response.failed" | "error" => return Err(http::stream_error(&chunk)),
            "response.output_item.added" => calls.added(&chunk, deltas),
            "response.function_call_arguments.delta" => calls.delta(&chunk, deltas),
            "response.output_item.done" => {
                if let Some(item) = chunk.get("item") {
                    done_items.push(item.clone());
                }
            }
            k if k.ends_with(".delta") => {
                let Some(delta) = chunk.get("delta").and_then(Value::as_str) else {
                    continue;
                };
                if k.contains("reasoning") {
                    reasoning.push_str(delta);
                    deltas.reasoning_delta(delta);
                } else if k.contains("output_text") || k == "response.text.delta" {
                    text.push_str(delta);
                    deltas.text_delta(delta);
                }
            }
            _ => {}
        }
    }
    let body = match last {
        Some(body) => body,
        None => {
            // The stream ended without `response.completed`: assemble from what arrived.
            let mut output = done_items;
            if !text.is_empty()
                && !output
                    .iter()
                    .any(|i| i.get("type").and_then(Value::as_str) == Some("message"))
            {
                output.push(json!({
                    "type": "message",
                    "content": [{"type": "output_text", "text": text}],
                }));
            }
            if !reasoning.is_empty()
                && !output
                    .iter()
                    .any(|i| i.get("type").and_then(Value::as_str) == Some("reasoning"))
            {
                output.push(json!({"type": "reasoning", "summary": [{"text": reasoning}]}));
            }
            json!({ "output": output })
        }
    };
    let mut response = parse_response(&body, &headers).map_err(http::malformed)?;
    if response.message.content.is_empty() && !text.is_empty() {
        response.message.content = text;
    }
    if response.message.reasoning.is_none() && !reasoning.is_empty() {
        response.message.reasoning = Some(reasoning);
    }
    Ok(response)
}

/// The function calls of a Responses stream, for reporting their arguments as they arrive:
/// `response.output_item.added` names a call (its `call_id` and `name`), then each
/// `response.function_call_arguments.delta` refers to it by `item_id` or `output_index`.
#[derive(Default)]
struct StreamedCalls(Vec<StreamedCall>);

struct StreamedCall {
    item_id: Option<String>,
    output_index: Option<u64>,
    call_id: String,
}

impl StreamedCalls {
    /// A new output item: a function call is reported as started.
    fn added(&mut self, chunk: &Value, deltas: &dyn DeltaSink) {
        let Some(item) = chunk
            .get("item")
            .filter(|i| i.get("type").and_then(Value::as_str) == Some("function_call"))
        else {
            return;
        };
        let output_index = chunk.get("output_index").and_then(Value::as_u64);
        let call = self.start(http::string(item.get("id")), output_index, item, deltas);
        // A call added with arguments already written reports them as its first delta.
        if let Some(Value::String(arguments)) = item.get("arguments") {
            if !arguments.is_empty() {
                deltas.tool_input_delta(&call, arguments);
            }
        }
    }

    /// A fragment of a call's arguments.
    fn delta(&mut self, chunk: &Value, deltas: &dyn DeltaSink) {
        let Some(delta) = chunk.get("delta").and_then(Value::as_str) else {
            return;
        };
        let item_id = http::string(chunk.get("item_id"));
        let output_index = chunk.get("output_index").and_then(Value::as_u64);
        let known = self.0.iter().find(|c| match (&item_id, &c.item_id) {
            (Some(a), Some(b)) => a == b,
            _ => output_index.is_some() && c.output_index == output_index,
        });
        let call = match known {
            Some(c) => c.call_id.clone(),
            None => self.start(item_id, output_index, &Value::Null, deltas),
        };
        deltas.tool_input_delta(&call, delta);
    }

    /// Records a call and reports its start; its id is what the final response will give
    /// it (`call_id`, else the item id, else `tool_call_<output index>`).
    fn start(
        &mut self,
        item_id: Option<String>,
        output_index: Option<u64>,
        item: &Value,
        deltas: &dyn DeltaSink,
    ) -> String {
        let call_id = http::string(item.get("call_id"))
            .or_else(|| item_id.clone())
            .unwrap_or_else(|| format!("tool_call_{}", output_index.unwrap_or(0)));
        let name = http::string(item.get("name")).unwrap_or_else(|| "tool".to_owned());
        deltas.tool_input_start(&call_id, &name);
        self.0.push(StreamedCall {
            item_id,
            output_index,
            call_id: call_id.clone(),
        });
        call_id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_text_calls_usage_cost() {
        let body = json!({
            "id": "resp_1",
            "model": "m",
            "provider": "p",
            "status": "completed",
            "output": [
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]},
                {"type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Hi "}, {"type": "output_text", "text": "there"}]},
                {"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{\"a\":1}"}
            ],
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                      "input_tokens_details": {"cached_tokens": 4}},
            "meta": {"cost": 0.25}
        });
        let r = parse_response(&body, &HeaderMap::new()).unwrap();
        assert_eq!(r.message.content, "Hi there");
        assert_eq!(r.message.reasoning.as_deref(), Some("think"));
        assert_eq!(r.message.tool_calls[0].arguments, "{\"a\":1}");
        assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(r.usage.cached_tokens, 4);
        assert_eq!(r.usage.total_tokens, 15);
        assert_eq!(r.cost, Some(0.25));
        assert_eq!(r.request_id.as_deref(), Some("resp_1"));
        let plain = parse_response(
            &json!({"output_text": "x", "status": "incomplete"}),
            &HeaderMap::new(),
        )
        .unwrap();
        assert_eq!(plain.message.content, "x");
        assert_eq!(plain.finish_reason.as_deref(), Some("length"));
        assert!(parse_response(&json!({"foo": 1}), &HeaderMap::new()).is_err());
    }
}
