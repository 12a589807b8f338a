//! The [`Agent`]: a checked definition that runs, continues and streams runs.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::checked_agent::AgentInner;
pub use crate::definition::{AgentDefinition, DEFAULT_MAX_STEPS};
use crate::error::AgentError;
use crate::options::{ContinueOptions, RunOptions};
use crate::state::RunResult;
use crate::stream::AgentStream;

/// A defined agent. Cheap to clone; runs share nothing but the definition.
#[derive(Clone)]
pub struct Agent {
    pub(crate) inner: Arc<AgentInner>,
}
/// Checks a definition and creates the agent. An invalid definition (a bad schema, a
/// duplicate tool id, a negative timeout, an empty id) is refused with
/// `definition_invalid`.
pub fn create_agent(def: AgentDefinition) -> Result<Agent, AgentError> {
    Ok(Agent {
        inner: Arc::new(AgentInner::new(def)?),
    })
}

impl Agent {
    /// The agent id.
    pub fn id(&self) -> &str {
        &self.inner.def.id
    }

    /// The definition.
    pub fn definition(&self) -> &AgentDefinition {
        &self.inner.def
    }

    /// Closes the agent's MCP servers (a stdio server's process is killed). Runs still
    /// going fail their next MCP call; a later run starts the servers again. Dropping the
    /// last clone of the agent also stops them.
    pub async fn close(&self) {
        #[cfg(feature = "mcp")]
        if let Some(mcp) = &self.inner.mcp {
            mcp.close().await;
        }
    }

    /// Runs the agent until it completes, stops, pauses, fails or is cancelled.
    ///
    /// Paused, completed, stopped and cancelled runs return `Ok`; a failed run returns an
    /// error carrying the final state (`AgentError::result`).
    pub async fn run(&self, options: RunOptions) -> Result<RunResult, AgentError> {
        crate::engine::run(self.inner.clone(), options, None).await
    }

    /// Continues a paused run. `state` is not changed: a refused continue leaves it usable.
    pub async fn continue_run(
        &self,
        state: &RunResult,
        options: ContinueOptions,
    ) -> Result<RunResult, AgentError> {
        crate::engine::continue_run(self.inner.clone(), Some(state), options, None).await
    }

    /// Continues the paused run `run_id` of the run store (agent or option `store`),
    /// claiming its pause at most once (docs/behaviour.md §10): a pause already continued elsewhere is
    /// refused with `continue_invalid` (`Pause <pauseId> of run <runId> was already
    /// continued`).
    pub async fn continue_by_id(
        &self,
        run_id: impl Into<String>,
        options: ContinueOptions,
    ) -> Result<RunResult, AgentError> {
        let options = options.run_id(run_id);
        crate::engine::continue_run(self.inner.clone(), None, options, None).await
    }

    /// Recovers a stored run whose worker died (its lease expired): continues it from its
    /// last checkpoint, with the decisions stored by its claim. `options` gives the client
    /// and overrides; it must carry no decisions.
    pub async fn recover(
        &self,
        run_id: &str,
        options: ContinueOptions,
    ) -> Result<RunResult, AgentError> {
        crate::engine::recover(self.inner.clone(), run_id, options).await
    }

    /// Runs the agent in the background and returns a replayable stream of its events.
    pub fn stream(&self, options: RunOptions) -> AgentStream {
        AgentStream::start_run(self.inner.clone(), options)
    }

    /// Like [`Agent::stream`], but returns the future that drives the run instead of
    /// spawning it, so the caller chooses where (and in which task-local scope) it runs.
    /// Nothing happens until the future is polled.
    pub fn stream_deferred(&self, options: RunOptions) -> (AgentStream, BoxFuture<'static, ()>) {
        AgentStream::deferred_run(self.inner.clone(), options)
    }

    /// Like [`Agent::continue_stream`], returning the driving future (see
    /// [`Agent::stream_deferred`]).
    pub fn continue_stream_deferred(
        &self,
        state: &RunResult,
        options: ContinueOptions,
    ) -> (AgentStream, BoxFuture<'static, ()>) {
        AgentStream::deferred_continue(self.inner.clone(), Some(state.clone()), options)
    }

    /// Continues a paused run in the background, as a stream.
    pub fn continue_stream(&self, state: &RunResult, options: ContinueOptions) -> AgentStream {
        AgentStream::start_continue(self.inner.clone(), Some(state.clone()), options)
    }

    /// Like [`Agent::continue_by_id`], as a stream.
    pub fn continue_stream_by_id(
        &self,
        run_id: impl Into<String>,
        options: ContinueOptions,
    ) -> AgentStream {
        AgentStream::start_continue(self.inner.clone(), None, options.run_id(run_id))
    }

    /// Like [`Agent::continue_stream_by_id`], returning the driving future (see
    /// [`Agent::stream_deferred`]).
    pub fn continue_stream_deferred_by_id(
        &self,
        run_id: impl Into<String>,
        options: ContinueOptions,
    ) -> (AgentStream, BoxFuture<'static, ()>) {
        AgentStream::deferred_continue(self.inner.clone(), None, options.run_id(run_id))
    }
}
