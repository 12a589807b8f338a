"""Hostile host values and exceptions: deep, cyclic and huge values are refused
with the error of the place they enter (docs/behaviour.md §7), odd exceptions become clear errors, and
the process survives. Inputs that used to crash the interpreter run in a subprocess, so a
regression fails one test instead of killing pytest."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import time
from typing import Any, Dict, Iterator, List

import pytest
from conftest import call, calls

from phaseo_agent import (
    AgentDefinition,
    AgentDefinitionError,
    AgentError,
    AgentModelError,
    AgentSchemaValidationError,
    AgentStateError,
    AgentTool,
    AgentToolError,
    AgentToolTimeoutError,
    RunResult,
    ScriptedClient,
    ToolRuntime,
    create_agent,
    define_tool,
)

TOO_DEEP = "value is nested more than 64 levels deep"
CYCLE = "value contains a cycle"


def nested(levels: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(levels):
        value = {"a": value}
    return value


def cyclic() -> Dict[str, Any]:
    d: Dict[str, Any] = {"x": 1}
    d["self"] = d
    return d


def agent_with(execute: Any, **tool: Any) -> Any:
    return create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=execute, **tool))]})


def one_call(arguments: str = "{}") -> ScriptedClient:
    return ScriptedClient([{"tool_calls": [{"id": "c1", "name": "t", "arguments": arguments}]}, {"text": "done"}])


def in_subprocess(body: str) -> str:
    """Runs `body` in a fresh interpreter (with `nested`, `cyclic`, `one_call` and the
    package imported) and returns its stdout; a crash fails the test with its signal."""
    prelude = textwrap.dedent("""
        import json
        from phaseo_agent import *
        def nested(levels, leaf=1):
            value = leaf
            for _ in range(levels):
                value = {"a": value}
            return value
        def cyclic():
            d = {"x": 1}
            d["self"] = d
            return d
        def one_call(arguments="{}"):
            return ScriptedClient([{"tool_calls": [{"id": "c1", "name": "t", "arguments": arguments}]}, {"text": "done"}])
        def agent_with(execute, **tool):
            return create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=execute, **tool))]})
        def outcome(f):
            try:
                r = f()
                print(json.dumps({"ok": getattr(r, "status", None)}))
            except AgentError as e:
                print(json.dumps({"code": e.code, "message": str(e), "type": type(e).__name__}))
            except Exception as e:
                print(json.dumps({"raised": type(e).__name__, "message": str(e)}))
    """)
    done = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(body)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"the interpreter died (code {done.returncode}): {done.stderr[-2000:]}"
    return done.stdout


def outcomes(body: str) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in in_subprocess(body).splitlines() if line.startswith("{")]


# Finding 4: values that used to crash the interpreter.

def test_deep_and_cyclic_results_fail_the_run_as_invalid_output_without_crashing() -> None:
    seen = outcomes("""
        deep = nested(1000)
        for value in (deep, cyclic(), nested(100_000)):
            outcome(lambda: agent_with(lambda i, rt: value).run(input="go", client=one_call()))
        async def async_tool(i, rt):
            return deep
        def generator_tool(i, rt):
            yield {"step": 1}
            return deep
        outcome(lambda: agent_with(async_tool).run(input="go", client=one_call()))
        outcome(lambda: agent_with(generator_tool).run(input="go", client=one_call()))
        # return-to-model does not hide an invalid output: it fails the run like outputSchema.
        outcome(lambda: agent_with(lambda i, rt: deep, on_error="return-to-model").run(input="go", client=one_call()))
    """)
    messages = ["Invalid tool output: " + m for m in (TOO_DEEP, CYCLE, TOO_DEEP, TOO_DEEP, TOO_DEEP, TOO_DEEP)]
    assert outcomes_of(seen) == [("tool_output_invalid", m) for m in messages]
    assert {o["type"] for o in seen} == {"AgentSchemaValidationError"}


def outcomes_of(seen: List[Dict[str, Any]]) -> List[Any]:
    return [(o.get("code"), o.get("message")) if "code" in o else o for o in seen]


def test_deep_and_cyclic_progress_fails_the_call_as_an_invalid_event() -> None:
    seen = outcomes("""
        import threading
        deep = nested(1000)
        def emits(value, seen):
            def execute(i, rt):
                try:
                    rt.emit_progress(value)
                except ValueError as e:
                    seen.append(str(e))
                return "finished anyway"
            return execute
        for value in (deep, cyclic()):
            seen = []
            outcome(lambda: agent_with(emits(value, seen)).run(input="go", client=one_call()))
            # The run fails at once; the tool's thread may still be finishing.
            for _ in range(500):
                if seen:
                    break
                threading.Event().wait(0.01)
            print(json.dumps({"tool_saw": seen[0]}))
        def generator_tool(i, rt):
            yield deep
            return "never"
        async def async_generator_tool(i, rt):
            yield cyclic()
        outcome(lambda: agent_with(generator_tool).run(input="go", client=one_call()))
        outcome(lambda: agent_with(async_generator_tool, on_error="return-to-model").run(input="go", client=one_call()))
    """)
    assert seen == [
        {"code": "tool_event_invalid", "message": "Invalid tool event: " + TOO_DEEP, "type": "AgentSchemaValidationError"},
        {"tool_saw": "emit_progress: " + TOO_DEEP},
        {"code": "tool_event_invalid", "message": "Invalid tool event: " + CYCLE, "type": "AgentSchemaValidationError"},
        {"tool_saw": "emit_progress: " + CYCLE},
        {"code": "tool_event_invalid", "message": "Invalid tool event: " + TOO_DEEP, "type": "AgentSchemaValidationError"},
        {"code": "tool_event_invalid", "message": "Invalid tool event: " + CYCLE, "type": "AgentSchemaValidationError"},
    ]


def test_set_context_refuses_deep_cyclic_and_huge_values_in_the_tool() -> None:
    seen = outcomes("""
        def sets(value):
            def execute(i, rt):
                try:
                    rt.set_context(value)
                except (ValueError, TypeError) as e:
                    return type(e).__name__ + ": " + str(e)
                return "set"
            return execute
        for value in (nested(1000), cyclic(), 2**64, {1: "int key"}, nested(64)):
            result = agent_with(sets(value)).run(input="go", client=one_call(), context={"kept": True})
            print(json.dumps({"tool": result.step_results[0]["tool_results"][0]["result"], "context_is_kept": result.context == {"kept": True}}))
        outcome(lambda: agent_with(lambda i, rt: rt.set_context(cyclic())).run(input="go", client=one_call()))
    """)
    assert seen == [
        {"tool": "ValueError: set_context: " + TOO_DEEP, "context_is_kept": True},
        {"tool": "ValueError: set_context: " + CYCLE, "context_is_kept": True},
        {"tool": "ValueError: set_context: integer 18446744073709551616 does not fit in 64 bits", "context_is_kept": True},
        {"tool": "TypeError: set_context: object keys must be strings, got int", "context_is_kept": True},
        {"tool": "set", "context_is_kept": False},
        {"code": "tool_failed", "message": "set_context: " + CYCLE, "type": "AgentToolError"},
    ]


def test_scripted_and_host_model_arguments_3000_deep() -> None:
    seen = outcomes("""
        deep = nested(3000)
        outcome(lambda: ScriptedClient([{"tool_calls": [{"id": "c1", "name": "t", "arguments": deep}]}]))
        text = "[" * 3000 + "]" * 3000
        outcome(lambda: agent_with(lambda i, rt: 1).run(input="go", client=one_call(text)))
        # return-to-model lets the model retry: the run goes on.
        outcome(lambda: agent_with(lambda i, rt: 1, on_error="return-to-model").run(input="go", client=one_call(text)))
        class Host:
            def generate(self, request):
                return {"tool_calls": [{"id": "c1", "name": "t", "arguments": deep}]}
        outcome(lambda: agent_with(lambda i, rt: 1).run(input="go", client=Host()))
        class Cyclic:
            def generate(self, request):
                return cyclic()
        outcome(lambda: agent_with(lambda i, rt: 1).run(input="go", client=Cyclic()))
    """)
    assert seen == [
        {"raised": "ValueError", "message": "responses[0]: " + TOO_DEEP},
        {"code": "tool_input_invalid", "message": "Invalid tool input: " + TOO_DEEP, "type": "AgentSchemaValidationError"},
        {"ok": "completed"},
        {"code": "model_failed", "message": "model response: " + TOO_DEEP, "type": "AgentModelError"},
        {"code": "model_failed", "message": "model response: " + CYCLE, "type": "AgentModelError"},
    ]


def test_continue_with_a_deep_or_cyclic_state_dict_is_state_invalid() -> None:
    seen = outcomes("""
        agent = create_agent({"id": "a"})
        for state in (nested(3000), cyclic(), {"version": 1, "run": nested(100)}):
            outcome(lambda: agent.continue_run(state=state, client=ScriptedClient([])))
    """)
    assert seen == [
        {"code": "state_invalid", "message": "Invalid state: " + TOO_DEEP, "type": "AgentStateError"},
        {"code": "state_invalid", "message": "Invalid state: " + CYCLE, "type": "AgentStateError"},
        {"code": "state_invalid", "message": "Invalid state: " + TOO_DEEP, "type": "AgentStateError"},
    ]


# Finding 6 (Python): malformed state is state_invalid, whatever its shape.

def paused_state() -> RunResult:
    agent = agent_with(lambda i, rt: "ran", require_approval=True)
    return agent.run(input="go", client=one_call())


def continue_state(state: Any) -> RunResult:
    agent = agent_with(lambda i, rt: "ran", require_approval=True)
    result: RunResult = agent.continue_run(state=state, client=ScriptedClient([{"text": "done"}]), approvals=["c1"])
    return result


def test_lone_surrogate_in_state_text_is_state_invalid() -> None:
    text = paused_state().to_json()
    assert '"input":"go"' in text
    with pytest.raises(AgentStateError) as raised:
        continue_state(text.replace('"input":"go"', '"input":"\ud800"'))
    assert raised.value.code == "state_invalid"
    assert str(raised.value).startswith("Invalid state: text is not valid Unicode (")
    with pytest.raises(AgentStateError) as raised:
        continue_state(text.replace('"input":"go"', '"input":"\\ud800"'))
    assert str(raised.value).startswith("Invalid state: not JSON")
    state = paused_state().to_dict()
    state["run"]["input"] = "\udfff"
    with pytest.raises(AgentStateError, match="^Invalid state: text is not valid Unicode"):
        continue_state(state)


def test_dict_state_with_an_integer_of_2_64_is_state_invalid() -> None:
    state = paused_state().to_dict()
    state["run"]["step_count_extra"] = 2**64
    with pytest.raises(AgentStateError) as raised:
        continue_state(state)
    assert raised.value.code == "state_invalid"
    assert str(raised.value) == "Invalid state: integer 18446744073709551616 does not fit in 64 bits"
    state["run"]["step_count_extra"] = -(2**63) - 1
    with pytest.raises(AgentStateError, match="integer -9223372036854775809 does not fit in 64 bits"):
        continue_state(state)


@pytest.mark.parametrize("state", [42, None.__class__, [1, 2], {1: 2}, {"version": {1, 2}}, b"\xff\xfe", "", object()])
def test_malformed_state_of_any_shape_is_state_invalid(state: Any) -> None:
    with pytest.raises(AgentStateError) as raised:
        continue_state(state)
    assert raised.value.code == "state_invalid" and str(raised.value).startswith("Invalid state: ")
    assert raised.value.result is None


def test_a_state_dict_from_a_mapping_and_bytes_continue() -> None:
    from types import MappingProxyType

    paused = paused_state()
    assert continue_state(MappingProxyType(paused.to_dict())).status == "completed"
    assert continue_state(paused.to_json().encode()).status == "completed"


# Huge integers: exact within 64 bits, refused beyond.

@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, 10**400, [1, {"n": 2**70}]], ids=["2^64", "-2^63-1", "10^400", "nested"])
def test_huge_integers_in_results_are_invalid_output(value: Any) -> None:
    with pytest.raises(AgentSchemaValidationError) as raised:
        agent_with(lambda i, rt: value).run(input="go", client=one_call())
    assert raised.value.code == "tool_output_invalid" and raised.value.target == "tool_output"
    assert str(raised.value).startswith("Invalid tool output: integer ")
    assert str(raised.value).endswith(" does not fit in 64 bits")


def test_integer_too_large_to_print_names_its_size() -> None:
    with pytest.raises(AgentSchemaValidationError) as raised:
        agent_with(lambda i, rt: 1 << 20000).run(input="go", client=one_call())
    assert str(raised.value) == "Invalid tool output: integer of 20001 bits does not fit in 64 bits"


def test_64_bit_integers_and_64_levels_are_kept_exactly_through_pause_and_continue() -> None:
    value = {"max_u64": 2**64 - 1, "min_i64": -(2**63), "deep": nested(63)}
    assert depth(value) == 64

    def execute(tool_input: Any, runtime: ToolRuntime) -> Any:
        runtime.set_context(value)
        runtime.emit_progress(value)
        return value

    tools = [define_tool(AgentTool(id="t", execute=execute)), define_tool(AgentTool(id="gate", execute=lambda i, rt: "ok", require_approval=True))]
    agent = create_agent({"id": "a", "tools": tools})
    client = ScriptedClient([calls(call("c1", "t"), call("c2", "gate")), {"text": "done"}])
    paused = agent.run(input=value, client=client, context=value)
    text = paused.to_json()
    assert '"max_u64":18446744073709551615' in text and '"min_i64":-9223372036854775808' in text
    done = agent.continue_run(state=text, client=client, approvals=["c2"])
    assert done.status == "completed"
    assert done.context == value
    assert done.step_results[0]["tool_results"][0]["result"] == value
    assert done.step_results[0]["tool_results"][0]["preliminary_results"] == [value]
    assert RunResult.from_dict(done.to_dict()).to_json() == done.to_json()


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


# A caller's own arguments: a clear host error naming the argument.

def test_callers_arguments_beyond_the_limits_raise_naming_the_argument() -> None:
    agent = agent_with(lambda i, rt: 1)
    with pytest.raises(ValueError, match="^input: " + TOO_DEEP):
        agent.run(input=nested(65), client=one_call())
    with pytest.raises(ValueError, match="^context: " + CYCLE):
        agent.run(input="go", context=cyclic(), client=one_call())
    with pytest.raises(ValueError, match="^messages: integer"):
        agent.run(input="go", messages=[{"role": "user", "content": 2**64}], client=one_call())
    with pytest.raises(TypeError, match="^input: value of type bytes is not JSON-compatible"):
        agent.run(input=b"raw", client=one_call())
    paused = agent_with(None).run(input="go", client=one_call())
    with pytest.raises(ValueError, match="^tool_outputs: output of tool call c1: " + TOO_DEEP):
        agent_with(None).continue_run(state=paused, client=one_call(), tool_outputs=[{"tool_call_id": "c1", "output": nested(500)}])
    done = agent_with(None).continue_run(state=paused, client=ScriptedClient([{"text": "ok"}]), tool_outputs=[{"tool_call_id": "c1", "output": 1}])
    assert done.status == "completed"
    with pytest.raises(ValueError, match="^parameters: " + TOO_DEEP):
        define_tool(AgentTool(id="t", parameters=nested(65)))


# Finding "odd exceptions" and misbehaving awaitables, at every callback boundary.

class StrRaises(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")


class NothingPrints(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class NotAnException(BaseException):
    pass


class BadAwaitable:
    def __await__(self) -> Iterator[Any]:
        raise ValueError("cannot await")


class BadYield:
    def __await__(self) -> Iterator[Any]:
        yield 5


ODD = [
    (StrRaises("x"), "StrRaises('x')"),
    (NothingPrints(), "<unprintable NothingPrints>"),
    (NotAnException("base"), "base"),
    (ValueError(""), "ValueError"),
    (GeneratorExit("exit"), "exit"),
]


@pytest.mark.parametrize("exc,message", ODD)
@pytest.mark.parametrize("kind", ["def", "async def"])
def test_odd_exceptions_from_tools_become_tool_errors(exc: BaseException, message: str, kind: str) -> None:
    def sync(i: Any, rt: ToolRuntime) -> None:
        raise exc

    async def coro(i: Any, rt: ToolRuntime) -> None:
        raise exc

    agent = agent_with(sync if kind == "def" else coro)
    with pytest.raises(AgentToolError) as raised:
        agent.run(input="go", client=one_call())
    assert raised.value.code == "tool_failed" and str(raised.value) == message

    async def main() -> None:
        with pytest.raises(AgentToolError) as raised_async:
            await agent.run_async(input="go", client=one_call())
        assert str(raised_async.value) == message

    asyncio.run(main())


@pytest.mark.parametrize("returned,message", [(BadAwaitable(), "cannot await"), (BadYield(), "Task got bad yield: 5")])
def test_misbehaving_awaitables_become_tool_errors(returned: Any, message: str) -> None:
    agent = agent_with(lambda i, rt: returned)
    with pytest.raises(AgentToolError, match=message):
        agent.run(input="go", client=one_call())


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("exc,message", ODD)
def test_odd_exceptions_from_validators_hooks_and_clients(exc: BaseException, message: str) -> None:
    def raising(*args: Any) -> Any:
        raise exc

    with pytest.raises(AgentSchemaValidationError) as raised:
        agent_with(lambda i, rt: 1, input_schema=raising).run(input="go", client=one_call())
    assert raised.value.code == "tool_input_invalid" and str(raised.value) == "Invalid tool input: " + message
    with pytest.raises(AgentToolError, match="^" + message.replace("(", r"\(").replace(")", r"\)") + "$"):
        agent_with(lambda i, rt: 1, require_approval=raising).run(input="go", client=one_call())

    class Client:
        async def generate(self, request: Dict[str, Any]) -> Any:
            raise exc

    with pytest.raises(AgentModelError) as model_raised:
        agent_with(lambda i, rt: 1).run(input="go", client=Client())
    assert str(model_raised.value) == message
    # A listener's exception is reported (unraisable hook) and the run goes on.
    assert agent_with(lambda i, rt: 1).run(input="go", client=one_call(), on_event=raising).status == "completed"


def test_callback_return_values_beyond_the_limits_are_the_callbacks_errors() -> None:
    with pytest.raises(AgentSchemaValidationError) as raised:
        agent_with(lambda i, rt: 1, input_schema=lambda v: nested(200)).run(input="go", client=one_call())
    assert str(raised.value) == "Invalid tool input: " + TOO_DEEP
    # A hook's answer is the call's result: one that cannot be converted is an invalid
    # output, as an executor's is.
    with pytest.raises(AgentSchemaValidationError) as hook_raised:
        agent_with(None, on_tool_called=lambda i, rt: cyclic()).run(input="go", client=one_call())
    assert hook_raised.value.code == "tool_output_invalid"
    assert str(hook_raised.value) == "Invalid tool output: " + CYCLE
    agent = create_agent({"id": "a", "instructions": lambda turn: nested(100)})
    with pytest.raises(AgentError, match=TOO_DEEP):
        agent.run(input="go", client=ScriptedClient([{"text": "x"}]))


def test_stream_consumers_see_the_error_and_the_process_survives() -> None:
    agent = agent_with(lambda i, rt: cyclic())
    stream = agent.stream(input="go", client=one_call())
    with pytest.raises(AgentSchemaValidationError, match=CYCLE):
        for _ in stream.events():
            pass

    async def main() -> None:
        async_stream = agent.stream(input="go", client=one_call())
        with pytest.raises(AgentSchemaValidationError, match=CYCLE):
            async for _ in async_stream.events():
                pass

    asyncio.run(main())



# The Python side of finding 3: a generator tool that never ends must not hold its thread
# or its loop; timeouts keep working and the loop stays usable.

def test_endless_generator_tools_time_out_and_let_go() -> None:
    produced: List[int] = []

    def endless(tool_input: Any, runtime: ToolRuntime) -> Iterator[Dict[str, int]]:
        while True:
            produced.append(1)
            yield {"n": len(produced)}

    async def endless_async(tool_input: Any, runtime: ToolRuntime) -> Any:
        while True:
            yield {"n": 1}

    async def quick(tool_input: Any, runtime: ToolRuntime) -> str:
        await asyncio.sleep(0)
        return "fine"

    for execute in (endless, endless_async):
        agent = agent_with(execute, timeout_ms=100)
        with pytest.raises(AgentError) as raised:
            agent.run(input="go", client=one_call())
        assert raised.value.code == "tool_timeout"

        async def main() -> None:
            with pytest.raises(AgentError) as raised_async:
                await asyncio.wait_for(agent.run_async(input="go", client=one_call()), 10)
            assert raised_async.value.code == "tool_timeout"
            # The loop is free again: another run's async tool runs on it.
            assert (await agent_with(quick).run_async(input="go", client=one_call())).status == "completed"

        asyncio.run(main())
        # And the background loop (blocking runs) is free too.
        assert agent_with(quick).run(input="go", client=one_call()).status == "completed"
    count = len(produced)
    import time

    time.sleep(0.2)
    assert len(produced) == count, "the endless sync generator kept running after its call ended"


def test_dataclasses_and_pydantic_models_are_read_but_not_objects_answering_any_attribute() -> None:
    import dataclasses
    from unittest.mock import MagicMock

    import pydantic

    @dataclasses.dataclass
    class Point:
        x: int
        tags: List[str]

    class Model(pydantic.BaseModel):
        point: Dict[str, int]

    value = [Point(1, ["a"]), Model(point={"y": 2})]
    result = agent_with(lambda i, rt: value).run(input="go", client=one_call())
    assert result.step_results[0]["tool_results"][0]["result"] == [{"x": 1, "tags": ["a"]}, {"point": {"y": 2}}]
    with pytest.raises(AgentSchemaValidationError) as raised:
        agent_with(lambda i, rt: {"m": MagicMock()}).run(input="go", client=one_call())
    assert str(raised.value) == "Invalid tool output: value of type MagicMock is not JSON-compatible"


@pytest.mark.parametrize("huge", [1e300, float("inf")])
def test_durations_too_long_for_a_clock_are_no_limit_not_a_panic(huge: float) -> None:
    def quick(tool_input: Dict[str, Any], runtime: ToolRuntime) -> int:
        return 1

    observed: List[bool] = []

    def waits(tool_input: Dict[str, Any], runtime: ToolRuntime) -> str:
        observed.append(runtime.cancelled.wait(huge))
        return "late"

    # A finite timeout too long for a clock never fires (an infinite one is refused).
    if huge != float("inf"):
        never = define_tool(AgentTool(id="t", description="", execute=quick, timeout_ms=huge))
        result = create_agent(AgentDefinition(id="a", tools=[never])).run(
            input="go", client=ScriptedClient([calls(call("c1", "t")), {"text": "done"}]))
        assert result.status == "completed"
    # A wait of `huge` seconds inside a tool ends with the call's cancellation (its timeout).
    timed = define_tool(AgentTool(id="t", description="", execute=waits, timeout_ms=300))
    with pytest.raises(AgentToolTimeoutError):
        create_agent(AgentDefinition(id="a", tools=[timed])).run(
            input="go", client=ScriptedClient([calls(call("c1", "t"))]))
    deadline = time.monotonic() + 10
    while not observed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert observed == [True]
    # Backoffs and leases that long are accepted as they are, or refused as a definition error.
    create_agent(AgentDefinition(id="a", model_retry={"max_retries": 1, "backoff_ms": huge}))
    lease = {"duration_ms": huge, "renew_every_ms": 10_000}
    if huge == float("inf"):
        with pytest.raises(AgentDefinitionError, match="lease needs"):
            create_agent(AgentDefinition(id="a", lease=lease))
    else:
        create_agent(AgentDefinition(id="a", lease=lease))


@pytest.mark.parametrize("bad", [-1, 2.5, float("inf")])
def test_step_and_character_limits_that_are_not_whole_numbers_are_definition_errors(bad: Any) -> None:
    # As every language's reader says it: the field named, the value given, not an OverflowError.
    with pytest.raises(AgentDefinitionError, match=r"max_steps: must be a whole number of steps, 0 or more, got "):
        create_agent(AgentDefinition(id="a", max_steps=bad))
    with pytest.raises(AgentDefinitionError, match=r"max_output_chars: must be a whole number of characters"):
        create_agent(AgentDefinition(id="a", tool_execution={"max_output_chars": bad}))
    agent = create_agent(AgentDefinition(id="a"))
    client = ScriptedClient([{"text": "done"}])
    with pytest.raises(AgentDefinitionError, match=r"Invalid run options: max_steps: must be a whole number"):
        agent.run(input="go", client=client, max_steps=bad)
    # Nothing was asked of the model: the refused run ran nothing.
    assert agent.run(input="go", client=client, max_steps=3).output == "done"
