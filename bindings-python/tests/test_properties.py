"""Property tests (hypothesis) of the Python boundary: generated host values —
deep, cyclic, huge numbers, text that is not Unicode, types that are not JSON — through
tools, progress, context, validators and model clients; generated odd exceptions and
awaitables through every kind of callback; generated and mutated states through
continue_run. Each value is judged by a small reference model of docs/behaviour.md §7 written here:
accepted values must come back exactly (and survive a state round trip), refused ones
with the error of the place they entered. `make fuzz-python` runs many more inputs."""

from __future__ import annotations

import asyncio
import copy
import json
import math
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phaseo_agent import (
    AgentError,
    AgentTool,
    RunResult,
    ScriptedClient,
    StopCondition,
    ToolRuntime,
    create_agent,
    define_tool,
)

MAX_DEPTH = 64
TOO_DEEP = "value is nested more than 64 levels deep"
CYCLE = "value contains a cycle"


# The reference model: what the SDK must make of a host value.

class Refused(Exception):
    """The value is refused: `limit` (ValueError-like) or `type` (TypeError-like)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def expected(value: Any, limit: int = MAX_DEPTH) -> Any:
    """The JSON value the SDK keeps for `value`, or Refused (in the reader's order)."""
    path: List[int] = []

    def enter(container: Any) -> None:
        if id(container) in path:
            raise Refused("limit", CYCLE)
        if len(path) >= limit:
            raise Refused("limit", TOO_DEEP)
        path.append(id(container))

    def walk(v: Any) -> Any:
        if v is None or isinstance(v, bool):
            return v
        if isinstance(v, int):
            if -(2**63) <= v < 2**64:
                return v
            raise Refused("limit", f"integer {v!r} does not fit in 64 bits")
        if isinstance(v, float):
            return v if math.isfinite(v) else None
        if isinstance(v, str):
            return text(v)
        if isinstance(v, dict):
            enter(v)
            out = {}
            for k, item in list(v.items()):
                if not isinstance(k, str):
                    raise Refused("type", f"object keys must be strings, got {type(k).__name__}")
                key = text(k)
                out[key] = walk(item)
            path.pop()
            return out
        if isinstance(v, (list, tuple, frozenset, set)):
            enter(v)
            items = [walk(item) for item in v]
            path.pop()
            return items
        raise Refused("type", f"value of type {type(v).__name__} is not JSON-compatible")

    return walk(value)


def text(s: str) -> str:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        raise Refused("type", "text is not valid Unicode (") from None
    return s


def same_message(actual: str, wanted: str) -> bool:
    # Unicode errors carry Python's own explanation after the opening parenthesis.
    return actual.startswith(wanted) if wanted.endswith("(") else actual == wanted


# Generated host values.

HUGE = [2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**30, -(10**30)]


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.integers(),
    st.sampled_from(HUGE),
    st.floats(),
    st.sampled_from([1e20, -1.5e20, 2.0**64, 9.99e20]),
    st.text(max_size=12),
    st.text(st.characters(categories=["Cs"]), min_size=1, max_size=2),
    st.sampled_from([b"raw", bytearray(b"x"), 1j, object(), Ellipsis, print]),
)
hashables = st.one_of(st.none(), st.booleans(), st.integers(min_value=-99, max_value=99), st.text(max_size=4))
trees = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.tuples(children, children),
        st.dictionaries(st.text(max_size=6), children, max_size=4),
        st.dictionaries(st.one_of(st.integers(), st.none(), st.text(st.characters(categories=["Cs"]), min_size=1, max_size=1)), children, min_size=1, max_size=2),
        st.frozensets(hashables, max_size=3),
    ),
    max_leaves=16,
)


