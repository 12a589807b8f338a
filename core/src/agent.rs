//! Agent definitions and the [`Agent`] that runs them.

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::error::AgentError;
use crate::model::ToolSpec;
use crate::options::{ContinueOptions, ModelRetry, RunOptions, ToolExecutionConfig};
use crate::review::HumanReview;
use crate::schema::Validator;
use crate::state::RunResult;
use crate::stop::StopCondition;
use crate::stream::AgentStream;
use crate::tool::{ApprovalPredicate, Tool};
use crate::turn::TurnValue;

/// Default step limit.
pub const DEFAULT_MAX_STEPS: usize = 12;

/// What an agent is: id, model, instructions, tools and policies (SPEC §3).
#[derive(Clone)]
pub struct AgentDefinition {
    pub(crate) id: String,
    pub(crate) model: Option<TurnValue>,
    pub(crate) instructions: Option<TurnValue>,
    pub(crate) tools: Vec<Tool>,
    pub(crate) max_steps: usize,
    pub(crate) stop_when: Vec<Arc<dyn StopCondition>>,
    pub(crate) model_retry: ModelRetry,
    pub(crate) tool_execution: ToolExecutionConfig,
    pub(crate) temperature: Option<TurnValue>,
    pub(crate) max_output_tokens: Option<TurnValue>,
    pub(crate) top_p: Option<TurnValue>,
    pub(crate) output_schema: Option<Arc<dyn Validator>>,
    pub(crate) require_approval: Option<Arc<dyn ApprovalPredicate>>,
    pub(crate) human_review: Option<Arc<dyn HumanReview>>,
    pub(crate) state_secrets: Vec<String>,
    #[cfg(feature = "mcp")]
    pub(crate) mcp_servers: Vec<crate::mcp::McpServer>,
}

