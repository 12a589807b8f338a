#!/usr/bin/env bash
# Runs step.php with the PHP extension (make php).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
exec php -n -d extension="$repo/bindings-php/php/phaseo_agent.so" "$repo/tests/trace-handoff/step.php" "$@"
