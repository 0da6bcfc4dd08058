#!/bin/sh
# kubesched.sh - kube-scheduler's own configuration file given to trellis,
# run by `make check`. The empty KubeSchedulerConfiguration (kube's
# defaults), conf/kube.cfg and `trellis config convert` of the first must
# decide byte for byte alike on examples/kube; configurations shaped as
# kube's documentation shows them (several profiles, a score plugin
# disabled, MostAllocated, RequestedToCapacityRatio, extenders) load and
# decide as kube would, each decision worked out below; a key trellis has
# no equivalent for is refused naming its line.
set -u
: "${TRELLIS:?}" "${TOP_SRCDIR:?}"
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/trellis-ks.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
case $TRELLIS in
/*) ;;
*) TRELLIS=$(pwd)/$TRELLIS ;;
esac

head='apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration'

# ---- kube's defaults are conf/kube.cfg ----
printf '%s\n' "$head" >"$tmp/empty.yaml"
"$TRELLIS" config convert "$tmp/empty.yaml" >"$tmp/empty.cfg" 2>"$tmp/convert.err"
check "config convert of the empty file exits 0" test $? = 0
check "the conversion names its source" grep -q "from the\$" "$tmp/empty.cfg"
check "the conversion names the plugins it leaves out" \
    grep -q "VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone are left out" \
    "$tmp/empty.cfg"
for c in "$TOP_SRCDIR/conf/kube.cfg" "$tmp/empty.yaml" "$tmp/empty.cfg"; do
    n=$(basename "$c")
    (cd "$TOP_SRCDIR" && "$TRELLIS" schedule -c "$c" -s examples/kube --dry-run -o json) \
        >"$tmp/$n.json" 2>"$tmp/$n.err"
    check "schedule examples/kube under $n exits 0" test $? = 0
    (cd "$TOP_SRCDIR" && "$TRELLIS" schedule -c "$c" -s examples/kube --dry-run -o json \
        --explain) >"$tmp/$n.explain.json" 2>/dev/null
done
check "examples/kube: decisions exist" grep -q '"scheduled"' "$tmp/kube.cfg.json"
check "examples/kube: the empty KubeSchedulerConfiguration decides as conf/kube.cfg" \
    cmp "$tmp/kube.cfg.json" "$tmp/empty.yaml.json"
check "examples/kube: its conversion decides as conf/kube.cfg" \
    cmp "$tmp/kube.cfg.json" "$tmp/empty.cfg.json"
check "examples/kube: --explain alike under all three" \
    sh -c "cmp '$tmp/kube.cfg.explain.json' '$tmp/empty.yaml.explain.json' &&
           cmp '$tmp/kube.cfg.explain.json' '$tmp/empty.cfg.explain.json'"
"$TRELLIS" validate "$tmp/empty.yaml" >"$tmp/validate.out" 2>&1
check "validate says what is left out" grep -q "^note: .*VolumeBinding" "$tmp/validate.out"
"$TRELLIS" config convert "$TOP_SRCDIR/conf/kube.cfg" >/dev/null 2>"$tmp/again.err"
check "config convert of a trellis config exits 1, saying so" \
    sh -c "[ $? = 1 ] && grep -q 'is a trellis config already' '$tmp/again.err'"
"$TRELLIS" config --help >"$tmp/help" 2>&1
check "trellis config --help" grep -q "^Usage: trellis config convert FILE" "$tmp/help"

# ---- a small cluster where the scoring strategy decides ----
# node-a and node-b: 4 cpu, 8Gi, 110 pods each. busy (3 cpu, 1Gi) runs on
# node-a. Each pending Pod asks for 500m and 256Mi; a Pod placed first
# changes nothing below for the others: they are in separate states.
mkdir -p "$tmp/state"
cat >"$tmp/state/nodes.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: busy, namespace: default}
spec:
  nodeName: node-a
  containers: [{name: c, image: busy, resources: {requests: {cpu: "3", memory: 1Gi}}}]
EOF
# pod NAME [SCHEDULER]: a pending Pod of 500m and 256Mi
pod() {
    printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default}\nspec:\n' "$1"
    [ -n "${2:-}" ] && printf '  schedulerName: %s\n' "$2"
    printf '  containers: [{name: c, image: app, resources: {requests: {cpu: 500m, memory: 256Mi}}}]\n'
}
# placed CONFIG POD [SCHEDULER]: where POD goes under CONFIG (a state of its own)
placed() {
    rm -rf "$tmp/s"
    cp -r "$tmp/state" "$tmp/s"
    pod "$2" "${3:-}" >"$tmp/s/pod.yaml"
    "$TRELLIS" schedule -c "$1" -s "$tmp/s" --dry-run -o json 2>"$tmp/placed.err" |
        tr -d ' \n' | sed -n 's/.*"name":"'"$2"'"},"profile":"[^"]*","result":"scheduled","targets":\["\([^"]*\)".*/\1/p'
}

