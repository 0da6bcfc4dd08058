#!/bin/sh
# Quick start: install what is missing, build, and schedule the bundled
# examples (examples/<profile>/ with conf/<profile>.cfg) with the embedded
# file store. The examples are copied to a temporary directory first, so
# the repository stays as it is; the decisions are printed, then the lines
# the write-back added to the manifests.
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
    echo "== trellis schedule --config conf/$name.cfg --state examples/$name"
    # exit status 3: some decisions are error (the openMCP example has one)
    "$top/build/core/trellis" schedule --config "$cfgfile" --state "$tmp/$name" \
        -P "$top/build/plugins/.libs" -o table || [ $? -eq 3 ]
    echo "== written back:"
    (cd "$tmp" && diff -ru "$top/examples/$name" "$name" |
        grep -E '^(\+\+\+ |[+-] |Only in )' |
        sed -e 's/^+++ \([^	]*\).*/  \1:/' -e 's/^\([+-] \)/    \1/' \
            -e 's/^Only in \([^:]*\): \(.*\)/  \1\/\2: new file/') || true
    echo
done
