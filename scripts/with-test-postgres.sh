#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL started for it (PHASEO_TEST_POSTGRES_URL set),
# installing Debian's postgresql first when missing; the server is stopped afterwards,
# also when the command fails.   scripts/with-test-postgres.sh cargo test --workspace
set -euo pipefail
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql
fi
here="$(cd "$(dirname "$0")" && pwd)"
export PHASEO_PG_DIR="${PHASEO_PG_DIR:-$(mktemp -d /tmp/phaseo-pg-XXXXXX)}"
trap '"$here/pg-test-server.sh" stop' EXIT
eval "$("$here/pg-test-server.sh" start)"
export PHASEO_TEST_POSTGRES_URL
"$@"
