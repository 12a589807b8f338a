#!/usr/bin/env bash
# PHP conformance runner (see php_runner.php): runs the cases through the PHP binding.
# Needs the extension built into bindings-php/php/phaseo_agent.so (`make php`).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
ext="$root/bindings-php/php/phaseo_agent.so"
if [ ! -f "$ext" ]; then
  echo "php_runner: the PHP extension is not built; run \`make php\` first" >&2
  exit 2
fi
exec php -n -d extension="$ext" -d zend.assertions=1 -d memory_limit=512M "$root/tests/conformance/php_runner.php" "$@"
