"""Records with the product's names and shapes: dicts whose keys are attributes as well
(``call.id`` and ``call["id"]``), and the product's definition dataclasses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

__all__ = ["AgentDefinition", "AgentHumanReviewRequest", "AgentToolCall", "Record"]


class Record(Dict[str, Any]):
    """A dict whose keys read as attributes too: ``usage.total_tokens == usage["total_tokens"]``."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}") from None


class AgentToolCall(Record):
    """A requested call, ``{"id", "name", "input"}``: ``call.id`` or ``call["id"]`` (the
    id is the idempotency key). Equal to the plain dict with the same keys."""

    __slots__ = ()

    def __init__(self, id: str, name: str, input: Any = None) -> None:
        super().__init__(id=id, name=name, input=input)

    @property
    def id(self) -> str:
        """The call id."""
        return str(self["id"])

    @property
    def name(self) -> str:
        """The tool id."""
        return str(self["name"])

    @property
    def input(self) -> Any:
        """The call's input."""
        return self["input"]

    def __repr__(self) -> str:
        return f"AgentToolCall(id={self['id']!r}, name={self['name']!r}, input={self['input']!r})"


@dataclass
class AgentHumanReviewRequest:
    """What ``human_review`` returns to pause the run (a ``{"reason", "payload"}`` dict works too)."""

    reason: str
    payload: Any = None


@dataclass
class AgentDefinition:
    """An agent definition as a dataclass (the product's form; ``create_agent`` takes it
    as well as a dict). ``preset`` makes the model ``@<preset>`` when ``model`` is unset;
    ``parse_output(text)`` turns the final text into the output before ``output_schema``."""

    id: str
    model: Any = None
    preset: Optional[str] = None
    instructions: Any = None
    tools: Sequence[Any] = field(default_factory=list)
    max_steps: Optional[int] = None
    parse_output: Optional[Callable[[str], Any]] = None
    human_review: Optional[Callable[..., Any]] = None
    model_retry: Any = None
    tool_execution: Any = None
    stop_when: Any = None
    temperature: Any = None
    max_output_tokens: Any = None
    top_p: Any = None
    output_schema: Any = None
    require_approval: Optional[Callable[..., Any]] = None
    state_secret: Union[str, List[str], None] = None
    tool_choice: Any = None
    """docs/behaviour.md §12: ``"auto"``, ``"required"``, ``"none"``, ``{"tool_id": id}`` or a function of the turn."""
    parallel_tool_calls: Optional[bool] = None
    active_tools: Any = None
    """The tool ids offered: a list or a function of the turn."""
    #: A run store (``SqliteRunStore``, ``PostgresRunStore``, ``InMemoryRunStore``) or an
    #: object with ``load(run_id)``/``save(state)``.
    store: Any = None
    #: An ``AgentLease`` or ``{"duration_ms", "renew_every_ms"}``.
    lease: Any = None
    #: MCP servers (``mcp_stdio_server(...)``, ``mcp_http_server(...)``) whose tools the
    #: agent offers too.
    mcp_servers: Optional[Sequence[Any]] = None
