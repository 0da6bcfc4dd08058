#!/bin/sh
# Replay each fuzz target's corpus, then fuzz it for a bounded time.
#   run.sh BUILDDIR SRCDIR SECONDS TARGET...
# BUILDDIR holds the built targets (fuzz_<name>), SRCDIR/corpus/<name>/ the
# seed corpus. Inputs found while fuzzing go to a temporary directory that
# is removed afterwards, so the tree changes only when someone copies an
# input into it; a crash, leak, timeout or out-of-memory input is kept in
# BUILDDIR/artifacts/ and fails the run. The targets run FUZZ_JOBS at a
# time (the number of processors unless set), each on a processor of its
# own for SECONDS; their reports come in the order given. Exit status:
# the number of targets that failed (0 when all passed).
set -u
if [ $# -lt 4 ]; then
    echo "usage: $0 BUILDDIR SRCDIR SECONDS TARGET..." >&2
    exit 2
fi
builddir=$1
srcdir=$2
seconds=$3
shift 3

# Inputs longer than a target's parser ever sees in practice only slow the
# search down.
max_len() {
    case $1 in
    fuzz_quantity | fuzz_cidr | fuzz_clock) echo 128 ;;
    fuzz_selector | fuzz_nodeselector | fuzz_labelsel) echo 2048 ;;
    fuzz_config) echo 4096 ;;
    *) echo 8192 ;;
    esac
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trellis-fuzz.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$builddir/artifacts"
# halt_on_error: a UBSan report is a crash like any other
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$srcdir/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS ASAN_OPTIONS LSAN_OPTIONS

# One target: replay its corpus, then fuzz it. 0 when it passed.
one() {
    t=$1
    name=${t#fuzz_}
    bin=$builddir/$t
    corpus=$srcdir/corpus/$name
    log=$builddir/$t.log
    if [ ! -x "$bin" ] || [ ! -d "$corpus" ]; then
        echo "$t: missing $bin or $corpus"
        return 1
    fi
    # -runs=0 executes every input of the corpus once, then stops
    if ! "$bin" -runs=0 -timeout=10 "$corpus" >"$log" 2>&1; then
        echo "$t: FAILED replaying $corpus"
        tail -n 40 "$log"
        return 1
    fi
    found=$tmp/$name
    mkdir -p "$found"
    # new inputs go to the first directory given, the temporary one
    # FUZZ_SEED fixes the mutations (the test suite's short run): a run is
    # then the same sequence on every machine, cut by the time bound
    if "$bin" -max_total_time="$seconds" -timeout=10 -max_len="$(max_len "$t")" \
        ${FUZZ_SEED:+-seed="$FUZZ_SEED"} \
        -print_final_stats=1 -artifact_prefix="$builddir/artifacts/$name-" \
        "$found" "$corpus" >"$log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
        speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
        echo "$t: ok, ${runs:-?} runs in ${seconds} s (${speed:-?}/s), $(ls "$found" | wc -l) new inputs"
        return 0
    fi
    echo "$t: FAILED (log: $log)"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*check failed|.*runtime error)' "$log" | head -n 10
    tail -n 40 "$log"
    ls "$builddir/artifacts/$name-"* 2>/dev/null
    return 1
}

# the targets dealt round-robin to FUZZ_JOBS lanes, each lane in turn
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
lane=0
while [ "$lane" -lt "$jobs" ]; do
    (
        k=0
        for t in "$@"; do
            if [ $((k % jobs)) -eq "$lane" ]; then
                one "$t" >"$tmp/$t.out" 2>&1 || echo "$t" >>"$tmp/failed.$lane"
            fi
            k=$((k + 1))
        done
    ) &
    lane=$((lane + 1))
done
wait
for t in "$@"; do
    cat "$tmp/$t.out"
done
failed=$(cat "$tmp"/failed.* 2>/dev/null | wc -l)
exit "$failed"
