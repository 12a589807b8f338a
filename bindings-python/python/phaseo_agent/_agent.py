"""Agents: ``create_agent``, runs and continues (blocking and asyncio), streams."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass
from typing import (TYPE_CHECKING, Any, AsyncIterator, Callable, Dict, Generator, Iterable, Iterator, List, Mapping,
                    Optional, Sequence, Tuple, TypedDict, Union)

from . import _native
from ._native import CancelToken, RunResult, StopCondition, Tool
from ._records import AgentDefinition, AgentToolCall, Record
from ._store import is_accessor, native_store
from ._tools import AgentTool, _validator, define_tool
from .errors import AgentDefinitionError

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "Agent",
    "AgentModelRetry",
    "AgentModelRetryConfig",
    "AgentLease",
    "AgentStream",
    "AgentToolDecision",
    "AgentToolExecutionConfig",
    "AgentToolOutput",
    "RunOverrides",
    "create_agent",
]

Event = Dict[str, Any]
ToolChoice = Union[str, Dict[str, str], Callable[[Dict[str, Any]], Any], None]
"""``"auto"``, ``"required"``, ``"none"`` or ``{"tool_id": id}`` (per run); on the agent also
a function of the turn returning one of those (or None)."""
StopWhen = Union[StopCondition, Callable[[Dict[str, Any]], Any], Sequence[Union[StopCondition, Callable[[Dict[str, Any]], Any]]], None]


class RunOverrides(TypedDict, total=False):
    """What every entry point (``run``, ``continue_run``, ``stream``, ``continue_stream``,
    ``recover`` and their ``_async`` forms) accepts besides its own arguments: the run's
    overrides of the agent's definition, and its event listener and cancel token."""

    model: Optional[str]
    max_steps: Optional[int]
    stop_when: StopWhen
    model_retry: Any
    tool_execution: Any
    temperature: Optional[float]
    max_output_tokens: Optional[int]
    top_p: Optional[float]
    tool_choice: ToolChoice
    parallel_tool_calls: Optional[bool]
    active_tools: Optional[Sequence[str]]
    on_event: Optional[Callable[[Event], Any]]
    cancel: Optional[CancelToken]


_RUN_OVERRIDE_KEYS = frozenset(RunOverrides.__annotations__)


def _overrides(entry: str, given: Mapping[str, Any]) -> Tuple[Dict[str, Any], Any, Any]:
    """The native overrides of ``given``, its ``on_event`` and its ``cancel``; an unknown
    keyword is a ``TypeError`` as Python raises for any function."""
    for key in given:
        if key not in _RUN_OVERRIDE_KEYS:
            raise TypeError(f"{entry}() got an unexpected keyword argument {key!r}")
    overrides = {
        "tool_choice": given.get("tool_choice"),
        "parallel_tool_calls": given.get("parallel_tool_calls"),
        "active_tools": _tool_ids(given.get("active_tools")),
        "model": given.get("model"),
        "max_steps": given.get("max_steps"),
        "stop_when": _stop_list(given.get("stop_when")),
        "model_retry": _config(given.get("model_retry"), AgentModelRetry, "model_retry"),
        "tool_execution": _config(given.get("tool_execution"), AgentToolExecutionConfig, "tool_execution"),
        "temperature": given.get("temperature"),
        "max_output_tokens": given.get("max_output_tokens"),
        "top_p": given.get("top_p"),
    }
    return overrides, given.get("on_event"), given.get("cancel")


@dataclass
class AgentToolExecutionConfig:
    """How the automatic calls of one model turn run: at most ``tool_concurrency`` at once
    (default 1), the default ``on_error`` policy (``"fail-run"`` or ``"return-to-model"``),
    the tool message limit ``max_output_chars`` and ``max_tool_calls``, the most tool calls
    a whole run admits (a call beyond it is refused with an error the model sees)."""

    tool_concurrency: Optional[int] = None
    on_error: Optional[str] = None
    max_output_chars: Optional[int] = None
    max_tool_calls: Optional[int] = None


@dataclass
class AgentModelRetry:
    """Model retries: ``max_retries`` extra attempts, sleeping ``backoff_ms * attempt``
    (``None``: the core's default, 250 ms)."""

    max_retries: int = 0
    backoff_ms: Optional[float] = None


