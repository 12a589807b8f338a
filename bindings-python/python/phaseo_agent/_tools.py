"""Tool definitions: ``AgentTool`` + ``define_tool``, executor forms and validator kinds."""

from __future__ import annotations

import asyncio
import functools
import inspect
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Dict, List, Literal, Mapping, Optional, Tuple, Union, overload

from . import _native
from ._native import JsonSchemaValidator, Tool, ToolRuntime
from .errors import AgentDefinitionError

__all__ = ["AgentTool", "ToolRetry", "ToolReturn", "define_tool", "json_schema_validator", "tool", "Validator"]

#: What can validate a value: a callable returning the (possibly transformed) value or
#: raising, a Pydantic model class, an object with ``parse``/``safe_parse``, a JSON Schema
#: dict, or a :class:`JsonSchemaValidator`.
Validator = Any


class ToolReturn:
    """Ends an async-generator executor with a result: ``yield ToolReturn(value)``
    (Python does not allow ``return value`` in async generators)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


@dataclass
class ToolRetry:
    """A tool's retries (docs/behaviour.md §15): ``max_attempts`` attempts in all (the first
    counts; 1 means no retry), the n-th retry after ``backoff_ms * n`` milliseconds. Only
    an attempt that raises or times out is retried; the last error then follows
    ``on_error``. The runtime's ``attempt`` numbers the attempts."""

    max_attempts: int
    backoff_ms: float = 0


def _retry(tool_id: str, retry: Union[ToolRetry, Mapping[str, Any], None]) -> Optional[Tuple[float, Optional[float]]]:
    """``(max_attempts, backoff_ms)`` of ``retry`` (a :class:`ToolRetry` or a dict of its
    fields), for the core to check."""
    if retry is None:
        return None
    if isinstance(retry, ToolRetry):
        return (retry.max_attempts, retry.backoff_ms)
    if isinstance(retry, Mapping):
        unknown = set(retry) - {"max_attempts", "backoff_ms"}
        if unknown or "max_attempts" not in retry:
            raise AgentDefinitionError(
                f"Invalid definition of tool '{tool_id}': retry needs max_attempts (and optionally backoff_ms), "
                f"got keys {sorted(retry)}", code="definition_invalid")
        return (retry["max_attempts"], retry.get("backoff_ms"))
    raise TypeError(f"retry must be ToolRetry or a dict, got {retry!r}")


@dataclass
class AgentTool:
    """A tool the model may call (docs/behaviour.md §2).

    ``execute(tool_input, runtime)`` may be a ``def``, an ``async def``, a generator or an
    async generator (each yielded value is a progress value; the return value — for async
    generators a yielded :class:`ToolReturn` — is the result). ``execute=None`` or
    ``execute=False`` (TypeScript's ``execute: false``) makes a manual tool: the run pauses
    until the application supplies its output. The fields are in the product's order
    (``AgentTool(id, execute, description, parameters, ...)``); ``next_turn_params["tools"]``
    may list tools (``Tool``/``AgentTool``) or their ids.
    """

    # The product's field order, so positional use ports unchanged: AgentTool("add", add_fn).
    id: str
    execute: Union[Callable[..., Any], Literal[False], None] = None
    description: Optional[str] = None
    parameters: Optional[Dict[str, Any]] = None
    timeout_ms: Optional[float] = None
    input_schema: Validator = None
    output_schema: Validator = None
    event_schema: Validator = None
    require_approval: Union[bool, Callable[..., Any], None] = None
    on_tool_called: Optional[Callable[..., Any]] = None
    on_response_received: Optional[Callable[..., Any]] = None
    next_turn_params: Union[Dict[str, Any], Callable[..., Any], None] = None
    on_error: Optional[str] = None
    strict: bool = False
    """Ask the model for schema-exact arguments (docs/behaviour.md §12); ``parameters`` must then be
    strict-compatible, checked when the tool is defined."""
    input_examples: Optional[List[Dict[str, Any]]] = None
    """Example argument objects, sent with the tool where the client supports them."""
    max_calls: Optional[int] = None
    """At most this many calls of the tool in a run (a whole number ≥ 1); a call beyond is
    refused with an error the model sees, and the run goes on."""
    retry: Union[ToolRetry, Dict[str, Any], None] = None
    """Retries of a call whose executor raises or times out (:class:`ToolRetry`)."""
    defer_loading: bool = False
    """Not offered to the model at first: the built-in ``tool_search`` finds and loads it,
    and it is offered from the next model request to the end of the run (loaded tools are
    kept in the state as ``run.loadedTools``, so a continued run keeps them)."""
    annotations: Optional[Dict[str, Any]] = None
    """Hints listed when the tool is served over MCP (:func:`serve_mcp`): ``read_only_hint``
    (or ``readOnlyHint``), ``destructive_hint``, ``idempotent_hint``, ``open_world_hint``,
    ``title``. A tool that needs approval is listed ``destructiveHint: true`` unless set."""


