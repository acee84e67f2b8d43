#!/usr/bin/env bash
# Shared driver of scripts/fuzz-short.sh and scripts/fuzz-long.sh: builds the
# targets (scripts/fuzz-build.sh), replays every committed crasher in
# fuzz/regressions/<target>/, then fuzzes each target for SECONDS seconds, PARALLEL
# targets at a time, and prints one summary line per target:
#   target seconds executions exec/s coverage corpus result
# A crash, timeout or out-of-memory is copied to fuzz/regressions/<target>/ (commit
# it: it is replayed on every later run) and the script exits non-zero.
#   scripts/fuzz-run.sh SECONDS PARALLEL CORPUS_ROOT [target ...]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
secs=$1; parallel=$2; corpus_root=$3; shift 3
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=($(ls fuzz/fuzz_targets | sed 's/\.rs$//'))
fi
bin=$(scripts/fuzz-build.sh "${targets[@]}")
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
mkdir -p "$corpus_root"

run_one() {
    local t=$1 dirs=() rc=0
    mkdir -p "$corpus_root/$t" "$logs/$t.artifacts"
    # replay the regression corpus first: every committed crasher must now pass
    if compgen -G "$root/fuzz/regressions/$t/*" > /dev/null; then
        if ! "$bin/$t" -runs=1 "$root"/fuzz/regressions/$t/* > "$logs/$t.replay" 2>&1; then
            echo "$t REPLAY-FAILED (see below)"; tail -30 "$logs/$t.replay"; return 1
        fi
    fi
    for d in "$root/fuzz/seeds/$t" "$root/fuzz/regressions/$t"; do
        [ -d "$d" ] && dirs+=("$d")
    done
    "$bin/$t" "$corpus_root/$t" "${dirs[@]}" -max_total_time="$secs" -max_len=4096 -timeout=30 \
        -rss_limit_mb=3072 -print_final_stats=1 -artifact_prefix="$logs/$t.artifacts/" \
        > "$logs/$t.log" 2>&1 || rc=$?
    local done_line execs rate cov corp
    done_line=$(grep -E '^#[0-9]+\s+DONE' "$logs/$t.log" | tail -1 || true)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$t.log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$logs/$t.log" | tail -1)
    cov=$(echo "$done_line" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
    corp=$(echo "$done_line" | sed -n 's/.*corp: \([0-9]*\).*/\1/p')
    # slow-unit-* files are only reports (an input over 10 s); crash-, timeout-,
    # oom- and leak- files are failures
    local slow
    slow=$(ls "$logs/$t.artifacts" | grep -c '^slow-unit-' || true)
    rm -f "$logs/$t.artifacts/"slow-unit-*
    if [ $rc -ne 0 ] || compgen -G "$logs/$t.artifacts/*" > /dev/null; then
        mkdir -p "$root/fuzz/regressions/$t"
        cp "$logs/$t.artifacts/"* "$root/fuzz/regressions/$t/" 2>/dev/null || true
        echo "$t $secs ${execs:-?} ${rate:-?} ${cov:-?} ${corp:-?} FAILED(rc=$rc)"
        grep -E -A12 'panicked|ERROR: libFuzzer|SUMMARY' "$logs/$t.log" | head -40
        return 1
    fi
    echo "$t $secs ${execs:-?} ${rate:-?} ${cov:-?} ${corp:-?} ok (slow units: $slow)"
}
export -f run_one
export root bin logs secs corpus_root

echo "target seconds executions exec/s coverage corpus result"
printf '%s\n' "${targets[@]}" | xargs -P "$parallel" -I{} bash -c 'run_one {}'
