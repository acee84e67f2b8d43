#!/usr/bin/env bash
# Long fuzzing: every target for FUZZ_SECONDS (default 900) seconds, FUZZ_PARALLEL
# (default 2) at a time, keeping the corpus in fuzz/corpus/ (not committed) so
# successive runs build on each other. Record the summary lines in docs/reliability.md.
#   scripts/fuzz-long.sh                 # all targets
#   FUZZ_SECONDS=600 scripts/fuzz-long.sh pretok encode_bundled
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/fuzz-run.sh "${FUZZ_SECONDS:-900}" "${FUZZ_PARALLEL:-2}" fuzz/corpus "$@"
