#!/bin/sh
# The whole test suite, from a fresh clone on Debian 12:
#  1. install what is missing (and build kube-apiserver once into a cache:
#     scripts/kube-apiserver.sh), and check that the sources are formatted
#     with the committed .clang-format (scripts/format.sh --check);
#  2. build with -Wall -Wextra -Werror, AddressSanitizer and UBSan, and run
#     `make check` (Check unit tests, scenario tests, CLI tests);
#  3. build without sanitizers and run the scenario suite under valgrind
#     (any error or leak fails; the whole suite runs unsanitized in 6);
#  4. build with ThreadSanitizer and run the tests of `trellis run` (the
#     binding thread, the HTTP thread, the watchdog, kill -9 rounds, the
#     etcd and Kubernetes API stores and the HTTP extenders against real
#     servers);
#  5. build the libFuzzer targets with clang, replay their corpora and
#     fuzz each for 20 seconds (FUZZ_SECONDS), a target per processor;
#  5b. build every in-tree plugin into the binary and run the scenario,
#     explain and admin suites against it;
#  6. make distcheck: the tarball builds and passes the whole suite;
#  7. install into a temporary prefix, build the out-of-tree example
#     plugin with pkg-config alone, run its mock-host test, load it, and
#     build the custom scheduler against the installed libtrellis.
set -u
# trellis refuses plugin files that its group or others may write: build
# them as an installation would have them
umask 022
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
"$top/scripts/deps.sh" --test || exit 1
# the Kubernetes API store's tests need a kube-apiserver: built once into a
# cache outside the tree (a few minutes the first time), before the stages
# run tests side by side; when it cannot be built, tests/kube.sh says why
# and is skipped
if kas=$("$top/scripts/kube-apiserver.sh" 2>"${TMPDIR:-/tmp}/trellis-kas.log"); then
    echo "kube-apiserver: $kas"
else
    echo "kube-apiserver: not available ($(tail -n 1 "${TMPDIR:-/tmp}/trellis-kas.log")); tests/kube.sh will be skipped"
fi
autoreconf -fi >/dev/null 2>&1 || { autoreconf -fi; exit 1; }
jobs=$(nproc)
passed=0
failed=0
stage() {
    name=$1
    shift
    echo "==> $name"
    t0=$(date +%s)
    if "$@"; then
        echo "==> $name: ok ($(($(date +%s) - t0)) s)"
        passed=$((passed + 1))
    else
        echo "==> $name: FAILED ($(($(date +%s) - t0)) s)"
        failed=$((failed + 1))
    fi
}
show_logs() {
    for f in $(find "$1/tests" -name '*.log' ! -name 'test-suite.log' 2>/dev/null); do
        if grep -qE '^(not ok|FAIL|ERROR)|[1-9][0-9]* failed|Failures: [1-9]|Errors: [1-9]|ERROR: AddressSanitizer|runtime error' "$f"; then
            echo "---- $f"
            tail -n 60 "$f"
        fi
    done
}
asan() {
    rm -rf build-asan && mkdir build-asan && cd build-asan &&
        ../configure -q --enable-werror --enable-sanitizers CFLAGS="-g -O1" >/dev/null &&
        make -s -j"$jobs" >/dev/null &&
        ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
            make -s -j"$jobs" check >/dev/null 2>&1
    rc=$?
    cd "$top"
    [ $rc -eq 0 ] || show_logs build-asan
    grep -h -E '^# (TOTAL|PASS|FAIL|ERROR)' build-asan/tests/test-suite.log 2>/dev/null
    return $rc
}
plain_valgrind() {
    rm -rf build-plain && mkdir build-plain && cd build-plain &&
        ../configure -q --enable-werror CFLAGS="-g -O2" >/dev/null &&
        make -s -j"$jobs" >/dev/null &&
        TRELLIS_VALGRIND=1 make -s check TESTS=scenarios.sh >/dev/null 2>&1
    rc=$?
    cd "$top"
    [ $rc -eq 0 ] || show_logs build-plain
    cat build-plain/tests/scenarios.sh.log 2>/dev/null | tail -n 1
    return $rc
}
tsan() {
    rm -rf build-tsan && mkdir build-tsan && cd build-tsan &&
        ../configure -q --enable-werror --enable-tsan CFLAGS="-g -O1" >/dev/null &&
        make -s -j"$jobs" >/dev/null &&
        TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
            make -s check TESTS="run.sh metrics.sh openmcp.sh fleet.sh faults.sh crash.sh etcd.sh kube.sh extender.sh unit/test_metrics unit/test_http unit/test_statelock" \
            >/dev/null 2>&1
    rc=$?
    cd "$top"
    [ $rc -eq 0 ] || show_logs build-tsan
    grep -h -E '^# (TOTAL|PASS|FAIL|ERROR)' build-tsan/tests/test-suite.log 2>/dev/null
    return $rc
}
builtins() {
    rm -rf build-builtin && mkdir build-builtin && cd build-builtin &&
        ../configure -q --enable-werror --with-builtin-plugins=all CFLAGS="-g -O1" >/dev/null &&
        make -s -j"$jobs" >/dev/null &&
        make -s -j"$jobs" check TESTS="builtins.sh scenarios.sh explain.sh admin.sh" \
            >/dev/null 2>&1
    rc=$?
    cd "$top"
    [ $rc -eq 0 ] || show_logs build-builtin
    grep -h -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR)' build-builtin/tests/test-suite.log 2>/dev/null
    return $rc
}
fuzz() {
    rm -rf build-fuzz && mkdir build-fuzz && cd build-fuzz &&
        ../configure -q --enable-werror --enable-fuzzing CC=clang CFLAGS="-g -O1" >/dev/null &&
        make -s -j"$jobs" >/dev/null 2>&1 &&
        FUZZ_SEED=${FUZZ_SEED:-1} make -s -C tests/fuzz fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-20}"
    rc=$?
    cd "$top"
    return $rc
}
distcheck() {
    make -s -j"$jobs" -C build-plain distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror >/dev/null 2>&1 ||
        { make -C build-plain distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror 2>&1 | tail -n 40; return 1; }
}
install_test() {
    TOP_SRCDIR="$top" sh "$top/tests/install.sh"
}
stage "format: sources as .clang-format says" "$top/scripts/format.sh" --check
stage "asan+ubsan build, make check" asan
stage "valgrind over the scenario suite" plain_valgrind
stage "threadsanitizer over the run, fault, crash, etcd, Kubernetes API and extender tests" tsan
stage "every in-tree plugin built in: scenarios, explain, admin" builtins
stage "fuzz targets: replay the corpus, then 20 s each" fuzz
stage "make distcheck" distcheck
stage "install and out-of-tree plugin" install_test
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
