"""Drives a served MCP server (docs/behaviour.md §19) with the official MCP Python SDK
client (PyPI ``mcp``). tests/mcp/ts_client.mjs is the same driver with the official
TypeScript SDK client; both take the same command line, so a serving test can use either.

    served_client.py SCENARIO APPROVE [--mark FILE] [--annotated] [--output-schema] TARGET

TARGET: ``--url URL`` (a running Streamable HTTP server), ``--spawn-url -- COMMAND...``
(started here; it prints its endpoint URL on its first stdout line and stops when its stdin
closes) or ``-- COMMAND...`` (a stdio server, started by the client). A started server gets
this process's environment plus ``CANCEL_MARK=FILE`` with ``--mark``: the file its ``slow``
tool writes when its call is cancelled.

APPROVE: ``none`` (a client without the elicitation capability), ``yes`` or ``no`` (the
answer to every elicitation: accept with ``{"approve": true|false}``).

The served tools are ``add`` (two numbers into ``{"sum"}``),
``slow`` (reports progress, then waits until cancelled), ``steps`` (progress ``{1, 2,
"half"}`` then ``"almost"``, answers 2), ``delete`` (needs approval) and ``sleepy`` (times
out after 200 ms). Scenarios, each printing ONE JSON line of what the client saw:

- ``tools``: list (``tools``: name → the listed tool), then call add, add with invalid
  input (``invalid``), sleepy, steps (``progress``: ``[progress, total, message]``s) and
  delete; each call as ``{"isError", "text", "structured"}``; ``asked``: the elicitation
  messages.
- ``cancel``: call slow, cancel it at its first progress (``cancelled``), then call add on
  the same session; with ``--mark``, ``observed``: whether the tool saw its cancellation.
- ``agent``: list, then call the served agent ``researcher`` (``call``).
- ``check``: every behaviour above asserted here, on two sessions: a client without
  elicitation (list, input schema, destructive approval, call, structured output,
  validation error, unknown tool, timeout, progress, approval refused, cancellation:
  reaching the tool with ``--mark``, the session usable after it), then one that accepts
  the first approval and declines the second (APPROVE is not used). ``--annotated``: add
  also has ``readOnlyHint`` and the title "Add numbers"; ``--output-schema``: add's output
  schema is listed. Prints ``{"passed": [names], "failed": [{"check", "detail"}]}`` and
  exits 1 when a check failed.
"""

import json
import os
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Dict, List, Optional

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

USAGE = "usage: served_client.py SCENARIO none|yes|no [--mark FILE] [--annotated] [--output-schema] (--url URL | [--spawn-url] -- COMMAND...)"


class Options:
    """The parsed command line."""

    def __init__(self, argv: List[str]) -> None:
        if len(argv) < 3:
            sys.exit(USAGE)
        self.scenario, self.approve = argv[0], argv[1]
        self.mark: Optional[Path] = None
        self.annotated = False
        self.output_schema = False
        self.url: Optional[str] = None
        self.spawn = False
        self.command: List[str] = []
        rest = argv[2:]
        while rest:
            arg = rest.pop(0)
            if arg == "--mark":
                self.mark = Path(rest.pop(0))
            elif arg == "--annotated":
                self.annotated = True
            elif arg == "--output-schema":
                self.output_schema = True
            elif arg == "--url":
                self.url = rest.pop(0)
            elif arg == "--spawn-url":
                self.spawn = True
            elif arg == "--":
                self.command, rest = rest, []
            else:
                sys.exit(f"unknown argument {arg!r}\n{USAGE}")
        if self.scenario not in SCENARIOS or self.approve not in ("none", "yes", "no") \
                or (self.url is None) == (not self.command):
            sys.exit(USAGE)
        self.env = dict(os.environ)
        if self.mark is not None:
            self.env["CANCEL_MARK"] = str(self.mark)