@st.composite
def host_values(draw: st.DrawFn) -> Any:
    """A tree, possibly buried deep (around the limit, or thousands of levels) or made
    cyclic (a container that holds itself somewhere below)."""
    value = draw(trees)
    shape = draw(st.sampled_from(["plain", "plain", "deep", "cycle"]))
    if shape == "deep":
        levels = draw(st.one_of(st.integers(min_value=58, max_value=70), st.sampled_from([300, 3000])))
        for i in range(levels):
            value = [value] if i % 2 else {"k": value}
    elif shape == "cycle":
        holder: Any = draw(st.sampled_from(["dict", "list"]))
        holder = {"v": value} if holder == "dict" else [value]
        inner: Any = holder
        for _ in range(draw(st.integers(min_value=0, max_value=3))):
            inner = {"down": inner} if draw(st.booleans()) else [inner]
        if isinstance(holder, dict):
            holder["loop"] = inner
        else:
            holder.append(inner)
        value = holder
    return value


def client_calling(*responses: Dict[str, Any]) -> ScriptedClient:
    return ScriptedClient(list(responses) + [{"text": "done"}])


ONE_CALL = {"tool_calls": [{"id": "c1", "name": "t", "arguments": "{}"}]}


def run(agent: Any, mode: str, **options: Any) -> RunResult:
    if mode == "async":
        result: RunResult = asyncio.run(agent.run_async(**options))
        return result
    return agent.run(**options)  # type: ignore[no-any-return]


def round_trips(result: RunResult) -> None:
    text = result.to_json()
    assert RunResult.from_json(text).to_json() == text
    assert RunResult.from_dict(result.to_dict()).to_json() == text


# Properties.

@given(value=host_values(), asynchronous=st.booleans(), mode=st.sampled_from(["block", "async"]))
def test_tool_results(value: Any, asynchronous: bool, mode: str) -> None:
    def sync_tool(i: Any, rt: ToolRuntime) -> Any:
        return value

    async def async_tool(i: Any, rt: ToolRuntime) -> Any:
        return value

    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=async_tool if asynchronous else sync_tool))]})
    try:
        want = expected(value)
    except Refused as refused:
        try:
            run(agent, mode, input="go", client=client_calling(ONE_CALL))
        except AgentError as e:
            assert e.code == "tool_output_invalid", (e.code, str(e))
            assert same_message(str(e), "Invalid tool output: " + refused.message), str(e)
            assert e.result is not None and e.result.status == "failed"
            round_trips(e.result)
        else:
            raise AssertionError(f"accepted a value that must be refused: {refused.message}")
        return
    result = run(agent, mode, input="go", client=client_calling(ONE_CALL))
    assert result.step_results[0]["tool_results"][0]["result"] == want
    round_trips(result)


@given(value=host_values())
def test_progress_and_context(value: Any) -> None:
    context_error: List[Tuple[str, str]] = []

    def tool(i: Any, rt: ToolRuntime) -> str:
        try:
            rt.set_context(value)
        except (ValueError, TypeError) as e:
            context_error.append((type(e).__name__, str(e)))
        rt.emit_progress(value)
        return "ok"

    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=tool))]})
    try:
        want = expected(value)
    except Refused as refused:
        wanted_class = "ValueError" if refused.kind == "limit" else "TypeError"
        try:
            agent.run(input="go", client=client_calling(ONE_CALL), context={"before": 1})
        except AgentError as e:
            assert e.code == "tool_event_invalid", (e.code, str(e))
            assert same_message(str(e), "Invalid tool event: " + refused.message), str(e)
            assert e.result is not None and e.result.context == {"before": 1}
        else:
            raise AssertionError("accepted a progress value that must be refused")
        assert context_error[0][0] == wanted_class
        assert same_message(context_error[0][1], "set_context: " + refused.message)
        return
    result = agent.run(input="go", client=client_calling(ONE_CALL), context={"before": 1})
    assert context_error == []
    assert result.context == want
    assert result.step_results[0]["tool_results"][0]["preliminary_results"] == [want]
    round_trips(result)


@given(value=host_values())
def test_validator_results(value: Any) -> None:
    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", input_schema=lambda v: value, execute=lambda i, rt: i))]})
    try:
        want = expected(value)
    except Refused as refused:
        try:
            agent.run(input="go", client=client_calling(ONE_CALL))
        except AgentError as e:
            assert e.code == "tool_input_invalid", (e.code, str(e))
            assert same_message(str(e), "Invalid tool input: " + refused.message), str(e)
        else:
            raise AssertionError("accepted a validator result that must be refused")
        return
    result = agent.run(input="go", client=client_calling(ONE_CALL))
    assert result.step_results[0]["tool_results"][0]["result"] == want