#: The product's name of :class:`AgentModelRetry`.
AgentModelRetryConfig = AgentModelRetry


@dataclass
class AgentLease:
    """How long a worker holds a store-backed run (``duration_ms``, default 30 s) and how
    often it renews the hold while working (``renew_every_ms``, default 10 s). A run whose
    hold expired (its worker died) can be recovered by any worker."""

    duration_ms: float = 30_000
    renew_every_ms: float = 10_000


@dataclass
class AgentToolDecision:
    """An approval or rejection of a pending call (a rejection's reason goes to the model).
    An approval's ``edited_input`` replaces the model's arguments: it is validated like
    them before anything runs, and the tool runs with it (an invalid one refuses the
    continue and leaves the state usable)."""

    tool_call_id: str
    reason: Optional[str] = None
    edited_input: Any = None


@dataclass
class AgentToolOutput:
    """The output of a manual or interactive pending call; in ``responses=``, a person's
    answer in place of an approval-gated call, which then never runs."""

    tool_call_id: str
    output: Any


def _config(value: Any, cls: type, what: str) -> Optional[Dict[str, Any]]:
    if value is None:
        return None
    if isinstance(value, cls):
        return dict(value.__dict__)
    if isinstance(value, Mapping):
        allowed = set(cls.__dataclass_fields__)  # type: ignore[attr-defined]
        unknown = set(value) - allowed
        if unknown:
            raise AgentDefinitionError(f"{what}: unknown keys {sorted(unknown)}", code="definition_invalid")
        return dict(value)
    raise TypeError(f"{what} must be {cls.__name__} or a dict, got {value!r}")


def _stop_state(state: Dict[str, Any]) -> Dict[str, Any]:
    """The state a custom condition sees: ``usage`` reads as attributes too and
    ``tool_calls`` (of the latest step) are ``AgentToolCall`` records, as in the product."""
    if isinstance(state.get("usage"), dict):
        state["usage"] = Record(state["usage"])
    state["tool_calls"] = [AgentToolCall(c["id"], c["name"], c.get("input")) for c in state.get("tool_calls") or []]
    return state


def _custom_condition(predicate: Callable[[Dict[str, Any]], Any]) -> StopCondition:
    if inspect.iscoroutinefunction(predicate) or inspect.iscoroutinefunction(getattr(predicate, "__call__", None)):

        async def check_async(state: Dict[str, Any]) -> Any:
            return await predicate(_stop_state(state))

        return StopCondition.from_callable(check_async)
    return StopCondition.from_callable(lambda state: predicate(_stop_state(state)))


def _stop_list(stop_when: StopWhen) -> Optional[List[StopCondition]]:
    if stop_when is None:
        return None
    items: Iterable[Any] = [stop_when] if (isinstance(stop_when, StopCondition) or callable(stop_when)) else stop_when
    return [c if isinstance(c, StopCondition) else _custom_condition(c) for c in items]


def _decisions(items: Optional[Iterable[Any]]) -> Optional[List[Tuple[str, Optional[str], Any]]]:
    """``(tool_call_id, reason, edited_input)`` of each decision."""
    if items is None:
        return None
    out: List[Tuple[str, Optional[str], Any]] = []
    for d in items:
        if isinstance(d, str):
            out.append((d, None, None))
        elif isinstance(d, AgentToolDecision):
            out.append((d.tool_call_id, d.reason, d.edited_input))
        elif isinstance(d, Mapping):
            edited = d.get("edited_input", d.get("editedInput"))
            out.append((str(d.get("tool_call_id") or d.get("toolCallId")), d.get("reason"), edited))
        else:
            raise TypeError(f"a decision must be a call id, AgentToolDecision or dict, got {d!r}")
    return out


def _outputs(items: Optional[Iterable[Any]]) -> Optional[List[Tuple[str, Any]]]:
    """``(tool_call_id, output)`` of each ``tool_outputs`` or ``responses`` entry."""
    if items is None:
        return None
    out: List[Tuple[str, Any]] = []
    for o in items:
        if isinstance(o, AgentToolOutput):
            out.append((o.tool_call_id, o.output))
        elif isinstance(o, Mapping):
            out.append((str(o.get("tool_call_id") or o.get("toolCallId")), o.get("output")))
        else:
            tool_call_id, output = o
            out.append((tool_call_id, output))
    return out


