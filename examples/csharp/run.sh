#!/usr/bin/env bash
# Builds and runs examples/csharp/SupportDesk.cs (or the example named by the first argument,
# e.g. ServeTools) on Mono against the assembly and the C ABI library that `make csharp` builds.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
out="${CARGO_TARGET_DIR:-$repo/target}/dotnet"
example="${1:-SupportDesk}"
mcs -langversion:7.2 -nologo -warnaserror+ -r:System.Core.dll -r:"$out/Phaseo.AgentSdk.dll" -out:"$out/$example.exe" "$repo/examples/csharp/$example.cs"
LD_LIBRARY_PATH="${CARGO_TARGET_DIR:-$repo/target}/debug${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec mono "$out/$example.exe"
