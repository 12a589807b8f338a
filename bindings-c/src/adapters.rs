//! The run's event listener, handing each event's JSON text to the host. The adapters of
//! host functions are the core's ([`phaseo_agent::json_host`]).

use phaseo_agent::{AgentEvent, EventListener};

/// A run's event listener.
pub struct HostListener(pub std::sync::Arc<crate::host::Host>);

impl EventListener for HostListener {
    fn on_event(&self, event: &AgentEvent) {
        self.0.event(&event.to_json());
    }
}
