#!/usr/bin/env bash
# The PHP package as a user installs it: the extension of `make dist` (profile DIST_PROFILE), its IDE
# stub and the PHP layer copied to a folder outside the repository, then the README's PHP
# quickstart run from there with `php -n -d extension=...` (no ini, no repository paths).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
so="$target/x86_64-unknown-linux-gnu/${DIST_PROFILE:-dist}/libphaseo_agent_php.so"  # make dist's native build
[ -f "$so" ] || { echo "php-ext-check: $so is missing: run \`make dist\`" >&2; exit 2; }
dir="$(mktemp -d /tmp/phaseo-php-package-XXXXXX)"
trap 'rm -rf "$dir"' EXIT
pkg="$dir/phaseo-agent-php"
mkdir -p "$pkg"
cp "$so" "$pkg/phaseo_agent.so"
cp -r "$root/bindings-php/php/src" "$root/bindings-php/php/autoload.php" "$root/bindings-php/php/phaseo_agent.stub.php" "$pkg/"
echo "php-ext-check: package $(du -sh "$pkg" | cut -f1) (extension $(du -h "$pkg/phaseo_agent.so" | cut -f1))"
app="$dir/app"
mkdir -p "$app"
{
  echo '<?php'
  echo "require '$pkg/autoload.php';"
  # The README's PHP quickstart block, as written.
  awk '/^\*\*PHP\*\*/{f=1} f&&/^```php$/{c=1;next} c&&/^```$/{exit} c' "$root/README.md"
} > "$app/quickstart.php"
out="$(cd "$app" && php -n -d extension="$pkg/phaseo_agent.so" quickstart.php)"
echo "$out"
[ "$out" = "Deployed." ] || { echo "php-ext-check: expected the quickstart to print Deployed." >&2; exit 1; }
(cd "$app" && php -n -d extension="$pkg/phaseo_agent.so" -r 'exit(extension_loaded("phaseo_agent") && phpversion("phaseo_agent") !== false ? 0 : 1);')
echo "php-ext-check: ok"
