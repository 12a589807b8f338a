//! The spans of one `run`/`continue` call: the run span and its model and tool spans.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use opentelemetry::trace::{
    Link, Span as _, SpanContext, SpanKind, Status, TraceContextExt, Tracer as _,
};
use opentelemetry::{Context, KeyValue, StringValue, Value as OtelValue};
use opentelemetry_sdk::trace::Span;
use serde_json::Value;

use super::attributes as a;
use super::export::{installed, Installed};
use super::traceparent;
use crate::error::ErrorCode;
use crate::json::to_canonical_string;
use crate::model::ModelResponse;
use crate::state::{Message, RunResult, RunStatus, ToolCall};
use crate::tool::Tool;

/// The trace contexts a run span may start from.
#[derive(Clone, Copy, Default)]
pub(crate) struct Parents<'a> {
    /// The `traceparent` stored in a paused state (the run span of the call that paused).
    pub(crate) stored: Option<&'a str>,
    /// The host's current span (the binding read it from the host's OpenTelemetry API) or
    /// the application's explicit `traceparent` option.
    pub(crate) host: Option<&'a str>,
}

/// What the run span starts with besides its parents.
pub(crate) struct RunStart<'a> {
    pub(crate) agent_id: &'a str,
    pub(crate) run_id: &'a str,
    pub(crate) resumed: bool,
    /// `run`, `continue` or `recover` when a run store holds the run.
    pub(crate) store_claim: Option<&'static str>,
}

/// The open spans of one call. Tool calls may run concurrently, hence the locks (held for
/// a map operation, never across an await).
pub(crate) struct RunTrace {
    installed: Arc<Installed>,
    run: Mutex<Span>,
    run_context: SpanContext,
    /// The open model request, and whether its name lacks the model (the client picks
    /// its default model: the response names it).
    chat: Mutex<Option<(Span, bool)>>,
    tools: Mutex<HashMap<Arc<str>, Span>>,
    decisions: Mutex<HashMap<String, &'static str>>,
}

fn text(v: impl Into<StringValue>) -> OtelValue {
    OtelValue::String(v.into())
}

fn pause_kind(kind: crate::state::PauseKind) -> String {
    match serde_json::to_value(kind) {
        Ok(Value::String(s)) => s,
        _ => String::new(),
    }
}

impl RunTrace {
    /// The run span of a call, or `None` when tracing is off (the only cost then).
    ///
    /// A continue's span is a child of the stored run span (same trace, and a trace view
    /// shows the continue under the call that paused) and also carries a link to it, the
    /// conventions' mark of a causal hop across processes; the host's current span then
    /// becomes a second link. Without a stored context the host's span is the parent.
    pub(crate) fn start(start: RunStart<'_>, parents: Parents<'_>) -> Option<Arc<RunTrace>> {
        let installed = installed()?;
        let stored = parents.stored.and_then(traceparent::parse);
        let host = parents.host.and_then(traceparent::parse);
        let mut links = Vec::new();
        let parent = match (stored, host) {
            (Some(stored), host) => {
                links.push(Link::with_context(stored.clone()));
                if let Some(host) = host {
                    links.push(Link::with_context(host));
                }
                Some(stored)
            }
            (None, host) => host,
        };
        let parent_cx = match parent {
            Some(p) => Context::new().with_remote_span_context(p),
            None => Context::new(),
        };
        let mut attributes = vec![
            KeyValue::new(a::OPERATION, "invoke_agent"),
            KeyValue::new(a::AGENT_ID, start.agent_id.to_owned()),
            KeyValue::new(a::AGENT_NAME, start.agent_id.to_owned()),
            KeyValue::new(a::CONVERSATION_ID, start.run_id.to_owned()),
            KeyValue::new(a::RUN_ID, start.run_id.to_owned()),
            KeyValue::new(a::RUN_RESUMED, start.resumed),
        ];
        if let Some(claim) = start.store_claim {
            attributes.push(KeyValue::new(a::STORE_CLAIM, claim));
        }
        let span = installed
            .tracer
            .span_builder(format!("invoke_agent {}", start.agent_id))
            .with_kind(SpanKind::Internal)
            .with_attributes(attributes)
            .with_links(links)
            .start_with_context(&installed.tracer, &parent_cx);
        let run_context = span.span_context().clone();
        Some(Arc::new(RunTrace {
            installed,
            run: Mutex::new(span),
            run_context,
            chat: Mutex::new(None),
            tools: Mutex::new(HashMap::new()),
            decisions: Mutex::new(HashMap::new()),
        }))
    }

    /// The run span's `traceparent`, stored in the state.
    pub(crate) fn traceparent(&self) -> String {
        traceparent::format(&self.run_context)
    }

