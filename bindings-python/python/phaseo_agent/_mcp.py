"""MCP servers (docs/behaviour.md §11): ``mcp_stdio_server`` and ``mcp_http_server``, given to an
agent as ``mcp_servers=[...]``. Their tools are listed when a run first needs them and
are tools like any other (validated, timed out, approved, paused and continued)."""

from __future__ import annotations

import inspect
import os
from typing import Any, Awaitable, Callable, Dict, Mapping, Optional, Sequence, Union

from . import _native
from ._native import ToolRuntime
from ._records import AgentToolCall, Record

__all__ = ["McpServer", "McpToolInfo", "mcp_http_server", "mcp_stdio_server"]

#: A declared MCP server (what ``mcp_stdio_server`` / ``mcp_http_server`` return).
McpServer = _native.NativeMcpServer

McpApproval = Union[bool, str, Callable[[AgentToolCall, ToolRuntime], Any]]
"""``True`` (every call), ``False`` (none), ``"destructive"`` (tools whose
``destructiveHint`` is true or whose ``readOnlyHint`` is not true) or a predicate
``(call, runtime)`` (``runtime.tool_annotations`` holds the tool's annotations)."""


class McpToolInfo(Record):
    """A listed tool as a filter sees it: ``tool.name``, ``tool.description`` and
    ``tool.annotations`` (``{}`` when the server gave none); keys work too."""

    __slots__ = ()


def _filter(predicate: Any) -> Any:
    """The user's filter, called with a :class:`McpToolInfo` (anything else goes to the core
    as given: it refuses what is not a function)."""
    if not callable(predicate):
        return predicate
    if inspect.iscoroutinefunction(predicate) or inspect.iscoroutinefunction(getattr(predicate, "__call__", None)):

        async def keep_async(info: Dict[str, Any]) -> Any:
            return await predicate(McpToolInfo(info))

        return keep_async
    return lambda info: predicate(McpToolInfo(info))


def _elicitation(hook: Any) -> Any:
    """The user's hook, called with a :class:`Record` context (anything else goes to the
    core as given)."""
    if not callable(hook):
        return hook
    if inspect.iscoroutinefunction(hook) or inspect.iscoroutinefunction(getattr(hook, "__call__", None)):

        async def answer_async(request: Dict[str, Any], context: Dict[str, Any]) -> Any:
            return await hook(request, Record(context))

        return answer_async
    return lambda request, context: hook(request, Record(context))


def _server(declaration: Dict[str, Any]) -> McpServer:
    """Hands a declaration to the core's reader, which checks it (its refusals name the
    keywords as Python spells them)."""
    declaration["filter"] = _filter(declaration.get("filter"))
    declaration["on_elicitation"] = _elicitation(declaration.get("on_elicitation"))
    return _native.NativeMcpServer(declaration)


def mcp_stdio_server(name: str, command: str, args: Optional[Sequence[str]] = None,
                     env: Optional[Mapping[str, str]] = None, cwd: Union[str, "os.PathLike[str]", None] = None,
                     *, allow_tools: Optional[Sequence[str]] = None, deny_tools: Optional[Sequence[str]] = None,
                     filter: Optional[Callable[[McpToolInfo], Union[bool, Awaitable[bool]]]] = None,
                     tool_prefix: Optional[str] = None, require_approval: McpApproval = False,
                     timeout_ms: Optional[float] = None, tool_timeouts: Optional[Mapping[str, float]] = None,
                     on_error: Optional[str] = None, cache_ttl_ms: Optional[float] = None, optional: bool = False,
                     on_elicitation: Optional[Callable[[Dict[str, Any], Record], Any]] = None,
                     defer_loading: bool = False, **unknown: Any) -> McpServer:
    """An MCP server started as a child process (``command`` with ``args``; ``env`` is
    added to the inherited environment; ``cwd`` its working directory) and spoken to over
    stdio. It starts when a run first needs its tools, is shared by the agent's runs, and
    stops with the agent (``agent.close()``, ``with``/``async with``) or the process.

    Options: ``allow_tools``/``deny_tools`` (MCP names), ``filter`` (``(tool) -> bool``
    on ``tool.name``/``tool.description``/``tool.annotations``), ``tool_prefix`` (``x``
    becomes ``<prefix>_x``), ``require_approval`` (``True``, ``False``,
    ``"destructive"`` or ``(call, runtime) -> bool``), ``timeout_ms`` and ``tool_timeouts``
    (``{tool: ms}``), ``on_error`` (``"fail-run"``/``"return-to-model"``),
    ``cache_ttl_ms``, ``optional`` (run without its tools when it cannot be listed) and
    ``on_elicitation`` (``(request, context) -> {"action": ..., "content": ...}``;
    requests are declined without one), ``defer_loading`` (none of its tools is offered
    until the built-in ``tool_search`` finds and loads it, as a tool's own
    ``defer_loading``). An unknown option raises
    :class:`~phaseo_agent.errors.AgentDefinitionError` naming it."""
    return _server(dict(unknown, name=name, command=command, args=args, env=env,
                        cwd=os.fspath(cwd) if isinstance(cwd, os.PathLike) else cwd,
                        allow_tools=allow_tools, deny_tools=deny_tools, filter=filter, tool_prefix=tool_prefix,
                        require_approval=require_approval, timeout_ms=timeout_ms, tool_timeouts=tool_timeouts,
                        on_error=on_error, cache_ttl_ms=cache_ttl_ms, optional=optional,
                        on_elicitation=on_elicitation, defer_loading=defer_loading))


def mcp_http_server(name: str, url: str, headers: Optional[Mapping[str, str]] = None, *,
                    bearer_token: Optional[str] = None, allow_tools: Optional[Sequence[str]] = None,
                    deny_tools: Optional[Sequence[str]] = None,
                    filter: Optional[Callable[[McpToolInfo], Union[bool, Awaitable[bool]]]] = None,
                    tool_prefix: Optional[str] = None, require_approval: McpApproval = False,
                    timeout_ms: Optional[float] = None, tool_timeouts: Optional[Mapping[str, float]] = None,
                    on_error: Optional[str] = None, cache_ttl_ms: Optional[float] = None, optional: bool = False,
                    on_elicitation: Optional[Callable[[Dict[str, Any], Record], Any]] = None,
                    defer_loading: bool = False, **unknown: Any) -> McpServer:
    """An MCP server reached over Streamable HTTP at ``url``, with ``headers`` on every
    request and ``bearer_token`` as ``Authorization: Bearer <token>``. Options as
    :func:`mcp_stdio_server`."""
    return _server(dict(unknown, name=name, url=url, headers=headers, bearer_token=bearer_token,
                        allow_tools=allow_tools, deny_tools=deny_tools, filter=filter, tool_prefix=tool_prefix,
                        require_approval=require_approval, timeout_ms=timeout_ms, tool_timeouts=tool_timeouts,
                        on_error=on_error, cache_ttl_ms=cache_ttl_ms, optional=optional,
                        on_elicitation=on_elicitation, defer_loading=defer_loading))
