#!/usr/bin/env bash
# C# conformance runner: runs the cross-language cases through the public C# API of the C#
# binding (bindings-dotnet, assembly Phaseo.AgentSdk) with real C# delegates
# (tests/conformance/csharp/Runner.cs), on Mono.
#   tests/conformance/csharp_runner.sh [--stop-after N --save-state DIR |
#       --resume-state DIR --from-step N] PATH...
# The program is compiled with mcs (when its sources are newer) against the assembly and
# the C ABI's cdylib that `make csharp` builds; relative paths are taken from the current
# folder.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
out="$target/dotnet"
if [ ! -f "$out/Phaseo.AgentSdk.dll" ] || [ ! -f "$target/debug/libphaseo_agent_c.so" ]; then
  echo "csharp_runner: the C# binding is not built (${out#"$repo/"}/Phaseo.AgentSdk.dll, libphaseo_agent_c.so)." >&2
  echo "Build it first: \`make csharp\` (cargo build -p phaseo-agent-c, then mcs)." >&2
  exit 2
fi
exe="$out/csharp-conformance.exe"
src=("$repo"/tests/conformance/csharp/*.cs)
if [ ! -f "$exe" ] || [ -n "$(find "${src[@]}" "$out/Phaseo.AgentSdk.dll" -newer "$exe" 2>/dev/null)" ]; then
  mcs -langversion:7.2 -nologo -warnaserror+ -r:System.Core.dll -target:exe -out:"$exe" -r:"$out/Phaseo.AgentSdk.dll" "${src[@]}"
fi
export LD_LIBRARY_PATH="$target/debug${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec mono "$exe" "$@"
