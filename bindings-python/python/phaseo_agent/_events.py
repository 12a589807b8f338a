"""Typed shapes of run events that carry more than the common fields. Every event is a
``dict`` with snake_case keys; these describe the keys a given ``type`` has, for type
checkers."""

from __future__ import annotations

from typing import Literal, TypedDict


class _EventBase(TypedDict):
    run_id: str
    agent_id: str
    timestamp: str
    step_index: int


class ToolInputStartedEvent(_EventBase):
    """``tool.input_started`` (docs/behaviour.md §16): in a streamed run, the model began
    writing the arguments of call ``tool_call_id`` to tool ``tool_name``."""

    type: Literal["tool.input_started"]
    tool_call_id: str
    tool_name: str


class ToolInputDeltaEvent(_EventBase):
    """``tool.input_delta`` (docs/behaviour.md §16): the next fragment of call ``tool_call_id``'s
    arguments text. The fragments of one call, in order, make its final ``arguments``; they all
    arrive before the step's ``model.completed``."""

    type: Literal["tool.input_delta"]
    tool_call_id: str
    delta: str
