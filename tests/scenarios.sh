#!/bin/sh
# Scenario tests: every folder under tests/scenarios/ with a profile.cfg is
# one scenario. Its state/ is copied to a temporary directory, trellis
# schedules it once with -o json (plus the options in `args`, if present),
# and the output must match expected.json (a subset match, see
# tests/tools/jsonmatch.c). When expected-state/ exists, every file in it
# must equal the written-back state byte for byte, and every path listed
# in expected-absent (one per line) must be gone. With TRELLIS_VALGRIND
# set, trellis runs under valgrind and any error or leak fails the scenario.
#
# Usage: scenarios.sh [SCENARIO...]   (default: all)
set -u
: "${TRELLIS:?}" "${JSONMATCH:?}" "${SRCDIR:?}"
here="$SRCDIR/scenarios"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0
fail=0

if [ $# -gt 0 ]; then
    list="$*"
else
    list=$(cd "$here" && for d in */; do [ -f "$d/profile.cfg" ] && echo "${d%/}"; done)
fi

for name in $list; do
    dir="$here/$name"
    work="$tmp/$name"
    mkdir -p "$work"
    cp -R "$dir/state" "$work/state"
    extra=""
    [ -f "$dir/args" ] && extra=$(cat "$dir/args")
    runner=""
    if [ -n "${TRELLIS_VALGRIND:-}" ]; then
        runner="valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible --suppressions=$SRCDIR/valgrind.supp"
    fi
    # shellcheck disable=SC2086
    $runner "$TRELLIS" schedule --config "$dir/profile.cfg" --state "$work/state" \
        -o json $extra >"$work/out.json" 2>"$work/err.txt"
    rc=$?
    why=""
    # error decisions make the exit status 3 (trellis(1), EXIT STATUS)
    want=0
    grep -q '"result": *"error"' "$dir/expected.json" && want=3
    if [ "$rc" -ne "$want" ]; then
        why="exit status $rc, expected $want: $(head -c 2000 "$work/err.txt")"
    elif ! "$JSONMATCH" "$dir/expected.json" "$work/out.json" >"$work/diff.txt" 2>&1; then
        why="output differs: $(cat "$work/diff.txt")"
    elif [ -d "$dir/expected-state" ]; then
        for f in $(cd "$dir/expected-state" && find . -type f | sort); do
            if ! cmp -s "$dir/expected-state/$f" "$work/state/$f"; then
                why="state file $f differs: $(diff -u "$dir/expected-state/$f" "$work/state/$f" | head -30)"
                break
            fi
        done
    fi
    if [ -z "$why" ] && [ -f "$dir/expected-absent" ]; then
        while read -r f; do
            [ -n "$f" ] && [ -e "$work/state/$f" ] && why="state file $f should be gone" && break
        done <"$dir/expected-absent"
    fi
    if [ -z "$why" ]; then
        echo "ok - $name"
        pass=$((pass + 1))
    else
        echo "not ok - $name"
        echo "$why" | sed 's/^/#   /'
        fail=$((fail + 1))
    fi
done
echo "1..$((pass + fail))"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
