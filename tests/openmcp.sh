#!/bin/sh
# openmcp.sh - the openMCP profile as an operator meets it: `trellis
# validate` of conf/openmcp.cfg and of broken openMCP scheduler
# configurations (each error names the field), `trellis explain` of a
# request (the rule that decided, why each Cluster was passed over), and
# `trellis run` on the
# bundled landscape: requests added over time, a request deleted (being
# deleted, then gone), a Cluster deleted under a bound request, and a
# restart that changes nothing. Every wait polls with a bound (wait_for).
# Run by `make check` with TRELLIS and TRELLIS_PLUGIN_PATH set.
set -u
: "${TRELLIS:?}" "${TOP_SRCDIR:?}"
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
hosts_setup

# doc FILE NAMESPACE NAME: that object's document of FILE
doc() {
    awk -v ns="$2" -v n="$3" '
        function flush() { if (name == n && nsv == ns) printf "%s", buf; buf = ""; name = nsv = "" }
        /^---/ { flush(); next }
        { buf = buf $0 "\n" }
        /^  name:/ && !name { name = $2 } /^  namespace:/ && !nsv { nsv = $2 }
        END { flush() }' "$1"
}
# granted FILE NAMESPACE NAME CLUSTER-NAMESPACE CLUSTER: the request is
# Granted with that status.cluster
granted() {
    doc "$1" "$2" "$3" >"$tmp/doc"
    grep -q '^  phase: Granted' "$tmp/doc" && grep -q "^    name: $5\$" "$tmp/doc" &&
        grep -q "^    namespace: $4\$" "$tmp/doc"
}
# holds FILE FINALIZER: some document of FILE carries it
holds() { grep -q "$2" "$1"; }
lacks() { ! grep -q "$2" "$1"; }

cfg="$TOP_SRCDIR/conf/openmcp.cfg"

# ---- validate ----
check "validate accepts conf/openmcp.cfg" "$TRELLIS" validate -c "$cfg"

# bad NAME YAML NEEDLE: a configuration whose scheduler YAML is YAML is
# refused by validate with NEEDLE in the message
bad() {
    mkdir -p "$tmp/bad"
    printf '%s\n' "$2" >"$tmp/bad/scheduler.yaml"
    sed 's|config = "openmcp-scheduler.yaml";|config = "scheduler.yaml";|' "$cfg" >"$tmp/bad/openmcp.cfg"
    if "$TRELLIS" validate -c "$tmp/bad/openmcp.cfg" >"$tmp/bad/out" 2>&1; then
        not_ok "$1" "validate accepted it"
    elif grep -qF "$3" "$tmp/bad/out"; then
        ok "$1"
    else
        not_ok "$1" "expected: $3" "$(cat "$tmp/bad/out")"
    fi
}
bad "validate: tenancy is required" 'scheduler:
  purposeMappings:
    mcp:
      template:
        spec:
          profile: gcp' \
    "scheduler.purposeMappings.mcp.template.spec.tenancy: required (Exclusive or Shared)"
bad "validate: profile is required" 'scheduler:
  purposeMappings:
    mcp:
      template:
        spec:
          tenancy: Shared' \
    "scheduler.purposeMappings.mcp.template.spec.profile: required"
bad "validate: tenancyCount must be 0 for Exclusive" 'scheduler:
  purposeMappings:
    mcp:
      tenancyCount: 3
      template:
        spec: { profile: gcp, tenancy: Exclusive }' \
    "scheduler.purposeMappings.mcp.tenancyCount: tenancyCount must be 0 if the template specifies 'Exclusive' tenancy (got 3)"
bad "validate: a template whose labels miss the global selector" 'scheduler:
  selectors:
    clusters:
      matchLabels: { landscape: prod }
  purposeMappings:
    workload:
      template:
        metadata:
          labels: { landscape: dev }
        spec: { profile: gcp, tenancy: Shared }' \
    "scheduler.purposeMappings.workload.template.metadata.labels: labels do not match specified global cluster selector (landscape=prod): the scheduler could not find the Clusters it creates for purpose 'workload' again"
bad "validate: a template whose labels miss the purpose's selector" 'scheduler:
  purposeMappings:
    workload:
      selector:
        matchExpressions:
          - { key: size, operator: In, values: [small, large] }
      template:
        spec: { profile: gcp, tenancy: Shared }' \
    "labels do not match specified local cluster selector (size in (small,large))"
bad "validate: a template namespace the API server refuses" 'scheduler:
  purposeMappings:
    mcp:
      template:
        metadata: { name: ok, namespace: ../../x }
        spec: { profile: gcp, tenancy: Shared }' \
    "scheduler.purposeMappings.mcp.template.metadata.namespace: \"../../x\" must consist of lowercase letters, digits and '-'"
