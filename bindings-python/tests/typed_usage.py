"""A typed usage file: checked with ``mypy --strict`` in ``make test`` so the stubs and the
public annotations stay accurate."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any, Dict, Iterator, List, Optional

from phaseo_agent import (
    McpToolServer,
    serve_mcp,
    RunOverrides,
    Tool,
    AgentLease,
    AgentLeaseLostError,
    AgentStoreError,
    InMemoryRunStore,
    PostgresRunStore,
    RunPage,
    RunStore,
    SqliteRunStore,
    StoredRun,
    AgentDefinition,
    AgentError,
    AgentHumanReviewRequest,
    AgentModelRetryConfig,
    AgentRuntimeContext,
    AgentToolCall,
    GatewayAgentClient,
    AgentTool,
    AgentToolDecision,
    AgentToolExecutionConfig,
    AgentToolOutput,
    PendingToolCall,
    RunResult,
    ScriptedClient,
    ToolInputDeltaEvent,
    ToolInputStartedEvent,
    ToolRetry,
    ToolRuntime,
    Usage,
    create_agent,
    create_gateway_agent_client,
    define_tool,
    step_count_is,
    Tool,
    tool,
)


def input_so_far(events: List[Dict[str, Any]], tool_call_id: str) -> str:
    """A call's arguments as the model wrote them so far, from typed tool input events."""
    text = ""
    for event in events:
        if event["type"] == "tool.input_started":
            started: ToolInputStartedEvent = event  # type: ignore[assignment]
            assert started["tool_name"]
        elif event["type"] == "tool.input_delta":
            delta: ToolInputDeltaEvent = event  # type: ignore[assignment]
            if delta["tool_call_id"] == tool_call_id:
                text += delta["delta"]
    return text


def lookup(tool_input: Dict[str, Any], runtime: ToolRuntime) -> Dict[str, Any]:
    runtime.emit_progress({"phase": "lookup"})
    if runtime.cancelled.is_set():
        raise RuntimeError("cancelled")
    attempt: int = runtime.attempt
    key: str = runtime.idempotency_key
    return {"id": tool_input["id"], "run": runtime.run_id, "step": runtime.step_index, "attempt": attempt, "key": key}


async def slow(tool_input: Dict[str, Any], runtime: ToolRuntime) -> str:
    await asyncio.sleep(0)
    return str(runtime.tool_call["id"])


def main() -> Optional[str]:
    tools = [
        define_tool(AgentTool(id="lookup", execute=lookup, timeout_ms=1000, max_calls=3,
                              retry=ToolRetry(max_attempts=2, backoff_ms=100))),
        define_tool(AgentTool(id="slow", execute=slow, require_approval=True)),
        define_tool(AgentTool(id="manual", parameters={"type": "object"})),
        define_tool(AgentTool(id="manual_too", execute=False)),
        define_tool(AgentTool(id="later", execute=lookup, defer_loading=True)),
    ]
    agent = create_agent({"id": "typed", "tools": tools, "stop_when": [step_count_is(5)],
                          "tool_execution": AgentToolExecutionConfig(tool_concurrency=2, max_tool_calls=10)})
    client = ScriptedClient([{"tool_calls": [{"id": "c1", "name": "lookup", "arguments": '{"id": 1}'}]}, {"text": "ok"}])
    try:
        result: RunResult = agent.run(input="hi", client=client, context={"user": "ana"})
    except AgentError as error:
        code: str = error.code
        return code
    pending: List[PendingToolCall] = result.pending
    usage: Usage = result.usage
    total: int = usage.total_tokens
    text: str = result.to_json()
    restored = RunResult.from_json(text)
    if restored.status == "waiting_for_human":
        restored = agent.continue_run(state=restored, client=client,
                                      approvals=[AgentToolDecision(p.tool_call_id) for p in pending],
                                      tool_outputs=[AgentToolOutput("c2", {"done": True})])
        restored = agent.continue_run(state=restored, client=client,
                                      approvals=[AgentToolDecision("c3", edited_input={"id": 2})],
                                      responses=[AgentToolOutput("c4", {"id": 4})])
    stream = agent.stream(input="again", client=client)
    for event in stream.events():
        kind: str = event["type"]
        del kind
    final: RunResult = asyncio.run(agent.run_async(input="x", client=client, tool_choice={"tool_id": "x"},
                                                   parallel_tool_calls=False, active_tools=["x"]))
    # The overrides every entry point takes, as one typed dict.
    shared: RunOverrides = {"max_steps": 3, "temperature": 0.2, "tool_choice": "auto"}
    again: RunResult = agent.run(input="x", client=client, **shared)
    del again
    strict = AgentTool(id="s", parameters={"type": "object", "additionalProperties": False},
                       strict=True, input_examples=[{}])
    del strict
    return f"{final.status} {total} {restored.output}"