def _tool_ids(ids: Optional[Sequence[str]]) -> Optional[List[str]]:
    """A run's ``active_tools`` as a list (a lone string is refused, not split into letters)."""
    if ids is None:
        return None
    # Only a sized sequence is copied: an endless iterator would never finish.
    if isinstance(ids, (str, bytes)) or not isinstance(ids, (list, tuple)):
        raise AgentDefinitionError("Invalid run options: active_tools must be a list of tool ids, "
                                   f"got {type(ids).__name__}", code="definition_invalid")
    return list(ids)


def _state(state: Union[RunResult, str, bytes, Mapping[str, Any]]) -> RunResult:
    """The state to continue; anything that is not a valid state, whatever its type, raises
    ``AgentStateError`` (code ``state_invalid``)."""
    if isinstance(state, RunResult):
        return state
    if isinstance(state, (str, bytes)):
        return RunResult.from_json(state)
    if isinstance(state, bytearray):
        return RunResult.from_json(bytes(state))
    return RunResult.from_dict(state)


_DEFINITION_KEYS = {
    "id", "model", "preset", "instructions", "tools", "max_steps", "stop_when", "model_retry",
    "tool_execution", "temperature", "max_output_tokens", "top_p", "output_schema",
    "parse_output", "require_approval", "human_review", "state_secret", "tool_choice",
    "parallel_tool_calls", "active_tools", "store", "lease", "mcp_servers",
}

StateArg = Union[RunResult, str, bytes, Mapping[str, Any], Any, None]


def _run_store(store: Any, state: Any) -> Optional[_native.NativeRunStore]:
    """The per-run store: ``store=``, or the product's ``state=`` accessor."""
    if state is not None:
        if not is_accessor(state):
            raise TypeError("state= on a run must be a state accessor (an object with load(run_id) and save(state))")
        if store is not None:
            raise TypeError("pass either store= or a state= accessor, not both")
        return native_store(state, "state")
    return native_store(store)


def _continue_target(state: Any, run: Any, run_id: Optional[str], store: Any
                     ) -> Tuple[Optional[RunResult], Optional[str], Optional[_native.NativeRunStore]]:
    """What a continue continues: a state, or the stored run ``run_id`` (of ``store=``, of a
    ``state=`` accessor, or of the agent's store)."""
    if is_accessor(state):
        if store is not None:
            raise TypeError("pass either store= or a state= accessor, not both")
        store, state = state, None
    if run_id is not None and state is None and run is None:
        return None, run_id, native_store(store)
    # With a state and a run id both, the core checks that they agree.
    return _state(Agent._pick(state, run)), run_id, native_store(store)


def _run_options(entry: str, input: Any, client: Any, context: Any, messages: Any, store: Any, state: Any,
                 overrides: Mapping[str, Any]) -> Dict[str, Any]:
    """The one options value a run entry point hands to ``_native`` (``run``, ``stream``)."""
    native_overrides, on_event, cancel = _overrides(entry, overrides)
    return {"input": input, "client": client, "context": context, "messages": messages,
            "overrides": native_overrides, "on_event": on_event, "cancel": cancel, "store": _run_store(store, state)}


def _continue_options(entry: str, state: Any, run: Any, run_id: Optional[str], store: Any, client: Any,
                      approvals: Any, rejections: Any, tool_outputs: Any, human_input: Optional[str], context: Any,
                      responses: Any, overrides: Mapping[str, Any]) -> Dict[str, Any]:
    """The one options value a continue entry point hands to ``_native``."""
    native_overrides, on_event, cancel = _overrides(entry, overrides)
    target, by_id, native = _continue_target(state, run, run_id, store)
    return {"state": target, "run_id": by_id, "store": native, "client": client,
            "approvals": _decisions(approvals), "rejections": _decisions(rejections),
            "tool_outputs": _outputs(tool_outputs), "responses": _outputs(responses), "human_input": human_input,
            "context": context, "overrides": native_overrides, "on_event": on_event, "cancel": cancel}


def _recover_options(entry: str, run_id: str, client: Any, context: Any, store: Any,
                     overrides: Mapping[str, Any]) -> Dict[str, Any]:
    """The one options value a recover entry point hands to ``_native``."""
    native_overrides, on_event, cancel = _overrides(entry, overrides)
    return {"run_id": run_id, "client": client, "context": context, "overrides": native_overrides,
            "on_event": on_event, "cancel": cancel, "store": native_store(store)}