def json_schema_validator(schema: Dict[str, Any]) -> JsonSchemaValidator:
    """A validator backed by the core's JSON Schema engine (draft 2020-12): returns the
    value when valid, raises ``ValueError("<pointer>: <reason>")`` otherwise."""
    return JsonSchemaValidator(schema)


def _is_pydantic_model(v: Any) -> bool:
    return isinstance(v, type) and hasattr(v, "model_validate") and hasattr(v, "model_json_schema")


def _validator(v: Validator) -> Tuple[Any, Optional[Dict[str, Any]]]:
    """A native-ready validator and, when it can describe itself, its JSON Schema."""
    if v is None:
        return None, None
    if isinstance(v, JsonSchemaValidator):
        return v, v.schema
    if isinstance(v, dict):
        validator = JsonSchemaValidator(v)
        return validator, v
    if _is_pydantic_model(v):
        model = v

        def validate_model(value: Any) -> Any:
            return model.model_validate(value).model_dump(mode="json")

        return validate_model, model.model_json_schema()
    schema = None
    to_schema = getattr(v, "to_json_schema", None) or getattr(v, "model_json_schema", None)
    if callable(to_schema):
        schema = to_schema()
    safe_parse = getattr(v, "safe_parse", None)
    if callable(safe_parse):

        def validate_safe(value: Any) -> Any:
            outcome = safe_parse(value)
            ok = outcome.get("success") if isinstance(outcome, dict) else getattr(outcome, "success", False)
            if ok:
                return outcome.get("data") if isinstance(outcome, dict) else getattr(outcome, "data", None)
            error = outcome.get("error") if isinstance(outcome, dict) else getattr(outcome, "error", None)
            raise ValueError(str(error))

        return validate_safe, schema
    parse = getattr(v, "parse", None)
    if callable(parse) and not inspect.isfunction(v):
        return parse, schema
    if callable(v):
        return v, schema
    raise TypeError(f"unsupported validator {v!r}: use a callable, a Pydantic model, an object with parse/safe_parse or a JSON Schema dict")


def _wrap_generator(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def run(tool_input: Any, runtime: ToolRuntime) -> Any:
        generator = fn(tool_input, runtime)
        try:
            # A generator that never ends stops with its call (timeout, cancellation)
            # instead of holding its worker thread forever.
            while not runtime.cancelled.is_set():
                runtime.emit_progress(next(generator))
        except StopIteration as stop:
            return stop.value
        generator.close()
        return None

    return run


def _wrap_async_generator(fn: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(fn)
    async def run(tool_input: Any, runtime: ToolRuntime) -> Any:
        generator = fn(tool_input, runtime)
        try:
            async for value in generator:
                if isinstance(value, ToolReturn):
                    return value.value
                runtime.emit_progress(value)
                # Back to the loop after each value: a generator that never awaits would
                # otherwise hold the loop, and with it timeouts and every other callback.
                await asyncio.sleep(0)
        finally:
            await generator.aclose()
        return None

    return run


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))


def _executor(tool_id: str, fn: Union[Callable[..., Any], Literal[False], None]) -> Tuple[Optional[Callable[..., Any]], bool]:
    if fn is None or fn is False:
        return None, False
    if not callable(fn):
        raise AgentDefinitionError(
            f"Invalid definition of tool '{tool_id}': execute must be a callable, None or False, not {type(fn).__name__}",
            code="definition_invalid",
        )
    if inspect.isasyncgenfunction(fn):
        return _wrap_async_generator(fn), True
    if inspect.isgeneratorfunction(fn):
        return _wrap_generator(fn), False
    return fn, _is_async(fn)


def _with_model_input(fn: Callable[..., Any], model: Any, is_async: bool) -> Callable[..., Any]:
    """Executors of a tool whose input schema is a Pydantic model receive a model instance."""
    if is_async:

        @functools.wraps(fn)
        async def run_async(tool_input: Any, runtime: ToolRuntime) -> Any:
            return await fn(model.model_validate(tool_input), runtime)

        return run_async

    @functools.wraps(fn)
    def run(tool_input: Any, runtime: ToolRuntime) -> Any:
        return fn(model.model_validate(tool_input), runtime)

    return run


def _defer_loading(tool_id: str, deferred: Any) -> bool:
    """``defer_loading`` as a bool; anything else is a definition error naming the tool
    (not the ``TypeError`` the native constructor would raise)."""
    if not isinstance(deferred, bool):
        raise AgentDefinitionError(
            f"Invalid definition of tool '{tool_id}': defer_loading must be True or False, got {deferred!r}",
            code="definition_invalid")
    return deferred