# The product's names and shapes, and streaming host clients.


def product_style(tool_input: Dict[str, Any], runtime: AgentRuntimeContext) -> str:
    call: AgentToolCall = runtime.tool_call
    return f"{call.id}:{call.name}:{call['input']}"


class StreamingClient:
    def stream(self, request: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
        yield {"type": "text-delta", "delta": "hi"}
        yield {"type": "response", "response": {"text": "hi"}}


def product_main() -> str:
    agent = create_agent(AgentDefinition(
        id="ported", preset="fast", tools=[tool(AgentTool("echo", product_style, "Echoes"))],
        model_retry=AgentModelRetryConfig(max_retries=1), parse_output=lambda text: text.upper(),
        human_review=lambda ctx: AgentHumanReviewRequest("check") if ctx["is_final"] else None))
    client: GatewayAgentClient = create_gateway_agent_client(
        client_options={"api_key": "k", "base_url": "http://127.0.0.1:9/v1"}, tool_choice="auto",
        request_options={"store": False})
    del client
    stream = agent.stream(input="x", client=StreamingClient())
    items: List[Any] = list(stream.item_stream())
    return f"{stream.text()} {len(items)}"


# Durable runs (docs/behaviour.md §10): stores, continue by run id, recover, the approval inbox.


class TypedAccessor:
    def __init__(self) -> None:
        self.saved: Dict[str, RunResult] = {}

    def load(self, run_id: str) -> Optional[RunResult]:
        return self.saved.get(run_id)

    def save(self, state: RunResult) -> None:
        self.saved[state.run_id] = state


def durable_main(path: str) -> str:
    store: RunStore = SqliteRunStore(path)
    agent = create_agent(id="durable", tools=[], store=store, lease=AgentLease(duration_ms=5_000, renew_every_ms=1_000))
    paused: RunResult = agent.run(input="x", client=ScriptedClient([{"text": "hi"}]))
    page: RunPage = store.list(status="waiting_for_human", agent_id="durable", limit=10, cursor=None)
    inbox: List[StoredRun] = page.runs
    pending: List[PendingToolCall] = [p for run in inbox for p in run.pending]
    next_cursor: Optional[str] = page.next_cursor
    loaded: Optional[StoredRun] = store.load(paused.run_id)
    try:
        agent.continue_run(run_id=paused.run_id, client=ScriptedClient([]), approvals=["c1"])
        agent.recover(paused.run_id, client=ScriptedClient([]))
    except (AgentStoreError, AgentLeaseLostError, AgentError):
        pass
    removed: int = store.prune(["completed", "failed"], older_than=timedelta(days=30))
    deleted: bool = store.delete(paused.run_id)
    memory: RunStore = InMemoryRunStore()
    accessor = TypedAccessor()
    agent.run(input="x", client=ScriptedClient([{"text": "hi"}]), state=accessor)
    agent.run(input="x", client=ScriptedClient([{"text": "hi"}]), store=memory)

    async def later() -> Optional[StoredRun]:
        pg: PostgresRunStore = await PostgresRunStore.connect_async("postgres://u@127.0.0.1/db")
        await pg.list_async(status=["waiting_for_human"])
        await agent.recover_async(paused.run_id, client=ScriptedClient([]), store=pg)
        return await pg.load_async(paused.run_id)

    del later
    return f"{len(pending)} {next_cursor} {loaded} {removed} {deleted}"


def mcp_servers() -> str:
    """MCP servers (docs/behaviour.md §11): the declarations, the agent option and closing."""
    from phaseo_agent import AgentMcpError, McpServer, McpToolInfo, mcp_http_server, mcp_stdio_server

    def keep(tool: McpToolInfo) -> bool:
        return bool(tool.annotations.get("readOnlyHint"))

    def gate(call: AgentToolCall, runtime: ToolRuntime) -> bool:
        annotations: Optional[Dict[str, Any]] = runtime.tool_annotations
        return not (annotations or {}).get("readOnlyHint")

    def elicit(request: Dict[str, Any], context: Any) -> Dict[str, Any]:
        return {"action": "decline"}

    files: McpServer = mcp_stdio_server("files", "python3", ["server.py"], env={"LOG": "0"}, cwd="/tmp",
                                        tool_prefix="fs", deny_tools=["crash"], filter=keep,
                                        require_approval="destructive", timeout_ms=5_000,
                                        tool_timeouts={"slow": 300}, on_error="return-to-model",
                                        cache_ttl_ms=60_000, optional=True, on_elicitation=elicit,
                                        defer_loading=True)
    remote = mcp_http_server("remote", "http://127.0.0.1:3001/mcp", {"X-Team": "a"}, bearer_token="t",
                             allow_tools=["search"], require_approval=gate)
    with create_agent(id="mcp", mcp_servers=[files, remote]) as agent:
        try:
            agent.run(input="x", client=ScriptedClient([{"text": "hi"}]))
        except AgentMcpError as e:
            print(e.code)

    async def later() -> None:
        async with create_agent(id="mcp", mcp_servers=[files]) as agent:
            await agent.run_async(input="x", client=ScriptedClient([{"text": "hi"}]))
            await agent.close_async()
            await agent.aclose()

    del later
    return f"{files.name} {remote.transport}"


def agent_as_tool() -> str:
    """``Agent.as_tool`` (docs/behaviour.md §18) gives a tool another agent takes."""
    nested = create_agent(id="researcher")
    tool: Tool = nested.as_tool(id="research", description="Researches", parameters={"type": "object"})
    outer = create_agent(id="boss", tools=[tool, nested.as_tool()])
    return outer.id


def typed_tools() -> List[Tool]:
    """Tools from typed functions (docs/behaviour.md §20): the decorator, its configured
    form and ``define_tool(fn)`` all give a ``Tool``."""

    @tool
    def weather(city: str, days: int = 1) -> Dict[str, Any]:
        """Forecast for a city.

        Args:
            city: City name.
        """
        return {"city": city, "days": days}

    @tool(strict=True, require_approval=True)
    async def book(city: str, runtime: ToolRuntime) -> str:
        """Books a trip."""
        return f"{city} {runtime.tool_call['id']}"

    def convert(amount: float, currency: str = "EUR") -> float:
        """Converts an amount."""
        return amount

    return [weather, book, define_tool(convert, id="convert_amount", on_error="return-to-model")]


def served_tools() -> None:
    """``serve_mcp``: sync and async context managers; the handle's url, wait and close."""
    add = define_tool(AgentTool("add", lambda i, rt: i["a"] + i["b"]))
    with serve_mcp([add], name="calc", version="1.0.0",
                   transport={"type": "http", "port": 0, "auth_token": "t"},
                   tool_execution={"tool_concurrency": 2}) as server:
        url: Optional[str] = server.url
        stopped: bool = server.wait(0.01)
        print(url, stopped, server.closed)

    async def served_async() -> None:
        handle: McpToolServer = serve_mcp([add], name="calc", transport="http")
        async with handle as running:
            print(running.url)
        await handle.wait_closed()

    del served_async
