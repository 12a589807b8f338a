#!/usr/bin/env bash
# The trace handoff check: Python pauses and Node continues (and the reverse),
# Python ↔ Ruby and Python ↔ PHP, tracing to one OTLP receiver; both run spans must be one trace,
# linked. Needs the built Python package (make python), the Node addon (make node), the
# Ruby extension (make ruby), the PHP extension (make php) and opentelemetry-proto (make .venvs/py/.otel).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
exec "${PHASEO_PYTHON:-$repo/.venvs/py/bin/python}" "$repo/tests/trace-handoff/check.py" \
  "${PHASEO_PYTHON:-$repo/.venvs/py/bin/python}" node ruby "$repo/tests/trace-handoff/php.sh"
