"""Tools from typed Python functions (docs/behaviour.md §20): the signature and docstring
give the tool's JSON Schema (through Pydantic), each call's arguments are decoded into the
declared types before the function runs, and the return annotation gives the output
schema."""

from __future__ import annotations

import functools
import inspect
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _native
from ._native import ToolRuntime
from .errors import AgentDefinitionError

#: Keys whose value maps names to schemas (a property called ``title`` must stay).
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")


def _libraries() -> Tuple[Any, Any]:
    """Pydantic and docstring_parser, or a clear error saying how to install them."""
    try:
        import docstring_parser
        import pydantic
    except ImportError as missing:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            f"tools from typed functions need Pydantic 2 and docstring-parser ({missing}); "
            "install them with: pip install 'phaseo-agent-sdk[typed]'"
        ) from missing
    return pydantic, docstring_parser


def _without_titles(schema: Any) -> Any:
    """Pydantic's schema less the ``title`` it writes on every object and field (the
    model reads the names and descriptions; titles only repeat them)."""
    if isinstance(schema, list):
        return [_without_titles(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: Dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _without_titles(sub) for name, sub in value.items()}
        else:
            out[key] = _without_titles(value)
    return out


def _has_description(annotation: Any, pydantic: Any) -> bool:
    """Whether ``Annotated[..., Field(description=...)]`` already describes the field."""
    for meta in getattr(annotation, "__metadata__", ()):
        if isinstance(meta, pydantic.fields.FieldInfo) and meta.description:
            return True
    return False


def _is_runtime(name: str, annotation: Any) -> bool:
    return annotation is ToolRuntime or (name == "runtime" and annotation in (inspect.Parameter.empty, Any))


class _Signature:
    """A function's arguments as a Pydantic model, and where its runtime goes."""

    def __init__(self, fn: Callable[..., Any], tool_id: str) -> None:
        pydantic, docstring_parser = _libraries()
        self.fn = fn
        try:
            hints = typing.get_type_hints(fn, include_extras=True)
        except Exception as e:
            raise AgentDefinitionError(
                f"Invalid definition of tool '{tool_id}': its type annotations cannot be resolved: {e}",
                code="definition_invalid") from e
        doc = docstring_parser.parse(inspect.getdoc(fn) or "")
        described = {p.arg_name: p.description for p in doc.params if p.description}
        self.description = "\n\n".join(p for p in (doc.short_description, doc.long_description) if p)
        self.runtime_name: Optional[str] = None
        self.names: List[str] = []
        fields: Dict[str, Any] = {}
        for name, param in inspect.signature(fn).parameters.items():
            annotation = hints.get(name, param.annotation)
            if _is_runtime(name, annotation):
                self.runtime_name = name
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
                raise AgentDefinitionError(
                    f"Invalid definition of tool '{tool_id}': parameter '{name}' must be a named "
                    "parameter (not *args, **kwargs or positional-only): the model passes arguments by name",
                    code="definition_invalid")
            if annotation is inspect.Parameter.empty:
                annotation = Any
            if name in described and not _has_description(annotation, pydantic):
                annotation = typing.Annotated[annotation, pydantic.Field(description=described[name])]
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[name] = (annotation, default)
            self.names.append(name)
        model_name = "".join(part.title() for part in fn.__name__.split("_")) + "Arguments"
        try:
            self.model = pydantic.create_model(model_name, **fields)
            self.schema = _without_titles(self.model.model_json_schema())
        except Exception as e:
            raise AgentDefinitionError(
                f"Invalid definition of tool '{tool_id}': its parameters have no JSON Schema: {e}",
                code="definition_invalid") from e
        self.output: Any = None
        self.output_schema: Optional[Dict[str, Any]] = None
        returned = hints.get("return", inspect.Signature.empty)
        if returned not in (inspect.Signature.empty, Any):
            try:
                self.output = pydantic.TypeAdapter(returned)
                self.output_schema = _without_titles(self.output.json_schema(mode="serialization"))
            except Exception as e:
                raise AgentDefinitionError(
                    f"Invalid definition of tool '{tool_id}': its return type has no JSON Schema: {e}",
                    code="definition_invalid") from e
        self._validation_error = pydantic.ValidationError

    def decode(self, tool_input: Any) -> Any:
        """The arguments as the declared types; a value that does not fit raises
        ``ValueError("<JSON pointer>: <reason>")``, a tool input error."""
        try:
            return self.model.model_validate(tool_input)
        except self._validation_error as e:
            first = e.errors(include_url=False)[0]
            raise ValueError(_native._input_problem(list(first["loc"]), first["msg"])) from None

    def arguments(self, tool_input: Any, runtime: ToolRuntime) -> Dict[str, Any]:
        decoded = self.decode(tool_input)
        kwargs = {name: getattr(decoded, name) for name in self.names}
        if self.runtime_name is not None:
            kwargs[self.runtime_name] = runtime
        return kwargs

    def encode(self, result: Any) -> Any:
        """The result as JSON values (models, dataclasses, enums … dumped by Pydantic)."""
        return result if self.output is None else self.output.dump_python(result, mode="json")


def typed_tool(fn: Callable[..., Any], fields: Dict[str, Any]) -> Any:
    """The :class:`~phaseo_agent.AgentTool` for a typed function, ``fields`` overriding
    what is derived (``id`` from the function's name, ``description`` from its docstring)."""
    from ._tools import AgentTool

    if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
        raise AgentDefinitionError(
            f"Invalid definition of tool '{fn.__name__}': a typed tool is a def or async def "
            "returning its result; use runtime.emit_progress for progress values",
            code="definition_invalid")
    for derived in ("parameters", "execute", "input_schema"):
        if derived in fields:
            raise TypeError(f"{derived} is derived from the function's signature; it cannot be given with a typed function")
    tool_id = fields.pop("id", None) or fn.__name__
    signature = _Signature(fn, tool_id)

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def run_async(tool_input: Any, runtime: ToolRuntime) -> Any:
            return signature.encode(await fn(**signature.arguments(tool_input, runtime)))

        execute: Callable[..., Any] = run_async
    else:

        @functools.wraps(fn)
        def run(tool_input: Any, runtime: ToolRuntime) -> Any:
            return signature.encode(fn(**signature.arguments(tool_input, runtime)))

        execute = run

    fields.setdefault("description", signature.description)
    if signature.output_schema is not None:
        fields.setdefault("output_schema", signature.output_schema)
    # The core sends the generated schema (its strict form with `strict=True`) and runs
    # `_DecodedInput` on each call's arguments after its own schema check.
    return AgentTool(id=tool_id, execute=execute, input_schema=_DecodedInput(signature), **fields)


class _DecodedInput:
    """A tool's input validator: the arguments must decode into the declared types; it
    describes them with the generated schema."""

    def __init__(self, signature: _Signature) -> None:
        self._signature = signature

    def to_json_schema(self) -> Dict[str, Any]:
        schema: Dict[str, Any] = self._signature.schema
        return schema

    def __call__(self, tool_input: Any) -> Any:
        self._signature.decode(tool_input)
        return tool_input
