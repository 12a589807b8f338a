#!/usr/bin/env bash
# JVM benchmark of the Phaseo Agent SDK (its Java API and its Kotlin API) against the JVM
# peers, LangChain4j, Spring AI and Koog, each SDK in a JVM of its own, rounds alternating
# (see harness/.../Bench.java for the workloads, Driver.java for the rounds and the table).
#
#   bash benchmarks/java/run.sh              # from anywhere
#   bash benchmarks/java/run.sh --check      # exit 1 if either API's fan-out or sequential
#                                            # figure is behind the best peer's (a ratio below 1)
#
# Environment: PROFILE (cargo profile of our native library: `release`, the default, or
# `dist`, the packages' fat-LTO build), ROUNDS (3), RUNS (5), WARMUP (3, the fewest warm-up
# runs), WARMUP_SECONDS (3, the shortest warm-up per workload), FANOUT_N (1000),
# SEQ_N (200), SLEEPY_N (100), WORKLOADS (comma list), SDKS (ours,ours-kotlin,langchain4j,
# spring-ai,koog; ours-kotlin: our Kotlin API, suspend tool bodies),
# GC_BEFORE_RUN (1: a collection before each timed run; 0: timed runs back to back),
# SKIP_BUILD=1 (measure what is built).
#
# Builds, every time (cargo and Maven make it a no-op when nothing changed): our native
# library in PROFILE (what is measured is the current source), our JVM library (`make
# kotlin`: the generated bindings and the JAR), and this Maven project; the peers come from
# Maven Central (pins in pom.xml).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
PROFILE="${PROFILE:-release}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
native="$CARGO_TARGET_DIR/$PROFILE"
kotlin="$REPO/bindings-uniffi/kotlin"
sdks="${SDKS:-ours,ours-kotlin,langchain4j,spring-ai,koog}"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "== our native library, cargo profile $PROFILE"
  t0=$(date +%s)
  cargo build -q --profile "$PROFILE" -p phaseo-agent-uniffi --manifest-path "$REPO/Cargo.toml"
  echo "   done in $(( $(date +%s) - t0 )) s"
  echo "== our JVM library (make kotlin)"
  t0=$(date +%s)
  make -s -C "$REPO" kotlin
  echo "   done in $(( $(date +%s) - t0 )) s"
  echo "== the benchmark (mvn package)"
  t0=$(date +%s)
  (cd "$HERE" && mvn -B -ntp -q package)
  (cd "$kotlin" && mvn -B -ntp -q dependency:build-classpath -DincludeScope=runtime \
     -Dmdep.outputFile="$HERE/target/phaseo-runtime.txt")
  echo "$kotlin/target/phaseo-agent-0.1.0.jar:$(cat "$HERE/target/phaseo-runtime.txt")" > "$HERE/target/phaseo-classpath.txt"
  echo "   done in $(( $(date +%s) - t0 )) s"
fi
[ -f "$native/libphaseo_agent_uniffi.so" ] || { echo "missing $native/libphaseo_agent_uniffi.so" >&2; exit 2; }

echo "== load before the benchmark: $(uptime)"
PHASEO_NATIVE_DIR="$native" exec java -Dbench.dir="$HERE" -cp "$HERE/harness/target/classes" \
  bench.Driver --sdks "$sdks" "$@"
