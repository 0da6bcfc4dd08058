#!/bin/sh
# Benchmarks: generate fleets with contrib/gen (seeded, reproducible), run
# `trellis schedule --dry-run --stats` on each, and print per case: targets,
# workloads, load time, scheduling time, write time, decisions per second
# (and for a case written back, written/s: the decisions over deciding and
# writing them), per-decision latency p50 / p99, peak memory. The same figures go to bench.json (or
# $BENCH_JSON) so two commits can be compared. Scheduling time is measured
# inside trellis apart from reading the manifests.
#
#   scripts/bench.sh [BUILD_DIR]      (make bench runs it on the build tree)
#   BENCH_CASES="kube:5000:50000:1 gardener:1000:100000:1" scripts/bench.sh
# A case is profile:targets:workloads:workers[:format], format json (default)
# or yaml. Profiles: kube (conf/kube.cfg's plugins, kube-scheduler's default
# profile; every node filtered and scored; the equivalence
# cache serves the generator's identical pods), kube-full (the same with
# equivalence_cache = false: every plugin on every node in every cycle),
# kube-sampled (percentage_of_targets_to_score = 0, kube-scheduler's
# adaptive share), kube-spread (kube-scheduler's TopologySpreading shape
# with the kube profile: as many running Pods as Nodes, and pending Pods
# with a zone spread constraint, maxSkew 5 DoNotSchedule; no two are
# equivalent, so every cycle counts the domains), gardener
# (conf/gardener.cfg), openmcp (conf/openmcp.cfg with the configuration below: 5 purposes, a tenth of the requests
# Exclusive, each creating a Cluster; the default scope, Namespaced, as
# openMCP's document says: a shared request looks among its namespace's
# Clusters; not a dry run, so write_s is the write-back of every status,
# finalizer and new Cluster, on a copy), openmcp-cluster (the same with
# scope: Cluster, current openMCP's default: every namespace's), fleet
# (conf/fleet.cfg at the generated fleet's clock: PickN 3 with preferred
# affinity and a topology spread constraint, one cluster per cycle, and
# PickAll placements; not a dry run: write_s is every ClusterResourceBinding
# written, on a copy), kube-antiaffinity (kube-scheduler's
# SchedulingPodAntiAffinity shape from its scheduler_perf: every Pod with
# required anti-affinity on the hostname, a third of them bound one per
# Node, the others pending; 5000:3000 is its 5000Nodes_2000Pods workload;
# the kube profile, every node) and kube-antiaffinity-sampled (the same,
# with the adaptive share).
# ns/target is the median decision's time divided by the targets: the
# cost-per-target curve over the kube-full cases of 500 to 20,000 nodes.
#
# Then, when this build has the etcd store and etcd is installed (Debian:
# etcd-server; BENCH_STORES=0 skips both stores, BENCH_ETCD=0 or
# BENCH_KUBE=0 one), end to end through a real etcd started in a
# temporary directory, and through a real kube-apiserver on its own etcd
# (scripts/kube-apiserver.sh builds it once): ETCD_CASE targets and
# workloads (default 5000:10000) seeded with `trellis store copy`
# (objects/s), then scheduled and bound (bindings committed per second:
# the bindings over the time their writes took; end to end: over
# scheduling and writing), and the failover time of `trellis run`: kill -9
# of the active host until the standby has taken over and bound a new pod
# (etcd: lease 2 s; the API server: a 3 s Lease).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
trellis="$build/core/trellis"
gen="$build/contrib/trellis-gen"
[ -x "$gen" ] || gen="$build/trellis-gen"
[ -x "$trellis" ] && [ -x "$gen" ] || {
    echo "bench: build first (scripts/build.sh; make)" >&2
    exit 1
}
plugins="$build/plugins/.libs"
out=${BENCH_JSON:-bench.json}
cases=${BENCH_CASES:-"kube:500:10000:1 kube:5000:50000:1 kube:5000:50000:2 kube:20000:50000:1 \
kube-full:500:10000:1 kube-full:1000:10000:1 kube-full:2000:10000:1 kube-full:5000:10000:1 \
kube-full:10000:10000:1 kube-full:20000:10000:1 kube-full:5000:50000:2 \
kube-sampled:5000:50000:1 kube-sampled:5000:50000:2 kube-sampled:20000:50000:2 \
gardener:100:10000:1 gardener:1000:100000:1 gardener:1000:100000:2 kube:5000:50000:1:yaml \
openmcp:1000:100000:1 openmcp-cluster:1000:100000:1 fleet:1000:10000:1 kube-spread:5000:2000:1 kube-spread:5000:5000:1 \
kube-antiaffinity:5000:3000:1 kube-antiaffinity-sampled:5000:3000:1"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

cat >"$tmp/kube.cfg" <<'CFG'
profiles = ( {
  name = "default-scheduler"; default = true;
  workload = { kind = "Pod"; scheduler_name_field = "spec.schedulerName";
               finished_field = "status.phase"; finished_values = [ "Succeeded", "Failed" ]; };
  target = { kind = "Node"; };
  binding = { field = "spec.nodeName"; };
  plugins = ( { name = "scheduling-gates"; },
    { name = "priority-sort"; args = { priority_class_field = "spec.priorityClassName"; }; },
    { name = "node-unschedulable"; },
    { name = "node-name"; }, { name = "taint-toleration"; weight = 3; },
    { name = "node-affinity"; weight = 2; }, { name = "node-ports"; },
    { name = "node-resources-fit"; weight = 1; },
    { name = "pod-topology-spread"; weight = 2; },
    { name = "inter-pod-affinity"; weight = 2; },
    { name = "node-resources-balanced-allocation"; weight = 1; },
    { name = "image-locality"; weight = 1; },
    { name = "preemption"; args = { priority_class_field = "spec.priorityClassName"; }; },
    { name = "default-binder"; } );
} );
CFG
sed 's/plugins = (/percentage_of_targets_to_score = 0;\n  plugins = (/' "$tmp/kube.cfg" \
    >"$tmp/kube-sampled.cfg"
sed 's/plugins = (/equivalence_cache = false;\n  plugins = (/' "$tmp/kube.cfg" \
    >"$tmp/kube-full.cfg"
cp "$tmp/kube.cfg" "$tmp/kube-spread.cfg"
cp "$tmp/kube.cfg" "$tmp/kube-antiaffinity.cfg"
cp "$tmp/kube-sampled.cfg" "$tmp/kube-antiaffinity-sampled.cfg"

cat >"$tmp/openmcp-bench.yaml" <<'YAML'
scheduler:
  strategy: Balanced
  selectors:
    clusters:
      matchLabels:
        landscape: bench
  purposeMappings:
    exclusive:
      template:
        metadata:
          namespace: exclusive
          labels:
            landscape: bench
        spec:
          profile: small
          tenancy: Exclusive
YAML
for i in 1 2 3 4; do
    printf '    shared-%s:\n      tenancyCount: 1000\n      template:\n        metadata:\n          labels:\n            landscape: bench\n        spec:\n          profile: small\n          tenancy: Shared\n' "$i" >>"$tmp/openmcp-bench.yaml"
done
sed -e 's|config = "openmcp-scheduler.yaml"|config = "openmcp-bench.yaml"|' -e 's|^plugin_dirs = .*||' \
    "$top/conf/openmcp.cfg" >"$tmp/openmcp.cfg"
sed 's|^scheduler:|scheduler:\n  scope: Cluster|' "$tmp/openmcp-bench.yaml" >"$tmp/openmcp-cluster-bench.yaml"
sed 's|openmcp-bench.yaml|openmcp-cluster-bench.yaml|' "$tmp/openmcp.cfg" >"$tmp/openmcp-cluster.cfg"

printf '%-13s %8s %9s %3s %5s %9s %9s %9s %12s %11s %9s %9s %9s %8s %9s\n' profile targets \
    workloads j fmt load_s sched_s write_s decisions/s written/s p50_us p99_us ns/target rss_MiB \
    load_MB/s
echo "[" >"$out"
first=1
for c in $cases; do
    IFS=: read -r prof nt nw j fmt <<EOC
$c
EOC
    fmt=${fmt:-json}
    kind=${prof%-sampled}
    kind=${kind%-full}
    kind=${kind%-cluster}
    dir="$tmp/state-$kind-$nt-$nw-$fmt"
    [ -d "$dir" ] || "$gen" "$kind" "$dir" "$nt" "$nw" 1 "$fmt"
    cfg="$tmp/$prof.cfg"
    [ "$prof" = gardener ] && cfg="$top/conf/gardener.cfg"
    [ "$prof" = fleet ] && cfg="$top/conf/fleet.cfg"
    now=
    [ "$prof" = fleet ] && now="--now 2026-11-20T12:00:00Z"
    bytes=$(du -sb "$dir" | cut -f1)
    state=$dir dry=--dry-run
    if [ "$kind" = openmcp ] || [ "$prof" = fleet ]; then # written back, on a copy
        rm -rf "$tmp/copy" && cp -R "$dir" "$tmp/copy"
        state=$tmp/copy dry=
    fi
    # shellcheck disable=SC2086
    # exit status 3 (some decisions are error) is a result, not a failure
    "$trellis" schedule --config "$cfg" --state "$state" -P "$plugins" $dry $now -o json \
        -j "$j" --stats "$tmp/stats.json" >/dev/null || [ $? -eq 3 ]
    s=$(cat "$tmp/stats.json")
    get() { echo "$s" | sed -n "s/.*\"$1\": \\([0-9.]*\\).*/\\1/p"; }
    load=$(get load_s)
    mbps=$(awk -v b="$bytes" -v t="$load" 'BEGIN { printf "%.1f", (t > 0 ? b / t / 1e6 : 0) }')
    rss=$(awk -v k="$(get peak_rss_kib)" 'BEGIN { printf "%.0f", k / 1024 }')
    nspt=$(awk -v p="$(get p50_us)" -v n="$nt" 'BEGIN { printf "%.1f", p * 1000 / n }')
    # written/s: the decisions over deciding and writing them (a written
    # case; a dry run's write_s only plans)
    wps=-
    [ -z "$dry" ] && wps=$(awk -v d="$(get decisions)" -v s="$(get schedule_s)" \
        -v w="$(get write_s)" 'BEGIN { printf "%.0f", (s + w > 0 ? d / (s + w) : 0) }')
    printf '%-13s %8s %9s %3s %5s %9.3f %9.3f %9.3f %12.0f %11s %9.1f %9.1f %9s %8s %9s\n' \
        "$prof" "$nt" "$nw" "$j" "$fmt" "$load" "$(get schedule_s)" "$(get write_s)" \
        "$(get decisions_per_s)" "$wps" "$(get p50_us)" "$(get p99_us)" "$nspt" "$rss" "$mbps"
    [ $first -eq 1 ] || echo "," >>"$out"
    first=0
    wjson=
    [ "$wps" = - ] || wjson=", \"written_per_s\": $wps"
    printf '{"case": "%s", "profile": "%s", "format": "%s", "manifest_bytes": %s%s, "stats": %s}' \
        "$c" "$prof" "$fmt" "$bytes" "$wjson" "$s" >>"$out"
done

# store_bench NAME DIR STORE-CFG PROFILE-CFG FAILOVER-CFG STARTED ADD-POD:
# the state DIR seeded into the store STORE-CFG names, scheduled
# through PROFILE-CFG, then the failover of two `trellis run` hosts on
# FAILOVER-CFG (STARTED: what the first host logs once it leads; ADD-POD:
# a command that puts the pod p1 into the failover store).
store_bench() {
    name=$1 dir=$2 scfg=$3 pcfg=$4 focfg=$5 started=$6 addpod=$7
    t0=$(date +%s%N)
    "$trellis" store copy "$dir" "$scfg" >"$tmp/$name-copy.out" 2>&1 || {
        echo "$name: the seeding failed: $(tail -n 3 "$tmp/$name-copy.out")" >&2
        return 0
    }
    seed_s=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
    "$trellis" schedule --config "$pcfg" -P "$plugins" -o json \
        --stats "$tmp/stats.json" >"$tmp/$name-out.json" || [ $? -eq 3 ]
    s=$(cat "$tmp/stats.json")
    get() { echo "$s" | sed -n "s/.*\"$1\": \\([0-9.]*\\).*/\\1/p"; }
    bound=$(grep -c '"result": "scheduled"' "$tmp/$name-out.json" || true)
    sched=$(get schedule_s)
    write=$(get write_s)
    commit=$(awk -v n="$bound" -v w="$write" 'BEGIN { printf "%.0f", (w > 0 ? n / w : 0) }')
    e2e=$(awk -v n="$bound" -v w="$write" -v s="$sched" 'BEGIN { printf "%.0f", n / (w + s) }')
    objs=$((ent + enw))
    seedps=$(awk -v n="$objs" -v t="$seed_s" 'BEGIN { printf "%.0f", (t > 0 ? n / t : 0) }')
    # failover: two hosts, one active; kill -9 it
    "$trellis" run -c "$focfg" -P "$plugins" --listen 127.0.0.1:0 --log-level info \
        >/dev/null 2>"$tmp/$name-fo1.log" &
    h1=$!
    pids="$pids $h1"
    wait_for 20 grep -q "$started" "$tmp/$name-fo1.log"
    "$trellis" run -c "$focfg" -P "$plugins" --listen 127.0.0.1:0 --log-level info \
        >/dev/null 2>"$tmp/$name-fo2.log" &
    h2=$!
    pids="$pids $h2"
    wait_for 20 grep -q "standby" "$tmp/$name-fo2.log"
    t0=$(date +%s%N)
    kill -KILL "$h1"
    $addpod
    wait_for 60 grep -q "took over" "$tmp/$name-fo2.log"
    t1=$(date +%s%N)
    wait_for 30 grep -q "p1: bound to" "$tmp/$name-fo2.log"
    t2=$(date +%s%N)
    kill -TERM "$h2"
    wait_for 20 stopped "$h2" || kill -KILL "$h2"
    over=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
    first=$(awk -v a="$t0" -v b="$t2" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
    echo
    printf '%-13s %8s %9s %9s %11s %9s %9s %13s %13s %11s %13s\n' store targets workloads seed_s \
        seed_obj/s sched_s write_s committed/s end_to_end/s failover_s first_bind_s
    printf '%-13s %8s %9s %9s %11s %9s %9s %13s %13s %11s %13s\n' "$name" "$ent" "$enw" "$seed_s" \
        "$seedps" "$sched" "$write" "$commit" "$e2e" "$over" "$first"
    printf ',\n{"case": "%s:%s:%s", "profile": "kube", "store": "%s", "bound": %s, "seed_s": %s, "committed_per_s": %s, "end_to_end_per_s": %s, "failover_s": %s, "failover_first_bind_s": %s, "stats": %s}' \
        "$name" "$ent" "$enw" "$name" "$bound" "$seed_s" "$commit" "$e2e" "$over" "$first" "$s" >>"$out"
}

# the failover store's one node
fo_state() {
    mkdir -p "$tmp/fo"
    printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"64","memory":"64Gi","pods":"110"}}}\n' >"$tmp/fo/n1.json"
}
fo_pod='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":"default"},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"1"}}}]}}'

