#!/usr/bin/env bash
# Go conformance runner: runs the cross-language cases through the public Go API of the Go
# binding (bindings-go, package phaseoagent) with real Go functions (tests/conformance/go).
#   tests/conformance/go_runner.sh [--stop-after N --save-state DIR |
#       --resume-state DIR --from-step N] PATH...
# The program is built (go build, cached) against the static library that `make go-lib`
# places in bindings-go/lib/linux_amd64; relative paths are taken from the current folder.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
lib="$repo/bindings-go/lib/linux_amd64/libphaseo_agent_c.a"
if [ ! -f "$lib" ]; then
  echo "go_runner: the Go binding's static library is missing (${lib#"$repo/"})." >&2
  echo "Build it first: \`make go-lib\` (cargo build -p phaseo-agent-c, copied into bindings-go)." >&2
  exit 2
fi
bin="${CARGO_TARGET_DIR:-$repo/target}/go/conformance-runner"
mkdir -p "$(dirname "$bin")"
# The library's checksum as a linker flag: the go command does not hash files named in
# `#cgo LDFLAGS`, and would keep a runner linked with an earlier library. run-all.sh starts
# runners in parallel: one builds, the others wait on the lock and find it current.
stamp="$(sha256sum "$lib" | cut -c1-16)"
(cd "$repo/tests/conformance/go" && GOFLAGS="$(go env GOFLAGS) -ldflags=-X=github.com/phaseo/agent-sdk-go.linkedLibrary=$stamp" flock "$bin.lock" go build -o "$bin" .)
exec "$bin" "$@"
