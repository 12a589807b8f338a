"""A small MCP server for the core's tests, written with the official Python `mcp` package.

Tools: annotated (read-only / destructive), structured output with an outputSchema,
progress notifications, a slow tool that honours cancellation (writes
`$PHASEO_MCP_MARKERS/started-<tag>` when it begins and `$PHASEO_MCP_MARKERS/cancelled-<tag>`
when it sees `notifications/cancelled`), an
`isError` result, a tool that kills the server mid-call, and a tool that adds a tool
and sends `notifications/tools/list_changed` (and one that adds a tool silently).

Environment: `PHASEO_MCP_MARKERS` (a directory for marker files; the server writes its
pid to `pid-<pid>` there on start), `PHASEO_MCP_NAME` (server name).
"""

import os
import sys
from pathlib import Path

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel

MARKERS = Path(os.environ["PHASEO_MCP_MARKERS"]) if os.environ.get("PHASEO_MCP_MARKERS") else None
server = MCPServer(os.environ.get("PHASEO_MCP_NAME", "phaseo-test"))


def mark(name: str, text: str = "") -> None:
    if MARKERS is None:
        return
    MARKERS.mkdir(parents=True, exist_ok=True)
    (MARKERS / name).write_text(text)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def echo(text: str) -> str:
    """Returns its input text."""
    return text


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True), structured_output=False)
def delete_file(path: str) -> str:
    """Pretends to delete a file (destructive); records the call: one line per call in
    `deleted-<path>`, the pid of the process that started this server (the agent's host)."""
    if MARKERS is not None:
        MARKERS.mkdir(parents=True, exist_ok=True)
        with open(MARKERS / ("deleted-" + path.replace("/", "_")), "a") as f:
            f.write(f"{os.getppid()}\n")
    return f"deleted {path}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False), structured_output=False)
def append_note(note: str) -> str:
    """Appends a note (not read-only, not destructive)."""
    return f"noted {note}"


class Sum(BaseModel):
    total: int
    count: int


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def add(numbers: list[int]) -> Sum:
    """Adds numbers; structured output."""
    return Sum(total=sum(numbers), count=len(numbers))


@server.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
async def count_up(steps: int, ctx: Context) -> str:
    """Reports progress `steps` times, then returns."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
        await anyio.sleep(0.01)
    return f"counted {steps}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
async def slow(seconds: float, tag: str) -> str:
    """Sleeps; records that it began and a cancellation it sees."""
    mark("started-" + tag, tag)
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        mark("cancelled-" + tag, tag)
        raise
    mark("finished-" + tag, tag)
    return f"slept {seconds}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def fail(reason: str) -> str:
    """Always fails with an isError result."""
    raise ToolError(f"failed: {reason}")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def crash() -> str:
    """Kills the server in the middle of the call."""
    print("crashing on purpose", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool(annotations=ToolAnnotations(readOnlyHint=False), structured_output=False)
async def grow(ctx: Context) -> str:
    """Adds a tool `grown` and announces the change."""

    def grown() -> str:
        """A tool added at run time."""
        return "grown"

    server.add_tool(grown, annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
    await ctx.session.send_tool_list_changed()
    return "grew"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def noisy(kb: int) -> str:
    """Writes `kb` KiB to stderr (more than a pipe holds) before answering."""
    line = "x" * 1023 + "\n"
    for _ in range(kb):
        sys.stderr.write(line)
    sys.stderr.flush()
    return f"wrote {kb} KiB"


@server.tool(annotations=ToolAnnotations(readOnlyHint=False), structured_output=False)
def grow_quietly() -> str:
    """Adds a tool `quiet` without announcing it (only a relisting finds it)."""

    def quiet() -> str:
        """A tool added silently."""
        return "quiet"

    server.add_tool(quiet, annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
    return "grew quietly"


if __name__ == "__main__":
    mark(f"pid-{os.getpid()}", str(os.getpid()))
    server.run("stdio")