def as_json_numbers(value: Any) -> Any:
    """The value as JSON numbers compare: arguments cross as JSON text written as JavaScript
    writes numbers, so an integral float beyond 2^53 (6.670709373982709e16) is written with
    all its digits (66707093739827090) and reads back as that integer, the same double."""
    if isinstance(value, dict):
        return {k: as_json_numbers(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_json_numbers(v) for v in value]
    if isinstance(value, float) and value.is_integer() or isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
        return float(value)
    return value


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


@given(value=host_values(), asynchronous=st.booleans())
def test_model_client_arguments(value: Any, asynchronous: bool) -> None:
    """A host model answering with `arguments` as an object: the binding reads the
    response (its values within 64 levels), the core checks the arguments."""
    response = {"tool_calls": [{"id": "c1", "name": "t", "arguments": {"v": value}}]}

    class Client:
        def __init__(self) -> None:
            self.answers = [response, {"text": "done"}]

        def generate(self, request: Dict[str, Any]) -> Any:
            return self.answers.pop(0)

    class AsyncClient(Client):
        async def generate(self, request: Dict[str, Any]) -> Any:  # type: ignore[override]
            return self.answers.pop(0)

    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=lambda i, rt: i))]})
    client = AsyncClient() if asynchronous else Client()
    try:
        want = expected(value)
    except Refused as refused:
        try:
            agent.run(input="go", client=client)
        except AgentError as e:
            assert e.code == "model_failed", (e.code, str(e))
            assert same_message(str(e), "model response: " + refused.message), str(e)
        else:
            raise AssertionError("accepted a model response that must be refused")
        return
    if depth(want) >= MAX_DEPTH:  # {"v": value} is one level deeper than the value
        try:
            agent.run(input="go", client=client)
        except AgentError as e:
            assert (e.code, str(e)) == ("tool_input_invalid", "Invalid tool input: " + TOO_DEEP)
        else:
            raise AssertionError("accepted arguments nested more than 64 levels")
        return
    result = agent.run(input="go", client=client)
    assert as_json_numbers(result.step_results[0]["tool_results"][0]["result"]) == as_json_numbers({"v": want})
    round_trips(result)


# Odd exceptions and awaitables through every kind of callback.

