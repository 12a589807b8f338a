//! Native objects held for PHP by integer handles (agents, clients, stores, runs, schemas).
//! PHP objects of the PHP layer own one handle each and free it in their destructor.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use phaseo_agent::store::RunStore;
use phaseo_agent::{Agent, CancellationToken, JsonSchema, ModelClient, ScriptedClient};

use crate::error::NativeError;

/// A model client, and the scripted client behind it (for its cursor).
#[derive(Clone)]
pub struct Client {
    /// The client.
    pub client: Arc<dyn ModelClient>,
    /// Set for scripted clients.
    pub scripted: Option<Arc<ScriptedClient>>,
}

/// A run in flight: its cancellation.
pub struct Run {
    /// Cancels the run.
    pub cancel: CancellationToken,
}

/// One table of handles.
pub struct Table<T> {
    items: Mutex<BTreeMap<i64, T>>,
    what: &'static str,
}

static NEXT: AtomicI64 = AtomicI64::new(1);

impl<T: Clone> Table<T> {
    const fn new(what: &'static str) -> Self {
        Self {
            items: Mutex::new(BTreeMap::new()),
            what,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<i64, T>> {
        self.items
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Stores a value; its new handle.
    pub fn insert(&self, value: T) -> i64 {
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(id, value);
        id
    }

    /// The value of a handle.
    pub fn get(&self, id: i64) -> Result<T, NativeError> {
        self.lock()
            .get(&id)
            .cloned()
            .ok_or_else(|| NativeError::argument(format!("unknown {} handle {id}", self.what)))
    }

    /// Forgets a handle (what runs keeps what it uses alive).
    pub fn remove(&self, id: i64) {
        self.lock().remove(&id);
    }
}

/// The agents.
pub static AGENTS: Table<Agent> = Table::new("agent");
/// The model clients.
pub static CLIENTS: Table<Client> = Table::new("client");
/// The run stores.
pub static STORES: Table<Arc<dyn RunStore>> = Table::new("store");
/// The runs in flight.
pub static RUNS: Table<Arc<Run>> = Table::new("run");
/// Served MCP servers (docs/behaviour.md §19).
pub static SERVERS: Table<Arc<phaseo_agent::mcp_server::McpToolServer>> = Table::new("MCP server");
/// Compiled JSON Schemas (the validator helper).
pub static SCHEMAS: Table<Arc<JsonSchema>> = Table::new("schema");
