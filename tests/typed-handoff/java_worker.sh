#!/usr/bin/env bash
# The Java typed-tool worker (bindings-uniffi/kotlin/src/test/java/app/phaseo/agent/typed/
# TypedWorker.java), the same contract as the other typed workers:
#   tests/typed-handoff/java_worker.sh pause|continue FILE
# Started with `java -cp` and the classpath `make kotlin` writes (no Maven at run time).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
kotlin="$repo/bindings-uniffi/kotlin"
native="${CARGO_TARGET_DIR:-$repo/target}/debug"
for f in "$kotlin/target/classpath.txt" "$kotlin/target/test-classes/app/phaseo/agent/typed/TypedWorker.class" \
         "$native/libphaseo_agent_uniffi.so"; do
  if [ ! -f "$f" ]; then
    echo "java_worker: the JVM binding is not built (missing ${f#"$repo/"}): run \`make kotlin\`" >&2
    exit 2
  fi
done
cp="$kotlin/target/classes:$kotlin/target/test-classes:$(cat "$kotlin/target/classpath.txt")"
exec java -Djna.library.path="$native" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$cp" \
  app.phaseo.agent.typed.TypedWorker "$@"
