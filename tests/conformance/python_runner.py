#!/usr/bin/env python3
"""Python conformance runner: runs the cross-language JSON cases through the PUBLIC API of
the ``phaseo_agent`` binding, with real Python executors, validators, predicates, hooks and
a host model client (see tests/conformance/README.md and tests/conformance/README.md).

    python tests/conformance/python_runner.py [--stop-after N --save-state DIR |
        --resume-state DIR --from-step N] PATH...

Executor forms: ``async def`` by default, ``def`` for ``"async": false``, an async generator
for ``"asGenerator": true`` (a sync generator when also ``"async": false``).

Entry points: a case whose file name sorts at an odd index among the ``*.json`` files of
its folder runs its steps through ``asyncio.run(agent.run_async(...))`` /
``continue_run_async``; every other case uses the blocking ``run`` / ``continue_run``.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

try:
    from phaseo_agent import (
        AgentError,
        AgentModelRetry,
        AgentTool,
        AgentToolDecision,
        AgentToolExecutionConfig,
        AgentToolOutput,
        CancelToken,
        RunResult,
        ToolRetry,
        ToolReturn,
        create_agent,
        define_tool,
        finish_reason_is,
        has_tool_call,
        json_schema_validator,
        max_cost,
        max_duration,
        max_tokens_used,
        step_count_is,
    )
except ImportError as import_error:  # pragma: no cover - depends on the checkout
    print(
        f"python_runner: the phaseo_agent binding is not importable ({import_error}).\n"
        "Build it first: `make python`, or\n"
        "  cd bindings-python && maturin develop   (inside the virtualenv you run this with)",
        file=sys.stderr,
    )
    sys.exit(2)

Json = Any

CASE_KEYS = {"name", "description", "agent", "tools", "model", "steps", "expectDefinitionError"}
AGENT_KEYS = {
    "id", "model", "instructions", "maxSteps", "stopWhen", "modelRetry", "toolExecution",
    "temperature", "maxOutputTokens", "topP", "outputSchema", "requireApproval", "humanReview",
    "stateSecret", "toolChoice", "parallelToolCalls", "activeTools",
}
TOOL_KEYS = {
    "id", "description", "asAgent", "parameters", "inputSchema", "outputSchema", "eventSchema", "timeoutMs",
    "onError", "requireApproval", "nextTurnParams", "manual", "onToolCalled",
    "onResponseReceived", "behavior", "asGenerator", "async", "strict", "inputExamples",
    "maxCalls", "retry", "deferLoading",
}
MODEL_ENTRY_KEYS = {"text", "toolCalls", "usage", "cost", "finishReason", "fail"}
OVERRIDE_KEYS = {
    "model", "maxSteps", "stopWhen", "modelRetry", "toolExecution", "temperature",
    "maxOutputTokens", "topP", "toolChoice", "parallelToolCalls", "activeTools",
}
RUN_KEYS = {"input", "context", "messages", "cancelAfterMs"} | OVERRIDE_KEYS
CONTINUE_KEYS = {
    "approvals", "rejections", "toolOutputs", "responses", "humanInput", "context", "cancelAfterMs",
} | OVERRIDE_KEYS
STEP_KEYS = {"run", "continue", "expect"}
EXPECT_KEYS = {
    "status", "output", "stopReason", "pauseKind", "context", "error", "pending", "executed",
    "cancelled", "maxConcurrent", "modelRequests", "events", "toolEvents",
    "preliminaryResults", "usage", "minWallMs", "maxWallMs",
}
REQUEST_KEYS = {
    "toolMessages", "tools", "context", "temperature", "model", "instructions",
    "lastUserMessage", "maxOutputTokens", "topP", "toolChoice", "parallelToolCalls", "toolSpecs",
    "toolCalls",
}
TOOL_SPEC_KEYS = {"id", "strict", "inputExamples"}
USAGE_KEYS = {
    "inputTokens": "input_tokens", "outputTokens": "output_tokens",
    "cachedTokens": "cached_tokens", "totalTokens": "total_tokens", "cost": "cost",
}
TERMINAL_ACTIONS = {
    "return", "returnInput", "throw", "returnContext", "returnRuntime", "returnAttempt", "returnIdempotencyKey",
}
ACTIONS = TERMINAL_ACTIONS | {"progress", "setContext", "sleepMs", "blockingSleepMs", "throwUntilAttempt"}
TOOL_EVENT_TYPES = {"tool.started", "tool.preliminary_result", "tool.completed", "tool.failed", "tool.retrying"}
def whole(v: Any) -> Any:
    """A threshold the Python API takes as an `int`: an integral number is that int; any
    other value is given as it is, and the API's own refusal is the case's outcome (a
    fraction is never cut off here)."""
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


STOP_CONDITIONS: Dict[str, Callable[[Any], Any]] = {
    "stepCountIs": lambda v: step_count_is(whole(v)),
    "maxTokensUsed": lambda v: max_tokens_used(whole(v)),
    "maxCost": lambda v: max_cost(float(v)),
    "maxDuration": lambda v: max_duration(whole(v)),
    "hasToolCall": lambda v: has_tool_call(text(v)),
    "finishReasonIs": lambda v: finish_reason_is(text(v)),
}
EXECUTOR_GRACE_S = 1.0


class CaseError(Exception):
    """The first difference, or a feature of the case this runner cannot express."""


# ---------------------------------------------------------------------------------------
# JSON comparison (numbers by value, absent == null)


def json_eq(a: Json, b: Json) -> bool:
    """Deep equality where ``2 == 2.0`` and an absent object key equals ``None``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_eq(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return all(json_eq(a.get(k), b.get(k)) for k in set(a) | set(b))
    return type(a) is type(b) and a == b


def show(value: Json) -> str:
    """Compact JSON text of a value for difference messages (cut at 300 characters)."""
    try:
        s = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        s = repr(value)
    return s if len(s) <= 300 else s[:300] + "…"


def text(value: Json) -> str:
    """A string value verbatim, anything else as compact JSON."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def diff(key: str, expected: Json, actual: Json) -> None:
    if not json_eq(expected, actual):
        raise CaseError(f"{key}: expected {show(expected)}, got {show(actual)}")


def check_keys(obj: Json, allowed: set, what: str) -> None:
    if isinstance(obj, dict):
        for key in obj:
            if key not in allowed:
                raise CaseError(f"{what}: unsupported key {json.dumps(key)}")


def single_entry(action: Json, what: str) -> Tuple[str, Json]:
    if not isinstance(action, dict) or len(action) != 1:
        raise CaseError(f"{what} must be an object with one key: {show(action)}")
    return next(iter(action.items()))


def behavior_action(action: Json) -> Tuple[str, Json]:
    """A behaviour action as ``(key, argument)``; ``throwUntilAttempt`` alone has a second
    key, ``message``, and takes ``(n, message)`` as its argument."""
    if isinstance(action, dict) and "throwUntilAttempt" in action:
        if set(action) != {"throwUntilAttempt", "message"}:
            raise CaseError(f"behavior action throwUntilAttempt needs exactly a message: {show(action)}")
        return "throwUntilAttempt", (action["throwUntilAttempt"], action["message"])
    return single_entry(action, "behavior action")


# ---------------------------------------------------------------------------------------
# What executors record during one step (thread-safe: sync tools run on worker threads)


class Observations:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.executed: List[str] = []
        self.cancelled: List[str] = []
        self.running = 0
        self.max_running = 0
        self.active = 0

    def reset(self) -> None:
        with self._lock:
            self.executed, self.cancelled, self.max_running = [], [], 0

    @contextlib.contextmanager
    def executing(self, call_id: str) -> Iterator[None]:
        """Marks an executor as running from its first action until it returns or raises."""
        with self._lock:
            self.executed.append(call_id)
            self.active += 1
            self.running += 1
            self.max_running = max(self.max_running, self.running)
        try:
            yield
        finally:
            with self._lock:
                self.running -= 1
                self.active -= 1

    def record_cancelled(self, call_id: str) -> None:
        with self._lock:
            self.cancelled.append(call_id)

    def idle(self) -> bool:
        with self._lock:
            return self.active == 0

    def snapshot(self) -> Tuple[List[str], List[str], int]:
        with self._lock:
            return sorted(self.executed), sorted(set(self.cancelled)), self.max_running


# ---------------------------------------------------------------------------------------
# Tool executors: the case's behaviour as real Python functions


def runtime_value(runtime: Any) -> Dict[str, Any]:
    run_id = runtime.run_id
    if not isinstance(run_id, str) or not run_id:
        raise RuntimeError(f"runtime run id is not a non-empty string: {run_id!r}")
    return {
        "runId": "<run>",
        "agentId": runtime.agent_id,
        "stepIndex": runtime.step_index,
        "toolCallId": runtime.tool_call["id"],
    }


def idempotency_key(runtime: Any) -> str:
    """The runtime's idempotency key, checked to start with the real run id and ``:``,
    with that run id written as ``<run>``."""
    key, run_id = runtime.idempotency_key, runtime.run_id
    if not run_id or not isinstance(key, str) or not key.startswith(f"{run_id}:"):
        raise RuntimeError(f"idempotency key {key!r} does not start with the run id {run_id!r}")
    return "<run>" + key[len(run_id):]


def terminal(key: str, arg: Json, tool_input: Json, runtime: Any) -> Json:
    """The value a terminal action returns (or the error it raises)."""
    if key == "returnAttempt":
        return runtime.attempt
    if key == "returnIdempotencyKey":
        return idempotency_key(runtime)
    if key == "return":
        return copy.deepcopy(arg)
    if key == "returnInput":
        return tool_input
    if key == "throw":
        raise RuntimeError(text(arg))
    if key == "returnContext":
        return runtime.context
    return runtime_value(runtime)


def side_effect(key: str, arg: Json, runtime: Any) -> bool:
    """Runs the actions every executor form performs alike; False for the others."""
    if key == "setContext":
        runtime.set_context(copy.deepcopy(arg))
    elif key == "throwUntilAttempt":
        until, message = arg
        if runtime.attempt < until:
            raise RuntimeError(text(message))
    elif key == "blockingSleepMs":
        time.sleep(float(arg) / 1000)
    else:
        return False
    return True


async def sleep_async(ms: Json, call_id: str, obs: Observations) -> None:
    """A cooperative wait; the core cancels the task when the call is cancelled."""
    try:
        await asyncio.sleep(float(ms) / 1000)
    except asyncio.CancelledError:
        obs.record_cancelled(call_id)
        raise


def sleep_sync(ms: Json, runtime: Any, call_id: str, obs: Observations) -> None:
    """A cooperative wait on a worker thread: ends early when the call is cancelled."""
    if runtime.cancelled.wait(float(ms) / 1000):
        obs.record_cancelled(call_id)
        raise RuntimeError("cancelled")


def async_executor(actions: List[Tuple[str, Json]], obs: Observations) -> Callable[..., Any]:
    async def execute(tool_input: Json, runtime: Any) -> Json:
        call_id = runtime.tool_call["id"]
        with obs.executing(call_id):
            for key, arg in actions:
                if key in TERMINAL_ACTIONS:
                    return terminal(key, arg, tool_input, runtime)
                if key == "progress":
                    runtime.emit_progress(copy.deepcopy(arg))
                elif key == "sleepMs":
                    await sleep_async(arg, call_id, obs)
                else:
                    side_effect(key, arg, runtime)
            return None

    return execute


def sync_executor(actions: List[Tuple[str, Json]], obs: Observations) -> Callable[..., Any]:
    def execute(tool_input: Json, runtime: Any) -> Json:
        call_id = runtime.tool_call["id"]
        with obs.executing(call_id):
            for key, arg in actions:
                if key in TERMINAL_ACTIONS:
                    return terminal(key, arg, tool_input, runtime)
                if key == "progress":
                    runtime.emit_progress(copy.deepcopy(arg))
                elif key == "sleepMs":
                    sleep_sync(arg, runtime, call_id, obs)
                else:
                    side_effect(key, arg, runtime)
            return None

    return execute


def async_generator_executor(actions: List[Tuple[str, Json]], obs: Observations) -> Callable[..., Any]:
    async def execute(tool_input: Json, runtime: Any) -> Any:
        call_id = runtime.tool_call["id"]
        with obs.executing(call_id):
            for key, arg in actions:
                if key in TERMINAL_ACTIONS:
                    yield ToolReturn(terminal(key, arg, tool_input, runtime))
                    return
                if key == "progress":
                    yield copy.deepcopy(arg)
                elif key == "sleepMs":
                    await sleep_async(arg, call_id, obs)
                else:
                    side_effect(key, arg, runtime)

    return execute


def sync_generator_executor(actions: List[Tuple[str, Json]], obs: Observations) -> Callable[..., Any]:
    def execute(tool_input: Json, runtime: Any) -> Any:
        call_id = runtime.tool_call["id"]
        with obs.executing(call_id):
            for key, arg in actions:
                if key in TERMINAL_ACTIONS:
                    return terminal(key, arg, tool_input, runtime)
                if key == "progress":
                    yield copy.deepcopy(arg)
                elif key == "sleepMs":
                    sleep_sync(arg, runtime, call_id, obs)
                else:
                    side_effect(key, arg, runtime)
        return None

    return execute


def executor(spec: Dict[str, Any], obs: Observations) -> Callable[..., Any]:
    """The executor form the tool's flags ask for."""
    actions = [behavior_action(a) for a in spec.get("behavior") or []]
    for key, _ in actions:
        if key not in ACTIONS:
            raise CaseError(f"tool {json.dumps(spec.get('id'))}: unsupported behavior action {json.dumps(key)}")
    sync = spec.get("async") is False
    generator = spec.get("asGenerator") is True
    if generator:
        return sync_generator_executor(actions, obs) if sync else async_generator_executor(actions, obs)
    return sync_executor(actions, obs) if sync else async_executor(actions, obs)


# ---------------------------------------------------------------------------------------
# Validators, predicates and hooks as host callables


def schema_validator(schema: Json) -> Callable[[Json], Json]:
    """A host-native validator backed by the binding's JSON Schema helper."""
    check = json_schema_validator(schema)

    def validate(value: Json) -> Json:
        check(value)
        return value

    return validate


def input_equals(expected: Dict[str, Json], tool_input: Json) -> bool:
    return isinstance(tool_input, dict) and all(
        k in tool_input and json_eq(tool_input[k], v) for k, v in expected.items()
    )


def tool_approval(rule: Json) -> Any:
    if rule is None or isinstance(rule, bool):
        return rule
    expected = rule.get("inputEquals") if isinstance(rule, dict) else None
    if not isinstance(expected, dict) or len(rule) != 1:
        raise CaseError(f"tool requireApproval: unsupported rule {show(rule)}")
    return lambda tool_input, runtime: input_equals(expected, tool_input)


def agent_approval(rule: Json) -> Callable[[Dict[str, Any], Any], bool]:
    key, arg = single_entry(rule, "agent requireApproval")
    if key == "toolIds" and isinstance(arg, list):
        return lambda call, runtime: call["name"] in arg
    if key == "inputEquals" and isinstance(arg, dict):
        return lambda call, runtime: input_equals(arg, call["input"])
    raise CaseError(f"agent requireApproval: unsupported rule {show(rule)}")


def on_tool_called(form: Json) -> Optional[Callable[..., Json]]:
    if form is None:
        return None
    if form == "pause":
        return lambda tool_input, runtime: None
    if isinstance(form, dict) and set(form) == {"return"}:
        value = form["return"]
        return lambda tool_input, runtime: copy.deepcopy(value)
    raise CaseError(f"onToolCalled: unsupported form {show(form)}")


def on_response_received(form: Json) -> Optional[Callable[..., Json]]:
    if form is None:
        return None
    if isinstance(form, dict) and set(form) == {"wrap"} and isinstance(form["wrap"], str):
        key = form["wrap"]
        return lambda output, runtime: {key: output}
    raise CaseError(f"onResponseReceived: unsupported form {show(form)}")


def human_review(form: Json) -> Callable[[Dict[str, Any]], Optional[Dict[str, Json]]]:
    if not isinstance(form, dict) or set(form) != {"pauseOnFinal"}:
        raise CaseError(f"humanReview: unsupported form {show(form)}")
    spec = form["pauseOnFinal"] or {}
    check_keys(spec, {"reason", "payload"}, "humanReview.pauseOnFinal")

    def review(ctx: Dict[str, Any]) -> Optional[Dict[str, Json]]:
        users = sum(1 for m in ctx.get("messages") or [] if m.get("role") == "user")
        if ctx.get("is_final") and users == 1:
            return {"reason": spec.get("reason", ""), "payload": copy.deepcopy(spec.get("payload"))}
        return None

    return review


def stop_conditions(value: Json) -> Optional[List[Any]]:
    if value is None:
        return None
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        key, arg = single_entry(item, "stopWhen condition")
        if key not in STOP_CONDITIONS:
            raise CaseError(f"stopWhen: unsupported condition {json.dumps(key)}")
        out.append(STOP_CONDITIONS[key](arg))
    return out


def tool_execution(value: Json) -> Optional[AgentToolExecutionConfig]:
    if value is None:
        return None
    check_keys(value, {"toolConcurrency", "onError", "maxOutputChars", "maxToolCalls"}, "toolExecution")
    return AgentToolExecutionConfig(
        tool_concurrency=value.get("toolConcurrency"),
        on_error=value.get("onError"),
        max_output_chars=value.get("maxOutputChars"),
        max_tool_calls=value.get("maxToolCalls"),
    )


def tool_retry(value: Json) -> Optional[ToolRetry]:
    if value is None:
        return None
    check_keys(value, {"maxAttempts", "backoffMs"}, "retry")
    return ToolRetry(max_attempts=value.get("maxAttempts"), backoff_ms=value.get("backoffMs", 0))


def model_retry(value: Json) -> Optional[AgentModelRetry]:
    if value is None:
        return None
    check_keys(value, {"maxRetries", "backoffMs"}, "modelRetry")
    return AgentModelRetry(max_retries=value.get("maxRetries", 0), backoff_ms=value.get("backoffMs", 250))


# ---------------------------------------------------------------------------------------
# The agent


def optional_validator(spec: Dict[str, Any], key: str) -> Optional[Callable[[Json], Json]]:
    return schema_validator(spec[key]) if spec.get(key) is not None else None


def build_tool(spec: Dict[str, Any], obs: Observations) -> Any:
    check_keys(spec, TOOL_KEYS, "tool")
    if not isinstance(spec.get("id"), str):
        raise CaseError("tool without id")
    return define_tool(AgentTool(
        id=spec["id"],
        description=spec.get("description") or "",
        parameters=spec.get("parameters"),
        execute=None if spec.get("manual") is True else executor(spec, obs),
        timeout_ms=spec.get("timeoutMs"),
        require_approval=tool_approval(spec.get("requireApproval")),
        on_error=spec.get("onError"),
        input_schema=optional_validator(spec, "inputSchema"),
        output_schema=optional_validator(spec, "outputSchema"),
        event_schema=optional_validator(spec, "eventSchema"),
        on_tool_called=on_tool_called(spec.get("onToolCalled")),
        on_response_received=on_response_received(spec.get("onResponseReceived")),
        next_turn_params=copy.deepcopy(spec.get("nextTurnParams")),
        strict=spec.get("strict") is True,
        input_examples=copy.deepcopy(spec.get("inputExamples")),
        max_calls=spec.get("maxCalls"),
        retry=tool_retry(spec.get("retry")),
        defer_loading=spec.get("deferLoading", False),
    ))


def agent_tool(spec: Dict[str, Any], obs: Observations) -> Any:
    """`{id, description?, asAgent: {agent, tools}}`: the nested agent built like the case's
    own and registered with `as_tool` (docs/behaviour.md §18)."""
    check_keys(spec, {"id", "description", "asAgent"}, "tool")
    check_keys(spec["asAgent"], {"agent", "tools"}, "asAgent")
    nested = build_agent(spec["asAgent"], obs)
    if isinstance(nested, AgentError):
        raise nested
    return nested.as_tool(id=spec.get("id"), description=spec.get("description"))


def build_agent(case: Dict[str, Any], obs: Observations) -> Any:
    """The case's agent, or the AgentError with which the binding refused its definition."""
    a = case.get("agent")
    if not isinstance(a, dict):
        raise CaseError("case without agent")
    check_keys(a, AGENT_KEYS, "agent")
    try:
        tools = [agent_tool(t, obs) if isinstance(t, dict) and "asAgent" in t else build_tool(t, obs)
                 for t in case.get("tools") or []]
    except AgentError as e:
        return e
    definition: Dict[str, Any] = {
        "id": a.get("id"),
        "tools": tools,
        "tool_choice": snake_choice(a.get("toolChoice")),
        "parallel_tool_calls": a.get("parallelToolCalls"),
        "active_tools": copy.deepcopy(a.get("activeTools")),
        "model": a.get("model"),
        "instructions": a.get("instructions"),
        "max_steps": a.get("maxSteps"),
        "temperature": a.get("temperature"),
        "max_output_tokens": a.get("maxOutputTokens"),
        "top_p": a.get("topP"),
        "stop_when": stop_conditions(a.get("stopWhen")),
        "model_retry": model_retry(a.get("modelRetry")),
        "tool_execution": tool_execution(a.get("toolExecution")),
    }
    if a.get("outputSchema") is not None:
        definition["output_schema"] = schema_validator(a["outputSchema"])
    if a.get("requireApproval") is not None:
        definition["require_approval"] = agent_approval(a["requireApproval"])
    if a.get("humanReview") is not None:
        definition["human_review"] = human_review(a["humanReview"])
    if a.get("stateSecret") is not None:
        definition["state_secret"] = a["stateSecret"]
    try:
        return create_agent({k: v for k, v in definition.items() if v is not None})
    except AgentError as e:
        return e


def snake_choice(choice: Json) -> Json:
    """A case's toolChoice as Python spells it (``{"tool_id": id}``)."""
    if isinstance(choice, dict):
        return {("tool_id" if k == "toolId" else k): v for k, v in choice.items()}
    return choice


def camel_choice(choice: Json) -> Json:
    if isinstance(choice, dict):
        return {("toolId" if k == "tool_id" else k): v for k, v in choice.items()}
    return choice


# ---------------------------------------------------------------------------------------
# The scripted model: a host model client recording every request


def request_summary(request: Dict[str, Any]) -> Dict[str, Json]:
    messages = request.get("messages") or []
    tail: List[Dict[str, Any]] = []
    for m in reversed(messages):
        if m.get("role") != "tool":
            break
        tail.insert(0, m)
    users = [m for m in messages if m.get("role") == "user"]
    # The last assistant message with tool calls, as the model will read it.
    calls = next((m["tool_calls"] for m in reversed(messages) if m.get("tool_calls")), [])
    return {
        "toolCalls": [{"id": c.get("id"), "name": c.get("name"), "arguments": copy.deepcopy(c.get("input"))} for c in calls],
        "toolMessages": [
            {"toolCallId": m.get("tool_call_id"), "content": m.get("content"), "isError": bool(m.get("is_error"))}
            for m in tail
        ],
        "tools": [t.get("id") for t in request.get("tools") or []],
        "context": copy.deepcopy(request.get("context")),
        "temperature": request.get("temperature"),
        "model": request.get("model"),
        "instructions": request.get("instructions"),
        "lastUserMessage": users[-1].get("content") if users else None,
        "maxOutputTokens": request.get("max_output_tokens"),
        "topP": request.get("top_p"),
        "toolChoice": camel_choice(request.get("tool_choice")),
        "parallelToolCalls": request.get("parallel_tool_calls"),
        "toolSpecs": [
            {"id": t.get("id"), "strict": t.get("strict", False), "inputExamples": copy.deepcopy(t.get("input_examples"))}
            for t in request.get("tools") or []
        ],
    }


class ScriptedModel:
    """Answers with the case's entries in order, one per attempt."""

    def __init__(self, entries: List[Dict[str, Any]], cursor: int) -> None:
        self._entries = entries
        self._lock = threading.Lock()
        self.cursor = cursor
        self.requests: List[Dict[str, Json]] = []
        self.ran_out: Optional[str] = None

    def generate(self, request: Dict[str, Any]) -> Dict[str, Any]:
        with self._lock:
            self.requests.append(request_summary(request))
            index = self.cursor
            self.cursor += 1
            if index >= len(self._entries):
                self.ran_out = f"case error: the scripted model ran out of responses ({len(self._entries)} scripted)"
                raise RuntimeError(self.ran_out)
            entry = self._entries[index]
        if "fail" in entry:
            failure = entry["fail"]
            raise RuntimeError(failure.get("message", "") if isinstance(failure, dict) else text(failure))
        return copy.deepcopy(entry)


# ---------------------------------------------------------------------------------------
# Steps


@dataclass
class StepOutcome:
    state: Optional[RunResult]
    error: Optional[AgentError]
    events: List[Dict[str, Any]]
    requests: List[Dict[str, Json]]
    executed: List[str]
    cancelled: List[str]
    max_concurrent: int
    wall_ms: float


def override_kwargs(spec: Dict[str, Any]) -> Dict[str, Any]:
    kwargs = {
        "model": spec.get("model"),
        "max_steps": spec.get("maxSteps"),
        "stop_when": stop_conditions(spec.get("stopWhen")),
        "model_retry": model_retry(spec.get("modelRetry")),
        "tool_execution": tool_execution(spec.get("toolExecution")),
        "temperature": spec.get("temperature"),
        "max_output_tokens": spec.get("maxOutputTokens"),
        "top_p": spec.get("topP"),
        "tool_choice": snake_choice(spec.get("toolChoice")),
        "parallel_tool_calls": spec.get("parallelToolCalls"),
        "active_tools": copy.deepcopy(spec.get("activeTools")),
    }
    return {k: v for k, v in kwargs.items() if v is not None}


def decisions(items: Optional[Sequence[Json]], keys: set) -> Optional[List[Any]]:
    """Approvals (``keys`` with ``editedInput``) or rejections."""
    if items is None:
        return None
    out: List[Any] = []
    for d in items:
        if isinstance(d, str):
            out.append(d)
        elif isinstance(d, dict) and isinstance(d.get("toolCallId"), str):
            check_keys(d, keys, "decision")
            out.append(AgentToolDecision(d["toolCallId"], d.get("reason"), copy.deepcopy(d.get("editedInput"))))
        else:
            raise CaseError(f"unsupported decision {show(d)}")
    return out


def tool_outputs(items: Optional[Sequence[Json]]) -> Optional[List[AgentToolOutput]]:
    """``toolOutputs`` or ``responses``."""
    if items is None:
        return None
    out = []
    for o in items:
        check_keys(o, {"toolCallId", "output"}, "toolOutput")
        if not isinstance(o, dict) or not isinstance(o.get("toolCallId"), str):
            raise CaseError(f"toolOutput without toolCallId: {show(o)}")
        out.append(AgentToolOutput(o["toolCallId"], copy.deepcopy(o.get("output"))))
    return out


def run_kwargs(spec: Dict[str, Any]) -> Dict[str, Any]:
    kwargs = override_kwargs(spec)
    kwargs["input"] = copy.deepcopy(spec.get("input"))
    kwargs["context"] = copy.deepcopy(spec.get("context"))
    if spec.get("messages") is not None:
        kwargs["messages"] = copy.deepcopy(spec["messages"])
    return kwargs


def continue_kwargs(spec: Dict[str, Any], state: RunResult) -> Dict[str, Any]:
    kwargs = override_kwargs(spec)
    kwargs["state"] = state
    kwargs["approvals"] = decisions(spec.get("approvals"), {"toolCallId", "reason", "editedInput"})
    kwargs["rejections"] = decisions(spec.get("rejections"), {"toolCallId", "reason"})
    kwargs["tool_outputs"] = tool_outputs(spec.get("toolOutputs"))
    kwargs["responses"] = tool_outputs(spec.get("responses"))
    kwargs["human_input"] = spec.get("humanInput")
    kwargs["context"] = copy.deepcopy(spec.get("context"))
    return kwargs


def start_cancel_timer(ms: Optional[Json], token: CancelToken) -> Optional[threading.Timer]:
    if ms is None:
        return None
    timer = threading.Timer(float(ms) / 1000, token.cancel)
    timer.daemon = True
    timer.start()
    return timer


def round_trip(state: Optional[RunResult]) -> Optional[RunResult]:
    """The state as an application storing it would get it back: through its JSON text."""
    if state is None:
        return None
    try:
        return RunResult.from_json(state.to_json())
    except AgentError as e:
        raise CaseError(f"state round trip: {e.code}: {e.message}") from e


class CaseRun:
    """One case's agent, model and current state across its steps."""

    def __init__(self, agent: Any, model: ScriptedModel, obs: Observations,
                 state: Union[RunResult, str, None], use_asyncio: bool) -> None:
        self.agent = agent
        self.model = model
        self.obs = obs
        # A RunResult, or the state's JSON text after an `editState` step.
        self.state = state
        self.use_asyncio = use_asyncio

    def call(self, step: Dict[str, Any], on_event: Callable[[Dict[str, Any]], None],
             token: CancelToken) -> Tuple[str, Dict[str, Any], Optional[Json]]:
        """Which entry point the step uses, its keyword arguments and its cancelAfterMs."""
        common = {"client": self.model, "on_event": on_event, "cancel": token}
        if "run" in step:
            spec = step["run"]
            return "run", {**run_kwargs(spec), **common}, spec.get("cancelAfterMs")
        if "continue" in step:
            spec = step["continue"]
            if self.state is None:
                raise CaseError("continue without a state")
            return "continue_run", {**continue_kwargs(spec, self.state), **common}, spec.get("cancelAfterMs")
        raise CaseError("a step is neither run nor continue")

    def drive_blocking(self, method: str, kwargs: Dict[str, Any], cancel_after: Optional[Json],
                       token: CancelToken) -> Tuple[Optional[RunResult], Optional[AgentError], float]:
        timer = start_cancel_timer(cancel_after, token)
        started = time.monotonic()
        try:
            result, error = getattr(self.agent, method)(**kwargs), None
        except AgentError as e:
            result, error = e.result, e
        finally:
            if timer is not None:
                timer.cancel()
        wall_ms = (time.monotonic() - started) * 1000
        deadline = time.monotonic() + EXECUTOR_GRACE_S
        while not self.obs.idle() and time.monotonic() < deadline:
            time.sleep(0.005)
        return result, error, wall_ms

    async def drive_async(self, method: str, kwargs: Dict[str, Any], cancel_after: Optional[Json],
                          token: CancelToken) -> Tuple[Optional[RunResult], Optional[AgentError], float]:
        timer = start_cancel_timer(cancel_after, token)
        started = time.monotonic()
        try:
            result, error = await getattr(self.agent, method + "_async")(**kwargs), None
        except AgentError as e:
            result, error = e.result, e
        finally:
            if timer is not None:
                timer.cancel()
        wall_ms = (time.monotonic() - started) * 1000
        deadline = time.monotonic() + EXECUTOR_GRACE_S
        while not self.obs.idle() and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        return result, error, wall_ms

    def step(self, step: Dict[str, Any]) -> StepOutcome:
        self.obs.reset()
        self.model.requests.clear()
        events: List[Dict[str, Any]] = []
        token = CancelToken()
        method, kwargs, cancel_after = self.call(step, events.append, token)
        if self.use_asyncio:
            result, error, wall_ms = asyncio.run(self.drive_async(method, kwargs, cancel_after, token))
        else:
            result, error, wall_ms = self.drive_blocking(method, kwargs, cancel_after, token)
        if self.model.ran_out:
            raise CaseError(self.model.ran_out)
        state = round_trip(result)
        if state is not None:
            self.state = state
        executed, cancelled, max_concurrent = self.obs.snapshot()
        return StepOutcome(
            state=self.state if not isinstance(self.state, str) else None,
            error=error,
            events=list(events),
            requests=list(self.model.requests),
            executed=executed,
            cancelled=cancelled,
            max_concurrent=max_concurrent,
            wall_ms=wall_ms,
        )


# ---------------------------------------------------------------------------------------
# Expectations


def tool_message_matches(expected: Dict[str, Json], actual: Dict[str, Json]) -> bool:
    if not json_eq(expected.get("toolCallId"), actual.get("toolCallId")):
        return False
    if bool(expected.get("isError") or False) != bool(actual.get("isError")):
        return False
    content = actual.get("content") or ""
    if "content" in expected:
        try:
            parsed = json.loads(content)
        except ValueError:
            parsed = content
        if not json_eq(expected["content"], parsed):
            return False
    contains = expected.get("contentContains")
    return not isinstance(contains, str) or contains in content


def check_request(i: int, expected: Dict[str, Json], actual: Dict[str, Json]) -> None:
    for key, want in expected.items():
        got = actual.get(key)
        if key == "toolMessages":
            want_list, got_list = want or [], got or []
            if len(want_list) != len(got_list) or not all(
                    tool_message_matches(w, g) for w, g in zip(want_list, got_list)):
                raise CaseError(f"modelRequests[{i}].toolMessages: expected {show(want_list)}, got {show(got_list)}")
        elif key == "toolSpecs":
            want_list, got_list = want or [], got or []
            if len(want_list) != len(got_list) or not all(
                    all(k in TOOL_SPEC_KEYS and json_eq(v, g.get(k)) for k, v in w.items())
                    for w, g in zip(want_list, got_list)):
                raise CaseError(f"modelRequests[{i}].toolSpecs: expected {show(want_list)}, got {show(got_list)}")
        elif key == "toolCalls":
            want_list, got_list = want or [], got or []
            if len(want_list) != len(got_list) or not all(
                    all(k in {"id", "name", "arguments"} for k in w)
                    and json_eq(w.get("id"), g.get("id")) and json_eq(w.get("name"), g.get("name"))
                    and json_eq(as_json(w.get("arguments")), as_json(g.get("arguments")))
                    for w, g in zip(want_list, got_list)):
                raise CaseError(f"modelRequests[{i}].toolCalls: expected {show(want_list)}, got {show(got_list)}")
        else:
            diff(f"modelRequests[{i}].{key}", want, got)


def as_json(value: Json) -> Json:
    """Arguments compared as JSON: a string holding JSON stands for that JSON."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def check_definition_error(want: Dict[str, Json], built: Any) -> None:
    if not isinstance(built, AgentError):
        raise CaseError(f"expectDefinitionError: expected {show(want)}, but the definition was accepted")
    if "code" in want and not json_eq(want["code"], built.code):
        raise CaseError(f"expectDefinitionError.code: expected {show(want['code'])}, got {show(built.code)} (message: {built.message})")
    contains = want.get("messageContains")
    if isinstance(contains, str) and contains not in built.message:
        raise CaseError(f"expectDefinitionError.message: expected to contain {contains!r}, got {built.message!r}")


def check_error(want: Dict[str, Json], o: StepOutcome) -> None:
    run_error = o.state.error if o.state is not None else None
    code: Json
    message: str
    if o.error is not None:
        code, message = o.error.code, o.error.message
    elif isinstance(run_error, dict):
        code, message = run_error.get("code"), str(run_error.get("message") or "")
    else:
        raise CaseError(f"error: expected {show(want)}, got no error")
    if "code" in want and not json_eq(want["code"], code):
        raise CaseError(f"error.code: expected {show(want['code'])}, got {show(code)} (message: {message})")
    contains = want.get("messageContains")
    if isinstance(contains, str) and contains not in message:
        raise CaseError(f"error.message: expected to contain {contains!r}, got {message!r}")


def events_by_call(events: List[Dict[str, Any]], types: set, pick: Callable[[Dict[str, Any]], Json]) -> Dict[str, List[Json]]:
    out: Dict[str, List[Json]] = {}
    for e in events:
        if e.get("type") in types:
            out.setdefault(str(e.get("tool_call_id")), []).append(pick(e))
    return out


def state_fields(state: Optional[RunResult]) -> Dict[str, Json]:
    """What the expectations read from the state, through the typed accessors."""
    if state is None:
        return {}
    pause = state.pause
    return {
        "status": state.status,
        "output": state.output,
        "stopReason": state.stop_reason,
        "pauseKind": pause.get("kind") if isinstance(pause, dict) else None,
        "context": state.context,
        "pending": [{"toolCallId": p.tool_call_id, "toolName": p.tool_name, "kind": p.kind} for p in state.pending],
    }


def check_expect(expect: Dict[str, Json], o: StepOutcome) -> None:
    """Checks every key of ``expect``; the first difference raises."""
    fields = state_fields(o.state)
    for key, want in expect.items():
        if key in ("status", "output", "stopReason", "pauseKind", "context", "pending"):
            diff(key, want, fields.get(key))
        elif key == "error":
            check_error(want, o)
        elif key == "executed":
            diff(key, want, o.executed)
        elif key == "cancelled":
            diff(key, want, o.cancelled)
        elif key == "maxConcurrent":
            diff(key, want, o.max_concurrent)
        elif key == "modelRequests":
            if len(want) != len(o.requests):
                raise CaseError(f"modelRequests: expected {len(want)} requests, got {len(o.requests)}")
            for i, (w, g) in enumerate(zip(want, o.requests)):
                check_request(i, w, g)
        elif key == "events":
            diff(key, want, [e.get("type") for e in o.events if not str(e.get("type")).startswith("response.")])
        elif key == "toolEvents":
            got = events_by_call(o.events, TOOL_EVENT_TYPES, lambda e: e.get("type"))
            for call_id, types in want.items():
                diff(f"toolEvents.{call_id}", types, got.get(call_id, []))
        elif key == "preliminaryResults":
            got = events_by_call(o.events, {"tool.preliminary_result"}, lambda e: e.get("result"))
            for call_id, values in want.items():
                diff(f"preliminaryResults.{call_id}", values, got.get(call_id, []))
        elif key == "usage":
            usage = o.state.usage if o.state is not None else None
            for k, v in want.items():
                diff(f"usage.{k}", v, getattr(usage, USAGE_KEYS[k]) if usage is not None else None)
        elif key == "minWallMs":
            if o.wall_ms < float(want):
                raise CaseError(f"minWallMs: took {int(o.wall_ms)} ms, at least {want} ms expected")
        elif key == "maxWallMs":
            if o.wall_ms > float(want):
                raise CaseError(f"maxWallMs: took {int(o.wall_ms)} ms, limit {want} ms")
    if o.error is not None and "error" not in expect:
        raise CaseError(f"unexpected error {o.error.code}: {o.error.message}")


# ---------------------------------------------------------------------------------------
# Cases


def check_case(case: Dict[str, Any]) -> None:
    """Refuses, before anything runs, a case using a key this runner does not know."""
    check_keys(case, CASE_KEYS, "case")
    for entry in case.get("model") or []:
        check_keys(entry, MODEL_ENTRY_KEYS, "model entry")
        for tool_call in (entry.get("toolCalls") or []) if isinstance(entry, dict) else []:
            check_keys(tool_call, {"id", "name", "arguments"}, "model entry toolCalls")
    for i, step in enumerate(case.get("steps") or []):
        if isinstance(step, dict) and "editState" in step:
            check_keys(step, {"editState"}, f"step {i}")
            continue
        check_keys(step, STEP_KEYS, f"step {i}")
        check_keys(step.get("run"), RUN_KEYS, f"step {i}: run")
        check_keys(step.get("continue"), CONTINUE_KEYS, f"step {i}: continue")
        expect = step.get("expect") or {}
        check_keys(expect, EXPECT_KEYS, f"step {i}: expect")
        check_keys(expect.get("usage"), set(USAGE_KEYS), f"step {i}: expect.usage")
        check_keys(expect.get("error"), {"code", "messageContains"}, f"step {i}: expect.error")
        for request in expect.get("modelRequests") or []:
            check_keys(request, REQUEST_KEYS, f"step {i}: expect.modelRequests")
            for message in (request.get("toolMessages") or []) if isinstance(request, dict) else []:
                check_keys(message, {"toolCallId", "content", "contentContains", "isError"},
                           f"step {i}: expect.modelRequests.toolMessages")


def json_patch(text: str, ops: Json) -> str:
    """The ``editState`` step: RFC 6902 ``add``/``remove``/``replace`` on the state's JSON
    text, as an attacker editing a stored state would."""
    doc = json.loads(text)
    if not isinstance(ops, list):
        raise CaseError("editState must be a list of operations")

    def locate(path: str) -> Tuple[Any, str]:
        if not path.startswith("/"):
            raise CaseError(f"editState: bad path {json.dumps(path)}")
        parts = [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]
        target: Any = doc
        for part in parts[:-1]:
            target = target[int(part)] if isinstance(target, list) else target[part]
        return target, parts[-1]

    for op in ops:
        check_keys(op, {"op", "path", "value"}, "editState")
        kind, path = op.get("op"), op.get("path")
        try:
            if path == "" and kind in ("add", "replace"):
                doc = op["value"]
                continue
            target, key = locate(path)
            if kind == "remove":
                del target[int(key) if isinstance(target, list) else key]
            elif kind == "replace":
                if isinstance(target, list):
                    target[int(key)] = op["value"]
                elif key in target:
                    target[key] = op["value"]
                else:
                    raise KeyError(key)
            elif kind == "add":
                if isinstance(target, list):
                    target.insert(len(target) if key == "-" else int(key), op["value"])
                else:
                    target[key] = op["value"]
            else:
                raise CaseError(f"editState: unsupported op {json.dumps(kind)}")
        except (KeyError, IndexError, ValueError, TypeError) as e:
            raise CaseError(f"editState: cannot apply {show(op)}: {e}") from e
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


@dataclass
class Mode:
    stop_after: Optional[int] = None
    save_dir: Optional[str] = None
    resume_dir: Optional[str] = None
    from_step: Optional[int] = None


def load_saved(path: str) -> Tuple[RunResult, int]:
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    try:
        state = RunResult.from_json(json.dumps(doc.get("state")))
    except AgentError as e:
        raise CaseError(f"saved state refused: {e.code}: {e.message}") from e
    return state, int(doc.get("modelCursor") or 0)


def save_state(path: str, state: RunResult, cursor: int) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    doc = {"state": json.loads(state.to_json()), "modelCursor": cursor}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, separators=(",", ":"), ensure_ascii=False)


def uses_asyncio(path: str) -> bool:
    """Deterministic: the case's file name sorts at an odd index in its folder."""
    folder, name = os.path.split(os.path.abspath(path))
    siblings = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    return siblings.index(name) % 2 == 1


def run_case(path: str, case: Dict[str, Any], mode: Mode) -> bool:
    """Runs the case (or its handoff half); False when it is not one this mode runs."""
    steps = case.get("steps")
    if not isinstance(steps, list):
        raise CaseError("case without steps")
    file_name = os.path.basename(path)
    state: Optional[RunResult] = None
    cursor = 0
    indices = range(len(steps))
    if mode.stop_after is not None:
        if len(steps) <= mode.stop_after:
            return False
        indices = range(mode.stop_after)
    elif mode.resume_dir is not None:
        saved = os.path.join(mode.resume_dir, file_name)
        if not os.path.exists(saved):
            return False
        state, cursor = load_saved(saved)
        indices = range(mode.from_step or 0, len(steps))
    check_case(case)
    obs = Observations()
    agent = build_agent(case, obs)
    if "expectDefinitionError" in case:
        if mode.stop_after is not None or mode.resume_dir is not None:
            return False
        check_definition_error(case["expectDefinitionError"] or {}, agent)
        return True
    if isinstance(agent, AgentError):
        raise CaseError(f"agent definition refused: {agent.code}: {agent.message}")
    model = ScriptedModel(case.get("model") or [], cursor)
    run = CaseRun(agent, model, obs, state, uses_asyncio(path))
    for i in indices:
        if "editState" in steps[i]:
            if run.state is None:
                raise CaseError(f"step {i}: editState without a state")
            current = run.state if isinstance(run.state, str) else run.state.to_json()
            run.state = json_patch(current, steps[i]["editState"])
            continue
        try:
            outcome = run.step(steps[i])
            check_expect(steps[i].get("expect") or {}, outcome)
        except CaseError as e:
            raise CaseError(f"step {i}: {e}") from e
        except Exception as e:  # a binding or runner defect, reported as the difference
            raise CaseError(f"step {i}: {type(e).__name__}: {e}") from e
    if mode.save_dir is not None:
        if run.state is None:
            raise CaseError("no state to save")
        save_state(os.path.join(mode.save_dir, file_name),
                   RunResult.from_json(run.state) if isinstance(run.state, str) else run.state, model.cursor)
    return True


def collect(path: str, out: List[str]) -> None:
    if os.path.isdir(path):
        for entry in sorted(os.listdir(path)):
            collect(os.path.join(path, entry), out)
    elif path.endswith(".json"):
        out.append(path)


def usage() -> None:
    print("usage: python_runner.py [--stop-after N --save-state DIR | --resume-state DIR --from-step N] PATH...",
          file=sys.stderr)
    sys.exit(2)


def parse_args(argv: List[str]) -> Tuple[Mode, List[str]]:
    mode, paths = Mode(), []
    args = iter(argv)
    for arg in args:
        try:
            if arg == "--":
                continue
            if arg == "--stop-after":
                mode.stop_after = int(next(args))
            elif arg == "--save-state":
                mode.save_dir = next(args)
            elif arg == "--resume-state":
                mode.resume_dir = next(args)
            elif arg == "--from-step":
                mode.from_step = int(next(args))
            elif arg.startswith("--"):
                usage()
            else:
                paths.append(arg)
        except (StopIteration, ValueError):
            usage()
    stopping = (mode.stop_after, mode.save_dir) != (None, None)
    resuming = (mode.resume_dir, mode.from_step) != (None, None)
    if (stopping and (resuming or mode.save_dir is None or mode.stop_after is None or mode.stop_after < 1)) or \
            (resuming and (mode.resume_dir is None or mode.from_step is None)):
        usage()
    return mode, paths or ["tests/conformance/cases"]


def main(argv: List[str]) -> int:
    mode, paths = parse_args(argv)
    files: List[str] = []
    for p in paths:
        if not os.path.exists(p):
            print(f"no such case file or folder: {p}", file=sys.stderr)
            return 2
        collect(p, files)
    passed = failed = 0
    for path in files:
        name = path
        try:
            with open(path, encoding="utf-8") as f:
                case = json.load(f)
            name = case.get("name") or path
            ran = run_case(path, case, mode)
        except CaseError as e:
            ran, error = None, str(e)
        except Exception as e:  # a runner or binding defect: report it, go on
            ran, error = None, f"{type(e).__name__}: {e}"
        if ran is None:
            failed += 1
            print(f"FAIL {name}: {error}", flush=True)
        elif ran:
            passed += 1
            print(f"PASS {name}", flush=True)
    print(f"{passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
