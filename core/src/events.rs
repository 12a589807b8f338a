//! Run events (docs/behaviour.md §5) and the listener trait.

use std::sync::Arc;
use std::time::SystemTime;

use serde::ser::SerializeMap;
use serde::Serialize;
use serde_json::Value;

use crate::json::to_canonical_string;
use crate::state::{Item, Pause, RunStatus, Usage};

/// Event type names, exactly as in docs/behaviour.md §5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventType {
    /// `run.started`
    RunStarted,
    /// `run.resumed`
    RunResumed,
    /// `step.started`
    StepStarted,
    /// `model.requested`
    ModelRequested,
    /// `model.completed`
    ModelCompleted,
    /// `model.failed`
    ModelFailed,
    /// `tool.input_started`: the model began writing a call's arguments (streamed runs).
    ToolInputStarted,
    /// `tool.input_delta`: a fragment of a call's arguments text as the model writes it.
    ToolInputDelta,
    /// `tool.started`
    ToolStarted,
    /// `tool.preliminary_result`
    ToolPreliminaryResult,
    /// `tool.completed`
    ToolCompleted,
    /// `tool.failed`
    ToolFailed,
    /// `tool.retrying`
    ToolRetrying,
    /// `step.completed`
    StepCompleted,
    /// `step.failed`
    StepFailed,
    /// `checkpoint.saved`
    CheckpointSaved,
    /// `run.waiting_for_human`
    RunWaitingForHuman,
    /// `run.completed`
    RunCompleted,
    /// `run.stopped`
    RunStopped,
    /// `run.failed`
    RunFailed,
    /// `run.cancelled`
    RunCancelled,
    /// `response.output_text.delta`
    OutputTextDelta,
    /// `response.reasoning.delta`
    ReasoningDelta,
    /// `response.item`
    ResponseItem,
}

impl EventType {
    /// The dotted type name.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::RunStarted => "run.started",
            EventType::RunResumed => "run.resumed",
            EventType::StepStarted => "step.started",
            EventType::ModelRequested => "model.requested",
            EventType::ModelCompleted => "model.completed",
            EventType::ModelFailed => "model.failed",
            EventType::ToolInputStarted => "tool.input_started",
            EventType::ToolInputDelta => "tool.input_delta",
            EventType::ToolStarted => "tool.started",
            EventType::ToolPreliminaryResult => "tool.preliminary_result",
            EventType::ToolCompleted => "tool.completed",
            EventType::ToolFailed => "tool.failed",
            EventType::ToolRetrying => "tool.retrying",
            EventType::StepCompleted => "step.completed",
            EventType::StepFailed => "step.failed",
            EventType::CheckpointSaved => "checkpoint.saved",
            EventType::RunWaitingForHuman => "run.waiting_for_human",
            EventType::RunCompleted => "run.completed",
            EventType::RunStopped => "run.stopped",
            EventType::RunFailed => "run.failed",
            EventType::RunCancelled => "run.cancelled",
            EventType::OutputTextDelta => "response.output_text.delta",
            EventType::ReasoningDelta => "response.reasoning.delta",
            EventType::ResponseItem => "response.item",
        }
    }

    /// Whether this is a `tool.*` event.
    pub fn is_tool_event(self) -> bool {
        matches!(
            self,
            EventType::ToolInputStarted
                | EventType::ToolInputDelta
                | EventType::ToolStarted
                | EventType::ToolPreliminaryResult
                | EventType::ToolCompleted
                | EventType::ToolFailed
                | EventType::ToolRetrying
        )
    }
}

