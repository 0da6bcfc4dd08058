#!/bin/sh
# admin.sh - the operator commands end to end on a small state directory:
# taint / untaint (format-preserving write-back of the taint list), drain
# (cordon + unbind; a following schedule run places every workload
# elsewhere and none is lost), uncordon, deschedule (with --dry-run and a
# budget, never moving a workload no other target takes). Run by `make
# check` with TRELLIS and TRELLIS_PLUGIN_PATH set.
set -u
: "${TRELLIS:?}" "${TOP_SRCDIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
no() { not_ok "$@"; }
check() { # check NAME COMMAND... (the output of a trellis run, T or G ..., is kept in $tmp/out)
    name=$1
    shift
    if "$@" >"$tmp/chk" 2>&1; then ok "$name"; else no "$name" "$(head -c 1500 "$tmp/chk")"; fi
    case "$1" in T | G) cp "$tmp/chk" "$tmp/out" ;; esac
    return 0
}

cat >"$tmp/t.cfg" <<'CFG'
profiles = ( {
  name = "default-scheduler"; default = true;
  workload = { kind = "Pod"; scheduler_name_field = "spec.schedulerName"; };
  target = { kind = "Node"; };
  binding = { field = "spec.nodeName"; };
  cordon_taint = "node.kubernetes.io/unschedulable";
  capacity_field = "metadata.annotations.capacity";
  plugins = ( { name = "taint-toleration"; }, { name = "least-utilized"; },
              { name = "default-binder"; } );
} );
CFG

reset_state() {
    rm -rf "$tmp/s"
    mkdir -p "$tmp/s"
    cat >"$tmp/s/nodes.yaml" <<'Y'
# three nodes
apiVersion: v1
kind: Node
metadata:
  name: a
  annotations:
    capacity: "1"
spec:
  taints:
  - key: dedicated
    value: db
    effect: PreferNoSchedule
---
apiVersion: v1
kind: Node
metadata:
  name: b
  annotations:
    capacity: "5"
spec: {}
---
apiVersion: v1
kind: Node
metadata:
  name: c
  annotations:
    capacity: "5"
spec:
  taints:
  - key: gpu
    effect: NoSchedule
Y
    cat >"$tmp/s/pods.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: default}
spec:
  nodeName: a
---
apiVersion: v1
kind: Pod
metadata: {name: p2, namespace: default}
spec:
  nodeName: a
---
apiVersion: v1
kind: Pod
metadata: {name: p3, namespace: default}
spec:
  nodeName: a
  tolerations:
  - {key: gpu, operator: Exists}
Y
}

T() { "$TRELLIS" "$@" --config "$tmp/t.cfg" --state "$tmp/s"; }

# --- taint and untaint ---
reset_state
check "taint adds a taint" T taint b maintenance=true:NoSchedule
check "the taint list of b holds it" grep -q 'taints: \[ *{ *"key": "maintenance", "value": "true", "effect": "NoSchedule" *} *\]' "$tmp/s/nodes.yaml"
check "the other nodes are untouched" sh -c "grep -c 'key: dedicated' '$tmp/s/nodes.yaml' | grep -q 1"
check "taint replaces the same key and effect" T taint b maintenance=false:NoSchedule
check "one maintenance taint, new value" sh -c "grep -o 'maintenance' '$tmp/s/nodes.yaml' | wc -l | grep -q '^1$' && grep -q '\"value\": \"false\"' '$tmp/s/nodes.yaml'"
check "untaint removes it" T taint b maintenance-
check "b has an empty taint list" grep -q 'taints: \[ *\]' "$tmp/s/nodes.yaml"
if T taint b nothing- >"$tmp/out" 2>&1; then no "removing a missing taint fails"; else
    grep -q "has no taint nothing" "$tmp/out" && ok "removing a missing taint fails" ||
        no "removing a missing taint fails" "$(cat "$tmp/out")"
fi
if T taint b k:Sometimes >"$tmp/out" 2>&1; then no "a bad effect is refused"; else
    grep -q "not NoSchedule, PreferNoSchedule or NoExecute" "$tmp/out" && ok "a bad effect is refused" ||
        no "a bad effect is refused" "$(cat "$tmp/out")"
fi
if T taint zz k:NoSchedule >"$tmp/out" 2>&1; then no "an unknown target is refused"; else
    grep -q "Node 'zz' not found" "$tmp/out" && ok "an unknown target is refused" ||
        no "an unknown target is refused" "$(cat "$tmp/out")"
fi
cp "$tmp/s/nodes.yaml" "$tmp/before.yaml"
check "taint --dry-run" T taint a x:NoSchedule --dry-run
check "--dry-run wrote nothing" cmp -s "$tmp/before.yaml" "$tmp/s/nodes.yaml"

# --- drain, then schedule: nobody is lost ---
reset_state
check "drain a" T drain a
check "drain reports 3 evicted" grep -q "drained: 3 workloads evicted" "$tmp/out"
check "no pod names a any more" sh -c "! grep -q 'nodeName: a' '$tmp/s/pods.yaml'"
check "a is cordoned" grep -q '"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"' "$tmp/s/nodes.yaml"
check "schedule after drain" T schedule -o json
cp "$tmp/out" "$tmp/after-drain.json"
n=$(grep -c "nodeName:" "$tmp/s/pods.yaml")
[ "$n" -eq 3 ] && ok "every pod is bound exactly once ($n bindings for 3 pods)" ||
    no "every pod is bound exactly once" "$(cat "$tmp/s/pods.yaml")"
