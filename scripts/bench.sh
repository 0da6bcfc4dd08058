#!/bin/sh
# Benchmarks: generate fleets with contrib/gen (seeded, reproducible), run
# `trellis schedule --dry-run --stats` on each, and print per case: targets,
# workloads, load time, scheduling time, decisions per second, per-decision
# latency p50 / p99, peak memory. The same figures go to bench.json (or
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
# adaptive share), gardener (conf/gardener.cfg), openmcp (conf/openmcp.cfg
# with the configuration below: 5 purposes, a tenth of the requests
# Exclusive, each creating a Cluster; not a dry run, so write_s is the
# write-back of every status, finalizer and new Cluster, on a copy), fleet
# (conf/fleet.cfg at the generated fleet's clock: PickN 3 with preferred
# affinity and a topology spread constraint, one cluster per cycle, and
# PickAll placements; not a dry run: write_s is every ClusterResourceBinding
# written, on a copy).
# ns/target is the median decision's time divided by the targets: the
# cost-per-target curve over the kube-full cases of 500 to 20,000 nodes.
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
openmcp:1000:100000:1 fleet:1000:10000:1"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

cat >"$tmp/kube.cfg" <<'CFG'
profiles = ( {
  name = "default-scheduler"; default = true;
  workload = { kind = "Pod"; scheduler_name_field = "spec.schedulerName"; };
  target = { kind = "Node"; };
  binding = { field = "spec.nodeName"; };
  plugins = ( { name = "priority-sort"; }, { name = "node-unschedulable"; },
    { name = "node-name"; }, { name = "taint-toleration"; weight = 3; },
    { name = "node-affinity"; weight = 2; }, { name = "node-ports"; },
    { name = "node-resources-fit"; weight = 1; },
    { name = "node-resources-balanced-allocation"; weight = 1; },
    { name = "preemption"; }, { name = "default-binder"; } );
} );
CFG
sed 's/plugins = (/percentage_of_targets_to_score = 0;\n  plugins = (/' "$tmp/kube.cfg" \
    >"$tmp/kube-sampled.cfg"
sed 's/plugins = (/equivalence_cache = false;\n  plugins = (/' "$tmp/kube.cfg" \
    >"$tmp/kube-full.cfg"

cat >"$tmp/openmcp-bench.yaml" <<'YAML'
scheduler:
  scope: Cluster
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

printf '%-13s %8s %9s %3s %5s %9s %9s %9s %12s %9s %9s %9s %8s %9s\n' profile targets workloads \
    j fmt load_s sched_s write_s decisions/s p50_us p99_us ns/target rss_MiB load_MB/s
echo "[" >"$out"
first=1
for c in $cases; do
    IFS=: read -r prof nt nw j fmt <<EOC
$c
EOC
    fmt=${fmt:-json}
    kind=${prof%-sampled}
    kind=${kind%-full}
    dir="$tmp/state-$kind-$nt-$nw-$fmt"
    [ -d "$dir" ] || "$gen" "$kind" "$dir" "$nt" "$nw" 1 "$fmt"
    cfg="$tmp/$prof.cfg"
    [ "$prof" = gardener ] && cfg="$top/conf/gardener.cfg"
    [ "$prof" = fleet ] && cfg="$top/conf/fleet.cfg"
    now=
    [ "$prof" = fleet ] && now="--now 2026-11-20T12:00:00Z"
    bytes=$(du -sb "$dir" | cut -f1)
    state=$dir dry=--dry-run
    if [ "$prof" = openmcp ] || [ "$prof" = fleet ]; then # written back, on a copy
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
    printf '%-13s %8s %9s %3s %5s %9.3f %9.3f %9.3f %12.0f %9.1f %9.1f %9s %8s %9s\n' "$prof" \
        "$nt" "$nw" "$j" "$fmt" "$load" "$(get schedule_s)" "$(get write_s)" \
        "$(get decisions_per_s)" "$(get p50_us)" "$(get p99_us)" "$nspt" "$rss" "$mbps"
    [ $first -eq 1 ] || echo "," >>"$out"
    first=0
    printf '{"case": "%s", "profile": "%s", "format": "%s", "manifest_bytes": %s, "stats": %s}' \
        "$c" "$prof" "$fmt" "$bytes" "$s" >>"$out"
done
echo "]" >>"$out"
echo "figures written to $out"
