#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ on the STABLE toolchain, without
# cargo-fuzz: the same coverage instrumentation cargo-fuzz uses (LLVM's
# SanitizerCoverage), no AddressSanitizer (it needs a nightly toolchain; the core's
# `unsafe` blocks are few and each carries its SAFETY note: vector intrinsics, the
# piece cache's probe, buffers filled before use, CPython string data and system
# calls; Rust's own checks and debug assertions are on). Prints the directory holding the target
# binaries.
#   scripts/fuzz-build.sh            # all targets
#   scripts/fuzz-build.sh pretok     # some targets
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
triple=$(rustc -vV | sed -n 's/^host: //p')
export CARGO_TARGET_DIR=${FUZZ_TARGET_DIR:-$PWD/target/plain}
# --target keeps these flags off build scripts and proc-macros, as cargo-fuzz does
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
sel=(--bins)
if [ $# -gt 0 ]; then
    sel=()
    for t in "$@"; do sel+=(--bin "$t"); done
fi
cargo build --release --locked --target "$triple" "${sel[@]}" 1>&2 2>/dev/null \
    || cargo build --release --target "$triple" "${sel[@]}" 1>&2
echo "$CARGO_TARGET_DIR/$triple/release"
