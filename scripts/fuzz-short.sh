#!/usr/bin/env bash
# CI fuzz budget (stable toolchain, no cargo-fuzz needed): replay the committed
# crashers, then fuzz every target for FUZZ_SECONDS (default 12) seconds, two at a
# time, from the committed seeds. About 40 s of fuzzing plus the build.
#   scripts/fuzz-short.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/fuzz-run.sh "${FUZZ_SECONDS:-12}" 2 "$work/corpus" "$@"