@overload
def define_tool(tool: AgentTool) -> Tool: ...
@overload
def define_tool(tool: Callable[..., Any], **fields: Any) -> Tool: ...
@overload
def define_tool(tool: None = None, *, id: str, **fields: Any) -> Tool: ...
@overload
def define_tool(tool: None = None, **fields: Any) -> Callable[[Callable[..., Any]], Tool]: ...
def define_tool(tool: Union[AgentTool, Callable[..., Any], None] = None, **fields: Any) -> Any:
    """Checks a tool definition and returns the tool. Three forms:

    - ``define_tool(AgentTool(...))`` or ``define_tool(id=..., execute=..., parameters=...)``:
      a tool with a hand-written JSON Schema; ``execute(tool_input, runtime)``.
    - ``define_tool(fn)`` / ``@tool`` on a typed ``def`` or ``async def``
      (docs/behaviour.md §20): ``id`` is the function's name, ``description`` its docstring,
      ``parameters`` the JSON Schema of its annotated parameters (Pydantic models,
      dataclasses, TypedDicts, ``Annotated[..., Field(description=...)]``, docstring
      ``Args:`` as descriptions; a parameter named ``runtime`` or typed ``ToolRuntime``
      receives the runtime). Each call's arguments are decoded into those types before
      the function runs; a value that does not fit is ``Invalid tool input: <path>:
      <reason>``. The return annotation gives ``output_schema``. ``strict=True`` sends
      the strict form of the generated schema.
    - ``@tool(strict=True, require_approval=True, ...)`` (keyword fields without ``id``):
      a decorator applying those fields to the typed function.

    An invalid definition (bad schema, negative timeout, unknown ``on_error``,
    ``max_calls`` or ``retry.max_attempts`` below 1, a parameter without a JSON Schema)
    raises :class:`~phaseo_agent.errors.AgentDefinitionError`."""
    if tool is None and "id" not in fields:
        options = fields

        def decorate(fn: Callable[..., Any]) -> Tool:
            return define_tool(fn, **options)

        return decorate
    definition: AgentTool
    if isinstance(tool, AgentTool):
        if fields:
            raise TypeError("pass either an AgentTool or keyword fields, not both")
        definition = tool
    elif tool is None:
        definition = AgentTool(**fields)
    elif callable(tool):
        from ._typed_tools import typed_tool

        definition = typed_tool(tool, dict(fields))
    else:
        raise TypeError(f"define_tool takes an AgentTool or a typed function, got {type(tool).__name__}")
    tool = definition
    execute, is_async = _executor(tool.id, tool.execute)
    if execute is not None and inspect.isgeneratorfunction(tool.execute) is False and _is_pydantic_model(tool.input_schema):
        execute = _with_model_input(execute, tool.input_schema, is_async)
    input_validator, input_json = _validator(tool.input_schema)
    output_validator, _ = _validator(tool.output_schema)
    event_validator, _ = _validator(tool.event_schema)
    require_approval = tool.require_approval
    if require_approval is not None and not callable(require_approval):
        require_approval = bool(require_approval)
    return _native.Tool(
        tool.id,
        tool.description or "",
        tool.parameters,
        execute,
        is_async,
        tool.timeout_ms,
        require_approval,
        tool.on_error,
        input_validator,
        input_json,
        output_validator,
        event_validator,
        tool.on_tool_called,
        tool.on_response_received,
        _next_turn_params(tool.next_turn_params),
        strict=bool(tool.strict),
        input_examples=tool.input_examples,
        max_calls=tool.max_calls,
        retry=_retry(tool.id, tool.retry),
        defer_loading=_defer_loading(tool.id, tool.defer_loading),
        annotations=tool.annotations,
    )


#: The product's name of :func:`define_tool`.
tool = define_tool


def _tool_ids(params: Any) -> Any:
    """``next_turn_params`` with tool objects in ``tools`` replaced by their ids."""
    if isinstance(params, Mapping) and isinstance(params.get("tools"), (list, tuple)):
        tools = [t.id if isinstance(t, (Tool, AgentTool)) else t for t in params["tools"]]
        return {**params, "tools": tools}
    return params


def _next_turn_params(params: Any) -> Any:
    if callable(params):
        provider = params
        is_async = _is_async(provider)
        if is_async:

            @functools.wraps(provider)
            async def provide_async(*args: Any) -> Any:
                return _tool_ids(await provider(*args))

            return provide_async

        @functools.wraps(provider)
        def provide(*args: Any) -> Any:
            return _tool_ids(provider(*args))

        return provide
    return _tool_ids(params)