/// The type-specific fields of an event.
#[derive(Clone, Debug, PartialEq)]
pub enum EventData {
    /// No extra fields.
    None,
    /// `run.resumed`
    Resumed {
        /// Status before the continue.
        previous_status: RunStatus,
    },
    /// `model.requested`
    ModelRequested {
        /// 1-based attempt.
        attempt: u32,
        /// Model id.
        model: Option<String>,
    },
    /// `model.completed`
    ModelCompleted {
        /// 1-based attempt.
        attempt: u32,
        /// Model id.
        model: Option<String>,
        /// The step usage.
        usage: Usage,
        /// Endpoint request id.
        request_id: Option<String>,
    },
    /// `model.failed`
    ModelFailed {
        /// 1-based attempt.
        attempt: u32,
        /// The error message.
        error: String,
    },
    /// `tool.input_started` (docs/behaviour.md §16)
    ToolInputStarted {
        /// Call id.
        tool_call_id: String,
        /// Tool id.
        tool_name: String,
    },
    /// `tool.input_delta` (docs/behaviour.md §16)
    ToolInputDelta {
        /// Call id.
        tool_call_id: String,
        /// The next fragment of the call's arguments text.
        delta: String,
    },
    /// `tool.started`
    ToolStarted {
        /// Call id.
        tool_call_id: String,
        /// Tool id.
        tool_name: String,
        /// The call runs with an input a person edited on approval (`inputEdited`, written
        /// only when true).
        input_edited: bool,
    },
    /// `tool.preliminary_result`
    ToolPreliminary {
        /// Call id.
        tool_call_id: String,
        /// Tool id.
        tool_name: String,
        /// The progress value.
        result: Value,
    },
    /// `tool.completed`
    ToolCompleted {
        /// Call id.
        tool_call_id: String,
        /// Tool id.
        tool_name: String,
        /// The result.
        output: Value,
        /// A person answered in the tool's place (`respondedByHuman`, written only when
        /// true).
        responded_by_human: bool,
    },
    /// `tool.failed`
    ToolFailed {
        /// Call id.
        tool_call_id: String,
        /// Tool id.
        tool_name: String,
        /// The error message (or rejection reason).
        error: String,
    },
    /// `tool.retrying`: an attempt failed and attempt `attempt` is about to start.
    ToolRetrying {
        /// Call id.
        tool_call_id: String,
        /// Tool id.
        tool_name: String,
        /// The number of the attempt about to start (2 for the first retry).
        attempt: u32,
        /// The failed attempt's error message.
        error: String,
    },
    /// `step.failed`
    StepFailed {
        /// The error message.
        error: String,
    },
    /// `run.waiting_for_human`
    Waiting {
        /// The pause.
        pause: Box<Pause>,
    },
    /// `run.completed`
    Completed {
        /// The output.
        output: Value,
    },
    /// `run.stopped`
    Stopped {
        /// The stop reason.
        stop_reason: String,
        /// The output.
        output: Value,
    },
    /// `run.failed` / `run.cancelled`
    Error {
        /// The error message.
        error: String,
        /// The error code.
        code: &'static str,
    },
    /// `response.output_text.delta` / `response.reasoning.delta`
    Delta {
        /// The text delta.
        delta: String,
    },
    /// `response.item`
    Item {
        /// The item.
        item: Item,
    },
}

/// One run event: `{type, runId, agentId, timestamp, status?, stepIndex?, ...}`.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentEvent {
    /// The event type.
    pub event_type: EventType,
    /// The run id.
    pub run_id: Arc<str>,
    /// The agent id.
    pub agent_id: Arc<str>,
    /// ISO-8601 UTC time with milliseconds.
    pub timestamp: String,
    /// Run status at emission.
    pub status: Option<RunStatus>,
    /// Step index, for step-scoped events.
    pub step_index: Option<usize>,
    /// Type-specific fields.
    pub data: EventData,
    /// For an event of a nested agent's run (docs/behaviour.md §18): the id of the outer
    /// call that runs it (`<outerCallId>/<nestedCallId>` for deeper runs).
    pub parent_tool_call_id: Option<Arc<str>>,
}

impl AgentEvent {
    /// The dotted type name.
    pub fn type_name(&self) -> &'static str {
        self.event_type.as_str()
    }

    /// The event as canonical camelCase JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("events are JSON")
    }

    /// The event as canonical JSON text.
    pub fn to_json(&self) -> String {
        to_canonical_string(self)
    }
}