impl AgentDefinition {
    /// An agent with an id and defaults (12 max steps, sequential tools, `fail-run`).
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            model: None,
            instructions: None,
            tools: Vec::new(),
            max_steps: DEFAULT_MAX_STEPS,
            stop_when: Vec::new(),
            model_retry: ModelRetry::default(),
            tool_execution: ToolExecutionConfig::default(),
            temperature: None,
            max_output_tokens: None,
            top_p: None,
            output_schema: None,
            require_approval: None,
            human_review: None,
            state_secrets: Vec::new(),
            #[cfg(feature = "mcp")]
            mcp_servers: Vec::new(),
        }
    }

    /// Adds an MCP server whose tools the agent offers (SPEC §11). Servers connect
    /// lazily, are shared by the agent's runs and closed with [`Agent::close`].
    #[cfg(feature = "mcp")]
    pub fn mcp_server(mut self, server: crate::mcp::McpServer) -> Self {
        self.mcp_servers.push(server);
        self
    }

    /// Model id (fixed or per turn).
    pub fn model(mut self, model: impl Into<TurnValue>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Instructions (fixed or per turn).
    pub fn instructions(mut self, instructions: impl Into<TurnValue>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds tools.
    pub fn tools(mut self, tools: impl IntoIterator<Item = Tool>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Step limit (default 12).
    pub fn max_steps(mut self, n: usize) -> Self {
        self.max_steps = n;
        self
    }

    /// Adds a stop condition.
    pub fn stop_when(mut self, condition: Arc<dyn StopCondition>) -> Self {
        self.stop_when.push(condition);
        self
    }

    /// Model retry policy.
    pub fn model_retry(mut self, retry: ModelRetry) -> Self {
        self.model_retry = retry;
        self
    }

    /// Tool execution settings.
    pub fn tool_execution(mut self, config: ToolExecutionConfig) -> Self {
        self.tool_execution = config;
        self
    }

    /// Temperature (fixed or per turn).
    pub fn temperature(mut self, value: impl Into<TurnValue>) -> Self {
        self.temperature = Some(value.into());
        self
    }

    /// Output token limit (fixed or per turn).
    pub fn max_output_tokens(mut self, value: impl Into<TurnValue>) -> Self {
        self.max_output_tokens = Some(value.into());
        self
    }

    /// Nucleus sampling (fixed or per turn).
    pub fn top_p(mut self, value: impl Into<TurnValue>) -> Self {
        self.top_p = Some(value.into());
        self
    }

    /// Validator of the final output.
    pub fn output_schema(mut self, validator: Arc<dyn Validator>) -> Self {
        self.output_schema = Some(validator);
        self
    }

    /// Agent-level approval predicate: decides for every tool, overriding tools' settings.
    pub fn require_approval(mut self, predicate: Arc<dyn ApprovalPredicate>) -> Self {
        self.require_approval = Some(predicate);
        self
    }

    /// Human-review hook.
    pub fn human_review(mut self, hook: Arc<dyn HumanReview>) -> Self {
        self.human_review = Some(hook);
        self
    }

    /// Signs every state this agent produces and refuses to continue a state whose
    /// `signature` is missing or wrong (SPEC §7).
    pub fn state_secret(mut self, secret: impl Into<String>) -> Self {
        self.state_secrets = vec![secret.into()];
        self
    }

    /// Like [`AgentDefinition::state_secret`] with several secrets, for rotation: the
    /// first signs, any of them verifies. An empty list turns signing off.
    pub fn state_secrets(mut self, secrets: Vec<String>) -> Self {
        self.state_secrets = secrets;
        self
    }

    /// The agent id.
    pub fn id(&self) -> &str {
        &self.id
    }
}

pub(crate) struct AgentInner {
    pub(crate) def: AgentDefinition,
    pub(crate) tool_index: HashMap<String, usize>,
    pub(crate) tool_specs: Arc<Vec<ToolSpec>>,
    /// The agent's MCP servers (shared by its runs and by the per-run agents built from
    /// it); `None` without any.
    #[cfg(feature = "mcp")]
    pub(crate) mcp: Option<Arc<crate::mcp::McpSet>>,
}

impl AgentInner {
    pub(crate) fn tool(&self, name: &str) -> Option<&Tool> {
        self.tool_index.get(name).map(|&i| &self.def.tools[i])
    }
}

/// What the model is told about a tool (shared by the agent's own tools and MCP tools).
pub(crate) fn tool_spec(t: &Tool) -> ToolSpec {
    ToolSpec {
        id: t.id.clone(),
        description: t.description.clone(),
        parameters: t.parameters.clone(),
    }
}

/// A defined agent. Cheap to clone; runs share nothing but the definition.
#[derive(Clone)]
pub struct Agent {
    pub(crate) inner: Arc<AgentInner>,
}

/// Checks a definition and creates the agent. An invalid definition (a bad schema, a
/// duplicate tool id, a negative timeout, an empty id) is refused with
/// `definition_invalid`.
pub fn create_agent(def: AgentDefinition) -> Result<Agent, AgentError> {
    if def.id.is_empty() {
        return Err(AgentError::definition_invalid(
            "Invalid agent definition: id must not be empty",
        ));
    }
    let mut tool_index = HashMap::with_capacity(def.tools.len());
    for (i, tool) in def.tools.iter().enumerate() {
        tool.check()?;
        if tool_index.insert(tool.id.clone(), i).is_some() {
            return Err(AgentError::definition_invalid(format!(
                "Invalid agent definition: duplicate tool id '{}' (tools[{i}])",
                tool.id
            )));
        }
    }
    let tool_specs = Arc::new(def.tools.iter().map(tool_spec).collect());
    #[cfg(feature = "mcp")]
    let mcp = if def.mcp_servers.is_empty() {
        None
    } else {
        Some(Arc::new(crate::mcp::McpSet::new(&def.mcp_servers)?))
    };
    Ok(Agent {
        inner: Arc::new(AgentInner {
            def,
            tool_index,
            tool_specs,
            #[cfg(feature = "mcp")]
            mcp,
        }),
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
        crate::engine::continue_run(self.inner.clone(), state, options, None).await
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
        AgentStream::deferred_continue(self.inner.clone(), state.clone(), options)
    }

    /// Continues a paused run in the background, as a stream.
    pub fn continue_stream(&self, state: &RunResult, options: ContinueOptions) -> AgentStream {
        AgentStream::start_continue(self.inner.clone(), state.clone(), options)
    }
}