@asynccontextmanager
async def served(opts: Options) -> AsyncIterator[Optional[str]]:
    """The server's URL for the whole run (a ``--spawn-url`` server started and stopped
    here), or None for a stdio server (started by each session)."""
    if not opts.spawn:
        yield opts.url
        return
    proc = subprocess.Popen(opts.command, env=opts.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url:
            raise RuntimeError(f"the server printed no URL (exit {proc.wait()})")
        yield url
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise


@asynccontextmanager
async def connect(opts: Options, url: Optional[str], answers: Optional[List[str]],
                  asked: List[str]) -> AsyncIterator[ClientSession]:
    """A session; ``answers``: None for a client without elicitation, else the answer to
    each elicitation in turn (the last one repeats): ``yes``/``no`` (accept with that
    approval) or ``decline``."""

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert answers is not None
        answer = answers[min(len(asked), len(answers) - 1)]
        asked.append(params.message)
        if answer == "decline":
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"approve": answer == "yes"})

    callback = None if answers is None else elicit
    if url is not None:
        async with streamable_http_client(url) as (read, write, *_):
            async with ClientSession(read, write, elicitation_callback=callback) as session:
                await session.initialize()
                yield session
    else:
        params = StdioServerParameters(command=opts.command[0], args=opts.command[1:], env=opts.env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, elicitation_callback=callback) as session:
                await session.initialize()
                yield session


def answers(opts: Options) -> Optional[List[str]]:
    """The elicitation answers APPROVE asks for."""
    return None if opts.approve == "none" else [opts.approve]


def result(r: types.CallToolResult) -> Dict[str, Any]:
    texts = [b.text for b in r.content if isinstance(b, types.TextContent)]
    return {"isError": bool(r.is_error), "text": texts[0] if texts else None,
            "structured": r.structured_content}


async def listed(s: ClientSession) -> Dict[str, Any]:
    return {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True)
            for t in (await s.list_tools()).tools}


async def cancel_slow(s: ClientSession) -> None:
    """Calls slow and cancels the call at its first progress notification."""
    started = anyio.Event()

    async def progress(progress: float, total: Optional[float], message: Optional[str]) -> None:
        started.set()

    async def call() -> None:
        await s.call_tool("slow", {}, progress_callback=progress)

    async with anyio.create_task_group() as group:
        group.start_soon(call)
        await started.wait()
        group.cancel_scope.cancel()


async def observed(mark: Path) -> bool:
    """Whether the cancelled tool wrote its mark (within 120 s)."""
    for _ in range(1200):
        if mark.exists():
            return True
        await anyio.sleep(0.1)
    return False


async def tools(opts: Options, url: Optional[str], out: Dict[str, Any]) -> None:
    asked: List[str] = []
    async with connect(opts, url, answers(opts), asked) as s:
        out["tools"] = await listed(s)
        out["add"] = result(await s.call_tool("add", {"a": 2, "b": 3}))
        out["invalid"] = result(await s.call_tool("add", {"a": "two"}))
        out["sleepy"] = result(await s.call_tool("sleepy", {}))
        seen: List[Any] = []

        async def progress(progress: float, total: Optional[float], message: Optional[str]) -> None:
            seen.append([progress, total, message])

        out["steps"] = result(await s.call_tool("steps", {}, progress_callback=progress))
        out["progress"] = seen
        out["delete"] = result(await s.call_tool("delete", {"path": "/x"}))
    out["asked"] = asked


async def cancel(opts: Options, url: Optional[str], out: Dict[str, Any]) -> None:
    if opts.mark is not None and opts.mark.exists():
        opts.mark.unlink()
    async with connect(opts, url, answers(opts), []) as s:
        await cancel_slow(s)
        out["cancelled"] = True
        if opts.mark is not None:
            out["observed"] = await observed(opts.mark)
        # The session stays usable after a cancelled call.
        out["add"] = result(await s.call_tool("add", {"a": 1, "b": 1}))


async def agent(opts: Options, url: Optional[str], out: Dict[str, Any]) -> None:
    asked: List[str] = []
    async with connect(opts, url, answers(opts), asked) as s:
        out["tools"] = await listed(s)
        out["call"] = result(await s.call_tool("researcher", {"input": "find x"}))
    out["asked"] = asked


