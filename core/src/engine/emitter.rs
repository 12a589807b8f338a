//! Delivers events to the run's listener and stream, building them only when someone
//! listens.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::events::{now_iso, AgentEvent, EventData, EventListener, EventType};
use crate::state::RunStatus;
use crate::stream::StreamShared;
use crate::tool_runtime::RunIds;

#[derive(Clone)]
pub(crate) struct Emitter {
    /// The run's ids, shared with its tool phases.
    pub(crate) ids: Arc<RunIds>,
    listener: Option<Arc<dyn EventListener>>,
    stream: Option<Arc<StreamShared>>,
    /// The calls whose `tool.started` was delivered and whose end was not yet, when
    /// someone listens: a run that fails or is cancelled while they run ends each with
    /// `tool.failed` (docs/behaviour.md §5), so that every started call ends.
    open_calls: Option<Arc<Mutex<OpenCalls>>>,
}

/// Started calls not yet ended, by call id: the order they started in, tool name, step.
#[derive(Default)]
struct OpenCalls {
    started: u64,
    calls: HashMap<Arc<str>, (u64, Arc<str>, usize)>,
}

/// The error of a call that was running when its run failed or was cancelled.
pub(crate) const CALL_CANCELLED_MESSAGE: &str = "Tool call cancelled";

impl Emitter {
    pub(crate) fn new(
        run_id: Arc<str>,
        agent_id: Arc<str>,
        listener: Option<Arc<dyn EventListener>>,
        stream: Option<Arc<StreamShared>>,
    ) -> Self {
        let open_calls = (listener.is_some() || stream.is_some()).then(Default::default);
        Self {
            ids: RunIds::new(run_id, agent_id),
            listener,
            stream,
            open_calls,
        }
    }

    /// Notes that `tool.started` was emitted for a call (see [`Emitter::end_open_calls`]).
    pub(crate) fn call_started(&self, id: &Arc<str>, name: &Arc<str>, step_index: usize) {
        if let Some(open) = &self.open_calls {
            let mut open = open.lock().unwrap_or_else(|p| p.into_inner());
            open.started += 1;
            let order = open.started;
            open.calls
                .insert(id.clone(), (order, name.clone(), step_index));
        }
    }

    /// Notes that a call's `tool.completed` or `tool.failed` was emitted.
    pub(crate) fn call_ended(&self, id: &str) {
        if let Some(open) = &self.open_calls {
            open.lock()
                .unwrap_or_else(|p| p.into_inner())
                .calls
                .remove(id);
        }
    }

    /// Ends every call still running as its run fails or is cancelled: `tool.failed`
    /// (`Tool call cancelled`) for each, in the order they started, with the run's
    /// `status`.
    pub(crate) fn end_open_calls(&self, status: RunStatus) {
        let Some(open) = &self.open_calls else {
            return;
        };
        let mut calls: Vec<_> = open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .calls
            .drain()
            .collect();
        calls.sort_by_key(|(_, (order, _, _))| *order);
        for (id, (_, name, step_index)) in calls {
            self.emit(
                EventType::ToolFailed,
                Some(status),
                Some(step_index),
                || EventData::ToolFailed {
                    tool_call_id: id.to_string(),
                    tool_name: name.to_string(),
                    error: CALL_CANCELLED_MESSAGE.to_owned(),
                },
            );
        }
    }

    pub(crate) fn is_active(&self) -> bool {
        self.listener.is_some() || self.stream.is_some()
    }

    pub(crate) fn is_streaming(&self) -> bool {
        self.stream.is_some()
    }

    pub(crate) fn cancel_reason(&self) -> Option<String> {
        self.stream.as_ref().and_then(|s| s.cancel_reason())
    }

    /// Emits an event; `data` is only evaluated when someone listens.
    pub(crate) fn emit(
        &self,
        event_type: EventType,
        status: Option<RunStatus>,
        step_index: Option<usize>,
        data: impl FnOnce() -> EventData,
    ) {
        if !self.is_active() {
            return;
        }
        let event = AgentEvent {
            event_type,
            run_id: self.ids.run_id.clone(),
            agent_id: self.ids.agent_id.clone(),
            timestamp: now_iso(),
            status,
            step_index,
            data: data(),
            parent_tool_call_id: None,
        };
        self.deliver(event);
    }

    /// Delivers an event of a nested agent's run that the call `parent` runs
    /// (docs/behaviour.md §18): its `parentToolCallId` is `parent`, or `parent/<its own>`
    /// when it comes from deeper still.
    pub(crate) fn forward(&self, event: &AgentEvent, parent: &str) {
        if !self.is_active() {
            return;
        }
        let mut event = event.clone();
        event.parent_tool_call_id = Some(match &event.parent_tool_call_id {
            Some(inner) => Arc::from(crate::agent_tool::nested_id(parent, inner)),
            None => Arc::from(parent),
        });
        self.deliver(event);
    }

    fn deliver(&self, event: AgentEvent) {
        if let Some(listener) = &self.listener {
            // A panicking listener must not take the run down with it.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                listener.on_event(&event)
            }));
        }
        if let Some(stream) = &self.stream {
            stream.push_event(event);
        }
    }
}
