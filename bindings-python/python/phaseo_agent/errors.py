"""Errors of the Phaseo Agent SDK: one base class with a stable ``code`` (docs/behaviour.md §9).

Each class also derives from the builtin the product's Python SDK raised in its place, so
code ported from it keeps catching them: ``ValueError`` (validation, unknown tool, refused
continue, invalid state or definition), ``TimeoutError`` (tool timeout), ``RuntimeError``
(max steps), ``InterruptedError`` (cancelled)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Type

if TYPE_CHECKING:
    from ._native import RunResult

__all__ = [
    "AgentError",
    "AgentSchemaValidationError",
    "AgentToolTimeoutError",
    "AgentUnknownToolError",
    "AgentToolError",
    "AgentMaxStepsError",
    "AgentContinueError",
    "AgentStateError",
    "AgentModelError",
    "AgentGatewayError",
    "AgentDefinitionError",
    "AgentCancelledError",
    "AgentStoreError",
    "AgentLeaseLostError",
    "AgentMcpError",
    "error_class",
]


class AgentError(Exception):
    """Base of every SDK error.

    ``code`` is stable across languages; ``result`` carries the failed run's final state
    when the run itself failed (None for a refused continue: the state you passed is
    still the current one).
    """

    code: str
    result: Optional["RunResult"]

    def __init__(self, message: str, *, code: str = "tool_failed", result: Optional["RunResult"] = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.result = result
        for key, value in details.items():
            setattr(self, key, value)


class AgentSchemaValidationError(AgentError, ValueError):
    """Input, output, progress or final output failed validation; ``target`` says which
    (``tool_input``, ``tool_output``, ``tool_event``, ``agent_output``)."""

    target: str


class AgentToolTimeoutError(AgentError, TimeoutError):
    """A tool call ran past its ``timeout_ms`` (code ``tool_timeout``)."""


class AgentUnknownToolError(AgentError, ValueError):
    """The model called a tool the agent does not have (code ``unknown_tool``)."""


class AgentToolError(AgentError):
    """A tool or hook raised (code ``tool_failed``)."""


class AgentMaxStepsError(AgentError, RuntimeError):
    """The run reached ``max_steps`` (code ``max_steps``)."""


class AgentContinueError(AgentError, ValueError):
    """A continue was refused; nothing ran and the state is unchanged (code ``continue_invalid``)."""


class AgentStateError(AgentError, ValueError):
    """State JSON malformed or of an unsupported version (code ``state_invalid``)."""


class AgentModelError(AgentError):
    """Every model attempt failed (code ``model_failed``)."""


class AgentGatewayError(AgentModelError):
    """A model endpoint answered with an HTTP error (code ``gateway``): ``status``,
    ``status_text``, ``request_id``, ``reason``."""

    status: int
    status_text: str
    request_id: Optional[str]
    reason: Optional[str]


class AgentDefinitionError(AgentError, ValueError):
    """A tool or agent definition is invalid (code ``definition_invalid``)."""


class AgentCancelledError(AgentError, InterruptedError):
    """The run was cancelled (code ``cancelled``)."""


class AgentStoreError(AgentError, RuntimeError):
    """The run store failed (code ``store_failed``): a database that cannot be reached, a
    newer schema, or an operation the store does not support. When a run was under way,
    ``result`` carries its state."""


class AgentLeaseLostError(AgentError, RuntimeError):
    """Another worker took over the run this one was working on (code ``lease_lost``)."""


class AgentMcpError(AgentError, RuntimeError):
    """An MCP server could not start, died, or broke the protocol (code ``mcp_failed``)."""


_CLASSES: Dict[str, Type[AgentError]] = {
    "tool_input_invalid": AgentSchemaValidationError,
    "tool_output_invalid": AgentSchemaValidationError,
    "tool_event_invalid": AgentSchemaValidationError,
    "agent_output_invalid": AgentSchemaValidationError,
    "unknown_tool": AgentUnknownToolError,
    "tool_timeout": AgentToolTimeoutError,
    "tool_failed": AgentToolError,
    "max_steps": AgentMaxStepsError,
    "continue_invalid": AgentContinueError,
    "state_invalid": AgentStateError,
    "model_failed": AgentModelError,
    "gateway": AgentGatewayError,
    "definition_invalid": AgentDefinitionError,
    "cancelled": AgentCancelledError,
    "store_failed": AgentStoreError,
    "lease_lost": AgentLeaseLostError,
    "mcp_failed": AgentMcpError,
}


def error_class(code: str) -> Type[AgentError]:
    """The exception class for an error code."""
    return _CLASSES.get(code, AgentError)