class Agent:
    """A defined agent. Runs are independent; the agent can be shared across threads.
    An agent with MCP servers is a context manager (``with`` / ``async with``) that stops
    them on exit; :meth:`close` does the same."""

    def __init__(self, native: _native.NativeAgent) -> None:
        self._native = native

    def close(self) -> None:
        """Stops the agent's MCP servers (stdio children end, HTTP sessions close). A
        later run starts them again. Without MCP servers it does nothing."""
        self._native.close()

    async def close_async(self) -> None:
        """Like :meth:`close`, awaitable."""
        await self._native.close_async()

    async def aclose(self) -> None:
        """The same as :meth:`close_async` (the name ``contextlib.aclosing`` calls)."""
        await self._native.close_async()

    def __enter__(self) -> "Agent":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> "Agent":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close_async()

    @property
    def id(self) -> str:
        """The agent id."""
        return self._native.id

    def as_tool(self, *, id: Optional[str] = None, description: Optional[str] = None,
                parameters: Optional[Dict[str, Any]] = None, client: Any = None) -> Tool:
        """A tool that runs this agent (docs/behaviour.md §18): ``id`` defaults to the
        agent's id and ``parameters`` to one string ``input``, which is the nested run's
        input; the nested run's output is the tool's output. When the nested run pauses,
        the outer run pauses too, listing its calls as ``"<outer call id>/<nested call
        id>"``; decisions for those ids on the outer ``continue_run`` go to the nested run.
        ``client`` gives the nested runs a model client of their own (default: the outer
        run's)."""
        return self._native.as_tool(id, description, parameters, client)

    def run(self, *, input: Any, client: Any, context: Any = None, messages: Optional[List[Dict[str, Any]]] = None,
            store: Any = None, state: Any = None, **overrides: Unpack[RunOverrides]) -> RunResult:
        """Runs the agent until it completes, stops, pauses, is cancelled or fails (then an
        :class:`~phaseo_agent.errors.AgentError` with ``.result`` is raised). Blocks without
        holding the GIL; Ctrl-C cancels the run and raises KeyboardInterrupt. ``store``
        (or the product's ``state`` accessor, an object with ``load``/``save``) saves the
        run there instead of the agent's store."""
        return self._native.run("block", _run_options("run", input, client, context, messages, store, state, overrides))

    async def run_async(self, *, input: Any, client: Any, context: Any = None, messages: Optional[List[Dict[str, Any]]] = None,
                        store: Any = None, state: Any = None, **overrides: Unpack[RunOverrides]) -> RunResult:
        """Like :meth:`run`, awaitable; ``async def`` tools run on this event loop."""
        result: RunResult = await self._native.run(
            "await", _run_options("run_async", input, client, context, messages, store, state, overrides))
        return result

    def continue_run(self, *, state: StateArg = None, run: Union[RunResult, str, bytes, Mapping[str, Any], None] = None,
                     run_id: Optional[str] = None, store: Any = None,
                     client: Any, approvals: Optional[Iterable[Any]] = None, rejections: Optional[Iterable[Any]] = None,
                     tool_outputs: Optional[Iterable[Any]] = None, human_input: Optional[str] = None, context: Any = None,
                     responses: Optional[Iterable[Any]] = None, **overrides: Unpack[RunOverrides]) -> RunResult:
        """Continues a paused run (``state`` or ``run``: a RunResult, its JSON text or dict).
        The state is not changed; a refused continue raises
        :class:`~phaseo_agent.errors.AgentContinueError` and leaves it usable.

        With ``run_id`` instead, continues the stored run of ``store`` (or of a ``state=``
        accessor, or of the agent's store), claiming its pause at most once: a pause
        already continued elsewhere raises ``AgentContinueError`` (``Pause <pauseId> of
        run <runId> was already continued``). Given both, they must agree.

        ``approvals`` may carry an ``edited_input`` (:class:`AgentToolDecision`): the tool
        runs with it instead of the model's arguments. ``responses`` answer approval-gated
        calls in the tool's place (``AgentToolOutput``, a dict or a pair): the tool never
        runs and the answer is its result."""
        return self._native.continue_run("block", _continue_options(
            "continue_run", state, run, run_id, store, client, approvals, rejections, tool_outputs, human_input,
            context, responses, overrides))

    async def continue_run_async(self, *, state: StateArg = None, run: Union[RunResult, str, bytes, Mapping[str, Any], None] = None,
                                 run_id: Optional[str] = None, store: Any = None,
                                 client: Any, approvals: Optional[Iterable[Any]] = None, rejections: Optional[Iterable[Any]] = None,
                                 tool_outputs: Optional[Iterable[Any]] = None, human_input: Optional[str] = None, context: Any = None,
                                 responses: Optional[Iterable[Any]] = None, **overrides: Unpack[RunOverrides]) -> RunResult:
        """Like :meth:`continue_run`, awaitable."""
        result: RunResult = await self._native.continue_run("await", _continue_options(
            "continue_run_async", state, run, run_id, store, client, approvals, rejections, tool_outputs, human_input,
            context, responses, overrides))
        return result

    def stream(self, *, input: Any, client: Any, context: Any = None, messages: Optional[List[Dict[str, Any]]] = None,
               store: Any = None, state: Any = None, **overrides: Unpack[RunOverrides]) -> "AgentStream":
        """Starts the run in the background and returns its replayable stream (usable with
        ``for`` and ``async for``, awaitable for the result)."""
        return AgentStream(self._native.run(
            "stream", _run_options("stream", input, client, context, messages, store, state, overrides)))

    def continue_stream(self, *, state: StateArg = None, run: Union[RunResult, str, bytes, Mapping[str, Any], None] = None,
                        run_id: Optional[str] = None, store: Any = None,
                        client: Any, approvals: Optional[Iterable[Any]] = None, rejections: Optional[Iterable[Any]] = None,
                        tool_outputs: Optional[Iterable[Any]] = None, human_input: Optional[str] = None, context: Any = None,
                        responses: Optional[Iterable[Any]] = None, **overrides: Unpack[RunOverrides]) -> "AgentStream":
        """Continues a paused run in the background, as a stream."""
        return AgentStream(self._native.continue_run("stream", _continue_options(
            "continue_stream", state, run, run_id, store, client, approvals, rejections, tool_outputs, human_input,
            context, responses, overrides)))

    def recover(self, run_id: str, *, client: Any, context: Any = None, store: Any = None, **overrides: Unpack[RunOverrides]) -> RunResult:
        """Recovers the stored run ``run_id`` whose worker died (its lease expired): goes on
        from its last checkpoint, with the decisions its claim stored. A run another worker
        still holds, or that is not running, is refused with ``AgentContinueError``."""
        return self._native.recover("block", _recover_options("recover", run_id, client, context, store, overrides))

    async def recover_async(self, run_id: str, *, client: Any, context: Any = None, store: Any = None, **overrides: Unpack[RunOverrides]) -> RunResult:
        """Like :meth:`recover`, awaitable."""
        result: RunResult = await self._native.recover(
            "await", _recover_options("recover_async", run_id, client, context, store, overrides))
        return result

    @staticmethod
    def _pick(state: Any, run: Any) -> Any:
        if (state is None) == (run is None):
            raise TypeError("pass exactly one of state= or run=")
        return state if state is not None else run

    def __repr__(self) -> str:
        return f"Agent(id={self.id!r})"


