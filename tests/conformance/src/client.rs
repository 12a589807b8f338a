//! The case's scripted model, as a host model client that records every request.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use phaseo_agent::{
    async_trait, json, CancellationToken, ModelClient, ModelError, ModelRequest, ModelResponse,
    Role, Value,
};

pub struct CaseClient {
    entries: Vec<Value>,
    pub cursor: AtomicUsize,
    pub requests: Mutex<Vec<Value>>,
}

impl CaseClient {
    pub fn new(entries: Vec<Value>, cursor: usize) -> Self {
        Self {
            entries,
            cursor: AtomicUsize::new(cursor),
            requests: Mutex::new(Vec::new()),
        }
    }

    fn record(&self, request: &ModelRequest<'_>) {
        let messages = request.messages;
        let tail_start = messages
            .iter()
            .rposition(|m| m.role != Role::Tool)
            .map(|i| i + 1)
            .unwrap_or(0);
        let tool_messages: Vec<Value> = messages[tail_start..]
            .iter()
            .map(|m| json!({"toolCallId": m.tool_call_id, "content": m.content, "isError": m.is_error}))
            .collect();
        let last_user = messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .map(|m| Value::String(m.content.clone()))
            .unwrap_or(Value::Null);
        // The last assistant message with tool calls, as the model will read it.
        let tool_calls: Vec<Value> = messages
            .iter()
            .rev()
            .find_map(|m| m.tool_calls.as_ref().filter(|c| !c.is_empty()))
            .into_iter()
            .flatten()
            .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.input}))
            .collect();
        let tools: Vec<&str> = request.tools.iter().map(|t| t.id.as_str()).collect();
        let tool_specs: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"id": t.id, "strict": t.strict, "inputExamples": t.input_examples}))
            .collect();
        self.requests.lock().unwrap().push(json!({
            "toolMessages": tool_messages,
            "tools": tools,
            "context": request.context,
            "temperature": request.temperature,
            "model": request.model,
            "instructions": request.instructions,
            "lastUserMessage": last_user,
            "maxOutputTokens": request.max_output_tokens,
            "topP": request.top_p,
            "toolChoice": request.tool_choice.as_ref().map(|c| c.to_value()),
            "parallelToolCalls": request.parallel_tool_calls,
            "toolSpecs": tool_specs,
            "toolCalls": tool_calls,
        }));
    }
}

fn response(entry: &Value) -> Result<ModelResponse, ModelError> {
    ModelResponse::from_script_entry(entry)
        .unwrap_or_else(|e| Err(ModelError::new(format!("case error: {e}"))))
}

#[async_trait]
impl ModelClient for CaseClient {
    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        _cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        self.record(request);
        let i = self.cursor.fetch_add(1, Ordering::SeqCst);
        match self.entries.get(i) {
            Some(entry) => response(entry),
            None => Err(ModelError::new(format!(
                "case error: the scripted model ran out of responses ({} scripted)",
                self.entries.len()
            ))),
        }
    }
}
