#!/usr/bin/env bash
# Installs Debian's Ruby toolchain for the Ruby binding when missing (RubyGems itself is
# not needed: the extension is built with cargo, tests use Debian's minitest and rake).
set -euo pipefail
missing=()
command -v ruby >/dev/null 2>&1 || missing+=(ruby)
command -v rake >/dev/null 2>&1 || missing+=(rake)
ls /usr/include/ruby-*/ruby.h >/dev/null 2>&1 || ls /usr/include/*/ruby-*/ruby/config.h >/dev/null 2>&1 || missing+=(ruby-dev)
ruby -e 'require "minitest"' >/dev/null 2>&1 || missing+=(ruby-minitest)
ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 || ls /usr/lib/*/libclang*.so* >/dev/null 2>&1 || missing+=(libclang-dev)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi
