//! The run's event listener. The adapters of PHP callables are the core's
//! ([`phaseo_agent::json_host`]), over [`crate::host::HostFn`].

use phaseo_agent::{AgentEvent, EventListener};

/// A run's event listener: events go to the PHP thread through the queue, in order.
pub struct HostListener(pub i64);

impl EventListener for HostListener {
    fn on_event(&self, event: &AgentEvent) {
        crate::host::push(
            serde_json::json!({"t": "event", "run": self.0, "event": event.to_value()}),
        );
    }
}