class StrRaises(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")


class NothingPrints(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class StrNotAString(Exception):
    def __str__(self) -> Any:
        return 42


class NotAnException(BaseException):
    pass


class BadAwaitable:
    def __await__(self) -> Any:
        raise ValueError("cannot await")


class BadYield:
    def __await__(self) -> Any:
        yield "not a future"


class AwaitNotCallable:
    __await__ = 3


def lossy(s: str) -> str:
    return s.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def expected_message(exc: BaseException) -> str:
    try:
        s = str(exc)
    except Exception:
        try:
            return lossy(repr(exc))
        except Exception:
            return f"<unprintable {type(exc).__name__}>"
    return lossy(s) if s else type(exc).__name__


exceptions = st.one_of(
    st.builds(ValueError, st.text(max_size=10)),
    st.builds(RuntimeError, st.text(st.characters(categories=["Cs", "Lu"]), max_size=3)),
    st.builds(KeyError, st.integers()),
    st.builds(StrRaises),
    st.builds(NothingPrints),
    st.builds(StrNotAString),
    st.builds(NotAnException, st.text(max_size=5)),
    st.builds(GeneratorExit),
    st.builds(StopIteration, st.integers()),
    st.builds(Exception),
)
PLACES = ["def tool", "async tool", "returned awaitable", "validator", "approval", "client", "async client", "stop condition"]


@given(exc=exceptions, place=st.sampled_from(PLACES), mode=st.sampled_from(["block", "async"]))
def test_odd_exceptions_at_every_callback(exc: BaseException, place: str, mode: str) -> None:
    def raising(*args: Any) -> Any:
        raise exc

    async def raising_async(*args: Any) -> Any:
        raise exc

    tool: Dict[str, Any] = {"id": "t", "execute": lambda i, rt: 1}
    agent_options: Dict[str, Any] = {}
    client: Any = client_calling(ONE_CALL)
    if place == "def tool":
        tool["execute"] = raising
    elif place == "async tool":
        tool["execute"] = raising_async
    elif place == "returned awaitable":
        tool["execute"] = lambda i, rt: raising_async()
    elif place == "validator":
        tool["input_schema"] = raising
    elif place == "approval":
        tool["require_approval"] = raising
    elif place == "stop condition":
        agent_options["stop_when"] = StopCondition.from_callable(raising)
    else:

        class Client:
            def generate(self, request: Dict[str, Any]) -> Any:
                raise exc

        class AsyncClient:
            async def generate(self, request: Dict[str, Any]) -> Any:
                raise exc

        client = Client() if place == "client" else AsyncClient()
    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(**tool))], **agent_options})
    message = expected_message(exc)
    if isinstance(exc, StopIteration) and place in ("async tool", "returned awaitable", "async client"):
        message = "coroutine raised StopIteration"  # what Python makes of it in a coroutine
    try:
        run(agent, mode, input="go", client=client)
    except AgentError as e:
        assert str(e) == message or str(e).endswith(": " + message), (place, str(e), message)
    else:
        raise AssertionError(f"{place}: the exception was lost")


@given(returned=st.sampled_from([BadAwaitable, BadYield, AwaitNotCallable]), mode=st.sampled_from(["block", "async"]))
def test_misbehaving_awaitables(returned: Callable[[], Any], mode: str) -> None:
    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=lambda i, rt: returned()))]})
    try:
        run(agent, mode, input="go", client=client_calling(ONE_CALL))
    except AgentError as e:
        assert e.code == "tool_failed" and str(e)
    else:
        raise AssertionError("a misbehaving awaitable was taken as a result")


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@given(exc=exceptions, value=host_values())
def test_listeners_never_break_a_run(exc: BaseException, value: Any) -> None:
    calls: List[str] = []

    def listener(event: Dict[str, Any]) -> Any:
        calls.append(event["type"])
        if len(calls) % 2:
            raise exc
        return value

    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=lambda i, rt: 1))]})
    result = agent.run(input="go", client=client_calling(ONE_CALL), on_event=listener)
    assert result.status == "completed" and calls


# Generated and mutated states through continue_run.

def gate_agent() -> Any:
    return create_agent({"id": "gates", "human_review": lambda ctx: {"reason": "check"} if ctx["step_index"] == 0 else None, "tools": [
        define_tool(AgentTool(id="gate", execute=lambda i, rt: {"ran": i}, require_approval=True)),
        define_tool(AgentTool(id="manual")),
    ]})


def _paused_states() -> List[Tuple[Dict[str, Any], Dict[str, Any]]]:
    """Real paused states and the decisions that continue each: a tool pause (an approval
    and a manual call) and a review pause."""
    agent = gate_agent()
    client = ScriptedClient([{"tool_calls": [{"id": "c1", "name": "gate", "arguments": '{"n": 1}'},
                                             {"id": "c2", "name": "manual", "arguments": "{}"}]}])
    tools = agent.run(input={"ask": [1, 2.5, "x"]}, client=client, context={"user": "u"})
    review = agent.run(input="go", client=ScriptedClient([{"text": "draft"}]))
    assert tools.status == review.status == "waiting_for_human"
    return [
        (tools.to_dict(), {"approvals": ["c1"], "tool_outputs": [{"tool_call_id": "c2", "output": {"given": True}}]}),
        (review.to_dict(), {"human_input": "yes"}),
    ]


PAUSED = _paused_states()


