#!/usr/bin/env bash
# Installs Debian's PHP toolchain for the PHP binding when missing: php8.2-cli (php),
# php8.2-dev (php-config and the headers ext-php-rs builds against), phpunit and
# libclang-dev (bindgen).
set -euo pipefail
missing=()
command -v php >/dev/null 2>&1 || missing+=(php8.2-cli)
command -v php-config >/dev/null 2>&1 || missing+=(php8.2-dev)
command -v phpunit >/dev/null 2>&1 || missing+=(phpunit)
ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 || ls /usr/lib/*/libclang*.so* >/dev/null 2>&1 || missing+=(libclang-dev)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi
