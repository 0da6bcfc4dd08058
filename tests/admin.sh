#!/bin/sh
# admin.sh - the operator commands end to end on a small state directory:
# taint / untaint (format-preserving write-back of the taint list), drain
# (cordon + unbind; a following schedule run places every workload
# elsewhere and none is lost), uncordon, deschedule (with --dry-run and a
# budget, never moving a workload no other target takes); kubectl drain
# with conf/kube.cfg (spec.unschedulable, DaemonSet, mirror, emptyDir and
# unmanaged Pods, PodDisruptionBudgets, the flags; tests/admin/ holds the
# manifests) and an uncordon that restores the Node's file. Run by `make
# check` with TRELLIS and TRELLIS_PLUGIN_PATH set.
set -u
: "${TRELLIS:?}" "${TOP_SRCDIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
no() { not_ok "$@"; }
check() { # check NAME COMMAND... (the output of a trellis run, T, G or K ..., is kept in $tmp/out)
    name=$1
    shift
    if "$@" >"$tmp/chk" 2>&1; then ok "$name"; else no "$name" "$(head -c 1500 "$tmp/chk")"; fi
    case "$1" in T | G | K) cp "$tmp/chk" "$tmp/out" ;; esac
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


# --- kubectl drain: conf/kube.cfg cordons with spec.unschedulable ---
K() { "$TRELLIS" "$@" --config "$TOP_SRCDIR/conf/kube.cfg" --state "$tmp/k"; }
reset_kube() {
    rm -rf "$tmp/k"
    mkdir -p "$tmp/k"
    cp "$TOP_SRCDIR/tests/admin/kube-nodes.yaml" "$tmp/k/nodes.yaml"
    cp "$TOP_SRCDIR/tests/admin/kube-pods.yaml" "$tmp/k/pods.yaml"
    cp "$TOP_SRCDIR/tests/admin/kube-pdbs.yaml" "$tmp/k/pdbs.yaml"
    chmod u+w "$tmp/k"/*.yaml
}
# refused NAME GREP-PATTERN COMMAND...: exits 2 and says PATTERN
refused() {
    name=$1 pat=$2
    shift 2
    "$@" >"$tmp/out" 2>&1
    rc=$?
    if [ $rc -eq 2 ] && grep -q -e "$pat" "$tmp/out"; then ok "$name"; else
        no "$name" "exit $rc: $(head -c 1500 "$tmp/out")"
    fi
}
bound_on_a() { grep -c 'nodeName: worker-a' "$tmp/k/pods.yaml"; }
reset_kube
refused "kubectl drain: refused without flags, naming the DaemonSet Pod" \
    'cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): kube-system/kube-proxy-7xk2p' K drain worker-a
check "... the emptyDir Pod" grep -q 'cannot delete Pods with local storage (use --delete-emptydir-data to override): shop/cache-0' "$tmp/out"
check "... and the Pod without a controller" grep -q 'cannot delete Pods that declare no controller (use --force to override): default/debug' "$tmp/out"
check "... the node stays cordoned, as kubectl leaves it" sh -c "grep -q 'node/worker-a stays cordoned' '$tmp/out' && grep -q '^  unschedulable: true' '$tmp/k/nodes.yaml'"
check "... and no Pod was evicted (6 on worker-a)" sh -c "[ \$(grep -c 'nodeName: worker-a' '$tmp/k/pods.yaml') -eq 6 ]"
check "no cordon taint and no taints list are written" sh -c "! grep -q taints '$tmp/k/nodes.yaml'"
refused "kubectl drain: an eviction the budget refuses stops the drain, naming budget and Pod" \
    "cannot evict pod shop/web-5d8f7c9b4-abcde: it would violate the pod's disruption budget shop/web-pdb (status.disruptionsAllowed 0)" \
    K drain worker-a --ignore-daemonsets --delete-emptydir-data --force
check "... and nothing is evicted" sh -c "[ \$(grep -c 'nodeName: worker-a' '$tmp/k/pods.yaml') -eq 6 ]"
check "... already cordoned this time" grep -q '^node/worker-a already cordoned$' "$tmp/out"
cp "$tmp/k/pods.yaml" "$tmp/before.yaml"
check "kubectl drain --disable-eviction --dry-run" K drain worker-a --ignore-daemonsets --delete-emptydir-data --force --disable-eviction --dry-run
check "... says what it would delete" sh -c "grep -q '^deleting pod shop/web-5d8f7c9b4-abcde (dry run)$' '$tmp/out' && grep -q '^node/worker-a drained (dry run)$' '$tmp/out'"
check "... with kubectl's warnings (local storage's dropped, as kubectl drops it)" grep -q '^Warning: ignoring DaemonSet-managed Pods: kube-system/kube-proxy-7xk2p; deleting Pods that declare no controller: default/debug; leaving Pods that have finished: shop/migrate-x7k2m$' "$tmp/out"
check "... and writes nothing" cmp -s "$tmp/before.yaml" "$tmp/k/pods.yaml"
# a budget that allows one disruption lets one of two Pods go
sed 's/disruptionsAllowed: 0/disruptionsAllowed: 1/' "$TOP_SRCDIR/tests/admin/kube-pdbs.yaml" >"$tmp/k/pdbs.yaml"
sed -n '/name: web-5d8f7c9b4-abcde/,/^---/p' "$TOP_SRCDIR/tests/admin/kube-pods.yaml" >/dev/null
awk 'BEGIN{RS="---\n"; ORS="---\n"} /name: web-5d8f7c9b4-abcde/ { print; gsub(/abcde/, "fghij"); print; next } { print }' "$TOP_SRCDIR/tests/admin/kube-pods.yaml" | sed '$d' >"$tmp/k/pods.yaml"
refused "kubectl drain: disruptionsAllowed 1 is counted down: the second web Pod is refused" \
    "cannot evict pod shop/web-5d8f7c9b4-fghij: it would violate the pod's disruption budget shop/web-pdb" \
    K drain worker-a --ignore-daemonsets --delete-emptydir-data --force
check "... not the first" sh -c "! grep -q 'cannot evict pod shop/web-5d8f7c9b4-abcde' '$tmp/out'"
# two budgets over one Pod: the eviction subresource refuses
reset_kube
sed 's/disruptionsAllowed: 0/disruptionsAllowed: 5/' "$TOP_SRCDIR/tests/admin/kube-pdbs.yaml" >"$tmp/k/pdbs.yaml"
sed 's/disruptionsAllowed: 0/disruptionsAllowed: 5/; s/name: web-pdb/name: web-pdb-2/' "$TOP_SRCDIR/tests/admin/kube-pdbs.yaml" >>"$tmp/k/pdbs.yaml.2"
printf -- '---\n' >>"$tmp/k/pdbs.yaml"
cat "$tmp/k/pdbs.yaml.2" >>"$tmp/k/pdbs.yaml"
rm -f "$tmp/k/pdbs.yaml.2"
refused "kubectl drain: a Pod under two budgets is refused" \
    'it has more than one PodDisruptionBudget (web-pdb, web-pdb-2)' K drain worker-a --ignore-daemonsets --delete-emptydir-data --force
# a Pod being deleted already is evicted without asking its budget
reset_kube
sed '/^  name: web-5d8f7c9b4-abcde$/a\
  deletionTimestamp: "2026-01-01T10:00:00Z"' "$TOP_SRCDIR/tests/admin/kube-pods.yaml" >"$tmp/k/pods.yaml"
check "kubectl drain: a terminating Pod's budget (disruptionsAllowed 0) is not asked" K drain worker-a --ignore-daemonsets --delete-emptydir-data --force
check "... and it is evicted" grep -q '^pod/web-5d8f7c9b4-abcde evicted$' "$tmp/out"
# budgets allow it: the drain goes through
reset_kube
sed 's/disruptionsAllowed: 0/disruptionsAllowed: 1/' "$TOP_SRCDIR/tests/admin/kube-pdbs.yaml" >"$tmp/k/pdbs.yaml"
check "kubectl drain with every flag it needs" K drain worker-a --ignore-daemonsets --delete-emptydir-data --force
check "... evicts the three Pods that may go" sh -c "grep -q '^evicting pod shop/web-5d8f7c9b4-abcde$' '$tmp/out' && grep -q '^pod/cache-0 evicted$' '$tmp/out' && grep -q '^pod/debug evicted$' '$tmp/out' && grep -q '^node/worker-a drained$' '$tmp/out'"
check "... leaves the DaemonSet, mirror and finished Pods bound (3)" sh -c "[ \$(grep -c 'nodeName: worker-a' '$tmp/k/pods.yaml') -eq 3 ] && grep -A12 'name: kube-proxy-7xk2p' '$tmp/k/pods.yaml' | grep -q 'nodeName: worker-a' && grep -A8 'name: etcd-worker-a' '$tmp/k/pods.yaml' | grep -q 'nodeName: worker-a'"
check "schedule after the drain" K schedule -o json
check "... places the evicted Pods on worker-b, none on the cordoned worker-a" sh -c "[ \$(grep -c 'nodeName: worker-b' '$tmp/k/pods.yaml') -eq 3 ] && [ \$(grep -c 'nodeName: worker-a' '$tmp/k/pods.yaml') -eq 3 ]"
check "uncordon worker-a" K uncordon worker-a
check "... says so" grep -q '^node/worker-a uncordoned$' "$tmp/out"
check "... and the Node's manifest is the original, byte for byte (no unschedulable: false)" cmp "$TOP_SRCDIR/tests/admin/kube-nodes.yaml" "$tmp/k/nodes.yaml"
check "uncordon again: already uncordoned, nothing written" K uncordon worker-a
check "... says so" grep -q '^node/worker-a already uncordoned$' "$tmp/out"
# drain and uncordon of a Node with nothing on it: byte-identical
reset_kube
check "kubectl drain of an empty Node" K drain worker-b
check "... cordons and drains it" sh -c "grep -q '^node/worker-b cordoned$' '$tmp/out' && grep -q '^node/worker-b drained$' '$tmp/out'"
check "... spec.unschedulable: true written into its spec" sh -c "sed -n '/name: worker-b/,\$p' '$tmp/k/nodes.yaml' | grep -q '^  unschedulable: true'"
check "uncordon of the empty Node" K uncordon worker-b
check "... restores the manifest byte for byte" cmp "$TOP_SRCDIR/tests/admin/kube-nodes.yaml" "$tmp/k/nodes.yaml"
check "kubectl drain --help lists its flags" sh -c "'$TRELLIS' drain --help | grep -q -- '--ignore-daemonsets' && '$TRELLIS' drain --help | grep -q -- '--disable-eviction' && '$TRELLIS' drain --help | grep -q -- '--delete-emptydir-data' && '$TRELLIS' drain --help | grep -q -- '--force'"

finish
