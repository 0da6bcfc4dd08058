#!/bin/sh
# Quick start: install what is missing, build, and for each bundled
# example (examples/<profile>/ with conf/<profile>.cfg) what an operator
# runs: validate the config against the state, schedule it with the
# embedded file store, look at the targets afterwards. The examples are
# copied to a temporary directory first, so the repository stays as it
# is; the decisions are printed, then the lines the write-back added to
# the manifests, then the targets. Last, the kube example's report is
# written to build/report-kube.html (open it in a browser).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh"
"$top/scripts/build.sh" build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
for cfgfile in "$top"/conf/*.cfg; do
    name=$(basename "$cfgfile" .cfg)
    [ -d "$top/examples/$name" ] || continue
    cp -R "$top/examples/$name" "$tmp/$name"
    echo "== trellis validate conf/$name.cfg --state examples/$name"
    "$top/build/core/trellis" validate "$cfgfile" --state "$tmp/$name" \
        -P "$top/build/plugins/.libs"
    echo "== trellis schedule --config conf/$name.cfg --state examples/$name"
    # exit status 3: some decisions are error (the openMCP example has one)
    "$top/build/core/trellis" schedule --config "$cfgfile" --state "$tmp/$name" \
        -P "$top/build/plugins/.libs" -o table || [ $? -eq 3 ]
    echo "== written back:"
    (cd "$tmp" && diff -ru "$top/examples/$name" "$name" |
        grep -E '^(\+\+\+ |[+-] |Only in )' |
        sed -e 's/^+++ \([^	]*\).*/  \1:/' -e 's/^\([+-] \)/    \1/' \
            -e 's/^Only in \([^:]*\): \(.*\)/  \1\/\2: new file/') || true
    echo "== trellis targets --config conf/$name.cfg --state examples/$name (after the run)"
    "$top/build/core/trellis" targets --config "$cfgfile" --state "$tmp/$name" \
        -P "$top/build/plugins/.libs" -o table
    echo
done
echo "== trellis report --html build/report-kube.html --config conf/kube.cfg --state examples/kube"
cp -R "$top/examples/kube" "$tmp/kube-report"
"$top/build/core/trellis" report --html "$top/build/report-kube.html" \
    --config "$top/conf/kube.cfg" --state "$tmp/kube-report" -P "$top/build/plugins/.libs"
