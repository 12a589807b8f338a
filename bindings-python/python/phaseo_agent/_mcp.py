"""MCP servers (docs/behaviour.md §11): ``mcp_stdio_server`` and ``mcp_http_server``, given to an
agent as ``mcp_servers=[...]``. Their tools are listed when a run first needs them and
are tools like any other (validated, timed out, approved, paused and continued)."""

from __future__ import annotations

import inspect
import os
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence, Union

from . import _native
from ._native import ToolRuntime
from ._records import AgentToolCall, Record
from .errors import AgentDefinitionError

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


_OPTIONS = {
    "allow_tools", "deny_tools", "filter", "tool_prefix", "require_approval", "timeout_ms",
    "tool_timeouts", "on_error", "cache_ttl_ms", "optional", "on_elicitation", "defer_loading",
}


def _invalid(name: str, message: str) -> AgentDefinitionError:
    return AgentDefinitionError(f"Invalid MCP server '{name}': {message}", code="definition_invalid")


def _names(name: str, what: str, value: Any) -> Optional[List[str]]:
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, set, frozenset)):
        raise _invalid(name, f"{what} must be a list of tool names, got {type(value).__name__}")
    names = list(value)
    if not all(isinstance(n, str) for n in names):
        raise _invalid(name, f"{what} must hold strings")
    return names


def _strings(name: str, what: str, value: Any) -> Optional[Dict[str, str]]:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise _invalid(name, f"{what} must be a dict of strings")
    return dict(value)


def _filter(predicate: Any) -> Optional[Callable[[Dict[str, Any]], Any]]:
    if predicate is None:
        return None
    if not callable(predicate):
        raise TypeError(f"filter must be a callable (tool) -> bool, got {predicate!r}")
    if inspect.iscoroutinefunction(predicate) or inspect.iscoroutinefunction(getattr(predicate, "__call__", None)):

        async def keep_async(info: Dict[str, Any]) -> Any:
            return await predicate(McpToolInfo(info))

        return keep_async
    return lambda info: predicate(McpToolInfo(info))


def _elicitation(hook: Any) -> Any:
    if hook is None:
        return None
    if not callable(hook):
        raise TypeError(f"on_elicitation must be a callable (request, context) -> dict, got {hook!r}")
    if inspect.iscoroutinefunction(hook) or inspect.iscoroutinefunction(getattr(hook, "__call__", None)):

        async def answer_async(request: Dict[str, Any], context: Dict[str, Any]) -> Any:
            return await hook(request, Record(context))

        return answer_async
    return lambda request, context: hook(request, Record(context))


def _options(name: str, options: Mapping[str, Any]) -> Dict[str, Any]:
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise _invalid(name, f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                             f"(known: {', '.join(sorted(_OPTIONS))})")
    timeouts = options.get("tool_timeouts")
    if timeouts is not None and not isinstance(timeouts, Mapping):
        raise _invalid(name, "tool_timeouts must be a dict {tool name: milliseconds}")
    optional = options.get("optional", False)
    if not isinstance(optional, bool):
        raise _invalid(name, f"optional must be True or False, got {optional!r}")
    defer_loading = options.get("defer_loading", False)
    if not isinstance(defer_loading, bool):
        raise _invalid(name, f"defer_loading must be True or False, got {defer_loading!r}")
    return {
        "allow_tools": _names(name, "allow_tools", options.get("allow_tools")),
        "deny_tools": _names(name, "deny_tools", options.get("deny_tools")),
        "filter": _filter(options.get("filter")),
        "tool_prefix": options.get("tool_prefix"),
        "require_approval": options.get("require_approval"),
        "timeout_ms": options.get("timeout_ms"),
        "tool_timeouts": dict(timeouts) if timeouts is not None else None,
        "on_error": options.get("on_error"),
        "cache_ttl_ms": options.get("cache_ttl_ms"),
        "optional": optional,
        "on_elicitation": _elicitation(options.get("on_elicitation")),
        "defer_loading": defer_loading,
    }


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
    if not isinstance(command, str):
        raise _invalid(name, f"command must be a string, got {type(command).__name__}")
    if args is not None and (isinstance(args, (str, bytes)) or not all(isinstance(a, str) for a in args)):
        raise _invalid(name, "args must be a list of strings")
    options = _options(name, dict(unknown, allow_tools=allow_tools, deny_tools=deny_tools, filter=filter,
                                  tool_prefix=tool_prefix, require_approval=require_approval, timeout_ms=timeout_ms,
                                  tool_timeouts=tool_timeouts, on_error=on_error, cache_ttl_ms=cache_ttl_ms,
                                  optional=optional, on_elicitation=on_elicitation,
                                  defer_loading=defer_loading))
    return _native.NativeMcpServer(name, command=command, args=list(args) if args is not None else None,
                                   env=_strings(name, "env", env), cwd=os.fspath(cwd) if cwd is not None else None,
                                   **options)


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
    if not isinstance(url, str):
        raise _invalid(name, f"url must be a string, got {type(url).__name__}")
    options = _options(name, dict(unknown, allow_tools=allow_tools, deny_tools=deny_tools, filter=filter,
                                  tool_prefix=tool_prefix, require_approval=require_approval, timeout_ms=timeout_ms,
                                  tool_timeouts=tool_timeouts, on_error=on_error, cache_ttl_ms=cache_ttl_ms,
                                  optional=optional, on_elicitation=on_elicitation,
                                  defer_loading=defer_loading))
    return _native.NativeMcpServer(name, url=url, headers=_strings(name, "headers", headers),
                                   bearer_token=bearer_token, **options)
