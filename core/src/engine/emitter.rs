//! Delivers events to the run's listener and stream, building them only when someone
//! listens.

use std::sync::Arc;

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
}

impl Emitter {
    pub(crate) fn new(
        run_id: Arc<str>,
        agent_id: Arc<str>,
        listener: Option<Arc<dyn EventListener>>,
        stream: Option<Arc<StreamShared>>,
    ) -> Self {
        Self {
            ids: RunIds::new(run_id, agent_id),
            listener,
            stream,
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