bad "validate: a template name the API server refuses" 'scheduler:
  purposeMappings:
    mcp:
      template:
        metadata: { name: ../../../../tmp/PWNED }
        spec: { profile: gcp, tenancy: Shared }' \
    "scheduler.purposeMappings.mcp.template.metadata.name: \"../../../../tmp/PWNED\" must not have an empty part between '.'s (a name of the API server)"
bad "validate: a generateName the API server refuses" 'scheduler:
  purposeMappings:
    mcp:
      template:
        metadata: { generateName: My_Cluster. }
        spec: { profile: gcp, tenancy: Exclusive }' \
    "scheduler.purposeMappings.mcp.template.metadata.generateName: \"My_Cluster.\" must consist of lowercase letters"
bad "validate: a purpose whose name cannot start a Cluster name" 'scheduler:
  purposeMappings:
    Big_MCP:
      template:
        spec: { profile: gcp, tenancy: Exclusive }' \
    "new Clusters of purpose 'Big_MCP' are named after it, and a name must consist of lowercase letters, digits, '-' and '.', each part starting and ending with a letter or digit: set generateName (or name)"
bad "validate: a template label key the API server refuses" 'scheduler:
  purposeMappings:
    mcp:
      template:
        metadata:
          labels: { "c\\": "y" }
        spec: { profile: gcp, tenancy: Shared }' \
    "scheduler.purposeMappings.mcp.template.metadata.labels.c\\: the key must consist of letters, digits, '-', '_' and '.' (a key is [prefix/]name; the API server would refuse the Cluster)"
bad "validate: a template label value the API server refuses" 'scheduler:
  purposeMappings:
    mcp:
      template:
        metadata:
          labels: { team: "a b" }
        spec: { profile: gcp, tenancy: Shared }' \
    "scheduler.purposeMappings.mcp.template.metadata.labels.team: the label value \"a b\" must consist of letters, digits, '-', '_' and '.'"
mkdir -p "$tmp/ann"
printf 'scheduler:\n  purposeMappings:\n    mcp:\n      template:\n        metadata:\n          annotations: { Example.com/owner: x }\n        spec: { profile: gcp, tenancy: Shared }\n' >"$tmp/ann/scheduler.yaml"
sed 's|config = "openmcp-scheduler.yaml";|config = "scheduler.yaml";|' "$cfg" >"$tmp/ann/openmcp.cfg"
check "validate: an annotation key's prefix is checked lower-cased, as the API server does" \
    "$TRELLIS" validate -c "$tmp/ann/openmcp.cfg"
bad "validate: an annotation key the API server refuses" 'scheduler:
  purposeMappings:
    mcp:
      template:
        metadata:
          annotations: { "a/b/c": "x" }
        spec: { profile: gcp, tenancy: Shared }' \
    "the key must have at most one '/'"
bad "validate: an unknown scope" 'scheduler:
  scope: Global
  purposeMappings: {}' \
    "scheduler.scope: expected Cluster or Namespaced, got 'Global'"
bad "validate: an unknown strategy" 'scheduler:
  strategy: Fastest' \
    "scheduler.strategy: expected Balanced, Simple or Random, got 'Fastest'"
bad "validate: no scheduler: at the root" 'clusterScheduler:
  scope: Cluster' \
    "no \`scheduler:\` at the root"
mkdir -p "$tmp/typo"
cp "$TOP_SRCDIR/conf/openmcp-scheduler.yaml" "$tmp/typo/"
sed 's|plugin_args = { config|plugin_args = { seeds = 1; config|' "$cfg" >"$tmp/typo/openmcp.cfg"
"$TRELLIS" validate -c "$tmp/typo/openmcp.cfg" >"$tmp/typo/out" 2>&1
check "validate: a misspelt plugin_args key is an error naming it" \
    grep -q "plugin_args 'seeds' is an argument of none of its plugins" "$tmp/typo/out"

# ---- a new Cluster that cannot be written is an error, not a placement ----
# team-a/x and team/a-x would both be the file cluster-team-a-x.json
mkdir -p "$tmp/fc/state"
cat >"$tmp/fc/scheduler.yaml" <<'Y'
scheduler:
  purposeMappings:
    x: { template: { metadata: { namespace: team-a, name: x }, spec: { profile: p, tenancy: Shared } } }
    y: { template: { metadata: { namespace: team, name: a-x }, spec: { profile: p, tenancy: Shared } } }