check "none went back to the cordoned node" sh -c "! grep -q 'nodeName: a' '$tmp/s/pods.yaml'"
check "p3 (tolerates gpu) may use c, the others b" sh -c "grep -A3 'name: p1' '$tmp/s/pods.yaml' | grep -q 'nodeName: b'"
check "uncordon a" T uncordon a
check "the cordon taint is gone" sh -c "! grep -q 'node.kubernetes.io/unschedulable' '$tmp/s/nodes.yaml'"

# --- deschedule ---
reset_state
cp "$tmp/s/pods.yaml" "$tmp/before.yaml"
check "deschedule --dry-run" T deschedule --dry-run
check "dry run: p3 and p2 would move (largest names first)" sh -c "grep -q 'Pod/default/p3: a -> ' '$tmp/out' && grep -q 'Pod/default/p2: a -> ' '$tmp/out' && grep -q '2 moved (dry run' '$tmp/out'"
check "dry run wrote nothing" cmp -s "$tmp/before.yaml" "$tmp/s/pods.yaml"
check "deschedule --budget 1" T deschedule --budget 1
check "one moved" grep -q '^1 moved' "$tmp/out"
check "deschedule again" T deschedule
check "the second run moves the last one over capacity" grep -q '^1 moved' "$tmp/out"
check "a keeps exactly its capacity (1)" sh -c "grep -c 'nodeName: a' '$tmp/s/pods.yaml' | grep -q '^1$'"
check "nothing over capacity: nothing moves" T deschedule
check "0 moved" grep -q '^0 moved' "$tmp/out"
# a workload no other target takes stays where it is
reset_state
T taint b full:NoSchedule >/dev/null 2>&1
T taint c gpu:NoSchedule- >/dev/null 2>&1
T taint c full:NoSchedule >/dev/null 2>&1
check "deschedule with no room elsewhere" T deschedule
check "every pod stays on a" sh -c "grep -q 'stays on a' '$tmp/out' && grep -q '^0 moved' '$tmp/out' && [ \$(grep -c 'nodeName: a' '$tmp/s/pods.yaml') -eq 3 ]"

# deschedule moves the workload it means, not another one that is pending
reset_state
cat >>"$tmp/s/pods.yaml" <<'Y'
---
apiVersion: v1
kind: Pod
metadata: {name: pending, namespace: default}
spec: {}
Y
check "deschedule with a pending pod around" T deschedule --budget 1
check "it reports p3" grep -q 'Pod/default/p3: a -> ' "$tmp/out"
check "p3 moved, the pending pod was left alone" sh -c "grep -A3 'name: p3' '$tmp/s/pods.yaml' | grep -q 'nodeName: b' && ! grep -A3 'name: pending' '$tmp/s/pods.yaml' | grep -q nodeName"

# a target name longer than any fixed buffer
reset_state
long=$(printf 'n%.0s' $(seq 1 600))
cat >"$tmp/s/long.yaml" <<Y
apiVersion: v1
kind: Node
metadata: {name: $long}
spec:
  taints: []
Y
T taint a busy:NoSchedule >/dev/null 2>&1
T taint b busy:NoSchedule >/dev/null 2>&1
T taint c busy:NoSchedule >/dev/null 2>&1
cat >"$tmp/s/pods.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: default}
spec: {}
Y
check "a 600-character target name is scheduled on" T schedule -o json
check "the pod is bound to it" grep -q "nodeName: $long" "$tmp/s/pods.yaml"

# --- Gardener: drain a seed, reschedule, and no shoot is lost ---
G() { "$TRELLIS" "$@" --config "$TOP_SRCDIR/conf/gardener.cfg" --state "$tmp/g"; }
rm -rf "$tmp/g"
cp -R "$TOP_SRCDIR/examples/gardener" "$tmp/g"
shoots() { cat "$tmp/g"/*.yaml "$tmp/g"/*.json | grep -c '^kind: Shoot'; }
total=$(shoots)
check "gardener: first run" G schedule -o json
unsched=$(grep -c '"result": "unschedulable"' "$tmp/out")
check "gardener: drain aws-eu1" G drain aws-eu1
on_eu1=$(sed -n 's/.*drained: \([0-9]*\) workload.*/\1/p' "$tmp/out")
[ "${on_eu1:-0}" -gt 0 ] && ok "gardener: drain evicted $on_eu1 shoots" ||
    no "gardener: drain evicted shoots" "$(cat "$tmp/out")"
check "gardener: the evicted shoots no longer name aws-eu1 in spec.seedName" sh -c "[ \$(grep -c 'evicted from aws-eu1' '$tmp/out') -eq $on_eu1 ]"
check "gardener: aws-eu1 carries the cordon taint" grep -q '"key": "seed.gardener.cloud/unschedulable", "effect": "NoSchedule"' "$tmp/g/seeds.yaml"
check "gardener: reschedule" G schedule -o json
n=$(grep -c '"result"' "$tmp/out")
[ "$n" -eq $((on_eu1 + unsched)) ] && ok "gardener: one decision per drained or pending shoot ($n)" ||
    no "gardener: one decision per drained or pending shoot" "$n decisions, expected $((on_eu1 + unsched))"
check "gardener: none went back to aws-eu1" sh -c "! grep -q '\\"aws-eu1\\"' '$tmp/out'"
[ "$(shoots)" -eq "$total" ] && ok "gardener: still $total shoots" || no "gardener: still $total shoots"
check "gardener: a dry run finds only the unschedulable ones pending" G schedule -o json --dry-run
left=$(grep -c '"result": "scheduled"' "$tmp/out")
[ "$left" -eq 0 ] && ok "gardener: every shoot is on one seed or pending" ||
    no "gardener: every shoot is on one seed or pending" "$left more could be scheduled"
check "gardener: uncordon aws-eu1" G uncordon aws-eu1

finish