# Scores (kube's arithmetic, integer division where kube truncates):
# NodeResourcesBalancedAllocation, weight 1, fractions after placing:
#   node-a cpu 3.5/4 = 0.875, memory 1.25Gi/8Gi = 0.15625:
#     std = |0.875 - 0.15625| / 2 = 0.359375 -> (1 - std) * 100 = 64
#   node-b cpu 0.5/4 = 0.125, memory 0.25/8 = 0.03125: std 0.046875 -> 95
# NodeResourcesFit, weight 1, cpu and memory weight 1 each:
#   LeastAllocated (kube's default):
#     node-a cpu (4000-3500)*100/4000 = 12, memory (8192-1280)*100/8192 = 84
#            -> (12 + 84) / 2 = 48;          total 48 + 64 = 112
#     node-b cpu 3500*100/4000 = 87, memory 7936*100/8192 = 96 -> 91;
#                                             total 91 + 95 = 186: node-b
#   MostAllocated:
#     node-a cpu 3500*100/4000 = 87, memory 1280*100/8192 = 15 -> 51;
#                                             total 51 + 64 = 115
#     node-b cpu 12, memory 3 -> 7;           total  7 + 95 = 102: node-a
#   RequestedToCapacityRatio, shape (0, 0) (100, 10), i.e. 0..100:
#     node-a cpu 87, memory 15 -> round(102 / 2) = 51; total 115
#     node-b cpu 12, memory 3 -> round(15 / 2) = 8;    total 103: node-a
# Every other plugin scores both nodes alike (no taints, affinities,
# spread selectors or images).
check "kube's defaults: LeastAllocated puts web on node-b" \
    test "$(placed "$tmp/empty.yaml" web)" = node-b

# Several profiles (kube's documentation: a second profile without
# scoring). Without scores both nodes tie at 0 and the first by name wins.
cat >"$tmp/profiles.yaml" <<EOF
$head
profiles:
  - schedulerName: default-scheduler
  - schedulerName: no-scoring-scheduler
    plugins:
      preScore:
        disabled:
        - name: '*'
      score:
        disabled:
        - name: '*'
EOF
"$TRELLIS" validate "$tmp/profiles.yaml" >"$tmp/v.out" 2>&1
# the second profile runs no score plugin: ImageLocality and
# NodeResourcesBalancedAllocation score only and are gone, 14 + 12
check "several profiles: validate" grep -q "ok (2 profiles, 26 plugin instances)" "$tmp/v.out"
check "several profiles: default-scheduler's Pod to node-b" \
    test "$(placed "$tmp/profiles.yaml" web)" = node-b
check "several profiles: no-scoring-scheduler's Pod to node-a (tie, name)" \
    test "$(placed "$tmp/profiles.yaml" batch no-scoring-scheduler)" = node-a
