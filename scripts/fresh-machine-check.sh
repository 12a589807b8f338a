#!/usr/bin/env bash
# Would `make demo` and `make test` find every Debian package they use on a fresh machine?
# A fresh clone on a used machine can pass while a fresh machine fails: a package installed
# by hand once (or by an older script) hides a missing install step. This compares the
# machine with the package list of a fresh image (scripts/fresh-image-packages.tsv) and
# with what scripts/system-deps.sh installs, and fails on:
#   - a package of system-deps' `image` group that a fresh image does not have (nothing
#     would install it);
#   - a package installed now that the fresh image did not have and that is neither one of
#     system-deps' packages nor something they pull in: it was installed by hand, and a
#     target may be using it without any script installing it.
#
#   scripts/fresh-machine-check.sh           the check (make test runs it after every suite)
#   scripts/fresh-machine-check.sh --purge   make this machine fresh again: purge what
#                                            system-deps installs and whatever it pulled in
#   scripts/fresh-machine-check.sh --self-test   proves both failures are caught, on copies
#                                            of the lists (a package missing from the
#                                            image's list, a group naming a package no
#                                            image has)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"

if [ "${1:-}" = --self-test ]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/scripts"
  cp "$repo/scripts/system-deps.sh" "$repo/scripts/fresh-machine-check.sh" "$repo/scripts/fresh-image-packages.tsv" "$work/scripts/"
  # An image package the machine has (the C compiler) dropped from the image's list, and a
  # package that no image has added to the image group.
  grep -qP '^gcc\t' "$work/scripts/fresh-image-packages.tsv" || { echo "fresh-machine-check --self-test: gcc is not in the image's list" >&2; exit 1; }
  sed -i '/^gcc\t/d' "$work/scripts/fresh-image-packages.tsv"
  sed -i 's/^group_image=(/group_image=(phaseo-no-such-package /' "$work/scripts/system-deps.sh"
  if out="$("$work/scripts/fresh-machine-check.sh" 2>&1)"; then
    echo "fresh-machine-check --self-test: FAIL: the altered lists passed:"; echo "$out"; exit 1
  fi
  for expected in "^  gcc\$" "^  phaseo-no-such-package\$"; do
    grep -q "$expected" <<<"$out" || { echo "fresh-machine-check --self-test: FAIL: no line matching $expected in:"; echo "$out"; exit 1; }
  done
  echo "fresh-machine-check --self-test: both altered lists fail the check, naming the package"
  exit 0
fi
deps="$repo/scripts/system-deps.sh"
baseline="$repo/scripts/fresh-image-packages.tsv"

installed_now() {
  dpkg-query -W -f='${db:Status-Abbrev}\t${Package}\n' | awk -F'\t' '$1 ~ /^ii/ {print $2}' | sort -u
}
fresh_image() { grep -v '^#' "$baseline" | cut -f1 | sort -u; }

if [ "${1:-}" = --purge ]; then
  extra="$(comm -13 <(fresh_image) <(installed_now))"
  [ -n "$extra" ] || { echo "fresh-machine-check: nothing to purge"; exit 0; }
  echo "fresh-machine-check: purging $(echo "$extra" | wc -l) packages the fresh image does not have"
  # shellcheck disable=SC2086 # one package a word
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -q $extra
  DEBIAN_FRONTEND=noninteractive apt-get autoremove --purge -y -q
  exit 0
fi

failed=0
# 1. What the targets take from the image must be in the image.
not_in_image="$(comm -23 <("$deps" --list image) <(fresh_image))"
if [ -n "$not_in_image" ]; then
  echo "fresh-machine-check: FAIL: a fresh machine lacks these packages that targets use and no script installs:"
  echo "$not_in_image" | sed 's/^/  /'
  echo "  (move them from system-deps.sh's image group to the group of the target that needs them)"
  failed=1
fi

# 2. Nothing beyond the image and what system-deps installs (with what those pull in).
ours="$("$deps" --list all)"
# The dependency closure of our packages: everything apt installs with them (Depends,
# Pre-Depends, Recommends), read from the package cache; an over-approximation is harmless.
# shellcheck disable=SC2086 # one package a word
pulled_in="$(apt-cache depends --recurse --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances $ours 2>/dev/null |
  sed -E 's/^ *(\|?(Pre)?Depends|Recommends): *//; s/^ *//; s/[<>]//g; s/:any$//; s/:amd64$//' | sort -u)"
explained="$(printf '%s\n%s\n' "$ours" "$pulled_in" | sort -u)"
by_hand="$(comm -13 <(fresh_image) <(installed_now) | comm -23 - <(echo "$explained"))"
if [ -n "$by_hand" ]; then
  echo "fresh-machine-check: FAIL: installed here, but neither in a fresh image nor installed by scripts/system-deps.sh:"
  echo "$by_hand" | sed 's/^/  /'
  echo "  (a target that needs one: add it to its group in scripts/system-deps.sh; otherwise purge it:"
  echo "   apt-get purge <names> && apt-get autoremove --purge, or scripts/fresh-machine-check.sh --purge)"
  failed=1
fi

if [ "$failed" = 0 ]; then
  echo "fresh-machine-check: every Debian package in use is in the fresh image ($(fresh_image | wc -l) packages) or installed by scripts/system-deps.sh ($(echo "$ours" | wc -l) packages, $(comm -13 <(fresh_image) <(installed_now) | wc -l) installed here with what they pull in)"
fi
exit "$failed"
