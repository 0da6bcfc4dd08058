#!/bin/sh
# Quick start: install what is missing, build, and for each bundled
# example (examples/<profile>/ with conf/<profile>.cfg; a variant
# conf/<profile>-current.cfg runs on the same examples/<profile>/) what an
# operator runs: validate the config against the state, schedule it with
# the embedded file store, look at the targets afterwards (with the
# options in examples/<profile>/args, when there is one: --now). The examples are
# copied to a temporary directory first, so the repository stays as it
# is; the decisions are printed, then the lines the write-back added to
# the manifests, then the targets. Where a profile has a current variant,
# the two profiles' decisions side by side. Last, the kube example's report
# is written to build/report-kube.html (open it in a browser).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh"
"$top/scripts/build.sh" build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
run_example() {
    cfgfile=$1
    name=$(basename "$cfgfile" .cfg)
    example=${name%-current}
    [ -d "$top/examples/$example" ] || return 0
    cp -R "$top/examples/$example" "$tmp/$name"
    # an example's own clock (examples/fleet: the heartbeats of its
    # member clusters are of one morning)
    args=$(cat "$top/examples/$example/args" 2>/dev/null || true)
    echo "== trellis validate conf/$name.cfg --state examples/$example"
    "$top/build/core/trellis" validate "$cfgfile" --state "$tmp/$name" \
        -P "$top/build/plugins/.libs"
    echo "== trellis schedule --config conf/$name.cfg --state examples/$example"
    # exit status 3: some decisions are error (the openMCP example has one)
    # shellcheck disable=SC2086
    { "$top/build/core/trellis" schedule --config "$cfgfile" --state "$tmp/$name" \
        -P "$top/build/plugins/.libs" -o table $args || [ $? -eq 3 ]; } | tee "$tmp/$name.table"
    echo "== written back:"
    (cd "$tmp" && diff -ru "$top/examples/$example" "$name" |
        grep -E '^(\+\+\+ |[+-] |Only in )' |
        sed -e 's/^+++ \([^	]*\).*/  \1:/' -e 's/^\([+-] \)/    \1/' \
            -e 's/^Only in \([^:]*\): \(.*\)/  \1\/\2: new file/') || true
    echo "== trellis targets --config conf/$name.cfg --state examples/$example (after the run)"
    # shellcheck disable=SC2086
    "$top/build/core/trellis" targets --config "$cfgfile" --state "$tmp/$name" \
        -P "$top/build/plugins/.libs" -o table $args
    echo
}
# each profile, then its current variant
for cfgfile in "$top"/conf/*.cfg; do
    case $cfgfile in *-current.cfg) continue ;; esac
    run_example "$cfgfile"
done
for cfgfile in "$top"/conf/*-current.cfg; do
    [ -f "$cfgfile" ] && run_example "$cfgfile"
done

# A workload's outcome in a decision table: its seed or node when
# scheduled, else its result.
side_by_side() {
    awk 'function outcome() { return $3 == "scheduled" ? $4 : $3 }
        NR == FNR { if ($1 ~ /\//) doc[$1] = outcome(); next }
        $1 ~ /\// {
            cur = outcome()
            printf "  %-32s %-16s %s%s\n", $1, doc[$1], cur, doc[$1] == cur ? "" : "   <- differs"
        }' "$1" "$2"
}
for cur in "$tmp"/*-current.table; do
    [ -f "$cur" ] || continue
    name=$(basename "$cur" -current.table)
    [ -f "$tmp/$name.table" ] || continue
    echo "== examples/$name: conf/$name.cfg (design document) beside conf/$name-current.cfg (current releases)"
    printf '  %-32s %-16s %s\n' WORKLOAD DOCUMENT CURRENT
    side_by_side "$tmp/$name.table" "$cur"
    echo
done
echo "== trellis report --html build/report-kube.html --config conf/kube.cfg --state examples/kube"
cp -R "$top/examples/kube" "$tmp/kube-report"
"$top/build/core/trellis" report --html "$top/build/report-kube.html" \
    --config "$top/conf/kube.cfg" --state "$tmp/kube-report" -P "$top/build/plugins/.libs"