impl Serialize for AgentEvent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_map(None)?;
        m.serialize_entry("type", self.event_type.as_str())?;
        m.serialize_entry("runId", &*self.run_id)?;
        m.serialize_entry("agentId", &*self.agent_id)?;
        m.serialize_entry("timestamp", &self.timestamp)?;
        if let Some(status) = self.status {
            m.serialize_entry("status", &status)?;
        }
        if let Some(i) = self.step_index {
            m.serialize_entry("stepIndex", &i)?;
        }
        if let Some(parent) = &self.parent_tool_call_id {
            m.serialize_entry("parentToolCallId", &**parent)?;
        }
        match &self.data {
            EventData::None => {}
            EventData::Resumed { previous_status } => {
                m.serialize_entry("previousStatus", previous_status)?
            }
            EventData::ModelRequested { attempt, model } => {
                m.serialize_entry("attempt", attempt)?;
                m.serialize_entry("model", model)?;
            }
            EventData::ModelCompleted {
                attempt,
                model,
                usage,
                request_id,
            } => {
                m.serialize_entry("attempt", attempt)?;
                m.serialize_entry("model", model)?;
                m.serialize_entry("usage", usage)?;
                m.serialize_entry("requestId", request_id)?;
            }
            EventData::ModelFailed { attempt, error } => {
                m.serialize_entry("attempt", attempt)?;
                m.serialize_entry("error", error)?;
            }
            EventData::ToolInputStarted {
                tool_call_id,
                tool_name,
            } => {
                m.serialize_entry("toolCallId", tool_call_id)?;
                m.serialize_entry("toolName", tool_name)?;
            }
            EventData::ToolInputDelta {
                tool_call_id,
                delta,
            } => {
                m.serialize_entry("toolCallId", tool_call_id)?;
                m.serialize_entry("delta", delta)?;
            }
            EventData::ToolStarted {
                tool_call_id,
                tool_name,
                input_edited,
            } => {
                m.serialize_entry("toolCallId", tool_call_id)?;
                m.serialize_entry("toolName", tool_name)?;
                if *input_edited {
                    m.serialize_entry("inputEdited", &true)?;
                }
            }
            EventData::ToolPreliminary {
                tool_call_id,
                tool_name,
                result,
            } => {
                m.serialize_entry("toolCallId", tool_call_id)?;
                m.serialize_entry("toolName", tool_name)?;
                m.serialize_entry("result", result)?;
            }
            EventData::ToolCompleted {
                tool_call_id,
                tool_name,
                output,
                responded_by_human,
            } => {
                m.serialize_entry("toolCallId", tool_call_id)?;
                m.serialize_entry("toolName", tool_name)?;
                m.serialize_entry("output", output)?;
                if *responded_by_human {
                    m.serialize_entry("respondedByHuman", &true)?;
                }
            }
            EventData::ToolFailed {
                tool_call_id,
                tool_name,
                error,
            } => {
                m.serialize_entry("toolCallId", tool_call_id)?;
                m.serialize_entry("toolName", tool_name)?;
                m.serialize_entry("error", error)?;
            }
            EventData::ToolRetrying {
                tool_call_id,
                tool_name,
                attempt,
                error,
            } => {
                m.serialize_entry("toolCallId", tool_call_id)?;
                m.serialize_entry("toolName", tool_name)?;
                m.serialize_entry("attempt", attempt)?;
                m.serialize_entry("error", error)?;
            }
            EventData::StepFailed { error } => m.serialize_entry("error", error)?,
            EventData::Waiting { pause } => m.serialize_entry("pause", pause)?,
            EventData::Completed { output } => m.serialize_entry("output", output)?,
            EventData::Stopped {
                stop_reason,
                output,
            } => {
                m.serialize_entry("stopReason", stop_reason)?;
                m.serialize_entry("output", output)?;
            }
            EventData::Error { error, code } => {
                m.serialize_entry("error", error)?;
                m.serialize_entry("code", code)?;
            }
            EventData::Delta { delta } => m.serialize_entry("delta", delta)?,
            EventData::Item { item } => m.serialize_entry("item", item)?,
        }
        m.end()
    }
}

/// Receives every event of a run as it happens, in order. Called synchronously from the
/// run loop: keep it quick (hand the event to a queue if there is real work to do).
pub trait EventListener: Send + Sync {
    /// One event.
    fn on_event(&self, event: &AgentEvent);
}

impl<F> EventListener for F
where
    F: Fn(&AgentEvent) + Send + Sync,
{
    fn on_event(&self, event: &AgentEvent) {
        self(event)
    }
}

/// Current time as ISO-8601 UTC with milliseconds.
pub fn now_iso() -> String {
    // A run stamps its state and events many times per millisecond: the text of the
    // current millisecond is formatted once per thread and copied after that.
    thread_local! {
        static LAST: std::cell::RefCell<(u128, String)> =
            const { std::cell::RefCell::new((0, String::new())) };
    }
    let now = SystemTime::now();
    let format = || humantime::format_rfc3339_millis(now).to_string();
    let Ok(since_epoch) = now.duration_since(SystemTime::UNIX_EPOCH) else {
        return format();
    };
    let millis = since_epoch.as_millis();
    LAST.try_with(|last| {
        let mut last = last.borrow_mut();
        if last.0 != millis || last.1.is_empty() {
            *last = (millis, format());
        }
        last.1.clone()
    })
    .unwrap_or_else(|_| format())
}

#[cfg(test)]
mod tests {
    use super::now_iso;

    #[test]
    fn the_time_is_iso_8601_utc_with_milliseconds_and_follows_the_clock() {
        let first = now_iso();
        let again = now_iso();
        for t in [&first, &again] {
            assert_eq!(t.len(), "2026-01-01T00:00:00.000Z".len(), "{t}");
            assert!(t.ends_with('Z') && t.as_bytes()[10] == b'T', "{t}");
            assert!(humantime::parse_rfc3339(t).is_ok(), "{t}");
        }
        assert!(again >= first, "{first} then {again}");
        std::thread::sleep(std::time::Duration::from_millis(3));
        assert!(now_iso() > again, "a later millisecond is written anew");
    }
}
