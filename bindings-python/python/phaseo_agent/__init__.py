"""Phaseo Agent SDK for Python: tools a model can call — validated, timed out, approved by
a person when it matters, concurrent and resumable — on the SDK's Rust core.

>>> from phaseo_agent import AgentTool, ScriptedClient, create_agent, define_tool
>>> add = define_tool(AgentTool(id="add", execute=lambda i, rt: i["a"] + i["b"]))
>>> agent = create_agent({"id": "calc", "tools": [add]})
>>> client = ScriptedClient([{"tool_calls": [{"id": "c1", "name": "add", "arguments": '{"a": 2, "b": 3}'}]}, {"text": "5"}])
>>> agent.run(input="2+3?", client=client).output
'5'
"""

import atexit as _atexit

from . import _native
from ._native import (
    STATE_VERSION,
    CancelledFlag,
    CancelToken,
    HttpModelClient,
    JsonSchemaValidator,
    PendingToolCall,
    RunResult,
    ScriptedClient,
    StopCondition,
    TestClient,
    Tool,
    ToolRuntime,
    Usage,
    finish_reason_is,
    has_tool_call,
    max_cost,
    max_duration,
    max_tokens_used,
    step_count_is,
)
from ._agent import (
    Agent,
    AgentModelRetry,
    AgentLease,
    AgentModelRetryConfig,
    AgentStream,
    AgentToolDecision,
    AgentToolExecutionConfig,
    AgentToolOutput,
    RunOverrides,
    create_agent,
)
from ._events import ToolInputDeltaEvent, ToolInputStartedEvent
from ._client import create_gateway_agent_client, create_openai_compatible_client
from ._mcp import McpServer, McpToolInfo, mcp_http_server, mcp_stdio_server
from ._serve import McpToolServer, serve_mcp
from ._store import InMemoryRunStore, PostgresRunStore, RunPage, RunStore, SqliteRunStore, StoredRun
from ._records import AgentDefinition, AgentHumanReviewRequest, AgentToolCall
from ._tools import AgentTool, ToolRetry, ToolReturn, define_tool, json_schema_validator, tool
from ._tracing import enable_tracing, flush_tracing, shutdown_tracing

#: The product's name of :class:`ToolRuntime` (what a tool call sees).
AgentRuntimeContext = ToolRuntime
#: The product's name of the gateway client class (:class:`HttpModelClient`).
GatewayAgentClient = HttpModelClient
from .errors import (
    AgentCancelledError,
    AgentContinueError,
    AgentDefinitionError,
    AgentError,
    AgentGatewayError,
    AgentLeaseLostError,
    AgentMaxStepsError,
    AgentMcpError,
    AgentModelError,
    AgentSchemaValidationError,
    AgentStateError,
    AgentStoreError,
    AgentToolError,
    AgentToolTimeoutError,
    AgentUnknownToolError,
)

# Native threads must be done touching Python before the interpreter finalizes.
_atexit.register(_native._shutdown)

__all__ = [
    "McpToolServer",
    "serve_mcp",
    "STATE_VERSION",
    "enable_tracing",
    "flush_tracing",
    "shutdown_tracing",
    "Agent",
    "AgentCancelledError",
    "AgentMcpError",
    "AgentContinueError",
    "AgentDefinition",
    "AgentDefinitionError",
    "AgentError",
    "AgentGatewayError",
    "AgentHumanReviewRequest",
    "AgentLease",
    "AgentLeaseLostError",
    "AgentMaxStepsError",
    "AgentModelError",
    "AgentModelRetry",
    "AgentModelRetryConfig",
    "AgentRuntimeContext",
    "AgentSchemaValidationError",
    "AgentStateError",
    "AgentStoreError",
    "AgentStream",
    "AgentTool",
    "AgentToolCall",
    "AgentToolDecision",
    "AgentToolError",
    "AgentToolExecutionConfig",
    "AgentToolOutput",
    "RunOverrides",
    "ToolInputDeltaEvent",
    "ToolInputStartedEvent",
    "AgentToolTimeoutError",
    "AgentUnknownToolError",
    "CancelToken",
    "CancelledFlag",
    "GatewayAgentClient",
    "HttpModelClient",
    "InMemoryRunStore",
    "JsonSchemaValidator",
    "McpServer",
    "McpToolInfo",
    "PendingToolCall",
    "PostgresRunStore",
    "RunPage",
    "RunResult",
    "RunStore",
    "ScriptedClient",
    "SqliteRunStore",
    "StopCondition",
    "StoredRun",
    "TestClient",
    "Tool",
    "ToolRetry",
    "ToolReturn",
    "ToolRuntime",
    "Usage",
    "create_agent",
    "create_gateway_agent_client",
    "create_openai_compatible_client",
    "define_tool",
    "finish_reason_is",
    "has_tool_call",
    "json_schema_validator",
    "max_cost",
    "max_duration",
    "max_tokens_used",
    "mcp_http_server",
    "mcp_stdio_server",
    "step_count_is",
    "tool",
]