"$TRELLIS" config convert "$tmp/profiles.yaml" >"$tmp/profiles.cfg"
check "several profiles: the converted file decides alike" \
    test "$(placed "$tmp/profiles.cfg" batch no-scoring-scheduler)" = node-a

# Disabling a score plugin and weighing another (kube's documentation's
# shape): NodeResourcesBalancedAllocation stops scoring, ImageLocality
# weighs 2 (no images here: 0 everywhere); LeastAllocated alone still
# picks node-b (91 > 48).
cat >"$tmp/noscore.yaml" <<EOF
$head
profiles:
  - plugins:
      score:
        disabled:
        - name: NodeResourcesBalancedAllocation
        enabled:
        - name: ImageLocality
          weight: 2
EOF
"$TRELLIS" validate "$tmp/noscore.yaml" >"$tmp/v.out" 2>&1
check "a score plugin disabled: validate" grep -q "ok (1 profile, 14 plugin instances)" \
    "$tmp/v.out"
"$TRELLIS" config convert "$tmp/noscore.yaml" >"$tmp/noscore.cfg"
check "a score plugin disabled: kept for its PreScore only" \
    sh -c "grep -A 3 'node-resources-balanced-allocation' '$tmp/noscore.cfg' | grep -q points"
check "a score plugin disabled: ImageLocality weighs 2" \
    sh -c "grep -A 1 '\"image-locality\"' '$tmp/noscore.cfg' | grep -q 'weight = 2'"
check "a score plugin disabled: web to node-b" test "$(placed "$tmp/noscore.yaml" web)" = node-b

# MostAllocated (kube's documentation, "Resource Bin Packing", with the
# extended resources it lists: the Pods ask for none, so they are left
# out of the score)
cat >"$tmp/most.yaml" <<EOF
$head
profiles:
- pluginConfig:
  - args:
      scoringStrategy:
        resources:
        - name: cpu
          weight: 1
        - name: memory
          weight: 1
        - name: intel.com/foo
          weight: 3
        - name: intel.com/bar
          weight: 3
        type: MostAllocated
    name: NodeResourcesFit
EOF
"$TRELLIS" validate "$tmp/most.yaml" >"$tmp/v.out" 2>&1
check "MostAllocated: validate" grep -q "ok (1 profile" "$tmp/v.out"
check "MostAllocated: web to node-a (115 > 102)" test "$(placed "$tmp/most.yaml" web)" = node-a
"$TRELLIS" config convert "$tmp/most.yaml" >"$tmp/most.cfg"
check "MostAllocated: the converted file decides alike" \
    test "$(placed "$tmp/most.cfg" web)" = node-a

# RequestedToCapacityRatio (kube's documentation's shape, over cpu and
# memory here so that the Pods' requests count)
cat >"$tmp/rtc.yaml" <<EOF
$head
profiles:
- pluginConfig:
  - args:
      scoringStrategy:
        resources:
        - name: cpu
          weight: 1
        - name: memory
          weight: 1
        requestedToCapacityRatio:
          shape:
          - utilization: 0
            score: 0
          - utilization: 100
            score: 10
        type: RequestedToCapacityRatio
    name: NodeResourcesFit
EOF
"$TRELLIS" validate "$tmp/rtc.yaml" >"$tmp/v.out" 2>&1
check "RequestedToCapacityRatio: validate" grep -q "ok (1 profile" "$tmp/v.out"
check "RequestedToCapacityRatio: web to node-a (115 > 103)" \
    test "$(placed "$tmp/rtc.yaml" web)" = node-a

# Extenders (kube's extender configuration): one http-extender entry each,
# checked as text (the plugin is built on its own)
cat >"$tmp/ext.yaml" <<EOF
$head
extenders:
- urlPrefix: "http://127.0.0.1:12346/scheduler"
  filterVerb: "filter"
  prioritizeVerb: "prioritize"
  preemptVerb: "preempt"
  weight: 5
  enableHTTPS: false
  nodeCacheCapable: false
  httpTimeout: 10s
  managedResources:
  - name: example.com/foo
    ignoredByScheduler: true
