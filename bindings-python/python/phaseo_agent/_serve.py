"""Serving the application's tools as an MCP server (docs/behaviour.md §19): any MCP client
(Claude Code, Cursor, ...) calls them with their validation, approval (asked through
elicitation), timeout, retries, budgets and concurrency kept."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any, Dict, Mapping, Optional, Sequence, Type, Union

from . import _native
from ._agent import Agent, AgentToolExecutionConfig, _config
from .errors import AgentDefinitionError

__all__ = ["McpToolServer", "serve_mcp"]

#: ``"stdio"``, ``"http"`` or ``{"type", "host", "port", "path", "auth_token",
#: "allowed_origins", "allowed_hosts"}``.
McpServeTransport = Union[str, Mapping[str, Any]]

_TRANSPORT_KEYS = {
    "type": "type",
    "host": "host",
    "port": "port",
    "path": "path",
    "auth_token": "authToken",
    "allowed_origins": "allowedOrigins",
    "allowed_hosts": "allowedHosts",
}


def _transport(transport: McpServeTransport) -> Any:
    if isinstance(transport, str):
        return transport
    if isinstance(transport, Mapping):
        unknown = sorted(set(transport) - set(_TRANSPORT_KEYS))
        if unknown:
            raise AgentDefinitionError(f"transport: unknown keys {unknown}", code="definition_invalid")
        return {_TRANSPORT_KEYS[k]: v for k, v in transport.items()}
    raise TypeError(f"transport must be 'stdio', 'http' or a dict, got {transport!r}")


class McpToolServer:
    """A served MCP server. ``with serve_mcp(...) as server:`` (or ``async with``) starts it
    and closes it on exit; it also stops at the end of its input (stdio). ``url`` is the
    Streamable HTTP endpoint (``None`` on stdio)."""

    def __init__(self, tools: Sequence[_native.Tool], name: str, version: str,
                 transport: McpServeTransport,
                 tool_execution: Optional[Dict[str, Any]]) -> None:
        self._args = (list(tools), name, version, _transport(transport), tool_execution)
        self._server: Optional[_native.McpToolServer] = None

    def start(self, event_loop: Optional[asyncio.AbstractEventLoop] = None) -> "McpToolServer":
        """Starts serving (once); async tools run on ``event_loop`` (else a background loop)."""
        if self._server is None:
            tools, name, version, transport, tool_execution = self._args
            self._server = _native.serve_mcp(tools, name, version, transport, tool_execution, event_loop)
        return self

    @property
    def url(self) -> Optional[str]:
        """``http://host:port/path`` of a Streamable HTTP server; ``None`` on stdio."""
        return self._running().url

    @property
    def closed(self) -> bool:
        """Whether the server has stopped."""
        return self._server is not None and self._server.closed

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Blocks until the server stops (the client closed stdin, or ``close()``), at most
        ``timeout`` seconds; returns whether it stopped."""
        return self._running().wait(timeout)

    async def wait_closed(self) -> None:
        """Waits, without blocking the event loop, until the server stops."""
        server = self._running()
        while not server.closed:
            await asyncio.sleep(0.05)

    def close(self) -> None:
        """Stops the server: calls in flight are cancelled. Safe to call twice."""
        if self._server is not None:
            self._server.close()

    def _running(self) -> _native.McpToolServer:
        if self._server is None:
            raise RuntimeError("the MCP server is not started: use `with serve_mcp(...)` or start()")
        return self._server

    def __enter__(self) -> "McpToolServer":
        return self.start()

    def __exit__(self, kind: Optional[Type[BaseException]], value: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()

    async def __aenter__(self) -> "McpToolServer":
        return self.start(asyncio.get_running_loop())

    async def __aexit__(self, kind: Optional[Type[BaseException]], value: Optional[BaseException],
                        tb: Optional[TracebackType]) -> None:
        await asyncio.to_thread(self.close)


def serve_mcp(tools: Sequence[_native.Tool] = (), *, name: str, version: str = "0.0.0",
              transport: McpServeTransport = "stdio",
              tool_execution: Union[AgentToolExecutionConfig, Mapping[str, Any], None] = None,
              agent: Optional[Agent] = None, client: Any = None,
              description: Optional[str] = None) -> McpToolServer:
    """Serves ``tools`` (from ``define_tool``/``@tool``) as an MCP server named ``name``.
    Use it as a context manager: ``with serve_mcp([...], name="files") as server:
    server.wait()`` (or ``async with``). ``tool_execution`` sets ``tool_concurrency`` (calls
    served at once) and ``max_tool_calls`` (over the server's lifetime). Tools without
    ``execute`` cannot be served (``AgentDefinitionError``). ``agent`` is served as one
    tool (``agent.as_tool(description=description, client=client)``: the agent's id, one
    string ``input``), its runs on ``client``; its approvals are asked of the MCP client
    through elicitation."""
    served = list(tools)
    if agent is not None:
        served.append(agent.as_tool(description=description, client=client))
    return McpToolServer(served, name, version, transport,
                         _config(tool_execution, AgentToolExecutionConfig, "tool_execution"))
