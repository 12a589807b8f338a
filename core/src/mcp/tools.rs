//! MCP tools as agent tools (docs/behaviour.md §11): listing with a per-agent cache, filters, prefix,
//! approval from annotations, and the per-run tool set (agent tools + listed MCP tools).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::config::{McpApproval, McpServer, McpToolInfo};
use super::connection::Connection;
use super::error::run_failed;
use super::result::tool_result;
use crate::checked_agent::AgentInner;
use crate::error::{AgentError, ToolError};
use crate::tool::{Approval, Tool, ToolExecutor};
use crate::tool_runtime::ToolRuntime;

/// Calls one MCP tool.
struct McpExecutor {
    connection: Arc<Connection>,
    name: String,
}

#[async_trait]
impl ToolExecutor for McpExecutor {
    async fn execute(&self, input: Value, runtime: ToolRuntime) -> Result<Value, ToolError> {
        let raw = self.connection.call(&self.name, input, &runtime).await?;
        tool_result(raw)
    }
}

struct Listing {
    tools: Arc<Vec<Tool>>,
    at: Instant,
    generation: u64,
}

/// One declared server with its connection and its cached listing.
pub(crate) struct ServerEntry {
    pub(crate) server: Arc<McpServer>,
    pub(crate) connection: Arc<Connection>,
    listing: tokio::sync::Mutex<Option<Listing>>,
}

impl ServerEntry {
    /// The server's tools, listed now unless the cache is fresh. `Ok(None)`: an optional
    /// server that could not be listed (skipped for this run).
    async fn tools(&self) -> Result<Option<Arc<Vec<Tool>>>, AgentError> {
        let mut listing = self.listing.lock().await;
        if let Some(l) = listing.as_ref() {
            let expired = self
                .server
                .cache_ttl
                .is_some_and(|ttl| l.at.elapsed() >= ttl);
            if !expired && l.generation == self.connection.generation() {
                return Ok(Some(l.tools.clone()));
            }
        }
        let listed = match self.connection.list_tools().await {
            Ok(listed) => listed,
            Err(_) if self.server.optional => return Ok(None),
            Err(message) => return Err(run_failed(message)),
        };
        // Read after listing: a restart during it bumps the generation once more.
        let generation = self.connection.generation();
        let tools = Arc::new(self.map(listed).await?);
        *listing = Some(Listing {
            tools: tools.clone(),
            at: Instant::now(),
            generation,
        });
        Ok(Some(tools))
    }

    async fn map(&self, listed: Vec<Value>) -> Result<Vec<Tool>, AgentError> {
        let s = &self.server;
        let mut tools = Vec::new();
        for raw in listed {
            let Some(name) = raw.get("name").and_then(Value::as_str) else {
                return Err(run_failed(format!(
                    "MCP server '{}' broke the protocol: a listed tool has no name",
                    s.name
                )));
            };
            let info = McpToolInfo {
                name: name.to_owned(),
                description: raw
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                annotations: raw.get("annotations").cloned().unwrap_or_else(|| json!({})),
            };
            if s.allow_tools
                .as_ref()
                .is_some_and(|a| !a.contains(&info.name))
                || s.deny_tools.contains(&info.name)
            {
                continue;
            }
            if let Some(filter) = &s.filter {
                let keep = filter.keep_async(&info).await.map_err(|e| {
                    run_failed(format!(
                        "MCP server '{}': the tool filter failed on '{}': {}",
                        s.name, info.name, e.message
                    ))
                })?;
                if !keep {
                    continue;
                }
            }
            let id = match &s.tool_prefix {
                Some(p) => format!("{p}_{}", info.name),
                None => info.name.clone(),
            };
            let parameters = raw
                .get("inputSchema")
                .cloned()
                .unwrap_or_else(|| json!({"type": "object"}));
            let executor = Arc::new(McpExecutor {
                connection: self.connection.clone(),
                name: info.name.clone(),
            });
            let mut tool = Tool::with_executor(&id, &info.description, parameters, executor)
                .approval_rule(approval(&s.approval, &info.annotations))
                .annotations(info.annotations.clone())
                .defer_loading(s.defer_loading);
            if let Some(schema) = raw.get("outputSchema").filter(|v| v.is_object()) {
                let validator = crate::schema::json_schema_validator(schema).map_err(|e| {
                    AgentError::definition_invalid(format!(
                        "Invalid MCP tool '{}' of server '{}': outputSchema: {e}",
                        info.name, s.name
                    ))
                })?;
                tool = tool.output_schema(validator);
            }
            if let Some(t) = s.tool_timeouts.get(&info.name).or(s.timeout.as_ref()) {
                tool = tool.timeout(*t);
            }
            if let Some(policy) = s.on_error {
                tool = tool.on_error(policy);
            }
            tool.mcp = Some(Arc::new(crate::tool::McpOrigin {
                server: s.name.clone(),
                tool: info.name.clone(),
                transport: match s.transport {
                    super::config::McpTransport::Stdio { .. } => "pipe",
                    _ => "tcp",
                },
            }));
            tool.check().map_err(|e| {
                AgentError::definition_invalid(format!(
                    "Invalid MCP tool '{}' of server '{}': {}",
                    info.name,
                    s.name,
                    e.message()
                ))
            })?;
            tools.push(tool);
        }
        Ok(tools)
    }
}