class _Items:
    """Values from a stream, usable with ``for`` and ``async for``."""

    def __init__(self, stream: "AgentStream", pick: Callable[[Event], Any], with_result: bool = False) -> None:
        self._stream = stream
        self._pick = pick
        self._with_result = with_result

    _SKIP = object()

    def _select(self, item: Event) -> Any:
        if item.get("type") == "result":
            return item if self._with_result else self._SKIP
        return self._pick(item)

    def __iter__(self) -> Iterator[Any]:
        cursor = self._stream._native.cursor()
        while True:
            item = cursor.next_blocking()
            if item is None:
                return
            value = self._select(item)
            if value is not self._SKIP:
                yield value

    async def __aiter__(self) -> AsyncIterator[Any]:
        cursor = self._stream._native.cursor()
        while True:
            item = await cursor.next_async()
            if item is None:
                return
            value = self._select(item)
            if value is not self._SKIP:
                yield value


class AgentStream:
    """A streamed run (docs/behaviour.md §6). Every consumer sees the whole history from the start;
    iterators end when the run ends and raise if it failed. ``await stream`` (or
    :meth:`result`) gives the final :class:`RunResult`."""

    def __init__(self, native: _native.NativeStream) -> None:
        self._native = native

    def full_stream(self) -> _Items:
        """Every event (dicts), then ``{"type": "result", "result": RunResult}``."""
        return _Items(self, lambda e: e, with_result=True)

    def events(self) -> _Items:
        """Every event."""
        return _Items(self, lambda e: e)

    def text_stream(self) -> _Items:
        """Text deltas."""
        return _Items(self, lambda e: e["delta"] if e["type"] == "response.output_text.delta" else _Items._SKIP)

    def reasoning_stream(self) -> _Items:
        """Reasoning deltas."""
        return _Items(self, lambda e: e["delta"] if e["type"] == "response.reasoning.delta" else _Items._SKIP)

    def items_stream(self) -> _Items:
        """Items (message, tool_call, tool_result, error, output)."""
        return _Items(self, lambda e: e["item"] if e["type"] == "response.item" else _Items._SKIP)

    def item_stream(self) -> _Items:
        """The product's name of :meth:`items_stream`."""
        return self.items_stream()

    def tool_stream(self) -> _Items:
        """``tool.*`` events."""
        return _Items(self, lambda e: e if e["type"].startswith("tool.") else _Items._SKIP)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.full_stream())

    def __aiter__(self) -> AsyncIterator[Any]:
        return self.full_stream().__aiter__()

    def result(self) -> RunResult:
        """Blocks until the run ends; returns its result or raises its error."""
        for item in self.full_stream():
            if item.get("type") == "result":
                result: RunResult = item["result"]
                return result
        raise RuntimeError("stream ended without a result")

    async def result_async(self) -> RunResult:
        """Awaits the run's result."""
        async for item in self.full_stream():
            if item.get("type") == "result":
                result: RunResult = item["result"]
                return result
        raise RuntimeError("stream ended without a result")

    def __await__(self) -> Generator[Any, None, RunResult]:
        return self.result_async().__await__()

    @staticmethod
    def _text(result: RunResult) -> str:
        # The core's canonical JSON, not json.dumps: the same text as every other language.
        return result.output_text()

    def text(self) -> str:
        """The final output as text."""
        return self._text(self.result())

    async def text_async(self) -> str:
        """The final output as text, awaitable."""
        return self._text(await self.result_async())

    def cancel(self, reason: Optional[str] = None) -> None:
        """Cancels the run; it ends ``cancelled`` and its result is still returned."""
        self._native.cancel(reason)


