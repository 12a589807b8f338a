//! Agents as tools (docs/behaviour.md §18): `agent.as_tool(...)` makes a tool whose calls
//! run that agent. The run loop (`engine/nested.rs`) runs the nested agent; this module
//! holds the tool's definition side: options, defaults, nesting depth and the ids of
//! nested pending calls.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::agent::Agent;
use crate::checked_agent::AgentInner;
use crate::error::{AgentError, ToolError};
use crate::model::ModelClient;
use crate::tool::{Tool, ToolExecutor};
use crate::tool_runtime::ToolRuntime;

/// How deep agents may nest as tools: an agent tool whose agent has agent tools nested
/// this deep is `definition_invalid`.
pub const MAX_AGENT_NESTING: usize = 8;

/// Separates the outer call id from the nested call id in a nested pending call's id
/// (`<outerCallId>/<nestedCallId>`).
pub const NESTED_ID_SEPARATOR: char = '/';

/// The parameters of an agent tool when none are given: one string `input`.
pub fn default_agent_tool_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {"input": {"type": "string"}},
        "required": ["input"]
    })
}

/// Options of [`Agent::as_tool`]: every field is optional.
#[derive(Clone, Default)]
pub struct AsToolOptions {
    /// The tool id (default: the agent's id).
    pub id: Option<String>,
    /// What the model is told the tool does (default: empty).
    pub description: Option<String>,
    /// The tool's JSON Schema (default: [`default_agent_tool_parameters`]).
    pub parameters: Option<Value>,
    /// The nested agent's own model client (default: the outer run's client).
    pub client: Option<Arc<dyn ModelClient>>,
}

impl AsToolOptions {
    /// Options with every default.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the tool id.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the parameters.
    pub fn parameters(mut self, parameters: Value) -> Self {
        self.parameters = Some(parameters);
        self
    }

    /// Gives the nested agent its own model client.
    pub fn client(mut self, client: Arc<dyn ModelClient>) -> Self {
        self.client = Some(client);
        self
    }
}

/// The agent an agent tool runs.
pub(crate) struct NestedAgent {
    /// The nested agent, its run store left out: a nested run lives inside the outer
    /// run's state, never on its own.
    pub(crate) agent: Arc<AgentInner>,
    /// Its own client, when given.
    pub(crate) client: Option<Arc<dyn ModelClient>>,
}

/// How many levels of agents nest below an agent's tools (0: no agent tools).
pub(crate) fn nesting_depth(agent: &AgentInner) -> usize {
    agent
        .def
        .tools
        .iter()
        .filter_map(|t| t.nested.as_ref())
        .map(|n| 1 + nesting_depth(&n.agent))
        .max()
        .unwrap_or(0)
}

/// Stands in for an agent tool's executor so the tool is automatic (approval, timeouts,
/// `onError` apply as to any tool); the run loop runs the nested agent instead.
struct NestedExecutor;

#[async_trait]
impl ToolExecutor for NestedExecutor {
    async fn execute(&self, _input: Value, _runtime: ToolRuntime) -> Result<Value, ToolError> {
        Err(ToolError::new(
            "An agent tool runs inside an agent's run, not on its own",
        ))
    }
}

impl Agent {
    /// A tool that runs this agent (docs/behaviour.md §18): its calls start a nested run
    /// whose input is the call's `input`, whose output is the tool's output and whose
    /// pauses surface on the outer run as pending calls `<outerCallId>/<nestedCallId>`.
    /// Nesting deeper than [`MAX_AGENT_NESTING`] is `definition_invalid`.
    pub fn as_tool(&self, options: AsToolOptions) -> Result<Tool, AgentError> {
        let id = options.id.unwrap_or_else(|| self.inner.def.id.clone());
        let depth = 1 + nesting_depth(&self.inner);
        if depth > MAX_AGENT_NESTING {
            return Err(AgentError::definition_invalid(format!(
                "Invalid definition of tool '{id}': agents nest {depth} levels deep as tools, \
                 more than {MAX_AGENT_NESTING}"
            )));
        }
        let mut def = self.inner.def.clone();
        def.store = None;
        let agent = Arc::new(AgentInner::new(def)?);
        let parameters = options
            .parameters
            .unwrap_or_else(default_agent_tool_parameters);
        let mut tool = Tool::with_executor(
            id,
            options.description.unwrap_or_default(),
            parameters,
            Arc::new(NestedExecutor),
        );
        tool.nested = Some(Arc::new(NestedAgent {
            agent,
            client: options.client,
        }));
        tool.check()?;
        Ok(tool)
    }
}

impl Tool {
    /// Whether this tool runs an agent (made by [`Agent::as_tool`]).
    pub fn is_agent_tool(&self) -> bool {
        self.nested.is_some()
    }

    /// Whether this is an agent tool without its own model client (it runs on its
    /// caller's).
    pub(crate) fn runs_without_client(&self) -> bool {
        self.nested.as_ref().is_some_and(|n| n.client.is_none())
    }
}

/// The nested run's input for a call's input: its `input` member when the input is an
/// object that has one, else the whole input.
pub(crate) fn nested_input(input: &Value) -> Value {
    match input.get("input") {
        Some(v) if input.is_object() => v.clone(),
        _ => input.clone(),
    }
}

/// `<outer>/<nested>`.
pub(crate) fn nested_id(outer: &str, nested: &str) -> String {
    format!("{outer}{NESTED_ID_SEPARATOR}{nested}")
}