Y
sed 's|config = "openmcp-scheduler.yaml";|config = "scheduler.yaml";|' "$cfg" >"$tmp/fc/openmcp.cfg"
cat >"$tmp/fc/state/requests.yaml" <<'Y'
apiVersion: clusters.openmcp.cloud/v1alpha1
kind: ClusterRequest
metadata: { name: r1, namespace: team-a, uid: fc-1 }
spec: { purpose: x }
---
apiVersion: clusters.openmcp.cloud/v1alpha1
kind: ClusterRequest
metadata: { name: r2, namespace: team, uid: fc-2 }
spec: { purpose: y }
Y
"$TRELLIS" schedule -c "$tmp/fc/openmcp.cfg" -s "$tmp/fc/state" -o json >"$tmp/fc/out" 2>"$tmp/fc/err"
check "a new Cluster that cannot be written makes its request an error, saying why" \
    sh -c "grep -q '\"error\": 1' '$tmp/fc/out' &&
           grep -q 'team/a-x, the target created for it, not written: .*exists already' '$tmp/fc/out'"

# ---- explain: which rule decided, and why each Cluster was passed over ----
ex() { "$TRELLIS" explain -c "$cfg" -s "$TOP_SRCDIR/examples/openmcp" -o table "$@"; }
ex ClusterRequest/team-a/mcp-2 >"$tmp/ex1" 2>&1
check "explain: a created Cluster is the rule that decided" \
    grep -q "Decided: openmcp-create: created Cluster mcp-clusters/mcp-qv7vav6k for purpose 'mcp' (Exclusive)" "$tmp/ex1"
check "explain: ... and the Exclusive rule passed the spare Cluster over" \
    grep -q "mcp-clusters/mcp-spare .*Exclusive: purpose 'mcp' is Exclusive" "$tmp/ex1"
ex ClusterRequest/team-a/mcp-1 >"$tmp/ex2" 2>&1
check "explain: a recovered Cluster" \
    grep -q "Decided: openmcp-clusters: recovered: Cluster mcp-clusters/mcp-7x2kq" "$tmp/ex2"
ex ClusterRequest/team-a/workload-1 >"$tmp/ex3" 2>&1
check "explain: a full Cluster and one being deleted are passed over, with why" \
    sh -c "grep -q 'workload-full .*TenancyFull: holds 20 requests' '$tmp/ex3' &&
           grep -q 'workload-retiring .*BeingDeleted' '$tmp/ex3' &&
           grep -q 'Decided: openmcp-strategy: reused workload-clusters/workload-small' '$tmp/ex3'"
ex ClusterRequest/team-c/paused >"$tmp/ex4" 2>&1
check "explain: an ignored request is left alone by openmcp-requests" \
    grep -q "Gated: plugin openmcp-requests's pre_enqueue holds it back (queue gated)" "$tmp/ex4"

# ---- run ----
st="$tmp/state"
cp -r "$TOP_SRCDIR/examples/openmcp" "$st"
start a "$st" "$cfg"
check "run: ready" wait_for 20 curl -sf "http://127.0.0.1:$port/readyz"
check "run: a request whose status was lost recovers its Cluster" \
    wait_for 20 granted "$st/requests.yaml" team-a mcp-1 mcp-clusters mcp-7x2kq
check "run: an Exclusive request gets a new Cluster, named by the hash" \
    wait_for 20 granted "$st/requests.yaml" team-a mcp-2 mcp-clusters mcp-qv7vav6k
check "run: ... written as a file with its finalizer" \
    wait_for 20 holds "$st/cluster-mcp-clusters-mcp-qv7vav6k.json" \
    "request.clusters.openmcp.cloud/5f0c1a2b-0002-4d3e-9f00-000000000002"
check "run: a workload request goes to the Cluster with room" \
    wait_for 20 granted "$st/requests.yaml" team-a workload-1 workload-clusters workload-small
check "run: the unlimited singleton of team-b is created" \
    wait_for 20 granted "$st/requests.yaml" team-b platform-1 team-b platform
doc "$st/requests.yaml" team-c paused >"$tmp/paused"
check "run: the ignored request is left alone (still Pending, no finalizer)" \
    sh -c "grep -q '^  phase: Pending' '$tmp/paused' && ! grep -q finalizers '$tmp/paused'"

mkdir -p "$st/team-d"
# request NAME PURPOSE: ClusterRequest team-d/NAME written into the state,
# its uid ending in NAME's number
request() {
    printf 'apiVersion: clusters.openmcp.cloud/v1alpha1\nkind: ClusterRequest\nmetadata:\n  name: %s\n  namespace: team-d\n  uid: 5f0c1a2b-00%s-4d3e-9f00-0000000000%s\n  generation: 1\nspec:\n  purpose: %s\n' \
        "$1" "d${1#w}" "d${1#w}" "$2" >"$st/team-d/$1.yaml"
}
request w2 workload
check "run: a request added later is granted" \
    wait_for 20 granted "$st/team-d/w2.yaml" team-d w2 workload-clusters workload-small
check "run: ... and its finalizer is on the Cluster" \
    wait_for 20 holds "$st/clusters.yaml" "request.clusters.openmcp.cloud/5f0c1a2b-00d2-4d3e-9f00-0000000000d2"

