#!/usr/bin/env bash
# Python benchmark of the Phaseo Agent SDK against the pinned Python peers (pydantic-ai,
# openai-agents), back to back in one process. See bench.py for the workloads.
#
#   bash benchmarks/python/run.sh            # from anywhere; extra args go to bench.py
#
# Creates the venv .venvs/bench-py (git-ignored) once, installs the pinned peers once, and
# always rebuilds + reinstalls our package from ./bindings-python in release mode (maturin's
# PEP 517 backend builds --release; a cold build takes ~3 min on 2 cores) so that what is
# measured is the current source. Env: PYTHON (interpreter for the venv, default python3).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
VENV="$ROOT/.venvs/bench-py"
PY="$VENV/bin/python"
PEERS=(pydantic-ai-slim==2.68.0 openai-agents==0.24.0)
export CARGO_TARGET_DIR="$ROOT/target"
# PROFILE: the cargo profile of our extension, `release` (default, maturin's) or `dist` (the
# packages' fat-LTO build).
PROFILE="${PROFILE:-release}"
if [ "$PROFILE" != release ]; then
  export MATURIN_PEP517_ARGS="--profile $PROFILE"
fi

if [ ! -x "$PY" ]; then
  echo "== creating $VENV"
  "${PYTHON:-python3}" -m venv "$VENV"
fi

# Peers: installed once; skipped when the pinned versions are already there.
if ! "$PY" - "${PEERS[@]}" <<'PYEOF'
import importlib.metadata as md, sys
for spec in sys.argv[1:]:
    name, version = spec.split("==")
    try:
        if md.version(name) != version:
            sys.exit(1)
    except md.PackageNotFoundError:
        sys.exit(1)
PYEOF
then
  echo "== installing peers: ${PEERS[*]}"
  "$PY" -m pip install -q "${PEERS[@]}"
fi

# Our SDK: always rebuilt from source (release) and reinstalled so the numbers are current.
# What the package is built from (bench.py prints it): HEAD, plus "+dirty" when core/ or
# bindings-python/ have uncommitted changes.
PHASEO_BENCH_BUILT_FROM="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$ROOT" status --porcelain -- core bindings-python 2>/dev/null)" ]; then
  PHASEO_BENCH_BUILT_FROM="$PHASEO_BENCH_BUILT_FROM+dirty"
fi
export PHASEO_BENCH_BUILT_FROM
echo "== building + installing ./bindings-python (cargo profile $PROFILE; CARGO_TARGET_DIR=$CARGO_TARGET_DIR; tree $PHASEO_BENCH_BUILT_FROM)"
t0=$(date +%s)
"$PY" -m pip install -q --force-reinstall --no-deps ./bindings-python
echo "   done in $(( $(date +%s) - t0 )) s"

echo "== load before the benchmark: $(uptime)"
exec "$PY" "$ROOT/benchmarks/python/bench.py" "$@"
