#!/bin/sh
# targets.sh - `trellis targets` as an operator reads it, run by `make
# check`: the exact tables of the bundled examples (kube, Gardener,
# openMCP), with what each target holds and can hold of every counter the
# profile's plugins name (resources-fit: cpu, memory, pods; gardener-
# capacity: shoots; openmcp-clusters: requests), and a small state that
# shows the edge cases: a node that declares only some resources, a node
# whose allocatable cannot be read, and the same amounts as JSON.
set -u
: "${TRELLIS:?}" "${TOP_SRCDIR:?}" "${JSONMATCH:?}"
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
hosts_setup
case $TRELLIS in
/*) ;;
*) TRELLIS=$(pwd)/$TRELLIS ;;
esac

# same NAME FILE: stdin is exactly FILE
same() {
    cat >"$tmp/want"
    if diff -u "$tmp/want" "$2" >"$tmp/diff" 2>&1; then ok "$1"; else
        not_ok "$1" "$(head -c 2500 "$tmp/diff")"; fi
}

for ex in kube gardener openmcp; do
    (cd "$TOP_SRCDIR" && "$TRELLIS" targets -c "conf/$ex.cfg" -s "examples/$ex" -o table) \
        >"$tmp/$ex.txt" 2>"$tmp/$ex.err"
    check "targets on the $ex example exits 0" test $? = 0
done

# examples/kube/nodes.yaml: cp-1 4 cpu, 16Gi, 110 pods; worker-a and -b
# 8 cpu, 32Gi, 110 pods; gpu-c 16 cpu, 64Gi, 110 pods. running.yaml:
# batch-report-7x2kq (6 cpu, 8Gi) on worker-a: 6/8 = 75%, 8/32 = 25%,
# 1/110 = 0.9% -> 0%; cache-0 (2 cpu, 4Gi) on worker-b: 25%, 12.5% -> 12%.
same "kube: each node's cpu, memory and pods, used of allocatable" "$tmp/kube.txt" <<'EOF2'
PROFILE default-scheduler (Pod on Node)
TARGET    STATE      WORKLOADS  CAPACITY  TAINTS
cp-1      ready      0          -         node-role.kubernetes.io/control-plane:NoSchedule
          allocated: cpu 0/4 (0%), memory 0/16Gi (0%), pods 0/110 (0%)
gpu-c     ready      0          -         nvidia.com/gpu=present:NoSchedule
          allocated: cpu 0/16 (0%), memory 0/64Gi (0%), pods 0/110 (0%)
worker-a  ready      1          -         -
          allocated: cpu 6/8 (75%), memory 8Gi/32Gi (25%), pods 1/110 (0%)
          analytics/batch-report-7x2kq
worker-b  ready      1          -         -
          allocated: cpu 2/8 (25%), memory 4Gi/32Gi (12%), pods 1/110 (0%)
          shop/cache-0
4 targets; 6 Pod pending
EOF2

# examples/gardener: the seeds' status.allocatable.shoots (aws-eu2 3, the
# garden seed 50, ...) against the shoots whose spec.seedName names them:
# the same numbers as the CAPACITY column (operator.capacity_field is that
# field); 2/200 = 1%, 1/50 = 2%, 1/200 = 0.5% -> 0%.
same "gardener: each seed's shoots of its allocatable shoots" "$tmp/gardener.txt" <<'EOF2'
PROFILE default-scheduler (Shoot on Seed)
TARGET      STATE      WORKLOADS  CAPACITY  TAINTS
aws-eu1     ready      2          2/200     -
            allocated: shoots 2/200 (1%)
            garden-shop/storefront
            garden-shop/payments
aws-eu2     ready      3          3/3       -
            allocated: shoots 3/3 (100%)
            garden-data/warehouse
            garden-data/etl
            garden-data/reports
aws-eu3     ready      0          0/100     -
            allocated: shoots 0/100 (0%)
aws-eu4     ready      0          0/100     -
            allocated: shoots 0/100 (0%)
aws-eu5     ready      0          0/100     -
            allocated: shoots 0/100 (0%)
aws-garden  ready      1          1/50      seed.gardener.cloud/protected
            allocated: shoots 1/50 (2%)
            garden/ops
aws-us1     ready      0          0/200     -
            allocated: shoots 0/200 (0%)
azure-eu1   ready      1          1/100     seed.gardener.cloud/disable-dns
            allocated: shoots 1/100 (1%)
            garden-web/portal
azure-eu2   ready      0          0/100     -
            allocated: shoots 0/100 (0%)
gcp-eu1     ready      1          1/200     -
            allocated: shoots 1/200 (0%)
            garden-ml/training
gcp-us1     ready      0          0/200     -
            allocated: shoots 0/200 (0%)
11 targets; 12 Shoot pending
EOF2

# examples/openmcp: a Cluster holds its request finalizers (the tenancy
# count; no request of the state is placed on one yet). conf/openmcp-
# scheduler.yaml: mcp is Exclusive (one request per Cluster), workload
# Shared with tenancyCount 20, platform Shared without one (no limit).
# mcp-7x2kq carries 1 finalizer: 1/1; workload-full 20: 20/20;
# workload-small 2: 2/20 = 10%; team-a/platform 1, no limit.
same "openmcp: each Cluster's requests of its purposes' tenancy count" "$tmp/openmcp.txt" <<'EOF2'
PROFILE openmcp-cluster-scheduler (ClusterRequest on Cluster)
TARGET                               STATE      WORKLOADS  CAPACITY  TAINTS
mcp-clusters/mcp-7x2kq               ready      0          -         -
                                     allocated: requests 1/1 (100%)
mcp-clusters/mcp-spare               ready      0          -         -
                                     allocated: requests 0/1 (0%)
team-a/platform                      ready      0          -         -
                                     allocated: requests 1
workload-clusters/workload-full      ready      0          -         -
                                     allocated: requests 20/20 (100%)
workload-clusters/workload-retiring  ready      0          -         -
                                     allocated: requests 0/20 (0%)
workload-clusters/workload-small     ready      0          -         -
                                     allocated: requests 2/20 (10%)
6 targets; 8 ClusterRequest pending
EOF2

# the report after a run adds what the run placed: a request placed on a
# Cluster that does not carry its finalizer yet counts once more
# (workload-1 on workload-small: 2 + 1 = 3 of 20 = 15%; platform-1 on
# team-a/platform, which carries another request's finalizer: 2), a
# recovered one does not (mcp-1 on mcp-7x2kq, which carries its
# finalizer: still 1/1)
cp -R "$TOP_SRCDIR/examples/openmcp" "$tmp/om"
(cd "$TOP_SRCDIR" && "$TRELLIS" report --html "$tmp/om.html" -c conf/openmcp.cfg -s "$tmp/om") \
    >"$tmp/om.out" 2>"$tmp/om.err"
sed 's/<tr>/\n<tr>/g' "$tmp/om.html" | sed 's/<[^>]*>/ /g' | tr -s ' ' >"$tmp/om.rows"
check "report: a Cluster's requests after the run, placed ones counted once" \
    sh -c "grep -q '^ workload-clusters/workload-small 1 requests 3/20 (15%) team-a/workload-1 ' '$tmp/om.rows' &&
           grep -q '^ team-a/platform 1 requests 2 team-a/platform-1 ' '$tmp/om.rows' &&
           grep -q '^ mcp-clusters/mcp-7x2kq 1 requests 1/1 (100%) team-a/mcp-1 ' '$tmp/om.rows'"

# a node that declares every resource, one that declares cpu alone, and
# one whose allocatable cannot be read (its amounts have no limit)
mkdir -p "$tmp/st"
cat >"$tmp/st/all.yaml" <<'EOF2'
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status:
  allocatable: {cpu: "2"}
---
apiVersion: v1
kind: Node
metadata: {name: n3}
status:
  allocatable: {cpu: lots, memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default}
spec:
  nodeName: n1
  containers:
  - name: c
    resources: {requests: {cpu: "1", memory: 512Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: default}
spec:
  nodeName: n1
  containers:
  - name: c
    resources: {requests: {cpu: 500m, memory: 512Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: c, namespace: default}
spec:
  nodeName: n2
  containers:
  - name: c
    resources: {requests: {cpu: 250m, memory: 100M}}
EOF2
# least-allocated counts cpu and memory too: resources-fit, first, names them
cat >"$tmp/a.cfg" <<'EOF2'
plugin_dirs = [ ];
profiles = (
  { name = "default-scheduler"; default = true;
    workload = { kind = "Pod"; scheduler_name_field = "spec.schedulerName"; };
    target = { kind = "Node"; };
    binding = { field = "spec.nodeName"; };
    plugins = ( { name = "resources-fit"; }, { name = "least-allocated"; },
                { name = "default-binder"; } );
  } );
EOF2
cp -R "$tmp/st" "$tmp/st.orig"
"$TRELLIS" targets -c "$tmp/a.cfg" -s "$tmp/st" -o table >"$tmp/a.txt" 2>"$tmp/a.err"
check "targets on a node that cannot be read exits 0" test $? = 0
# n1: 1 + 0.5 = 1.5 cpu of 4 = 37.5% -> 37%; 512Mi + 512Mi = 1Gi of 8Gi =
# 12.5% -> 12%; 2 pods of 110 = 1.8% -> 1%. n2 declares cpu alone: 250m of
# 2 = 12.5% -> 12%, memory (100M) and pods without a limit. n3's
# allocatable is refused: no limit on anything, nothing placed.
same "amounts: declared, partly declared, unreadable" "$tmp/a.txt" <<'EOF2'
PROFILE default-scheduler (Pod on Node)
TARGET  STATE      WORKLOADS  CAPACITY  TAINTS
n1      ready      2          -         -
        allocated: cpu 1500m/4 (37%), memory 1Gi/8Gi (12%), pods 2/110 (1%)
        default/a
        default/b
n2      ready      1          -         -
        allocated: cpu 250m/2 (12%), memory 100M, pods 1
        default/c
n3      invalid    0          -         -
        plugin resources-fit: status.allocatable.cpu: expected a quantity such as 500m, 2 or 1Gi, got 'lots'
        allocated: cpu 0, memory 0, pods 0
3 targets; 0 Pod pending
EOF2
"$TRELLIS" targets -c "$tmp/a.cfg" -s "$tmp/st" -o json >"$tmp/a.json" 2>"$tmp/a.err"
cat >"$tmp/want.json" <<'EOF2'
{ "profiles": [ { "name": "default-scheduler", "targets": [
  { "name": "n1", "counters": [
    { "name": "cpu", "unit": "milli", "used": 1500, "allocatable": 4000, "percent": 37,
      "text": "1500m/4 (37%)" },
    { "name": "memory", "unit": "bytes", "used": 1073741824, "allocatable": 8589934592,
      "percent": 12, "text": "1Gi/8Gi (12%)" },
    { "name": "pods", "unit": "count", "used": 2, "allocatable": 110, "percent": 1,
      "text": "2/110 (1%)" } ] },
  { "name": "n2", "counters": [
    { "name": "cpu", "used": 250, "allocatable": 2000, "percent": 12 },
    { "name": "memory", "used": 100000000, "allocatable": null, "percent": null,
      "text": "100M" },
    { "name": "pods", "used": 1, "allocatable": null } ] },
  { "name": "n3", "error": "plugin resources-fit: status.allocatable.cpu: expected a quantity such as 500m, 2 or 1Gi, got 'lots'",
    "counters": [ { "name": "cpu", "used": 0, "allocatable": null }, { "name": "memory" },
                  { "name": "pods" } ] } ] } ] }
EOF2
check "the same amounts as JSON, raw and as text" "$JSONMATCH" "$tmp/want.json" "$tmp/a.json"
check "targets writes nothing" diff -r "$tmp/st.orig" "$tmp/st"

# a profile whose plugins name no counter shows none
sed 's/( { name = "resources-fit"; }, { name = "least-allocated"; },/(/' "$tmp/a.cfg" >"$tmp/b.cfg"
"$TRELLIS" targets -c "$tmp/b.cfg" -s "$tmp/st" -o table >"$tmp/b.txt" 2>"$tmp/b.err"
check "no named counter: no allocated line" sh -c "! grep -q allocated '$tmp/b.txt' && grep -q '^n1  *ready  *2 ' '$tmp/b.txt'"
"$TRELLIS" targets -c "$tmp/b.cfg" -s "$tmp/st" -o json >"$tmp/b.json" 2>"$tmp/b.err"
check "no named counter: no counters in JSON" sh -c "! grep -q counters '$tmp/b.json'"

finish
