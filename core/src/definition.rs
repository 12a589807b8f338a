//! An agent definition: what an agent is (id, model, instructions, tools, policies), built
//! by the application and checked by [`crate::create_agent`].

use std::sync::Arc;

use crate::options::{ModelRetry, ToolExecutionConfig};
use crate::review::HumanReview;
use crate::schema::Validator;
use crate::stop::StopCondition;
use crate::store::{LeaseConfig, RunStore};
use crate::tool::{ApprovalPredicate, Tool};
use crate::turn::TurnValue;

/// Default step limit.
pub const DEFAULT_MAX_STEPS: usize = 12;

/// What an agent is: id, model, instructions, tools and policies (docs/behaviour.md §3).
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

    /// Adds an MCP server whose tools the agent offers (docs/behaviour.md §11). Servers connect
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
    /// `signature` is missing or wrong (docs/behaviour.md §7).
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

    /// Which tool the model must call (docs/behaviour.md §12): a [`ToolChoice`] as JSON (`"auto"`,
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

    /// Run store: every run of this agent is saved there (docs/behaviour.md §10), and runs can be
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
