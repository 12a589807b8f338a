#!/usr/bin/env bash
# The Python suite and conformance runner again on the newest CPython >= 3.12 that pyenv
# has: there the binding starts tool tasks eagerly (asyncio's eager_start), a different
# path from 3.11's. The abi3 wheel built from the dev venv's maturin serves every version.
# Machines without such a Python say so loudly; in CI that fails.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
DEV_PY="${PHASEO_PYTHON:-$ROOT/.venvs/py/bin/python}"
VENV="$ROOT/.venvs/py-newest"

version=""
if command -v pyenv >/dev/null 2>&1; then
  version="$(pyenv versions --bare 2>/dev/null | grep -E '^3\.(1[2-9]|[2-9][0-9])\.[0-9]+$' | sort -V | tail -1 || true)"
fi
if [ -z "$version" ]; then
  echo "NOTICE: no CPython >= 3.12 under pyenv on this machine: the eager-task path was NOT tested here"
  # In CI a missing interpreter is a failure, never a skip.
  [ "${CI:-}" = "true" ] && exit 1
  exit 0
fi
interpreter="$(pyenv root)/versions/$version/bin/python"
echo "== Python $version ($interpreter)"
if [ ! -x "$VENV/bin/python" ] || [ "$("$VENV/bin/python" -c 'import platform; print(platform.python_version())')" != "$version" ]; then
  rm -rf "$VENV"
  "$interpreter" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q pytest==9.2.0 pytest-timeout==2.4.0 pytest-xdist==3.8.0 pydantic==2.14.3
fi
# The property tests' generator (pinned like PY_TOOLS in the Makefile); older venvs get it too.
"$VENV/bin/python" -c 'import hypothesis' 2>/dev/null || "$VENV/bin/python" -m pip install -q hypothesis==6.170.17
"$VENV/bin/python" -c 'import xdist' 2>/dev/null || "$VENV/bin/python" -m pip install -q pytest-xdist==3.8.0
# The tracing tests' OTLP receiver and host API (pinned like OTEL_PY in the Makefile).
"$VENV/bin/python" -c 'import opentelemetry.proto, opentelemetry.trace' 2>/dev/null \
  || "$VENV/bin/python" -m pip install -q opentelemetry-proto==1.45.2 opentelemetry-api==1.45.2
# The typed tools' docstring parser and the official MCP client of the serving tests (pinned
# like PY_TOOLS and MCP_PY in the Makefile).
"$VENV/bin/python" -c 'import docstring_parser, mcp' 2>/dev/null \
  || "$VENV/bin/python" -m pip install -q docstring-parser==0.18.0 mcp==2.3.0
wheels="${CARGO_TARGET_DIR:-$ROOT/target}/wheels-newest"
rm -rf "$wheels"
(cd bindings-python && "$(dirname "$DEV_PY")/maturin" build -q --interpreter "$DEV_PY" --out "$wheels")
"$VENV/bin/python" -m pip install -q --force-reinstall --no-deps "$wheels"/*.whl
(cd bindings-python && "$VENV/bin/python" -m pytest -q -n 3 tests)
"$VENV/bin/python" tests/conformance/python_runner.py tests/conformance/cases
