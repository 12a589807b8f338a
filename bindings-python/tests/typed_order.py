"""The typed ``place_order`` tool of the typed-tool tests, importable by a child process
(the cross-language test pauses it here and continues it from Node)."""

from __future__ import annotations

import enum
import json
import sys
from dataclasses import dataclass
from typing import Annotated, Any, Dict, List, Optional

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from phaseo_agent import ToolRuntime, define_tool


class Customer(BaseModel):
    """Who the order is for."""

    id: str = Field(description='The customer\'s id in the shop, e.g. "C-1042".')
    name: str = Field(description="Shown on the packing slip.")


@dataclass
class LineItem:
    """One product line."""

    sku: Annotated[str, Field(description="Stock keeping unit.")]
    quantity: Annotated[int, Field(ge=1, description="How many, at least 1.")]


class Shipping(str, enum.Enum):
    """How the parcel travels."""

    STANDARD = "standard"
    EXPRESS = "express"


class Receipt(TypedDict):
    """The placed order."""

    order_id: str
    units: int


RAN: List[str] = []


def place_order(customer: Customer, items: List[LineItem], shipping: Shipping, runtime: ToolRuntime,
                note: Optional[str] = None, gift_wrap: bool = False) -> Receipt:
    """Places an order.

    Args:
        items: The products, in the order the customer added them.
        shipping: How the parcel travels.
        note: A note for the courier.
        gift_wrap: Wrap as a gift.
    """
    units = sum(item.quantity for item in items)
    RAN.append(f"{customer.name} {shipping.value} {','.join(i.sku for i in items)} {units} {note} {gift_wrap} "
               f"{runtime.tool_call['id']}")
    return Receipt(order_id=f"O-{customer.id}", units=units)


ORDER_TOOL = define_tool(place_order, require_approval=True)


class Client:
    """Answers from a script (the child process has no pytest conftest)."""

    def __init__(self, responses: List[Dict[str, Any]]) -> None:
        self.responses = responses

    def generate(self, request: Dict[str, Any]) -> Dict[str, Any]:
        return self.responses.pop(0)


if __name__ == "__main__":
    # Pauses a call of the approval-gated typed tool and prints the run's state.
    from phaseo_agent import create_agent

    arguments = {"customer": {"id": "C-7", "name": "Ana"}, "items": [{"sku": "A", "quantity": 9}],
                 "shipping": "express"}
    agent = create_agent({"id": "shop", "tools": [ORDER_TOOL]})
    client = Client([{"tool_calls": [{"id": "c1", "name": "place_order", "arguments": json.dumps(arguments)}]}])
    paused = agent.run(input=sys.argv[1] if len(sys.argv) > 1 else "order", client=client)
    assert paused.status == "waiting_for_human", paused.status
    print(paused.to_json())