    fn child(&self, name: String, kind: SpanKind, attributes: Vec<KeyValue>) -> Span {
        let parent = Context::new().with_remote_span_context(self.run_context.clone());
        let tracer = &self.installed.tracer;
        tracer
            .span_builder(name)
            .with_kind(kind)
            .with_attributes(attributes)
            .start_with_context(tracer, &parent)
    }

    fn capture(&self) -> bool {
        self.installed.capture_content
    }

    /// A model request starts (one span per attempt).
    pub(crate) fn chat_started(
        &self,
        model: Option<&str>,
        step: usize,
        attempt: u32,
        messages: &[Message],
    ) {
        let mut attributes = vec![
            KeyValue::new(a::OPERATION, "chat"),
            KeyValue::new(a::STEP_INDEX, step as i64),
            KeyValue::new(a::ATTEMPT, i64::from(attempt)),
        ];
        if let Some(m) = model {
            attributes.push(KeyValue::new(a::REQUEST_MODEL, m.to_owned()));
        }
        if self.capture() {
            let json = serde_json::to_value(messages).unwrap_or(Value::Null);
            attributes.push(KeyValue::new(a::INPUT_MESSAGES, to_canonical_string(&json)));
        }
        let name = match model {
            Some(m) => format!("chat {m}"),
            None => "chat".to_owned(),
        };
        let span = self.child(name, SpanKind::Client, attributes);
        let open = self
            .chat
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .replace((span, model.is_none()));
        if let Some((mut earlier, _)) = open {
            earlier.end();
        }
    }

    /// The model answered.
    pub(crate) fn chat_completed(&self, response: &ModelResponse) {
        let Some((mut span, unnamed)) = self.chat.lock().unwrap_or_else(|p| p.into_inner()).take()
        else {
            return;
        };
        if let (true, Some(m)) = (unnamed, &response.model) {
            span.update_name(format!("chat {m}"));
        }
        let usage = response.normalized_usage();
        span.set_attribute(KeyValue::new(a::INPUT_TOKENS, usage.input_tokens as i64));
        span.set_attribute(KeyValue::new(a::OUTPUT_TOKENS, usage.output_tokens as i64));
        span.set_attribute(KeyValue::new(
            a::FINISH_REASONS,
            OtelValue::Array(vec![StringValue::from(response.finish_reason_or_default())].into()),
        ));
        if let Some(id) = &response.request_id {
            span.set_attribute(KeyValue::new(a::RESPONSE_ID, id.clone()));
        }
        if let Some(m) = &response.model {
            span.set_attribute(KeyValue::new(a::RESPONSE_MODEL, m.clone()));
        }
        if let Some(p) = &response.provider {
            span.set_attribute(KeyValue::new(a::PROVIDER, p.clone()));
        }
        if self.capture() {
            let json = serde_json::to_value(&response.message).unwrap_or(Value::Null);
            span.set_attribute(KeyValue::new(
                a::OUTPUT_MESSAGES,
                to_canonical_string(&json),
            ));
        }
        span.end();
    }

