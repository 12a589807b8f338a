#!/usr/bin/env bash
# The one list of the Debian packages the project's Make targets need, by group, and the
# one place that installs them. Presence is decided by package name (dpkg-query), never by
# looking for files: another package can ship a file of the same shape (libclang-cpp14's
# libclang-cpp.so.14 matches a libclang glob, yet bindgen needs libclang-dev).
#
#   scripts/system-deps.sh GROUP...            install what these groups lack (apt-get update first)
#   scripts/system-deps.sh --list GROUP...     print the groups' packages, one a line
#   scripts/system-deps.sh --missing GROUP...  print the ones not installed; exit 1 if any
#   scripts/system-deps.sh --groups            print the group names
#
# GROUP `all` is every installable group. GROUP `image` lists what the targets take from the
# machine image itself (compilers, JDK, Node.js, Maven, ...): those are never installed here
# (Debian's nodejs, for one, is older than the image's), only checked; a missing one stops
# with its name. scripts/fresh-machine-check.sh compares every group with the package list
# of a fresh image (scripts/fresh-image-packages.tsv).
set -euo pipefail

# What each group is for:
#   postgres  the throwaway PostgreSQL server of the run-store tests (scripts/with-test-postgres.sh)
#   ruby      the Ruby binding: interpreter, headers for rb-sys, rake + minitest, libclang for bindgen
#   php       the PHP binding: CLI, headers and php-config for ext-php-rs, PHPUnit, libclang for bindgen
#   csharp    the C# binding under Mono: the compiler, the runtime and NUnit 2.6
#   docs      the docs site's browser check (scripts/docs-browser-check.mjs): a headless Chromium
group_postgres=(postgresql)
group_ruby=(ruby ruby-dev rake ruby-minitest libclang-dev)
group_php=(php8.2-cli php8.2-dev phpunit libclang-dev)
group_csharp=(mono-mcs mono-runtime nunit-console libnunit-cil-dev libmono-system-componentmodel-dataannotations4.0-cil)
group_docs=(chromium)
# From the image, never installed here (see above).
group_image=(gcc make git binutils pkgconf maven nodejs openjdk-17-jdk-headless curl unzip zip xz-utils coreutils)
INSTALLABLE=(postgres ruby php csharp docs)

packages_of() {
  local group
  for group in "$@"; do
    case "$group" in
      all) packages_of "${INSTALLABLE[@]}" ;;
      postgres | ruby | php | csharp | docs | image)
        local -n list="group_$group"
        printf '%s\n' "${list[@]}"
        ;;
      *) echo "system-deps: unknown group '$group' (groups: ${INSTALLABLE[*]} image all)" >&2; exit 2 ;;
    esac
  done
}

is_installed() {
  [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" = "ii " ]
}

missing_of() {
  local pkg
  for pkg in $(packages_of "$@" | sort -u); do
    is_installed "$pkg" || echo "$pkg"
  done
}

install_groups() {
  local groups=() image=0 g
  for g in "$@"; do [ "$g" = image ] && image=1 || groups+=("$g"); done
  if [ "$image" = 1 ]; then
    local lacking
    lacking="$(missing_of image | tr '\n' ' ')"
    if [ -n "$lacking" ]; then
      echo "system-deps: the machine image lacks: $lacking(expected from the image, not installed by this script)" >&2
      exit 1
    fi
  fi
  [ ${#groups[@]} -gt 0 ] || return 0
  [ -n "$(missing_of "${groups[@]}")" ] || return 0
  # Targets run two at a time (`make -j2`): one install at a time, and what the other
  # installed meanwhile is not installed again.
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  exec 9>"${TMPDIR:-/tmp}/phaseo-system-deps.lock"
  flock 9
  local missing
  missing="$(missing_of "${groups[@]}")"
  [ -n "$missing" ] || return 0
  echo "system-deps: installing $(echo "$missing" | tr '\n' ' ')(for ${groups[*]})" >&2
  $sudo apt-get update -q
  # shellcheck disable=SC2086 # one package a word
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
  local still
  still="$(missing_of "${groups[@]}")"
  if [ -n "$still" ]; then
    echo "system-deps: still not installed after apt-get: $(echo "$still" | tr '\n' ' ')" >&2
    exit 1
  fi
}

case "${1:-}" in
  --list) shift; packages_of "$@" | sort -u ;;
  --missing) shift; m="$(missing_of "$@")"; [ -z "$m" ] || { echo "$m"; exit 1; } ;;
  --groups) printf '%s\n' "${INSTALLABLE[@]}" image ;;
  "" | -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; [ -n "${1:-}" ] ;;
  *) install_groups "$@" ;;
esac
