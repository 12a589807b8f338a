#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL started for it (PHASEO_TEST_POSTGRES_URL set),
# installing Debian's postgresql first when missing (scripts/system-deps.sh postgres); the
# server is stopped afterwards, also when the command fails.
#   scripts/with-test-postgres.sh cargo test --workspace
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/system-deps.sh" postgres
export PHASEO_PG_DIR="${PHASEO_PG_DIR:-$(mktemp -d /tmp/phaseo-pg-XXXXXX)}"
trap '"$here/pg-test-server.sh" stop' EXIT
eval "$("$here/pg-test-server.sh" start)"
export PHASEO_TEST_POSTGRES_URL
"$@"