    /// A model attempt failed (`retried`: another attempt follows).
    pub(crate) fn chat_failed(&self, code: ErrorCode, message: &str) {
        let Some((mut span, _)) = self.chat.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            return;
        };
        span.set_attribute(KeyValue::new(a::ERROR_TYPE, code.as_str()));
        span.set_status(Status::error(message.to_owned()));
        span.end();
    }

    /// A person's decision on a paused call (`approved`/`rejected`), recorded on its span.
    pub(crate) fn tool_decision(&self, call_id: &str, decision: &'static str) {
        self.decisions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(call_id.to_owned(), decision);
    }

    fn tool_span(&self, call: &ToolCall, tool: Option<&Tool>) -> Span {
        let mut attributes = vec![
            KeyValue::new(a::OPERATION, "execute_tool"),
            KeyValue::new(a::TOOL_NAME, call.name.clone()),
            KeyValue::new(a::TOOL_CALL_ID, call.id.clone()),
        ];
        let mcp = tool.and_then(|t| t.mcp.as_ref());
        attributes.push(KeyValue::new(
            a::TOOL_TYPE,
            if mcp.is_some() {
                "extension"
            } else {
                "function"
            },
        ));
        if let Some(origin) = mcp {
            attributes.push(KeyValue::new(a::MCP_METHOD, "tools/call"));
            attributes.push(KeyValue::new(a::MCP_SERVER, origin.server.clone()));
            attributes.push(KeyValue::new(a::MCP_TOOL, origin.tool.clone()));
            attributes.push(KeyValue::new(a::NETWORK_TRANSPORT, origin.transport));
        }
        if let Some(timeout) = tool.and_then(|t| t.timeout) {
            attributes.push(KeyValue::new(a::TIMEOUT_MS, timeout.as_millis() as i64));
        }
        if let Some(d) = self
            .decisions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&*call.id)
        {
            attributes.push(KeyValue::new(a::APPROVAL, d));
        }
        if self.capture() {
            attributes.push(KeyValue::new(
                a::TOOL_ARGUMENTS,
                to_canonical_string(&call.input),
            ));
        }
        self.child(
            format!("execute_tool {}", call.name),
            SpanKind::Internal,
            attributes,
        )
    }

    /// An executor starts.
    pub(crate) fn tool_started(&self, call: &ToolCall, tool: Option<&Tool>) {
        let span = self.tool_span(call, tool);
        self.tools
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(call.id.clone(), span);
    }

    /// A call ended: its result, or the error code it failed with. A call that never
    /// started (refused before its executor: unknown tool, invalid input, a rejection)
    /// gets a span of no duration.
    pub(crate) fn tool_ended(
        &self,
        call: &ToolCall,
        tool: Option<&Tool>,
        outcome: Result<&Value, (ErrorCode, &str)>,
    ) {
        let open = self
            .tools
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&*call.id);
        let mut span = open.unwrap_or_else(|| self.tool_span(call, tool));
        match outcome {
            Ok(value) => {
                if self.capture() {
                    span.set_attribute(KeyValue::new(a::TOOL_RESULT, to_canonical_string(value)));
                }
            }
            Err((code, message)) => {
                span.set_attribute(KeyValue::new(a::ERROR_TYPE, code.as_str()));
                if code == ErrorCode::ToolTimeout {
                    span.set_attribute(KeyValue::new(a::TIMED_OUT, true));
                }
                span.set_status(Status::error(message.to_owned()));
            }
        }
        span.end();
    }

    /// The call ends: status, pause, stop reason, error. Spans still open (a cancelled
    /// model request or tool) end as cancelled.
    /// Ends the span of one call served over MCP (docs/behaviour.md §19), with the error
    /// the client got, if any; a tool span still open (the call was cancelled) ends with it.
    pub(crate) fn served_call_ended(&self, error: Option<&str>) {
        let open: Vec<Span> = self
            .tools
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
            .map(|(_, s)| s)
            .collect();
        for mut span in open {
            span.set_attribute(KeyValue::new(a::ERROR_TYPE, ErrorCode::Cancelled.as_str()));
            span.end();
        }
        let mut span = self.run.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(message) = error {
            span.set_status(Status::error(message.to_owned()));
        }
        span.end();
    }

    pub(crate) fn run_ended(&self, state: &RunResult) {
        let run = &state.run;
        let cancelled = run.status == RunStatus::Cancelled;
        let leftover_error = if cancelled {
            ErrorCode::Cancelled
        } else {
            run.error.as_ref().map_or(ErrorCode::Cancelled, |e| e.code)
        };
        if let Some((mut chat, _)) = self.chat.lock().unwrap_or_else(|p| p.into_inner()).take() {
            chat.set_attribute(KeyValue::new(a::ERROR_TYPE, leftover_error.as_str()));
            chat.end();
        }
        let open: Vec<Span> = self
            .tools
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
            .map(|(_, s)| s)
            .collect();
        for mut span in open {
            span.set_attribute(KeyValue::new(a::ERROR_TYPE, leftover_error.as_str()));
            span.end();
        }
        let mut span = self.run.lock().unwrap_or_else(|p| p.into_inner());
        span.set_attribute(KeyValue::new(a::RUN_STATUS, text(run.status.as_str())));
        span.set_attribute(KeyValue::new(
            a::INPUT_TOKENS,
            run.usage.input_tokens as i64,
        ));
        span.set_attribute(KeyValue::new(
            a::OUTPUT_TOKENS,
            run.usage.output_tokens as i64,
        ));
        if let Some(pause) = &run.pause {
            span.set_attribute(KeyValue::new(a::PAUSE_KIND, text(pause_kind(pause.kind))));
            span.set_attribute(KeyValue::new(a::PAUSE_ID, pause.id.clone()));
            span.set_attribute(KeyValue::new(
                a::PENDING_CALLS,
                pause.pending_tool_calls.len() as i64,
            ));
        }
        if let Some(reason) = &run.stop_reason {
            span.set_attribute(KeyValue::new(a::STOP_REASON, reason.clone()));
        }
        if cancelled {
            span.set_attribute(KeyValue::new(a::CANCELLED, true));
        }
        if let Some(error) = &run.error {
            span.set_attribute(KeyValue::new(a::ERROR_TYPE, error.code.as_str()));
            span.set_status(Status::error(error.message.clone()));
        }
        span.end();
    }
}
