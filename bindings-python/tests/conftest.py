from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest


def call(call_id: str, name: str, **arguments: Any) -> Dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": json.dumps(arguments)}


def calls(*items: Dict[str, Any]) -> Dict[str, Any]:
    return {"tool_calls": list(items)}


class RecordingClient:
    """A host model client (sync ``generate``) that records requests."""

    def __init__(self, responses: List[Dict[str, Any]]) -> None:
        self.responses = list(responses)
        self.requests: List[Dict[str, Any]] = []

    def generate(self, request: Dict[str, Any]) -> Dict[str, Any]:
        self.requests.append(request)
        return self.responses.pop(0)


@pytest.fixture
def events() -> List[Dict[str, Any]]:
    return []
