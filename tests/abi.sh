#!/bin/sh
# abi.sh - the SDK's compatibility promise within a major version.
#
#  1. The offsets of the host table and the plugin descriptor (abi/layout,
#     built against sdk/trellis/plugin.h) are those recorded in
#     abi/sdk-1.layout: nothing recorded moved, anything new is at the end.
#  2. The frozen SDK 1.1 header (sdk-1.1/) gives the members it has the
#     same offsets (abi/layout-1.1).
#  3. A plugin built against that 1.1 header (fx-sdk11) is listed as
#     needing SDK 1.1, and the current host runs it: its filter (and the
#     1.1 function lookup_object it calls) decide as written.
# When a minor adds members, append their lines to abi/sdk-1.layout.
set -u
. "$SRCDIR/testlib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
LAYOUT=${LAYOUT:-./abi/layout}
LAYOUT11=${LAYOUT11:-./abi/layout-1.1}
FIXTURES_DIR=${FIXTURES_DIR:-./plugins/.libs}
golden="$SRCDIR/abi/sdk-1.layout"

"$LAYOUT" >"$tmp/now" || not_ok "abi/layout runs"
"$LAYOUT11" >"$tmp/v11" || not_ok "abi/layout-1.1 runs"

# every recorded line is there unchanged, in the same order
missing=$(grep -vxF -f "$tmp/now" "$golden")
if [ -z "$missing" ]; then ok "every recorded offset is unchanged"; else
    not_ok "every recorded offset is unchanged" "moved or gone:" "$missing"; fi
order=$(grep -xF -f "$golden" "$tmp/now" | cmp - "$golden" 2>&1)
if [ -z "$order" ]; then ok "recorded members keep their order"; else
    not_ok "recorded members keep their order" "$order"; fi
new=$(grep -vxF -f "$golden" "$tmp/now")
bad=""
for kind in trellis_host trellis_plugin_desc; do
    last=$(grep "^$kind\\." "$golden" | tail -1 | cut -d' ' -f2)
    for off in $(printf '%s\n' "$new" | grep "^$kind\\." | cut -d' ' -f2); do
        [ "$off" -gt "$last" ] || bad="$bad $kind@$off"
    done
done
if [ -z "$bad" ]; then ok "members added since the record are at the end"; else
    not_ok "members added since the record are at the end" "$bad"; fi

missing=$(grep -vxF -f "$tmp/now" "$tmp/v11")
if [ -z "$missing" ]; then ok "the SDK 1.1 header agrees on every member it has"; else
    not_ok "the SDK 1.1 header agrees on every member it has" "$missing"; fi

# a plugin built against SDK 1.1
"$TRELLIS" plugins -P "$FIXTURES_DIR" --describe fx-sdk11 >"$tmp/out" 2>"$tmp/err"
if grep -q '^fx-sdk11 .*runs on SDK 1\.1 and newer' "$tmp/out"; then
    ok "a plugin built against SDK 1.1 is listed as needing 1.1"
else
    not_ok "a plugin built against SDK 1.1 is listed as needing 1.1" "$(cat "$tmp/out" "$tmp/err")"
fi
mkdir "$tmp/state"
cat >"$tmp/state/objects.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: a-avoided, labels: {fx-sdk11/avoid: "true"}}
---
apiVersion: v1
kind: Node
metadata: {name: b-fine}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec: {}
YAML
cat >"$tmp/t.cfg" <<'CFG'
profiles = ( {
  name = "default-scheduler"; default = true;
  workload = { kind = "Pod"; scheduler_name_field = "spec.schedulerName"; };
  target = { kind = "Node"; };
  binding = { field = "spec.nodeName"; };
  plugins = ( { name = "fx-sdk11"; }, { name = "default-binder"; } );
} );
CFG
"$TRELLIS" schedule -c "$tmp/t.cfg" -s "$tmp/state" -P "$FIXTURES_DIR" --dry-run -o json \
    >"$tmp/out" 2>"$tmp/err"
if grep -q '"b-fine"' "$tmp/out" && ! grep -q '"a-avoided"' "$tmp/out"; then
    ok "the current host runs the SDK 1.1 plugin"
else
    not_ok "the current host runs the SDK 1.1 plugin" "$(cat "$tmp/out" "$tmp/err")"
fi
cat >>"$tmp/state/objects.yaml" <<'YAML'
---
apiVersion: v1
kind: ConfigMap
metadata: {name: fx-sdk11-stop, namespace: default}
YAML
"$TRELLIS" schedule -c "$tmp/t.cfg" -s "$tmp/state" -P "$FIXTURES_DIR" --dry-run -o json \
    >"$tmp/out" 2>"$tmp/err"
if grep -q '"result": "unschedulable"' "$tmp/out" && grep -q 'Stopped' "$tmp/out"; then
    ok "its SDK 1.1 call (lookup_object) reaches the current host's function"
else
    not_ok "its SDK 1.1 call (lookup_object) reaches the current host's function" \
        "$(cat "$tmp/out" "$tmp/err")"
fi
finish