def _definition_fields(definition: Any) -> Dict[str, Any]:
    if definition is None:
        return {}
    if dataclasses.is_dataclass(definition) and not isinstance(definition, type):
        # An AgentDefinition (ours or the product's): its set fields.
        return {f.name: getattr(definition, f.name) for f in dataclasses.fields(definition)
                if getattr(definition, f.name) is not None}
    if isinstance(definition, Mapping):
        return dict(definition)
    raise TypeError(f"an agent definition must be a dict or an AgentDefinition, got {type(definition).__name__}")


def _review_context(ctx: Dict[str, Any]) -> Record:
    """The context ``human_review`` sees, readable as attributes too (as in the product):
    ``ctx.response.message.content``, ``ctx.messages[-1].content``, ``ctx["step_index"]``."""
    response = ctx.get("response")
    if isinstance(response, dict):
        response = Record(response)
        if isinstance(response.get("message"), dict):
            response["message"] = Record(response["message"])
        ctx["response"] = response
    if isinstance(ctx.get("messages"), list):
        ctx["messages"] = [Record(m) if isinstance(m, dict) else m for m in ctx["messages"]]
    return Record(ctx)


def _review_hook(hook: Any) -> Any:
    if hook is None or not callable(hook):
        return hook
    if inspect.iscoroutinefunction(hook) or inspect.iscoroutinefunction(getattr(hook, "__call__", None)):

        async def review_async(ctx: Dict[str, Any]) -> Any:
            return await hook(_review_context(ctx))

        return review_async
    return lambda ctx: hook(_review_context(ctx))


