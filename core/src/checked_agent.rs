//! A checked agent: its definition with the tool index and what the model is told about
//! each tool, made once by [`crate::create_agent`] and shared by the run loop (which sits
//! above this module and is the only one to read it).

use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};

use crate::controls::ToolChoice;
use crate::definition::AgentDefinition;
use crate::error::AgentError;
use crate::model::ToolSpec;
use crate::tool::Tool;
use crate::tool_search::{search_tool, Catalog, TOOL_SEARCH};
use crate::turn::TurnValue;

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

/// Tool ids to their slot in the definition: looked up several times per call.
pub(crate) type ToolIndex = HashMap<String, usize>;

pub(crate) struct AgentInner {
    pub(crate) def: AgentDefinition,
    /// Every tool by id (the built-in `tool_search` at [`SEARCH_INDEX`]).
    pub(crate) tool_index: ToolIndex,
    /// What a request offers before any tool is loaded: the tools that are not deferred,
    /// in definition order, then `tool_search` when some are (docs/behaviour.md §17).
    pub(crate) tool_specs: Arc<Vec<ToolSpec>>,
    /// The built-in `tool_search`, when some tool is deferred.
    pub(crate) search: Option<Tool>,
    /// Whether some tool's executor writes its input as JSON text
    /// ([`ToolExecutor::writes_input_text`](crate::ToolExecutor::writes_input_text)): only
    /// then does a run keep the model's argument text for it.
    pub(crate) keeps_input_text: bool,
    /// The agent's MCP servers (shared by its runs and by the per-run agents built from
    /// it); `None` without any.
    #[cfg(feature = "mcp")]
    pub(crate) mcp: Option<Arc<crate::mcp::McpSet>>,
}

impl AgentInner {
    /// Checks a definition (`definition_invalid` naming the first problem) and indexes
    /// its tools.
    pub(crate) fn new(def: AgentDefinition) -> Result<Self, AgentError> {
        if def.id.is_empty() {
            return Err(AgentError::definition_invalid(
                "Invalid agent definition: id must not be empty",
            ));
        }
        def.tool_execution.check("Invalid agent definition")?;
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
        // them (`assemble` for the run's agent), here only the values' shapes.
        #[cfg(feature = "mcp")]
        let all_known = mcp.is_none();
        #[cfg(not(feature = "mcp"))]
        let all_known = true;
        if !all_known {
            check_fixed_controls(&def, None)?;
        }
        #[cfg(feature = "mcp")]
        let mcp_deferred = def.mcp_servers.iter().any(|m| m.defer_loading);
        #[cfg(not(feature = "mcp"))]
        let mcp_deferred = false;
        if mcp_deferred && tool_index.contains_key(TOOL_SEARCH) {
            return Err(reserved_search_id());
        }
        let mut agent = Self::assemble(def, tool_index, all_known)?;
        #[cfg(feature = "mcp")]
        {
            agent.mcp = mcp;
        }
        Ok(agent)
    }

    /// The agent of `def`'s tools (indexed in `tool_index`): the offered specs and, when a
    /// tool is deferred, the built-in `tool_search` over the deferred ones. With
    /// `check_controls` (every tool is known), the fixed `toolChoice` and `activeTools` are
    /// checked against the tools, `tool_search` included.
    pub(crate) fn assemble(
        def: AgentDefinition,
        mut tool_index: HashMap<String, usize>,
        check_controls: bool,
    ) -> Result<Self, AgentError> {
        tool_index.retain(|_, i| *i != SEARCH_INDEX);
        let search = Catalog::of(&def.tools).map(search_tool);
        if search.is_some() {
            if tool_index.contains_key(TOOL_SEARCH) {
                return Err(reserved_search_id());
            }
            tool_index.insert(TOOL_SEARCH.to_owned(), SEARCH_INDEX);
        }
        if check_controls {
            check_fixed_controls(&def, Some(&tool_index))?;
        }
        let tool_specs = Arc::new(
            def.tools
                .iter()
                .filter(|t| !t.defer_loading)
                .chain(search.as_ref())
                .map(tool_spec)
                .collect(),
        );
        let keeps_input_text = def
            .tools
            .iter()
            .any(|t| t.executor.as_ref().is_some_and(|e| e.writes_input_text()));
        Ok(Self {
            def,
            tool_index,
            tool_specs,
            search,
            keeps_input_text,
            #[cfg(feature = "mcp")]
            mcp: None,
        })
    }

    /// The tool named `name`, the built-in `tool_search` included.
    pub(crate) fn tool(&self, name: &str) -> Option<&Tool> {
        match self.tool_index.get(name) {
            Some(&SEARCH_INDEX) => self.search.as_ref(),
            Some(&i) => self.def.tools.get(i),
            None => None,
        }
    }

    /// Whether `name` is a deferred tool (offered only once loaded).
    pub(crate) fn is_deferred(&self, name: &str) -> bool {
        self.tool(name).is_some_and(|t| t.defer_loading)
    }
}

/// Where the index points for the built-in `tool_search` (no definition slot).
pub(crate) const SEARCH_INDEX: usize = usize::MAX;

fn reserved_search_id() -> AgentError {
    AgentError::definition_invalid(format!(
        "Invalid agent definition: the tool id '{TOOL_SEARCH}' is the built-in tool search \
         of an agent with deferred tools; choose another id"
    ))
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
