//! The event listener: the one host adapter the core's `json_host` family does not cover
//! (events are delivered in order through the bridge's queue, with no answer).

use phaseo_agent::{AgentEvent, EventListener};

use crate::host::post_event;

/// `onEvent(event)`: delivered in order through the dispatcher queue.
pub struct JsListener(pub u32);

impl EventListener for JsListener {
    fn on_event(&self, event: &AgentEvent) {
        post_event(self.0, event.to_json());
    }
}
