#!/bin/sh
# The pre-tokenizers' block path (AVX2 / AVX-512) against their scalar loop on
# the corpora, per pattern (examples/pretok_speed.rs; wall clock, paired).
# Usage: benches/bench_pretok_block.sh [gpt2|cl100k|o200k ...]
# Corpora: $BYTEPAIR_DATA/corpora (default ~/.cache/bytepair-data/corpora),
# else the excerpts in tests/data. Pin it for steadier figures: taskset -c 0 ...
set -eu
cd "$(dirname "$0")/../.."
dir="${BYTEPAIR_DATA:-$HOME/.cache/bytepair-data}/corpora"
[ -d "$dir" ] || dir=tests/data
lscpu | grep 'Model name' || true
[ $# -gt 0 ] || set -- gpt2 cl100k o200k
cargo build --quiet --profile devfast --example pretok_speed
for pattern in "$@"; do
    echo "== $pattern"
    target/devfast/examples/pretok_speed "$pattern" "$dir"/en_kjv.txt "$dir"/en_austen.txt \
        "$dir"/code_python.txt "$dir"/ko_prose.txt "$dir"/multi_unicode.txt
done