/// `"destructive"`: gated unless the server says read-only and not destructive.
fn approval(rule: &McpApproval, annotations: &Value) -> Approval {
    match rule {
        McpApproval::Never => Approval::Never,
        McpApproval::Always => Approval::Always,
        McpApproval::Predicate(p) => Approval::Predicate(p.clone()),
        McpApproval::Destructive => {
            let hint = |k: &str| annotations.get(k).and_then(Value::as_bool);
            if hint("destructiveHint") == Some(true) || hint("readOnlyHint") != Some(true) {
                Approval::Always
            } else {
                Approval::Never
            }
        }
    }
}

/// A per-run agent and the listings it was built from.
type Derived = (Vec<Option<Arc<Vec<Tool>>>>, Arc<AgentInner>);

/// An agent's MCP servers: shared by its runs, closed with it.
pub(crate) struct McpSet {
    entries: Vec<ServerEntry>,
    /// The last per-run agent built, and the listings it was built from.
    derived: Mutex<Option<Derived>>,
}

impl McpSet {
    pub(crate) fn new(servers: &[McpServer]) -> Result<Self, AgentError> {
        let mut seen = std::collections::HashSet::new();
        let mut entries = Vec::with_capacity(servers.len());
        for s in servers {
            s.check()?;
            if !seen.insert(s.name.clone()) {
                return Err(AgentError::definition_invalid(format!(
                    "Invalid agent definition: duplicate MCP server name '{}'",
                    s.name
                )));
            }
            let server = Arc::new(s.clone());
            entries.push(ServerEntry {
                connection: Arc::new(Connection::new(server.clone())),
                server,
                listing: tokio::sync::Mutex::new(None),
            });
        }
        Ok(McpSet {
            entries,
            derived: Mutex::new(None),
        })
    }

    /// The agent a run uses: `base` plus the listed MCP tools.
    pub(crate) async fn run_agent(
        &self,
        base: &Arc<AgentInner>,
    ) -> Result<Arc<AgentInner>, AgentError> {
        let mut lists = Vec::with_capacity(self.entries.len());
        for e in &self.entries {
            lists.push(e.tools().await?);
        }
        if let Ok(derived) = self.derived.lock() {
            if let Some((from, agent)) = derived.as_ref() {
                let same = from.len() == lists.len()
                    && from.iter().zip(&lists).all(|(a, b)| match (a, b) {
                        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                        (None, None) => true,
                        _ => false,
                    });
                if same {
                    return Ok(agent.clone());
                }
            }
        }
        let mut def = base.def.clone();
        let mut tool_index: crate::checked_agent::ToolIndex = base.tool_index.clone();
        for (entry, list) in self.entries.iter().zip(&lists) {
            for tool in list.iter().flat_map(|l| l.iter()) {
                if tool_index.contains_key(&tool.id) {
                    return Err(AgentError::definition_invalid(format!(
                        "Invalid agent definition: MCP tool '{}' of server '{}' collides with another tool of the agent",
                        tool.id, entry.server.name
                    )));
                }
                tool_index.insert(tool.id.clone(), def.tools.len());
                def.tools.push(tool.clone());
            }
        }
        // The definition's fixed toolChoice/activeTools may name MCP tools: checked now
        // (by `assemble`, with `tool_search` when some tool is deferred).
        // Not the set itself (`mcp: None`): it caches this agent, and a cycle would keep
        // the servers running after the agent is dropped.
        let agent = Arc::new(AgentInner::assemble(def, tool_index, true)?);
        if let Ok(mut derived) = self.derived.lock() {
            *derived = Some((lists, agent.clone()));
        }
        Ok(agent)
    }

