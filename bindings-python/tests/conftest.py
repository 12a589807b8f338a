from __future__ import annotations

import json
import os
from typing import Any, Dict, List

import pytest
from hypothesis import HealthCheck, settings

# Property tests: a few hundred generated inputs per property in the normal suite, the same
# ones on every run (derandomized: CI never fails by chance); the `fuzz` profile
# (`make fuzz-python`) draws FUZZ_EXAMPLES fresh random inputs per property (default 20,000).
_SLOW_IS_FINE = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile("default", max_examples=300, deadline=None, database=None, derandomize=True,
                          suppress_health_check=_SLOW_IS_FINE)
settings.register_profile("fuzz", max_examples=int(os.environ.get("FUZZ_EXAMPLES", "20000")), deadline=None,
                          database=None, suppress_health_check=_SLOW_IS_FINE)
settings.load_profile(os.environ.get("PHASEO_HYPOTHESIS_PROFILE", "default"))


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
