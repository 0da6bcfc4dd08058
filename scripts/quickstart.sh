#!/bin/sh
# Quick start: install what is missing, build, and schedule the bundled
# examples (examples/<profile>/ with conf/<profile>.cfg; a variant
# conf/<profile>-current.cfg runs on the same examples/<profile>/) with the
# embedded file store. The examples are copied to a temporary directory
# first, so the repository stays as it is; the decisions are printed, then
# the lines the write-back added to the manifests. Last, where a profile has
# a current variant, the two profiles' decisions side by side.
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
    echo "== trellis schedule --config conf/$name.cfg --state examples/$example"
    "$top/build/core/trellis" schedule --config "$cfgfile" --state "$tmp/$name" \
        -P "$top/build/plugins/.libs" -o table | tee "$tmp/$name.table"
    echo "== written back:"
    (cd "$tmp" && diff -ru "$top/examples/$example" "$name" |
        grep -E '^(\+\+\+ |[+-] |Only in )' |
        sed -e 's/^+++ \([^	]*\).*/  \1:/' -e 's/^\([+-] \)/    \1/' \
            -e 's/^Only in \([^:]*\): \(.*\)/  \1\/\2: new file/') || true
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
