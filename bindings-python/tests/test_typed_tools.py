"""Tools from typed functions (docs/behaviour.md §20): the schema from the signature and
docstring, arguments decoded before the function runs, wrong types returned to the model,
the strict form, sync and async functions, a recursive model, pause and continue."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Annotated, Any, Dict, List, Optional

import pytest
import typed_order
from conftest import RecordingClient, call, calls
from pydantic import BaseModel, Field, field_validator
from typed_order import ORDER_TOOL, place_order

from phaseo_agent import AgentDefinitionError, AgentToolDecision, ToolRuntime, create_agent, define_tool, tool

FIXTURES = Path(__file__).parent / "fixtures"
ORDER = {"customer": {"id": "C-7", "name": "Ana"}, "items": [{"sku": "A", "quantity": 2}, {"sku": "B", "quantity": 3}],
         "shipping": "express"}


def assert_schema(schema: Any, name: str) -> None:
    """``schema`` equals the checked-in fixture (``PHASEO_UPDATE_FIXTURES=1`` rewrites it)."""
    path = FIXTURES / name
    if os.environ.get("PHASEO_UPDATE_FIXTURES"):
        path.write_text(json.dumps(schema, indent=2) + "\n")
    assert schema == json.loads(path.read_text())


def tool_contents(request: Dict[str, Any]) -> List[Any]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


class Category(BaseModel):
    """A node of the catalogue tree: it holds its own kind."""

    name: str = Field(description="The category's label.")
    children: List["Category"] = Field(default_factory=list, description="Sub-categories.")


def test_the_schema_comes_from_the_signature_and_the_docstring() -> None:
    assert ORDER_TOOL.id == "place_order"
    assert ORDER_TOOL.description == "Places an order."
    assert_schema(ORDER_TOOL.parameters, "typed_place_order.json")
    # Every object has its descriptions; no Pydantic titles reach the model.
    assert '"title"' not in json.dumps(ORDER_TOOL.parameters)


def test_a_call_runs_with_decoded_arguments_and_returns_the_encoded_result() -> None:
    typed_order.RAN.clear()
    agent = create_agent({"id": "shop", "tools": [define_tool(place_order)]})
    client = RecordingClient([calls(call("c1", "place_order", **ORDER)), {"text": "placed"}])
    result = agent.run(input="order", client=client)
    assert result.status == "completed"
    assert typed_order.RAN == ["Ana express A,B 5 None False c1"]
    assert tool_contents(client.requests[1]) == [{"order_id": "O-C-7", "units": 5}]


def test_wrong_types_go_back_to_the_model_with_the_place_and_it_retries() -> None:
    typed_order.RAN.clear()
    agent = create_agent({"id": "shop", "tools": [define_tool(place_order, on_error="return-to-model")]})
    wrong = {**ORDER, "items": [{"sku": "A", "quantity": "two"}]}
    # `quantity` ≥ 1 is the dataclass's rule (Field(ge=1)): also in the schema, checked by the core.
    zero = {**ORDER, "items": [{"sku": "A", "quantity": 0}]}
    client = RecordingClient([calls(call("c1", "place_order", **wrong)), calls(call("c2", "place_order", **zero)),
                              calls(call("c3", "place_order", **ORDER)), {"text": "placed"}])
    result = agent.run(input="order", client=client)
    assert result.status == "completed"
    assert typed_order.RAN == ["Ana express A,B 5 None False c3"]
    first = tool_contents(client.requests[1])[0]["error"]
    second = tool_contents(client.requests[2])[-1]["error"]
    assert first.startswith("Invalid tool input: /items/0/quantity: "), first
    assert second.startswith("Invalid tool input: /items/0/quantity: "), second


class Stay(BaseModel):
    """A hotel stay."""

    guest: str
    nights: int = Field(description="Nights, at most 14.")

    @field_validator("nights")
    @classmethod
    def at_most_two_weeks(cls, nights: int) -> int:
        if nights > 14:
            raise ValueError("at most 14 nights")
        return nights


def test_a_value_the_schema_admits_but_the_type_rejects_is_an_input_error_naming_its_place() -> None:
    def book(stays: List[Stay]) -> int:
        """Books stays."""
        return len(stays)

    agent = create_agent({"id": "desk", "tools": [define_tool(book, on_error="return-to-model")]})
    stays = [{"guest": "Ana", "nights": 2}, {"guest": "Bo", "nights": 30}]
    client = RecordingClient([calls(call("c1", "book", stays=stays)), {"text": "too long"}])
    assert agent.run(input="book", client=client).status == "completed"
    error = tool_contents(client.requests[1])[0]["error"]
    assert error == "Invalid tool input: /stays/1/nights: Value error, at most 14 nights", error


def test_the_strict_form_lists_every_field_and_null_means_the_default() -> None:
    typed_order.RAN.clear()
    strict_tool = define_tool(place_order, strict=True)
    assert strict_tool.parameters["required"] == ["customer", "items", "shipping", "note", "gift_wrap"]
    assert strict_tool.parameters["additionalProperties"] is False
    # The agent checks a strict tool's schema when it is defined.
    agent = create_agent({"id": "shop", "tools": [strict_tool]})
    client = RecordingClient([calls(call("c1", "place_order", **ORDER, note=None, gift_wrap=None)), {"text": "ok"}])
    assert agent.run(input="order", client=client).status == "completed"
    assert typed_order.RAN == ["Ana express A,B 5 None False c1"]


def count_stock(sku: str, warehouse: Optional[str] = None) -> int:
    """Units in stock."""
    return 4 if warehouse is None else 2


class Opaque:
    """A class Pydantic cannot describe."""


def test_decorators_async_functions_and_the_injected_runtime() -> None:
    @tool
    async def lookup(sku: str, runtime: ToolRuntime) -> Dict[str, Any]:
        """Looks up a product.

        Args:
            sku: Stock keeping unit.
        """
        await asyncio.sleep(0)
        return {"sku": sku, "call": runtime.tool_call["id"]}

    @tool(strict=True, on_error="return-to-model")
    def reorder(sku: str, units: int = 10) -> Dict[str, int]:
        """Reorders a product."""
        return {sku: units}

    stock = define_tool(count_stock, id="stock_level", strict=True)
    assert lookup.id == "lookup" and reorder.id == "reorder" and stock.id == "stock_level"
    assert lookup.parameters["properties"]["sku"] == {"type": "string", "description": "Stock keeping unit."}
    assert reorder.parameters["required"] == ["sku", "units"]
    agent = create_agent({"id": "shop", "tools": [lookup, stock, reorder]})
    client = RecordingClient([calls(call("c1", "lookup", sku="A"), call("c2", "stock_level", sku="A", warehouse=None),
                                    call("c3", "reorder", sku="A", units=None)), {"text": "done"}])
    assert agent.run(input="stock?", client=client).status == "completed"
    assert tool_contents(client.requests[1]) == [{"sku": "A", "call": "c1"}, 4, {"A": 10}]


def test_a_recursive_model_refers_to_its_own_definition() -> None:
    seen: List[int] = []

    def file_categories(root: Category) -> str:
        """Files a catalogue tree."""

        def size(c: Category) -> int:
            return 1 + sum(size(child) for child in c.children)

        seen.append(size(root))
        return root.name

    filed = define_tool(file_categories)
    assert_schema(filed.parameters, "typed_category.json")
    agent = create_agent({"id": "catalogue", "tools": [filed]})
    tree = {"name": "root", "children": [{"name": "a", "children": [{"name": "a1"}]}, {"name": "b"}]}
    client = RecordingClient([calls(call("c1", "file_categories", root=tree)), {"text": "filed"}])
    assert agent.run(input="file", client=client).status == "completed"
    assert seen == [4]


def test_a_paused_typed_call_continues_with_an_edited_input_decoded_again() -> None:
    typed_order.RAN.clear()
    agent = create_agent({"id": "shop", "tools": [ORDER_TOOL]})
    paused = agent.run(input="order", client=RecordingClient([calls(call("c1", "place_order", **ORDER))]))
    assert paused.status == "waiting_for_human"
    edited = {**ORDER, "shipping": "standard", "note": "leave at the door"}
    done = agent.continue_run(state=paused.to_json(), client=RecordingClient([{"text": "placed"}]),
                              approvals=[AgentToolDecision("c1", edited_input=edited)])
    assert done.status == "completed"
    assert typed_order.RAN == ["Ana standard A,B 5 leave at the door False c1"]


def test_definitions_that_cannot_be_typed_are_clear_errors() -> None:
    def spread(*values: int) -> int:
        """Sums."""
        return sum(values)

    with pytest.raises(AgentDefinitionError, match=r"tool 'spread': parameter 'values' must be a named parameter"):
        define_tool(spread)

    def takes_opaque(thing: Opaque) -> None:
        """Cannot be described."""

    with pytest.raises(AgentDefinitionError, match=r"tool 'takes_opaque': its parameters have no JSON Schema"):
        define_tool(takes_opaque)
    with pytest.raises(TypeError, match="parameters is derived"):
        define_tool(place_order, parameters={"type": "object"})


def test_the_plain_form_keeps_working_beside_typed_tools() -> None:
    def add(tool_input: Dict[str, Any], runtime: Any) -> int:
        return int(tool_input["a"]) + int(tool_input["b"])

    plain = define_tool(id="add", execute=add, parameters={"type": "object", "properties": {"a": {"type": "integer"},
                                                                                             "b": {"type": "integer"}}})
    agent = create_agent({"id": "mixed", "tools": [plain, define_tool(place_order)]})
    client = RecordingClient([calls(call("c1", "add", a=2, b=3), call("c2", "place_order", **ORDER)), {"text": "ok"}])
    assert agent.run(input="go", client=client).status == "completed"
    assert tool_contents(client.requests[1]) == [5, {"order_id": "O-C-7", "units": 5}]