def nodes(value: Any, path: Tuple[Any, ...] = (), seen: Optional[set] = None) -> List[Tuple[Any, ...]]:
    """Paths to the nodes of a state, down to 10 levels (an earlier mutation may have made
    it deep or cyclic)."""
    seen = set() if seen is None else seen
    found = [path]
    if id(value) in seen or len(path) >= 10:
        return found
    seen.add(id(value))
    if isinstance(value, dict):
        for k, v in list(value.items()):
            found += nodes(v, path + (k,), seen)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += nodes(v, path + (i,), seen)
    return found


@st.composite
def mutated_states(draw: st.DrawFn) -> Tuple[Any, Dict[str, Any]]:
    original, decisions = draw(st.sampled_from(PAUSED))
    state = copy.deepcopy(original)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = nodes(state)
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(["replace", "replace", "delete", "insert", "deepen", "cycle"]))
        if not path:
            if op == "replace":
                return draw(host_values()), decisions
            continue
        parent = state
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        if op == "replace":
            parent[key] = draw(st.one_of(host_values(), st.sampled_from(["approval", "manual", "hitl", "", "c1", -1, 2**64 - 1])))
        elif op == "delete":
            del parent[key]
        elif op == "insert" and isinstance(parent[key], dict):
            parent[key][draw(st.text(max_size=8))] = draw(host_values())
        elif op == "deepen":
            for _ in range(draw(st.sampled_from([10, 70, 2000]))):
                parent[key] = [parent[key]]
        elif op == "cycle" and isinstance(parent[key], (dict, list)):
            parent[key] = [parent[key], state]
    return state, decisions


@st.composite
def mutated_texts(draw: st.DrawFn) -> Tuple[Any, Dict[str, Any]]:
    original, decisions = draw(st.sampled_from(PAUSED))
    text = json.dumps(original)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        at = draw(st.integers(min_value=0, max_value=len(text)))
        cut = draw(st.integers(min_value=0, max_value=8))
        insert = draw(st.one_of(st.text(max_size=4), st.sampled_from(["\ud800", "[" * 100, "18446744073709551616", "-9223372036854775809", '"', "\\u", "1e400"])))
        text = text[:at] + insert + text[at + cut:]
    return (text if draw(st.booleans()) else text.encode("utf-8", "surrogatepass")), decisions


def continue_any(state: Any, decisions: Dict[str, Any], mode: str) -> Optional[RunResult]:
    """Continues `state`; the only acceptable refusals are state_invalid and
    continue_invalid (and a run that fails after continuing keeps a storable state)."""
    agent = gate_agent()
    options: Dict[str, Any] = {"state": state, "client": ScriptedClient([{"text": "done"}]), **decisions}
    if state is None:  # no state given at all: the caller's mistake
        with pytest.raises(TypeError, match="pass exactly one of state= or run="):
            agent.continue_run(**options)
        return None
    try:
        if mode == "async":
            result: RunResult = asyncio.run(agent.continue_run_async(**options))
            return result
        return agent.continue_run(**options)  # type: ignore[no-any-return]
    except AgentError as e:
        if e.result is None:
            assert e.code in ("state_invalid", "continue_invalid"), (e.code, str(e))
            if e.code == "state_invalid":
                assert str(e).startswith("Invalid state: "), str(e)
        else:
            round_trips(e.result)  # a run that failed after continuing keeps a storable state
        return None


@given(mutated=mutated_states(), mode=st.sampled_from(["block", "async"]))
def test_mutated_state_dicts(mutated: Tuple[Any, Dict[str, Any]], mode: str) -> None:
    result = continue_any(*mutated, mode)
    if result is not None:
        round_trips(result)


@given(mutated=mutated_texts())
def test_mutated_state_texts(mutated: Tuple[Any, Dict[str, Any]]) -> None:
    result = continue_any(*mutated, "block")
    if result is not None:
        round_trips(result)


def test_the_unmutated_states_continue() -> None:
    # The baseline the mutations start from is valid: failures above are the mutations'.
    for state, decisions in PAUSED:
        assert continue_any(copy.deepcopy(state), decisions, "block") is not None
        assert continue_any(json.dumps(state), decisions, "async") is not None
