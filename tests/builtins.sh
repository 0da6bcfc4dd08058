#!/bin/sh
# builtins.sh - a trellis built with --with-builtin-plugins: the plugins
# linked into the binary are listed as built-in, a profile gets them with
# no plugin directory at all, and they decide as the loaded ones do (the
# scenario suite, run against the same binary, checks the decisions). In a
# build without built-in plugins every check is skipped.
set -u
. "$SRCDIR/testlib.sh"
: "${TRELLIS:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir "$tmp/empty"

TRELLIS_PLUGIN_PATH= "$TRELLIS" plugins -P "$tmp/empty" >"$tmp/list" 2>"$tmp/err"
builtins=$(awk '$NF == "(built-in)" { print $1 }' "$tmp/list")
if [ -z "$builtins" ]; then
    ok "built-in plugins # SKIP this trellis was built without --with-builtin-plugins"
    finish
    exit
fi
n=$(printf '%s\n' "$builtins" | wc -l)
if grep -q '^default-binder .*(built-in)$' "$tmp/list"; then
    ok "trellis plugins lists $n built-in plugins"
else
    not_ok "trellis plugins lists the built-in plugins" "$(cat "$tmp/list" "$tmp/err")"
fi
"$TRELLIS" plugins --describe default-binder >"$tmp/out" 2>&1
check "plugins --describe shows a built-in plugin" grep -q '^file:  (built-in)' "$tmp/out"

# every plugin of conf/kube.cfg built in: it schedules with no plugin
# directory (no TRELLIS_PLUGIN_PATH, -P an empty one)
need=$(sed -n 's/.*{ name = "\([a-z0-9-]*\)".*/\1/p' "$TOP_SRCDIR/conf/kube.cfg" | sort -u)
missing=""
for p in $need; do
    case " $(echo $builtins) " in *" $p "*) ;; *) missing="$missing $p" ;; esac
done
if [ -n "$missing" ]; then
    ok "conf/kube.cfg with built-in plugins only # SKIP not built in:$missing"
else
    cp -R "$TOP_SRCDIR/examples/kube" "$tmp/state"
    TRELLIS_PLUGIN_PATH= "$TRELLIS" schedule -c "$TOP_SRCDIR/conf/kube.cfg" -s "$tmp/state" \
        -P "$tmp/empty" --dry-run -o json >"$tmp/out" 2>"$tmp/err"
    if [ $? -eq 0 ] && grep -q '"result": "scheduled"' "$tmp/out"; then
        ok "conf/kube.cfg schedules with built-in plugins only"
    else
        not_ok "conf/kube.cfg schedules with built-in plugins only" "$(cat "$tmp/err")"
    fi
fi
finish
