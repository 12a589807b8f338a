#!/usr/bin/env bash
# Node benchmark of the Phaseo Agent SDK against the pinned Node peers (Vercel `ai`,
# `@openai/agents`), back to back in one process. See bench.mjs for the workloads.
#
#   bash benchmarks/node/run.sh            # from anywhere; env overrides go to bench.mjs
#
# `npm install` here (idempotent; pins in package.json + package-lock.json). Our SDK is the
# dependency "@phaseo/agent-sdk": "file:../../bindings-node" (npm links it); its install script
# does not compile (only with PHASEO_BUILD_FROM_SOURCE=1), so the release build of the addon
# is run here every time (a cold build takes a few minutes on 2 cores; a no-op for cargo when
# nothing changed): what is measured is the current source. Other make targets may rebuild bindings-node/phaseo-agent.node (e.g. a debug
# build for the tests): bench.mjs checks that the addon it loaded is the cargo release build
# and exits with status 3 otherwise; this script then rebuilds and retries (3 attempts).
set -euo pipefail
# PROFILE: the cargo profile of the addon, `release` (default) or `dist` (the packages' build).
export PROFILE="${PROFILE:-release}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"

echo "== npm install ($HERE)"
t0=$(date +%s)
npm install --no-audit --no-fund --loglevel=error
echo "   done in $(( $(date +%s) - t0 )) s"

for attempt in 1 2 3; do
  echo "== $PROFILE build of the addon (node_modules/@phaseo/agent-sdk/scripts/build.js), attempt $attempt"
  t0=$(date +%s)
  node node_modules/@phaseo/agent-sdk/scripts/build.js --profile="$PROFILE"
  echo "   done in $(( $(date +%s) - t0 )) s"
  echo "== load before the benchmark: $(uptime)"
  set +e
  node --expose-gc bench.mjs "$@"
  rc=$?
  set -e
  [ "$rc" -ne 3 ] && exit "$rc"
  echo "== the addon was not the $PROFILE build when loaded (rebuilt by someone else?); retrying"
done
exit 3
