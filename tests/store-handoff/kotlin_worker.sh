#!/usr/bin/env bash
# The Kotlin store worker (bindings-uniffi/kotlin/src/test/kotlin/app/phaseo/agent/store/
# StoreWorker.kt), the same contract as bindings-python/tests/store_worker.py:
#   tests/store-handoff/kotlin_worker.sh STORE pause | continue RUN_ID | recover RUN_ID
# Started with `java -cp` and the classpath `make kotlin` writes (no Maven at run time).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
kotlin="$repo/bindings-uniffi/kotlin"
native="${CARGO_TARGET_DIR:-$repo/target}/debug"
for f in "$kotlin/target/classpath.txt" "$kotlin/target/test-classes/app/phaseo/agent/store/StoreWorkerKt.class" \
         "$native/libphaseo_agent_uniffi.so"; do
  if [ ! -f "$f" ]; then
    echo "kotlin_worker: the Kotlin binding is not built (missing ${f#"$repo/"}): run \`make kotlin\`" >&2
    exit 2
  fi
done
cp="$kotlin/target/classes:$kotlin/target/test-classes:$(cat "$kotlin/target/classpath.txt")"
exec java -Djna.library.path="$native" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss2m -cp "$cp" \
  app.phaseo.agent.store.StoreWorkerKt "$@"
