//! Agent definitions and the [`Agent`] that runs them.

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::controls::ToolChoice;
use crate::error::AgentError;
use crate::model::ToolSpec;
use crate::options::{ContinueOptions, ModelRetry, RunOptions, ToolExecutionConfig};
use crate::review::HumanReview;
use crate::schema::Validator;
use crate::state::RunResult;
use crate::stop::StopCondition;
use crate::store::{LeaseConfig, RunStore};
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
    pub(crate) tool_choice: Option<TurnValue>,
    pub(crate) parallel_tool_calls: Option<bool>,
    pub(crate) active_tools: Option<TurnValue>,
    pub(crate) store: Option<Arc<dyn RunStore>>,
    pub(crate) lease: LeaseConfig,
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
            tool_choice: None,
            parallel_tool_calls: None,
            active_tools: None,
            store: None,
            lease: LeaseConfig::default(),
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

    /// Which tool the model must call (SPEC §12): a [`ToolChoice`] as JSON (`"auto"`,
    /// `"required"`, `"none"`, `{"toolId": id}`), fixed or per turn (a per-turn function
    /// may return null for unset).
    pub fn tool_choice(mut self, value: impl Into<TurnValue>) -> Self {
        self.tool_choice = Some(value.into());
        self
    }

    /// Whether the model may request several calls in one turn.
    pub fn parallel_tool_calls(mut self, value: bool) -> Self {
        self.parallel_tool_calls = Some(value);
        self
    }

    /// The tool ids offered to the model (a JSON list of ids), fixed or per turn (a
    /// per-turn function may return null for every tool). Calls to tools not offered in
    /// a turn fail with `unknown_tool`.
    pub fn active_tools(mut self, value: impl Into<TurnValue>) -> Self {
        self.active_tools = Some(value.into());
        self
    }

    /// Run store: every run of this agent is saved there (SPEC §10), and runs can be
    /// continued by id and recovered from it.
    pub fn store(mut self, store: Arc<dyn RunStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Lease duration and renewal interval of store-backed runs (default 30 s / 10 s).
    pub fn lease(mut self, lease: LeaseConfig) -> Self {
        self.lease = lease;
        self
    }

    /// The agent id.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// Checks a list of offered tool ids against the agent's tools (`None`: not known yet,
/// only the shape is checked); the error names the first problem.
pub(crate) fn check_tool_ids(
    value: &serde_json::Value,
    known: Option<&HashMap<String, usize>>,
) -> Result<Vec<String>, String> {
    let Some(items) = value.as_array() else {
        return Err(format!(
            "activeTools must be a list of tool ids, got {}",
            crate::json::to_canonical_string(value)
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, id)| match id.as_str() {
            Some(id) if known.is_none_or(|k| k.contains_key(id)) => Ok(id.to_owned()),
            Some(id) => Err(format!(
                "activeTools[{i}] names no tool of the agent: '{id}'"
            )),
            None => Err(format!(
                "activeTools[{i}] must be a tool id string, got {id}"
            )),
        })
        .collect()
}

/// Parses a tool choice and checks that a named tool is one of the agent's (`None`: not
/// known yet, only the shape is checked).
pub(crate) fn check_tool_choice(
    value: &serde_json::Value,
    known: Option<&HashMap<String, usize>>,
) -> Result<ToolChoice, String> {
    let choice = ToolChoice::from_value(value)?;
    match (choice.tool_id(), known) {
        (Some(id), Some(known)) if !known.contains_key(id) => {
            Err(format!("toolChoice names no tool of the agent: '{id}'"))
        }
        _ => Ok(choice),
    }
}

/// Checks the definition's fixed `toolChoice` and `activeTools` against the tools in
/// `known` (`None`: only their shapes), refusing with `definition_invalid`.
pub(crate) fn check_fixed_controls(
    def: &AgentDefinition,
    known: Option<&HashMap<String, usize>>,
) -> Result<(), AgentError> {
    let invalid =
        |m: String| AgentError::definition_invalid(format!("Invalid agent definition: {m}"));
    if let Some(TurnValue::Fixed(v)) = &def.tool_choice {
        if !v.is_null() {
            check_tool_choice(v, known).map_err(invalid)?;
        }
    }
    if let Some(TurnValue::Fixed(v)) = &def.active_tools {
        if !v.is_null() {
            check_tool_ids(v, known).map_err(invalid)?;
        }
    }
    Ok(())
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
        strict: t.strict,
        input_examples: t.input_examples.clone(),
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
    #[cfg(feature = "mcp")]
    let mcp = if def.mcp_servers.is_empty() {
        None
    } else {
        Some(Arc::new(crate::mcp::McpSet::new(&def.mcp_servers)?))
    };
    // MCP tools are known only once listed: then the ids are checked when a run lists
    // them (`check_fixed_controls` on the run's agent), here only the values' shapes.
    #[cfg(feature = "mcp")]
    let known = mcp.is_none().then_some(&tool_index);
    #[cfg(not(feature = "mcp"))]
    let known = Some(&tool_index);
    check_fixed_controls(&def, known)?;
    let tool_specs = Arc::new(def.tools.iter().map(tool_spec).collect());
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
        crate::engine::continue_run(self.inner.clone(), Some(state), options, None).await
    }

    /// Continues the paused run `run_id` of the run store (agent or option `store`),
    /// claiming its pause at most once (SPEC §10): a pause already continued elsewhere is
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