- urlPrefix: "http://127.0.0.1:12347/scheduler"
  bindVerb: "bind"
  ignorable: true
EOF
"$TRELLIS" config convert "$tmp/ext.yaml" >"$tmp/ext.cfg" 2>"$tmp/ext.err"
check "extenders: config convert exits 0" test $? = 0
tr -d ' \n' <"$tmp/ext.cfg" >"$tmp/ext.flat"
check "extenders: the first as http-extender with its verbs, weight and timeout" \
    grep -q '{name="http-extender";weight=5;args:{url_prefix="http://127.0.0.1:12346/scheduler";filter_verb="filter";prioritize_verb="prioritize";preempt_verb="preempt";http_timeout_ms=10000;node_cache_capable=false;managed_resources=\["example.com/foo"\];};}' \
    "$tmp/ext.flat"
check "extenders: the second as extender-2, before default-binder" \
    grep -q '{name="http-extender";as="extender-2";weight=1;args:{url_prefix="http://127.0.0.1:12347/scheduler";bind_verb="bind";ignorable=true;};},{name="default-binder";}' \
    "$tmp/ext.flat"
check "extenders: ignoredByScheduler becomes NodeResourcesFit's ignoredResources" \
    grep -q 'name="node-resources-fit";weight=1;args:{config:{inline="{ignoredResources:\[example.com/foo\]}";};};' \
    "$tmp/ext.flat"
# the longest call, 10 s (the second extender: kube's default, 5 s), plus
# 5 s: an extender that times out is not a hook that hangs
check "extenders: the hook deadlines leave the longest call room" \
    grep -q 'hook_deadline_ms=15000;bind_deadline_ms=60000;' "$tmp/ext.flat"

# ---- refusals name the file and line ----
cat >"$tmp/bad.yaml" <<EOF
$head
leaderElection:
  leaderElect: false
EOF
"$TRELLIS" validate "$tmp/bad.yaml" >"$tmp/bad.out" 2>&1
check "leaderElect: false is refused with its line" \
    sh -c "[ $? = 2 ] && grep -q 'bad.yaml:4: leaderElection.leaderElect: false is not supported' '$tmp/bad.out'"
cat >"$tmp/bad.yaml" <<EOF
$head
profiles:
- plugins:
    multiPoint:
      enabled:
      - name: VolumeBinding
EOF
"$TRELLIS" schedule -c "$tmp/bad.yaml" -s "$tmp/state" --dry-run >"$tmp/bad.out" 2>&1
check "an enabled volume plugin is refused by name" \
    sh -c "[ $? = 2 ] && grep -q \"bad.yaml:7: .*'VolumeBinding' is enabled, but trellis does not reproduce it\" '$tmp/bad.out'"
cat >"$tmp/bad.yaml" <<EOF
$head
profiles:
- pluginConfig:
  - name: DefaultPreemption
    args:
      minCandidateNodesAbsolute: 50
EOF
"$TRELLIS" config convert "$tmp/bad.yaml" >"$tmp/bad.out" 2>&1
check "DefaultPreemptionArgs become the preemption plugin's arguments" \
    sh -c "[ $? = 0 ] && grep -q 'min_candidate_nodes_absolute = 50;' '$tmp/bad.out'"
cat >"$tmp/bad.yaml" <<EOF
$head
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: Balanced
EOF
"$TRELLIS" validate "$tmp/bad.yaml" >"$tmp/bad.out" 2>&1
check "a bad value inside args is the plugin's error, with the file" \
    sh -c "[ $? = 2 ] && grep -q 'bad.yaml:.*expected LeastAllocated, MostAllocated or RequestedToCapacityRatio' '$tmp/bad.out'"

finish