bench_servers() {
    TRELLIS=$trellis
    SRCDIR=$top/tests
    TOP_SRCDIR=$top
    pids=""
    trap 'for p in $pids; do kill -KILL "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT INT TERM
    . "$top/tests/testlib.sh"
    . "$top/tests/etcdlib.sh"
    . "$top/tests/kubelib.sh"
    why=$(etcd_why_not)
    if [ -n "$why" ]; then
        echo "etcd and Kubernetes API: skipped: $why"
        return 0
    fi
    IFS=: read -r ent enw <<EOC
${ETCD_CASE:-5000:10000}
EOC
    etcd_cluster 1 || { echo "etcd: skipped: etcd does not start" >&2; return 0; }
    fo_state
    gdir="$tmp/state-kube-$ent-$enw-json"
    [ -d "$gdir" ] || "$gen" kube "$gdir" "$ent" "$enw" 1 json
    if [ "${BENCH_ETCD:-1}" != 0 ]; then
        etcd_store_cfg "$tmp/etcd-store.cfg" /bench "timeout_ms = 30000;"
        cat "$tmp/kube.cfg" "$tmp/etcd-store.cfg" >"$tmp/kube-etcd.cfg"
        printf 'store = { type = "etcd"; endpoints = [ %s ]; prefix = "/failover"; lease_ttl_s = 2; };\n' \
            "$etcd_endpoints" >"$tmp/fo-store.cfg"
        cat "$tmp/kube.cfg" "$tmp/fo-store.cfg" >"$tmp/fo.cfg"
        "$trellis" store copy "$tmp/fo" "$tmp/fo-store.cfg" >/dev/null
        etcd_add_pod() {
            curl -s -X POST "$etcd_url_1/v3/kv/put" -d "{\"key\":\"$(printf /failover/o/Pod/default/p1 | base64 | tr -d '\n')\",\"value\":\"$(printf '%s' "$fo_pod" | base64 | tr -d '\n')\"}" >/dev/null
        }
        store_bench etcd "$gdir" "$tmp/etcd-store.cfg" "$tmp/kube-etcd.cfg" "$tmp/fo.cfg" "state etcd" etcd_add_pod
        echo "(failover with lease_ttl_s = 2: kill -9 of the active host until the standby took over, and until it bound a new pod)"
    fi
    [ "${BENCH_KUBE:-1}" != 0 ] || return 0
    why=$(kube_why_not)
    if [ -n "$why" ]; then
        echo "kubernetes: skipped: $why"
        return 0
    fi
    kube_certs && kube_start || { echo "kubernetes: skipped: kube-apiserver does not start" >&2; return 0; }
    kube_kubeconfig "$tmp/kubeconfig"
    # Pods are bound through pods/binding on an API server
    sed 's/binding = { field = "spec.nodeName"; };/binding = { field = "spec.nodeName"; subresource = "binding"; };/' \
        "$tmp/kube.cfg" >"$tmp/kube-b.cfg"
    printf 'store = { type = "kubernetes"; kubeconfig = "%s"; kinds = [ "Namespace", "Node", "Pod" ]; timeout_ms = 30000; };\n' \
        "$tmp/kubeconfig" >"$tmp/api-store.cfg"
    cat "$tmp/kube-b.cfg" "$tmp/api-store.cfg" >"$tmp/kube-api.cfg"
    printf 'store = { type = "kubernetes"; kubeconfig = "%s"; kinds = [ "Node", "Pod" ]; lease_ttl_s = 3; lease_name = "bench-failover"; };\n' \
        "$tmp/kubeconfig" >"$tmp/fo-api-store.cfg"
    cat "$tmp/kube-b.cfg" "$tmp/fo-api-store.cfg" >"$tmp/fo-api.cfg"
    kube_add_pod() {
        printf '%s' "$fo_pod" >"$tmp/fo-pod.json"
        kube_send POST /api/v1/namespaces/default/pods "$tmp/fo-pod.json" >/dev/null
    }
    # the generated state, its Namespace, and the failover node (one API
    # server holds both)
    cp -r "$gdir" "$tmp/state-api"
    cp "$tmp/fo/n1.json" "$tmp/state-api/"
    printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}}\n' >"$tmp/state-api/ns.json"
    store_bench kubernetes "$tmp/state-api" "$tmp/api-store.cfg" "$tmp/kube-api.cfg" "$tmp/fo-api.cfg" \
        "state kubernetes" kube_add_pod
    echo "(failover with lease_ttl_s = 3, client-go's proportions: renew deadline 2 s, retry 0.4 s)"
}
[ "${BENCH_STORES:-1}" = 0 ] || bench_servers
echo "]" >>"$out"
echo "figures written to $out"
