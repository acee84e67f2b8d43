#!/usr/bin/env bash
# Build the extension in place for development: python/bytepair/_core<EXT_SUFFIX>
# (e.g. _core.cpython-311-x86_64-linux-gnu.so), for the Python that runs this
# script's `python3` (or $PYO3_PYTHON); then run anything with that Python and
# PYTHONPATH=python (no pip install needed).
#   scripts/dev-build.sh            # optimised, no LTO (fast to build)
#   PROFILE=release scripts/dev-build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-devfast}
export PYO3_PYTHON=${PYO3_PYTHON:-$(command -v python3)}
suffix=$("$PYO3_PYTHON" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
cargo build --profile "$PROFILE" --features python --lib
dir=${CARGO_TARGET_DIR:-target}/$PROFILE
# one build in the package: an older one under another suffix would shadow or confuse
rm -f python/bytepair/_core.*.so
cp "$dir/libbytepair.so" "python/bytepair/_core$suffix"
echo "built python/bytepair/_core$suffix ($PROFILE)"
