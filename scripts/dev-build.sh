#!/usr/bin/env bash
# Build the extension in place for development: python/bytepair/_core.abi3.so,
# then run anything with PYTHONPATH=python (no pip install needed).
#   scripts/dev-build.sh            # optimised, no LTO (fast to build)
#   PROFILE=release scripts/dev-build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-devfast}
cargo build --profile "$PROFILE" --features python --lib
dir=${CARGO_TARGET_DIR:-target}/$PROFILE
cp "$dir/libbytepair.so" python/bytepair/_core.abi3.so
echo "built python/bytepair/_core.abi3.so ($PROFILE)"