    /// Stops every server.
    pub(crate) async fn close(&self) {
        for e in &self.entries {
            e.connection.close().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn entry(server: McpServer) -> ServerEntry {
        let server = Arc::new(server);
        ServerEntry {
            connection: Arc::new(Connection::new(server.clone())),
            server,
            listing: tokio::sync::Mutex::new(None),
        }
    }

    fn listed() -> Vec<Value> {
        vec![
            json!({"name": "read", "description": "Reads", "inputSchema": {"type": "object"},
                   "annotations": {"readOnlyHint": true}}),
            json!({"name": "write", "inputSchema": {"type": "object"},
                   "annotations": {"readOnlyHint": false, "destructiveHint": false}}),
            json!({"name": "wipe", "inputSchema": {"type": "object"},
                   "annotations": {"readOnlyHint": true, "destructiveHint": true}}),
            json!({"name": "plain", "inputSchema": {"type": "object"},
                   "outputSchema": {"type": "object", "required": ["n"],
                                    "properties": {"n": {"type": "integer"}}}}),
        ]
    }

    #[test]
    fn destructive_gates_all_but_read_only_non_destructive_tools() {
        let e = entry(
            McpServer::stdio("s", "x")
                .require_approval(McpApproval::Destructive)
                .tool_prefix("p")
                .timeout_ms(100)
                .tool_timeout_ms("read", 50),
        );
        let tools = crate::exec::block_on(e.map(listed())).unwrap();
        let gated: Vec<(&str, bool)> = tools
            .iter()
            .map(|t| (t.id.as_str(), matches!(t.approval, Approval::Always)))
            .collect();
        assert_eq!(
            gated,
            [
                ("p_read", false),
                ("p_write", true),
                ("p_wipe", true),
                ("p_plain", true)
            ]
        );
        assert_eq!(tools[0].timeout, Some(Duration::from_millis(50)));
        assert_eq!(tools[1].timeout, Some(Duration::from_millis(100)));
        assert_eq!(
            tools[0].tool_annotations(),
            Some(&json!({"readOnlyHint": true}))
        );
    }

    #[test]
    fn the_output_schema_checks_structured_content() {
        let e = entry(McpServer::stdio("s", "x").allow_tools(["plain"]));
        let tools = crate::exec::block_on(e.map(listed())).unwrap();
        assert_eq!(tools.len(), 1);
        let schema = tools[0].output_schema.as_ref().unwrap();
        let check = |v| crate::exec::block_on(schema.validate(v));
        assert!(check(json!({"n": 1})).is_ok());
        let err = check(json!({"n": "x"})).unwrap_err().message;
        assert!(err.starts_with("/n: "), "{err}");
    }

    #[test]
    fn an_invalid_input_schema_is_definition_invalid() {
        let bad = vec![json!({"name": "bad", "inputSchema": {"type": 12}})];
        let e = entry(McpServer::stdio("s", "x"));
        let err = crate::exec::block_on(e.map(bad)).unwrap_err();
        assert_eq!(err.code(), crate::ErrorCode::DefinitionInvalid);
        assert!(
            err.message()
                .starts_with("Invalid MCP tool 'bad' of server 's': "),
            "{}",
            err.message()
        );
    }
}