# a request for a purpose the configuration does not name: an error,
# logged (it was only in the decision, which `trellis run` prints nowhere)
request w3 no-such-purpose
check "run: a request for an unknown purpose is an error the host logs, naming the purpose" \
    wait_for 20 grep -q "ClusterRequest team-d/w3: error (tried again after its backoff): .*no-such-purpose" "$tmp/a.log"
rm "$st/team-d/w3.yaml" # gone: the restart below makes no decision

# kubectl delete: the request gets a deletionTimestamp (it keeps the
# scheduler's finalizer), then, once that is gone, it is gone.
cat >"$st/team-d/w2.yaml" <<'Y'
apiVersion: clusters.openmcp.cloud/v1alpha1
kind: ClusterRequest
metadata:
  name: w2
  namespace: team-d
  uid: 5f0c1a2b-00d2-4d3e-9f00-0000000000d2
  generation: 1
  deletionTimestamp: "2026-11-25T10:00:00Z"
  finalizers: ["clusters.openmcp.cloud/request"]
spec:
  purpose: workload
status:
  phase: Granted
  cluster:
    name: workload-small
    namespace: workload-clusters
Y
check "run: a request being deleted releases its Cluster" \
    wait_for 20 lacks "$st/clusters.yaml" "request.clusters.openmcp.cloud/5f0c1a2b-00d2-4d3e-9f00-0000000000d2"
check "run: ... and loses the scheduler's finalizer" \
    wait_for 20 lacks "$st/team-d/w2.yaml" "clusters.openmcp.cloud/request"
rm -f "$st/team-d/w2.yaml"

# a request that is simply gone (its file removed) releases what it holds
check "run: team-b/platform holds platform-1's finalizer" \
    holds "$st/cluster-team-b-platform.json" "5f0c1a2b-0005-4d3e-9f00-000000000005"
awk 'BEGIN { RS = "\n---\n"; ORS = "\n---\n" } !/name: platform-1\n  namespace: team-b/' \
    "$st/requests.yaml" >"$tmp/requests.yaml" && mv "$tmp/requests.yaml" "$st/requests.yaml"
check "run: a request that is gone is released from its Cluster" \
    wait_for 20 lacks "$st/cluster-team-b-platform.json" "5f0c1a2b-0005-4d3e-9f00-000000000005"
check "run: ... which stays (delete-without-requests is \"false\")" \
    test -f "$st/cluster-team-b-platform.json"

# the Cluster of a bound request is deleted: it is created again
rm -f "$st/cluster-mcp-clusters-mcp-qv7vav6k.json"
check "run: a bound request's deleted Cluster is created again, same name" \
    wait_for 20 holds "$st/cluster-mcp-clusters-mcp-qv7vav6k.json" \
    "request.clusters.openmcp.cloud/5f0c1a2b-0002-4d3e-9f00-000000000002"
rm -f "$st/cluster-mcp-clusters-mcp-qv7vav6k.json"
check "run: ... and again when it is deleted a second time" \
    wait_for 20 holds "$st/cluster-mcp-clusters-mcp-qv7vav6k.json" \
    "request.clusters.openmcp.cloud/5f0c1a2b-0002-4d3e-9f00-000000000002"

kill -TERM "$pid"
check "run: SIGTERM ends the host" wait_for 20 stopped "$pid"

# ---- restart: nothing is lost, nothing is done twice ----
# the state's files, but the lock (it holds the pid of the host)
state_sums() { (cd "$st" && find . -type f ! -name .trellis.lock | sort | xargs cksum); }
state_sums >"$tmp/before"
start b "$st" "$cfg"
check "restart: ready" wait_for 20 curl -sf "http://127.0.0.1:$port/readyz"
check "restart: every request was read" \
    wait_for 20 sh -c "curl -s http://127.0.0.1:$port/metrics | grep -q '^trellis_pending_workloads'"
kill -TERM "$pid"
wait_for 20 stopped "$pid"
state_sums >"$tmp/after"
check "restart: no state file changed (no new Cluster, no status rewritten)" \
    cmp "$tmp/before" "$tmp/after"
check "restart: the host made no decision" \
    sh -c "! grep -q 'unschedulable:\|bound ClusterRequest' '$tmp/b.log'"

# a bound request's Cluster deleted while no host runs: the next host
# creates it again once it has read the state, as a one-shot run does
rm -f "$st/cluster-mcp-clusters-mcp-qv7vav6k.json"
start c "$st" "$cfg"
check "restart: a Cluster deleted while no host ran is created again" \
    wait_for 20 holds "$st/cluster-mcp-clusters-mcp-qv7vav6k.json" \
    "request.clusters.openmcp.cloud/5f0c1a2b-0002-4d3e-9f00-000000000002"
kill -TERM "$pid"
wait_for 20 stopped "$pid"
finish