def create_agent(definition: Union[Mapping[str, Any], AgentDefinition, None] = None, **fields: Any) -> Agent:
    """Defines an agent from a dict, an :class:`AgentDefinition` or keywords, with the
    snake_case keys of docs/behaviour.md §3: ``id``, ``model``, ``preset`` (the model ``@<preset>`` when
    ``model`` is unset), ``instructions``, ``tools``, ``max_steps``, ``stop_when``,
    ``model_retry``, ``tool_execution``, ``temperature``, ``max_output_tokens``, ``top_p``,
    ``output_schema``, ``parse_output`` (``(text) -> value``, applied to the final text
    before ``output_schema``), ``require_approval`` (agent-level predicate ``(call,
    runtime)``), ``human_review`` (``(ctx) -> None | {"reason", "payload"}`` or an
    :class:`AgentHumanReviewRequest`), ``state_secret`` (a string, or a list for rotation:
    the first signs every state, any verifies) and the request controls of docs/behaviour.md §12:
    ``tool_choice`` (``"auto"``, ``"required"``, ``"none"``, ``{"tool_id": id}`` or a
    function of the turn), ``parallel_tool_calls`` and ``active_tools`` (the tool ids
    offered: a list or a function of the turn), ``mcp_servers`` (docs/behaviour.md §11: servers made
    by :func:`mcp_stdio_server` / :func:`mcp_http_server`, whose tools the agent offers
    too; the agent is then a context manager that stops them). Unknown keys are refused."""
    d: Dict[str, Any] = dict(_definition_fields(definition), **fields)
    unknown = set(d) - _DEFINITION_KEYS
    if unknown:
        raise AgentDefinitionError(f"Invalid agent definition: unknown keys {sorted(unknown)}", code="definition_invalid")
    if "id" not in d:
        raise AgentDefinitionError("Invalid agent definition: id is required", code="definition_invalid")
    tools = [t if isinstance(t, Tool) else define_tool(t) if isinstance(t, AgentTool) else define_tool(**t) for t in d.get("tools") or []]
    model = d.get("model")
    if model is None and d.get("preset"):
        model = f"@{d['preset']}"
    native = _native.NativeAgent(
        d["id"],
        tools,
        model=model,
        instructions=d.get("instructions"),
        max_steps=d.get("max_steps"),
        stop_when=_stop_list(d.get("stop_when")),
        model_retry=_config(d.get("model_retry"), AgentModelRetry, "model_retry"),
        tool_execution=_config(d.get("tool_execution"), AgentToolExecutionConfig, "tool_execution"),
        temperature=d.get("temperature"),
        max_output_tokens=d.get("max_output_tokens"),
        top_p=d.get("top_p"),
        output_schema=_validator(d.get("output_schema"))[0],
        parse_output=d.get("parse_output"),
        require_approval=d.get("require_approval"),
        human_review=_review_hook(d.get("human_review")),
        state_secrets=_state_secrets(d.get("state_secret")),
        tool_choice=d.get("tool_choice"),
        parallel_tool_calls=d.get("parallel_tool_calls"),
        active_tools=d.get("active_tools"),
        store=native_store(d.get("store")),
        lease_ms=_lease(d.get("lease")),
        mcp_servers=_mcp_servers(d.get("mcp_servers")),
    )
    return Agent(native)


def _mcp_servers(servers: Any) -> Optional[List[_native.NativeMcpServer]]:
    if servers is None:
        return None
    if not isinstance(servers, (list, tuple)) or not all(isinstance(s, _native.NativeMcpServer) for s in servers):
        raise AgentDefinitionError("Invalid agent definition: mcp_servers must be a list of servers made by "
                                   "mcp_stdio_server(...) or mcp_http_server(...)", code="definition_invalid")
    return list(servers)


def _lease(lease: Any) -> Optional[Tuple[float, float]]:
    config = _config(lease, AgentLease, "lease")
    if config is None:
        return None
    default = AgentLease()
    return (float(config.get("duration_ms") or default.duration_ms),
            float(config.get("renew_every_ms") or default.renew_every_ms))


def _state_secrets(secret: Any) -> Optional[List[str]]:
    if secret is None:
        return None
    secrets = [secret] if isinstance(secret, str) else list(secret) if isinstance(secret, (list, tuple)) else None
    if secrets is None or not all(isinstance(s, str) for s in secrets):
        raise AgentDefinitionError("Invalid agent definition: state_secret must be a string or a list of strings",
                                   code="definition_invalid")
    return secrets