async def check(opts: Options, url: Optional[str], out: Dict[str, Any]) -> None:
    passed: List[str] = out.setdefault("passed", [])
    failed: List[Dict[str, Any]] = out.setdefault("failed", [])

    def expect(name: str, ok: bool, detail: Any = "") -> None:
        if ok:
            passed.append(name)
        else:
            failed.append({"check": name, "detail": repr(detail)})

    if opts.mark is not None and opts.mark.exists():
        opts.mark.unlink()
    # Two sessions (two server processes over stdio): one without the elicitation
    # capability, one that accepts the first approval and declines the second.
    async with connect(opts, url, None, []) as s:
        tools = await listed(s)
        expect("list", set(tools) == {"add", "slow", "steps", "delete", "sleepy"}, sorted(tools))
        add = tools.get("add", {})
        expect("input schema", add.get("inputSchema", {}).get("required") == ["a", "b"], add)
        if opts.output_schema:
            expect("output schema", add.get("outputSchema", {}).get("properties") == {"sum": {"type": "number"}}, add)
        expect("approval is destructive",
               tools.get("delete", {}).get("annotations", {}).get("destructiveHint") is True, tools.get("delete"))
        if opts.annotated:
            expect("annotations", add.get("annotations", {}).get("readOnlyHint") is True, add)
            expect("title", "Add numbers" in (add.get("title"), add.get("annotations", {}).get("title")), add)
        summed = result(await s.call_tool("add", {"a": 2, "b": 3}))
        expect("call", summed["isError"] is False, summed)
        expect("structured output", summed["structured"] == {"sum": 5}, summed)
        expect("structured output as text", summed["text"] is not None and json.loads(summed["text"]) == {"sum": 5}, summed)
        invalid = result(await s.call_tool("add", {"a": "two"}))
        expect("validation error", invalid["isError"] and (invalid["text"] or "").startswith("Invalid tool input"), invalid)
        unknown = result(await s.call_tool("nope", {}))
        expect("unknown tool", unknown["isError"], unknown)
        late = result(await s.call_tool("sleepy", {}))
        expect("timeout", late["isError"] and late["text"] == "Tool sleepy timed out after 200ms", late)
        seen: List[Any] = []

        async def progress(progress: float, total: Optional[float], message: Optional[str]) -> None:
            seen.append([progress, total, message])

        done = result(await s.call_tool("steps", {}, progress_callback=progress))
        expect("progress result", done["text"] == "2", done)
        expect("progress", seen == [[1, 2, "half"], [2, None, "almost"]], seen)
        refused = result(await s.call_tool("delete", {"path": "/x"}))
        expect("no elicitation", refused["isError"]
               and refused["text"] == "Tool delete requires approval and this client cannot be asked", refused)
        await cancel_slow(s)
        if opts.mark is not None:
            expect("cancellation reaches the tool", await observed(opts.mark), "no mark after 120 s")
        after = result(await s.call_tool("add", {"a": 1, "b": 1}))
        expect("usable after a cancellation", after["structured"] == {"sum": 2}, after)
    asked: List[str] = []
    async with connect(opts, url, ["yes", "decline"], asked) as s:
        ok = result(await s.call_tool("delete", {"path": "/x"}))
        expect("approved", not ok["isError"] and ok["text"] == "deleted /x", ok)
        expect("elicitation message", len(asked) == 1 and "delete" in asked[0] and '{"path":"/x"}' in asked[0], asked)
        no = result(await s.call_tool("delete", {"path": "/x"}))
        expect("declined", no["isError"] and no["text"] == "Tool call rejected by human", no)


SCENARIOS = {"tools": tools, "cancel": cancel, "agent": agent, "check": check}


def main() -> None:
    opts = Options(sys.argv[1:])

    async def run() -> None:
        out: Dict[str, Any] = {}
        with anyio.fail_after(300):
            async with served(opts) as url:
                await SCENARIOS[opts.scenario](opts, url, out)
        print(json.dumps(out), flush=True)
        if out.get("failed"):
            sys.exit(1)

    anyio.run(run)


if __name__ == "__main__":
    main()
