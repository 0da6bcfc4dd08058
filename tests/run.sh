#!/bin/sh
# run.sh - `trellis run` end to end on a temporary state directory: the
# first bindings, a new node that lets an unschedulable pod fit (queueing
# hints), new and deleted files, a pod held back by scheduling gates until
# they are removed, a pod that succeeds and frees its node, a malformed
# file, a failing binding that is forgotten and retried, /healthz /readyz
# /configz /metrics, Events with a count, SIGHUP with a bad and a good config, SIGTERM, and a standby that
# takes over from the active host with every pod bound exactly once, and
# objects a prepare read (a CloudProfile, a Project) changing under it, a
# nominated Pod keeping its room against a lower-priority one. Every
# wait polls with a bound (wait_for); nothing sleeps for a fixed time.
# Also checks the one-shot progress line: shown on a terminal, silent
# otherwise. Run by `make check` with TRELLIS and TRELLIS_PLUGIN_PATH set.
set -u
: "${TRELLIS:?}" "${TOP_SRCDIR:?}" "${JSONMATCH:?}"
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
hosts_setup

http() { curl -s -o "$tmp/body" -w '%{http_code}' "http://127.0.0.1:$port$1"; }
http_is() { [ "$(http "$1")" = "$2" ]; }
metric() { # metric NAME{LABELS}: its value, 0 when absent
    curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m { print $2; f = 1 } END { if (!f) print 0 }'
}
metric_at_least() { v=$(metric "$1"); awk -v v="$v" -v n="$2" 'BEGIN { exit !(v + 0 >= n + 0) }'; }
metric_is() { [ "$(metric "$1")" = "$2" ]; }
bound_to() { # bound_to FILE POD NODE: the pod's document in FILE names NODE
    awk -v pod="$2" -v node="$3" '
        /^---/ { inpod = 0 }
        $1 == "name:" && $2 == pod { inpod = 1 }
        inpod && $1 == "nodeName:" && $2 == node { found = 1 }
        END { exit !found }' "$1"
}

# conf/kube.cfg, with every cycle's plugin calls timed (kube-scheduler
# times a tenth of them: too few to count on in a handful of cycles)
cfg="$tmp/kube.cfg"
{ cat "$TOP_SRCDIR/conf/kube.cfg"; echo 'http = { plugin_metrics_sample_percent = 100; };'; } >"$cfg"
st="$tmp/state"
cp -r "$TOP_SRCDIR/examples/kube" "$st"

# ---- one host: bindings, changes, HTTP ----
start a "$st" "$cfg"
check "run serves HTTP on the address --listen gives" test -n "$port"
check "/healthz answers ok" http_is /healthz 200
check "/readyz turns ready once the store is read" wait_for 20 http_is /readyz 200
check "pending pods are bound (payments-0 after a preemption)" \
    wait_for 20 bound_to "$st/critical.yaml" payments-0 worker-a
check "web pods are bound" wait_for 20 bound_to "$st/shop.yaml" web-5d8f7c-abcde worker-b
check "search-indexer-0 does not fit anywhere yet" \
    grep -q "search-indexer-0: unschedulable: 0/4 targets are available" "$tmp/a.log"
check "/metrics: it waits in the unschedulable queue" \
    wait_for 20 metric_at_least 'scheduler_pending_pods{queue="unschedulable"}' 1
check "/metrics counts it under the plugin that rejected it" \
    wait_for 20 metric_at_least 'scheduler_unschedulable_pods{plugin="node-resources-fit",profile="default-scheduler"}' 1
check "/metrics: the preemption for payments-0 is counted, with its victims" \
    sh -c "curl -s http://127.0.0.1:$port/metrics | grep -q '^scheduler_preemption_attempts_total [1-9]' &&
           curl -s http://127.0.0.1:$port/metrics | grep -q '^scheduler_preemption_victims_count [1-9]'"

cat >"$st/big.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata:
  name: big-1
  labels:
    kubernetes.io/hostname: big-1
status:
  allocatable:
    cpu: "16"
    memory: 256Gi
    pods: "110"
Y
check "a new node lets the unschedulable pod fit: it is bound there" \
    wait_for 20 bound_to "$st/shop.yaml" search-indexer-0 big-1

mkdir -p "$st/team"
cat >"$st/team/new.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata:
  name: late-arrival
  namespace: team
spec:
  containers:
    - name: app
      image: registry.example.com/app:1
      resources:
        requests:
          cpu: 100m
          memory: 64Mi
Y
check "a pod in a new subdirectory is bound" \
    wait_for 20 grep -q "nodeName:" "$st/team/new.yaml"
# a manifest that appears as a link (made complete elsewhere first): a
# link raises no close-after-write, only its creation
mkdir -p "$st/.src"
sed 's/late-arrival/linked-arrival/' "$st/team/new.yaml" | grep -v nodeName >"$st/.src/linked.yaml"
ln -s ../.src/linked.yaml "$st/team/linked.yaml"
check "a pod in a manifest that appears as a link is bound" \
    wait_for 20 grep -q "nodeName:" "$st/.src/linked.yaml"

# scheduling gates (kube's SchedulingGates): held back in the gated queue
# until whoever owns the gate removes it; then the pod is scheduled
gated_pod() { # gated_pod GATES: the pod's manifest, with those gates
    cat <<Y
apiVersion: v1
kind: Pod
metadata:
  name: gated-0
  namespace: team
spec:
  schedulingGates: $1
  containers:
    - name: app
      image: registry.example.com/app:1
      resources:
        requests:
          cpu: 100m
Y
}
gated_pod '[{name: example.com/quota-check}]' >"$tmp/gated.yaml"
mv "$tmp/gated.yaml" "$st/team/gated.yaml"
check "a pod with scheduling gates waits in the gated queue" \
    wait_for 20 metric_at_least 'trellis_pending_workloads{profile="default-scheduler",queue="gated"}' 1
check "a gated pod is not tried: no decision, no binding" \
    sh -c "! grep -q 'gated-0' '$tmp/a.log' && ! grep -q nodeName: '$st/team/gated.yaml'"
gated_pod '[]' >"$tmp/gated.yaml"
mv "$tmp/gated.yaml" "$st/team/gated.yaml"
check "its gates removed, the pod is scheduled and bound" \
    wait_for 20 grep -q "nodeName:" "$st/team/gated.yaml"
check "the gated queue is empty again" \
    wait_for 20 metric_is 'trellis_pending_workloads{profile="default-scheduler",queue="gated"}' 0

# a Pod that runs to its end (phase Succeeded) frees its Node
fin_pod() { # fin_pod NAME PHASE [NODE]
    cat <<Y
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: team
spec:
  ${3:+nodeName: $3}
  nodeSelector: {dedicated: fin}
  tolerations: [{key: dedicated, operator: Equal, value: fin, effect: NoSchedule}]
  containers:
    - name: app
      image: registry.example.com/job:1
      resources:
        requests:
          cpu: "1"
status:
  phase: $2
Y
}
cat >"$tmp/fin-node.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata:
  name: fin-1
  labels: {dedicated: fin}
spec:
  taints: [{key: dedicated, value: fin, effect: NoSchedule}]
status:
  allocatable: {cpu: "1", memory: 4Gi, pods: "110"}
Y
mv "$tmp/fin-node.yaml" "$st/team/fin-node.yaml"
fin_pod fin-job Running fin-1 >"$tmp/fin-job.yaml"
mv "$tmp/fin-job.yaml" "$st/team/fin-job.yaml"
fin_pod fin-next Pending >"$tmp/fin-next.yaml"
mv "$tmp/fin-next.yaml" "$st/team/fin-next.yaml"
check "a Pod waits while a running one fills the Node" \
    wait_for 20 grep -q "fin-next: unschedulable" "$tmp/a.log"
fin_pod fin-job Succeeded fin-1 >"$tmp/fin-job.yaml"
mv "$tmp/fin-job.yaml" "$st/team/fin-job.yaml"
check "the running Pod succeeds: its Node has room, the waiting Pod is bound there" \
    wait_for 20 bound_to "$st/team/fin-next.yaml" fin-next fin-1

# a Pod nominated to a Node keeps its room there (kube's
# RunFilterPluginsWithNominatedPods): nom-high (priority 1000, 6 cpu) is
# nominated to nom-x (8 cpu), where its preemption's victim nom-victim (4
# cpu) is still terminating, so it waits; nom-low (priority 10, 3 cpu)
# would fit nom-x (4 + 3 <= 8, and least-allocated prefers it to nom-y, 3
# cpu, full after), but counted with nom-high there it does not (4 + 6 + 3
# > 8): it goes to nom-y. Once the victim is gone, nom-high lands on nom-x.
cat >"$tmp/nom.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata:
  name: nom-x
  labels: {pool: nom}
status:
  allocatable: {cpu: "8", memory: 64Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata:
  name: nom-y
  labels: {pool: nom}
status:
  allocatable: {cpu: "3", memory: 64Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata:
  name: nom-high
  namespace: team
spec:
  priority: 1000
  nodeSelector: {pool: nom}
  containers:
    - name: app
      image: registry.example.com/app:1
      resources: {requests: {cpu: "6"}}
status:
  phase: Pending
  nominatedNodeName: nom-x
---
apiVersion: v1
kind: Pod
metadata:
  name: nom-low
  namespace: team
spec:
  priority: 10
  nodeSelector: {pool: nom}
  containers:
    - name: app
      image: registry.example.com/app:1
      resources: {requests: {cpu: "3"}}
Y
cat >"$tmp/nom-victim.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata:
  name: nom-victim
  namespace: team
  deletionTimestamp: "2026-01-01T00:00:00Z"
spec:
  priority: 1
  nodeName: nom-x
  nodeSelector: {pool: nom}
  containers:
    - name: app
      image: registry.example.com/app:1
      resources: {requests: {cpu: "4"}}
status:
  phase: Running
  conditions:
    - {type: DisruptionTarget, status: "True", reason: PreemptionByScheduler}
Y
mv "$tmp/nom-victim.yaml" "$st/team/nom-victim.yaml"
mv "$tmp/nom.yaml" "$st/team/nom.yaml"
check "a Pod nominated to a Node waits there while its victim terminates" \
    wait_for 20 grep -q "nom-high: unschedulable" "$tmp/a.log"
check "a lower-priority Pod does not take the nominated Pod's room: it goes elsewhere" \
    wait_for 20 bound_to "$st/team/nom.yaml" nom-low nom-y
rm "$st/team/nom-victim.yaml"
check "the victim gone, the nominated Pod is bound to its Node" \
    wait_for 20 bound_to "$st/team/nom.yaml" nom-high nom-x

printf 'apiVersion: v1\nkind: Pod\nmetadata: [broken\n' >"$st/bad.yaml"
check "a malformed file is reported with its name" wait_for 20 grep -q "bad.yaml:.*skipped" "$tmp/a.log"
cp "$st/bad.yaml" "$tmp/bad.before"
check "the malformed file is left as it was" cmp -s "$st/bad.yaml" "$tmp/bad.before"

rm "$st/big.yaml"
check "a removed file deletes its objects" \
    wait_for 20 metric_at_least 'trellis_store_events_total{type="deleted"}' 1
check "the host is still running after all that" kill -0 "$pid"

check "/metrics counts scheduled attempts" \
    metric_at_least 'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"}' 7
check "/metrics counts unschedulable attempts" \
    metric_at_least 'scheduler_schedule_attempts_total{profile="default-scheduler",result="unschedulable"}' 1
check "/metrics has the binding latency histogram" \
    metric_at_least 'trellis_binding_duration_seconds_count{profile="default-scheduler",result="success"}' 7
check "/metrics has per-extension-point latency" \
    sh -c "curl -s http://127.0.0.1:$port/metrics | grep -q '^scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"Filter\",profile=\"default-scheduler\"'"
check "/metrics has per-plugin latency (preemption at post-filter, the binder at bind, filters and scores)" \
    sh -c "curl -s http://127.0.0.1:$port/metrics | grep '^scheduler_plugin_execution_duration_seconds_count{' >'$tmp/pm' &&
           grep -q 'extension_point=\"PostFilter\",plugin=\"preemption\"' '$tmp/pm' &&
           grep -q 'extension_point=\"Bind\",plugin=\"default-binder\"' '$tmp/pm' &&
           grep -q 'extension_point=\"Filter\",plugin=\"node-resources-fit\"' '$tmp/pm' &&
           grep -q 'extension_point=\"Score\",plugin=\"node-resources-fit\"' '$tmp/pm'"
check "/metrics has the queue sizes" \
    sh -c "curl -s http://127.0.0.1:$port/metrics | grep -q '^trellis_pending_workloads{profile=\"default-scheduler\",queue=\"unschedulable\"}'"
check "/metrics has the queue sizes under kube-scheduler's name" \
    sh -c "curl -s http://127.0.0.1:$port/metrics | grep -q '^scheduler_pending_pods{queue=\"unschedulable\"}'"
check "/metrics counts the pods that entered the queues" \
    metric_at_least 'scheduler_queue_incoming_pods_total{event="PodAdd",queue="active"}' 8
check "/metrics has the scheduling SLI of the bound pods" \
    metric_at_least 'scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"}' 1
check "/metrics has the cache sizes" metric_at_least 'scheduler_scheduler_cache_size{type="nodes"}' 4
check "/metrics has the process's resident memory" metric_at_least 'process_resident_memory_bytes' 1000000
check "/metrics: this host is the leader" metric_at_least 'trellis_leader' 1
http /configz >/dev/null
cat >"$tmp/want-configz.json" <<'J'
{ "profiles": [ { "name": "default-scheduler", "percentage_of_targets_to_score": 0,
  "workload": { "kind": "Pod" }, "target": { "kind": "Node" } } ] }
J
check "/configz is the effective config as JSON" "$JSONMATCH" "$tmp/want-configz.json" "$tmp/body"
cat >"$tmp/want-overrides.json" <<J
{ "store": { "path": "$st" }, "http": { "enabled": true, "address": "127.0.0.1", "port": $port },
  "command_line": { "state": "$st", "listen": "127.0.0.1:0" },
  "log": { "level": "info", "format": "text" } }
J
check "/configz shows the command line's overrides in force: --state, --listen and its port" \
    "$JSONMATCH" "$tmp/want-overrides.json" "$tmp/body"
check "/configz lists where plugins are looked for, TRELLIS_PLUGIN_PATH first" \
    sh -c "tr -d ' \n' <'$tmp/body' | grep -q '\"plugin_search_path\":\[\"${TRELLIS_PLUGIN_PATH%%:*}\"'"
check "an unknown path is 404" http_is /nope 404

# SIGHUP: a config that does not load leaves the running one in force
cp "$cfg" "$tmp/live.cfg"
# what the host logged before it was told to stop: a binding that lost a
# race with the host's own write of the same object (its nomination) is
# refused as changed since it was read and done again, as an API server's
# conflict is; the check below is about the bindings in flight at SIGTERM
before_term=$(wc -l <"$tmp/a.log")
kill -TERM "$pid"
check "SIGTERM: the host exits" wait_for 20 stopped "$pid"
wait "$pid"
check "SIGTERM: exit status 0" test $? -eq 0
# (on a failure, the bindings that failed go to the test's log)
check "SIGTERM: the bindings in flight were finished" sh -c \
    "tail -n +$((before_term + 1)) '$tmp/a.log' >'$tmp/a-after-term.log' &&
     grep -q 'bound [0-9]* workload(s)' '$tmp/a-after-term.log' &&
     ! grep 'binding to .* failed' '$tmp/a-after-term.log' >&2"

start b "$st" "$tmp/live.cfg"
wait_for 20 http_is /readyz 200
printf 'profiles = ( { name = "x"; plugins = ( { name = "no-such-plugin"; } ); } );\n' >"$tmp/live.cfg"
kill -HUP "$pid"
check "SIGHUP with a bad config: the error is logged" \
    wait_for 20 grep -q "reload: .*the running config stays in force" "$tmp/b.log"
check "SIGHUP with a bad config: a failed reload is counted" \
    metric_at_least 'trellis_config_reloads_total{result="failure"}' 1
cat >"$st/team/after-bad-reload.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: { name: after-bad-reload, namespace: team }
spec: { containers: [ { name: c, image: app } ] }
Y
check "after a bad reload the old config still schedules" \
    wait_for 20 grep -q "nodeName" "$st/team/after-bad-reload.yaml"
cp "$cfg" "$tmp/live.cfg"
kill -HUP "$pid"
check "SIGHUP with a good config: it is in force" wait_for 20 grep -q "reload: .* is in force" "$tmp/b.log"
check "SIGHUP with a good config: counted" \
    wait_for 20 metric_at_least 'trellis_config_reloads_total{result="success"}' 1
kill -TERM "$pid"
wait_for 20 stopped "$pid"

# ---- a bind that fails is forgotten and retried with backoff ----
cat >"$tmp/badbind.cfg" <<'CFG'
profiles = ( {
  name = "default-scheduler"; default = true;
  workload = { kind = "Pod"; scheduler_name_field = "spec.schedulerName"; };
  target = { kind = "Node"; };
  binding = { field = "spec.nodeName"; };
  events = true;
  backoff = { initial_ms = 50; max_ms = 200; };
  plugins = ( { name = "resources-fit"; },
              { name = "default-binder"; args = { field = "metadata.name.x"; }; } );
} );
CFG
mkdir -p "$tmp/s2"
cat >"$tmp/s2/all.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata: { name: n1 }
status: { allocatable: { cpu: "4", memory: 8Gi, pods: "10" } }
---
apiVersion: v1
kind: Pod
metadata: { name: p1, namespace: default }
spec: { containers: [ { name: c, image: app, resources: { requests: { cpu: "8" } } } ] }
---
apiVersion: v1
kind: Pod
metadata: { name: p2, namespace: default }
spec: { containers: [ { name: c, image: app } ] }
Y
start c "$tmp/s2" "$tmp/badbind.cfg"
check "a failing bind is logged" wait_for 20 grep -q "p2: binding to n1 failed" "$tmp/c.log"
check "a failing bind is retried (bind errors counted more than once)" \
    wait_for 20 metric_at_least 'trellis_bind_errors_total{profile="default-scheduler"}' 2
check "the failed assumption is forgotten (nothing stays assumed)" \
    wait_for 20 metric_at_least 'scheduler_scheduler_cache_size{type="pods"}' 0
check "an unschedulable pod gets a FailedScheduling Event" \
    wait_for 20 sh -c "grep -l '\"FailedScheduling\"' '$tmp/s2/events/'*.json"
ev=$(grep -l '"FailedScheduling"' "$tmp/s2/events/"*.json | head -n 1)
check "the Event names the pod and the reason per target" \
    grep -q '"trellis.io/reasons": "n1=InsufficientResources"' "$ev"
# a change to the pod requeues it; the same failure again counts on the same Event
sed 's/image: app, resources/image: app2, resources/' "$tmp/s2/all.yaml" >"$tmp/all.new"
mv "$tmp/all.new" "$tmp/s2/all.yaml"
check "a repeated event increments its count" wait_for 20 grep -q '"count": 2' "$ev"
check "one Event file for the repeated failure" \
    test "$(grep -l '"FailedScheduling"' "$tmp/s2/events/"*.json | wc -l)" -eq 1
kill -TERM "$pid"
wait_for 20 stopped "$pid"

# ---- the clock: a verdict that expires by itself is tried again then ----
# fx-lease rejects n1 until its usable-from time, 2 s after the --now the
# host starts at, and asks for a retry then: with no change to any object
# the pod is bound once the host's clock (started at --now) passes it.
cat >"$tmp/lease.cfg" <<'CFG'
profiles = ( {
  name = "default-scheduler"; default = true;
  workload = { kind = "Pod"; scheduler_name_field = "spec.schedulerName"; };
  target = { kind = "Node"; };
  binding = { field = "spec.nodeName"; };
  plugins = ( { name = "fx-lease"; }, { name = "default-binder"; } );
} );
CFG
mkdir -p "$tmp/s4"
cat >"$tmp/s4/all.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata: { name: n1, annotations: { fx.trellis.io/usable-from: "2026-01-01T00:00:02Z" } }
---
apiVersion: v1
kind: Pod
metadata: { name: p1, namespace: default }
spec: { containers: [ { name: c, image: app } ] }
Y
start d "$tmp/s4" "$tmp/lease.cfg" "--now 2026-01-01T00:00:00Z"
check "a pod rejected until a time is unschedulable first" \
    wait_for 20 grep -q "p1: unschedulable: .*NotYetUsable" "$tmp/d.log"
check "and bound once the clock passes that time, with nothing changed" \
    wait_for 20 grep -q "nodeName: n1" "$tmp/s4/all.yaml"
check "/configz shows the --now the host started at" \
    sh -c "curl -s http://127.0.0.1:$port/configz | grep -q '\"now\": \"2026-01-01T00:00:00Z\"'"
kill -TERM "$pid"
wait_for 20 stopped "$pid"

# ---- what a prepare read: a changed CloudProfile takes effect ----
# gardener-seed-selector reads the shoot's CloudProfile when it prepares the
# shoot. The profile's seedSelector wants environment=live and the only seed
# is staging: unschedulable. Once the CloudProfile accepts staging the shoot
# is prepared again (it read the CloudProfile) and placed; before, it kept
# the selector it had compiled and failed for ever.
cat >"$tmp/garden.cfg" <<'CFG'
profiles = ( {
  name = "gardener-shoot-scheduler"; default = true;
  workload = { kind = "Shoot"; scheduler_name_field = "spec.schedulerName"; };
  target = { kind = "Seed"; };
  binding = { field = "spec.seedName"; };
  backoff = { initial_ms = 50; max_ms = 200; };
  plugins = ( { name = "gardener-seed-selector"; }, { name = "default-binder"; } );
} );
CFG
mkdir -p "$tmp/s5"
cat >"$tmp/s5/seed.yaml" <<'Y'
apiVersion: core.gardener.cloud/v1beta1
kind: Seed
metadata: { name: stage-1, labels: { environment: staging } }
spec: { provider: { type: aws, region: eu-west-1 } }
---
apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata: { name: web, namespace: garden-shop }
spec: { cloudProfileName: aws, provider: { type: aws }, region: eu-west-1 }
Y
cat >"$tmp/s5/profile.yaml" <<'Y'
apiVersion: core.gardener.cloud/v1beta1
kind: CloudProfile
metadata: { name: aws }
spec: { type: aws, seedSelector: { matchLabels: { environment: live } } }
Y
start e "$tmp/s5" "$tmp/garden.cfg"
check "a shoot its CloudProfile keeps from the only seed is unschedulable" \
    wait_for 20 grep -q "garden-shop/web: unschedulable" "$tmp/e.log"
sed 's/environment: live/environment: staging/' "$tmp/s5/profile.yaml" >"$tmp/profile.new"
mv "$tmp/profile.new" "$tmp/s5/profile.yaml"
check "after the CloudProfile accepts the seed, the shoot is prepared again and placed" \
    wait_for 20 grep -q "seedName: stage-1" "$tmp/s5/seed.yaml"
kill -TERM "$pid"
wait_for 20 stopped "$pid"

# ---- the same for a Project: current Gardener's project lookup ----
# gardener-dns with project = "object" finds a shoot's project as the
# Project whose spec.namespace is the shoot's namespace. With none the shoot
# is an error; once a Project claims the namespace the shoot is prepared
# again (it walked the Projects) and placed under that project's domain.
cat >"$tmp/project.cfg" <<'CFG'
profiles = ( {
  name = "gardener-shoot-scheduler"; default = true;
  workload = { kind = "Shoot"; scheduler_name_field = "spec.schedulerName"; };
  target = { kind = "Seed"; };
  binding = { field = "spec.seedName"; };
  backoff = { initial_ms = 50; max_ms = 200; };
  plugins = ( { name = "gardener-dns"; args = { mode = "current"; project = "object"; }; },
              { name = "default-binder"; } );
} );
CFG
mkdir -p "$tmp/s6"
cat >"$tmp/s6/seed.yaml" <<'Y'
apiVersion: core.gardener.cloud/v1beta1
kind: Seed
metadata: { name: seed-1 }
spec: { provider: { type: aws, region: eu-west-1 }, dns: { defaults: [ { domain: example.com } ] } }
---
apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata: { name: web, namespace: team-space }
spec: { provider: { type: aws }, region: eu-west-1, dns: { domain: web.beta.example.com } }
Y
start f "$tmp/s6" "$tmp/project.cfg"
check "a shoot whose namespace no Project claims is an error" \
    wait_for 20 grep -q "Shoot team-space/web: plugin gardener-dns: no Project has spec.namespace 'team-space'" "$tmp/f.log"
cat >"$tmp/project.new" <<'Y'
apiVersion: core.gardener.cloud/v1beta1
kind: Project
metadata: { name: beta }
spec: { namespace: team-space }
Y
mv "$tmp/project.new" "$tmp/s6/project.yaml"
check "once Project beta claims the namespace, the shoot is prepared again and placed" \
    wait_for 20 grep -q "seedName: seed-1" "$tmp/s6/seed.yaml"
kill -TERM "$pid"
wait_for 20 stopped "$pid"

# ---- finalize in a running host: written at once ----
# fx-writes' finalize removes the finalizer a request put on its Cluster.
# The request is marked deleted while the host runs and nothing else is
# bound: the host must write the removal without waiting for a binding.
cat >"$tmp/fin.cfg" <<'CFG'
profiles = ( {
  name = "cluster-scheduler"; default = true;
  workload = { kind = "ClusterRequest"; };
  target = { kind = "Cluster"; };
  binding = { field = "spec.cluster"; };
  plugins = ( { name = "fx-writes"; }, { name = "default-binder"; } );
} );
CFG
mkdir -p "$tmp/s6"
cat >"$tmp/s6/cluster.yaml" <<'Y'
apiVersion: clusters.openmcp.cloud/v1alpha1
kind: Cluster
metadata: { name: c1, namespace: team-a, finalizers: [keep.io/x, fx.trellis.io/team-a.r1] }
Y
cat >"$tmp/s6/request.yaml" <<'Y'
apiVersion: clusters.openmcp.cloud/v1alpha1
kind: ClusterRequest
metadata: { name: r1, namespace: team-a }
spec: { cluster: team-a/c1 }
Y
start f "$tmp/s6" "$tmp/fin.cfg"
check "the host reading a bound request is ready" wait_for 20 http_is /readyz 200
sed 's/namespace: team-a }/namespace: team-a, deletionTimestamp: "2026-01-01T00:00:00Z" }/' \
    "$tmp/s6/request.yaml" >"$tmp/request.new"
mv "$tmp/request.new" "$tmp/s6/request.yaml"
check "a request marked deleted has its finalizer taken off its Cluster at once" \
    wait_for 20 sh -c "! grep -q 'fx.trellis.io/team-a.r1' '$tmp/s6/cluster.yaml'"
check "the Cluster's other finalizer stays" grep -q "keep.io/x" "$tmp/s6/cluster.yaml"
# what a plugin creates while the host runs is in the host's view: r2's
# reserve creates ConfigMap r2-info; once r2 is marked deleted, finalize
# finds it (lookup_object) and deletes it
cat >"$tmp/s6/request2.yaml" <<'Y'
apiVersion: clusters.openmcp.cloud/v1alpha1
kind: ClusterRequest
metadata: { name: r2, namespace: team-a, annotations: { fx.trellis.io/create: r2-info } }
spec: { purpose: mcp }
Y
check "a new request is placed and its ConfigMap created" \
    wait_for 20 test -f "$tmp/s6/configmap-team-a-r2-info.json"
sed 's/name: r2, namespace: team-a,/name: r2, namespace: team-a, deletionTimestamp: "2026-01-01T00:00:00Z",/' \
    "$tmp/s6/request2.yaml" >"$tmp/request2.new"
mv "$tmp/request2.new" "$tmp/s6/request2.yaml"
check "marked deleted, the request's ConfigMap (created in this run) is deleted" \
    wait_for 20 test ! -e "$tmp/s6/configmap-team-a-r2-info.json"
kill -TERM "$pid"
wait_for 20 stopped "$pid"

# ---- binding objects, reconciled: targets added, bindings released ----
# One ClusterResourceBinding per (placement, cluster). crp-two wants two
# clusters, crp-all every one (fx-want). A cluster added later goes to
# crp-all only: crp-two holds what it wants. A binding of crp-two set to
# Unscheduled by someone else: crp-two wants another cluster, and m1 (the
# first by name, no longer held) is picked again: its binding object is
# set to Scheduled again, not created anew.
cat >"$tmp/fleet.cfg" <<'CFG'
profiles = ( {
  name = "fleet"; default = true;
  workload = { kind = "ClusterResourcePlacement"; };
  target = { kind = "MemberCluster"; };
  binding = { model = "object";
    object = { kind = "ClusterResourceBinding";
      workload_field = "metadata.labels[\"kubernetes-fleet.io/parent-CRP\"]";
      target_field = "spec.targetCluster"; state_field = "spec.state";
      placed_states = [ "Scheduled", "Bound" ]; initial_state = "Scheduled";
      release_state = "Unscheduled"; }; };
  reconcile = true;
  backoff = { initial_ms = 1; max_ms = 50; };
  plugins = ( { name = "fx-want"; }, { name = "default-binder"; } );
} );
CFG
mkdir -p "$tmp/s7"
for m in m1 m2 m3; do
    printf 'apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata: { name: %s }\n' \
        "$m" >"$tmp/s7/member-$m.yaml"
done
cat >"$tmp/s7/crps.yaml" <<'Y'
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: { name: crp-two }
spec: { count: 2 }
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: { name: crp-all }
spec: { count: All }
Y
b="$tmp/s7/clusterresourcebinding"
start g "$tmp/s7" "$tmp/fleet.cfg"
check "crp-two is placed on two clusters" \
    wait_for 20 sh -c "test -f '$b-crp-two-m1.json' && test -f '$b-crp-two-m2.json'"
check "crp-all is placed on all three" wait_for 20 sh -c \
    "test -f '$b-crp-all-m1.json' && test -f '$b-crp-all-m2.json' && test -f '$b-crp-all-m3.json'"
printf 'apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata: { name: m4 }\n' \
    >"$tmp/s7/member-m4.yaml"
check "a cluster added later is taken by crp-all" wait_for 20 test -f "$b-crp-all-m4.json"
check "... and not by crp-two, which holds what it wants" test ! -e "$b-crp-two-m3.json" -a ! -e "$b-crp-two-m4.json"
sed 's/"Scheduled"/"Unscheduled"/' "$b-crp-two-m1.json" >"$tmp/unsched.json"
mv "$tmp/unsched.json" "$b-crp-two-m1.json"
check "a binding of crp-two no longer placing: crp-two is placed again" \
    wait_for 20 grep -q '"state": "Scheduled"' "$b-crp-two-m1.json"
check "... through that binding object, and on no other cluster" \
    test ! -e "$b-crp-two-m3.json" -a ! -e "$b-crp-two-m4.json"
kill -TERM "$pid"
wait_for 20 stopped "$pid"

# ---- standby takes over; every pod bound exactly once ----
mkdir -p "$tmp/s3"
cat >"$tmp/s3/nodes.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata: { name: n1 }
status: { allocatable: { cpu: "64", memory: 256Gi, pods: "200" } }
---
apiVersion: v1
kind: Node
metadata: { name: n2 }
status: { allocatable: { cpu: "64", memory: 256Gi, pods: "200" } }
Y
add_pods() { # add_pods FROM TO: one file per pod
    i=$1
    while [ "$i" -le "$2" ]; do
        printf 'apiVersion: v1\nkind: Pod\nmetadata: { name: p%d, namespace: default }\nspec: { containers: [ { name: c, image: app, resources: { requests: { cpu: 100m } } } ] }\n' \
            "$i" >"$tmp/s3/p$i.yaml"
        i=$((i + 1))
    done
}
all_bound() { [ "$(grep -l nodeName "$tmp/s3"/p*.yaml | wc -l)" -eq "$1" ]; }
add_pods 1 40
start active "$tmp/s3" "$cfg"
pa=$pid
check "the active host binds the first pods" wait_for 30 all_bound 40
start standby "$tmp/s3" "$cfg"
pb=$pid
check "a second host on the same state waits as a standby" \
    wait_for 20 grep -q "standby: .*held by pid $pa" "$tmp/standby.log"
check "the standby is alive but not ready" http_is /readyz 503
check "the standby reports itself as not the leader" metric_at_least 'trellis_leader' 0
add_pods 41 80
kill -TERM "$pa"
check "the active host exits on SIGTERM" wait_for 20 stopped "$pa"
check "the standby takes over the lock" wait_for 20 grep -q "took over the state lock" "$tmp/standby.log"
check "the standby becomes ready" wait_for 20 http_is /readyz 200
add_pods 81 100
check "every pod is bound after the takeover" wait_for 30 all_bound 100
cat "$tmp/active.log" "$tmp/standby.log" | sed -n 's/.* Pod \(default\/p[0-9]*\): bound to .*/\1/p' |
    sort | uniq -c | awk '$1 != 1' >"$tmp/twice"
check "no pod was bound twice (by one host or both)" test ! -s "$tmp/twice"
check "each pod file holds exactly one binding" \
    sh -c "for f in '$tmp/s3'/p*.yaml; do [ \$(grep -c nodeName \"\$f\") -eq 1 ] || exit 1; done"
kill -TERM "$pb"
check "the new active host exits on SIGTERM" wait_for 20 stopped "$pb"

# ---- one-shot progress: on a terminal only ----
"$TOP_BUILDDIR/contrib/trellis-gen" kube "$tmp/gen" 20 600 3 >/dev/null 2>&1
if [ -d "$tmp/gen" ] && command -v script >/dev/null 2>&1; then
    script -qec "'$TRELLIS' schedule -c '$cfg' -s '$tmp/gen' --dry-run -o json >/dev/null" \
        "$tmp/typescript" >/dev/null 2>&1
    check "on a terminal, schedule shows progress (done/total, rate)" \
        grep -q "600/600 workloads, [0-9]*/s" "$tmp/typescript"
    "$TRELLIS" schedule -c "$cfg" -s "$tmp/gen" --dry-run -o json >/dev/null 2>"$tmp/quiet"
    check "off a terminal, schedule prints no progress" sh -c "! grep -q 'workloads,' '$tmp/quiet'"
else
    not_ok "progress: trellis-gen or script(1) missing"
fi

# ---- objects that move: between files, with their directory ----
cp -r "$TOP_SRCDIR/examples/kube" "$tmp/s-mv"
start mv "$tmp/s-mv" "$cfg"
check "moves: the host is ready" wait_for 20 http_is /readyz 200
# each probe is pinned to the node it is about (its hostname label), so
# where the example's pending pods land does not matter; the nodes have
# room for them too
probe() { # probe NAME CPU NODE: a pending pod asking for CPU cores on NODE
    printf 'apiVersion: v1\nkind: Pod\nmetadata: { name: %s, namespace: team }\nspec: { nodeSelector: { kubernetes.io/hostname: %s }, containers: [ { name: c, image: app, resources: { requests: { cpu: "%s" } } } ] }\n' "$1" "$3" "$2"
}
node() { # node NAME CPU
    printf 'apiVersion: v1\nkind: Node\nmetadata: { name: %s, labels: { kubernetes.io/hostname: %s } }\nstatus: { allocatable: { cpu: "%s", memory: 64Gi, pods: "110" } }\n' "$1" "$1" "$2"
}
node mover 200 >"$tmp/s-mv/a.yaml"
probe p-a 90 mover >"$tmp/s-mv/p-a.yaml"
check "moves: a pod for the big node is bound to it" wait_for 20 grep -q "nodeName: mover" "$tmp/s-mv/p-a.yaml"
# the node written into a second file (ignored there: defined twice),
# then taken out of the first: the second's definition is the node now
node mover 200 >"$tmp/s-mv/b.yaml"
check "moves: the second definition is ignored while the first stands" \
    wait_for 20 grep -q "b.yaml:1: .*Node mover is defined twice" "$tmp/mv.log"
echo '# emptied' >"$tmp/s-mv/a.yaml"
probe p-b 20 mover >"$tmp/s-mv/p-b.yaml"
check "moves: a node moved to another file is still there" \
    wait_for 20 grep -q "nodeName: mover" "$tmp/s-mv/p-b.yaml"
# a directory renamed: what it holds is read under its new name, and a
# file written there later is seen
mkdir "$tmp/s-mv/sub"
node sub-node 200 >"$tmp/s-mv/sub/n.yaml"
probe p-c 150 sub-node >"$tmp/s-mv/p-c.yaml"
check "moves: a node in a subdirectory takes a pod" wait_for 20 grep -q "nodeName: sub-node" "$tmp/s-mv/p-c.yaml"
mv "$tmp/s-mv/sub" "$tmp/s-mv/sub2"
probe p-d 30 sub-node >"$tmp/s-mv/sub2/p-d.yaml"
check "moves: a pod written into the renamed directory is bound, to the node read there" \
    wait_for 20 grep -q "nodeName: sub-node" "$tmp/s-mv/sub2/p-d.yaml"
# a directory moved out and a file of its name put in its place: what the
# directory held is gone
mkdir "$tmp/z.yaml" # made whole, then moved in: a directory named like a manifest
node ghost 300 >"$tmp/z.yaml/n.yaml"
mv "$tmp/z.yaml" "$tmp/s-mv/z.yaml"
probe p-f 250 ghost >"$tmp/s-mv/p-f.yaml"
check "moves: a node in a directory named like a manifest takes a pod" \
    wait_for 20 grep -q "nodeName: ghost" "$tmp/s-mv/p-f.yaml"
kill -STOP "$pid"
mv "$tmp/s-mv/z.yaml" "$tmp/aside"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: cm, namespace: team }\n' >"$tmp/s-mv/z.yaml"
kill -CONT "$pid"
probe p-g 10 ghost >"$tmp/s-mv/p-g.yaml"
check "moves: a directory replaced by a file: its node is gone" \
    wait_for 20 grep -q "team/p-g: unschedulable" "$tmp/mv.log"
check "moves: ... not bound to the ghost" sh -c "! grep -q nodeName '$tmp/s-mv/p-g.yaml'"
# the idiom that replaces a directory, in one batch of changes: the new
# name comes before the old one
mkdir "$tmp/s-mv/A" "$tmp/s-mv/B"
node a-node 500 >"$tmp/s-mv/A/n.yaml"
probe p-h 450 a-node >"$tmp/s-mv/p-h.yaml"
check "moves: a node in A takes a pod" wait_for 20 grep -q "nodeName: a-node" "$tmp/s-mv/p-h.yaml"
kill -STOP "$pid"
rm -rf "$tmp/s-mv/B" && mv "$tmp/s-mv/A" "$tmp/s-mv/B"
kill -CONT "$pid"
probe p-i 30 a-node >"$tmp/s-mv/B/p-i.yaml"
check "moves: rm -rf B && mv A B: B's node is known, and B watched" \
    wait_for 20 grep -q "nodeName: a-node" "$tmp/s-mv/B/p-i.yaml"
# a manifest that appears as a hard link
mkdir -p "$tmp/s-mv/.src"
probe p-j 1 a-node >"$tmp/s-mv/.src/p-j.yaml"
ln "$tmp/s-mv/.src/p-j.yaml" "$tmp/s-mv/p-j.yaml"
check "moves: a pod in a manifest that appears as a hard link is bound" \
    wait_for 20 grep -q "nodeName" "$tmp/s-mv/p-j.yaml"
kill -TERM "$pid"
wait_for 20 stopped "$pid"

# ---- the state directory away for a moment: waited for, not fatal ----
cp -r "$TOP_SRCDIR/examples/kube" "$tmp/s-away"
start away "$tmp/s-away" "$cfg"
check "away: the host is ready" wait_for 20 http_is /readyz 200
mv "$tmp/s-away" "$tmp/s-away.moved"
kill -HUP "$pid"
check "away: SIGHUP while the state is gone keeps the running config" \
    wait_for 20 grep -q "reload: .*s-away: No such file or directory; the running config stays in force" "$tmp/away.log"
check "away: the host steps down and waits for the state" \
    wait_for 20 grep -q "the store is not ready" "$tmp/away.log"
mv "$tmp/s-away.moved" "$tmp/s-away"
cat >"$tmp/s-away/back.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: { name: back, namespace: team }
spec: { containers: [ { name: c, image: app } ] }
Y
check "away: when it is back, the host leads again and schedules" \
    wait_for 30 grep -q "nodeName" "$tmp/s-away/back.yaml"
check "away: the host is still running" kill -0 "$pid"
kill -TERM "$pid"
wait_for 20 stopped "$pid"

# ---- SIGTERM amid bindings: the last line counts those it finished ----
if [ -d "$tmp/gen" ]; then
    start many "$tmp/gen" "$cfg"
    check "many: the first pods are bound" wait_for 20 grep -q ": bound to" "$tmp/many.log"
    kill -TERM "$pid"
    check "many: SIGTERM ends the host" wait_for 60 stopped "$pid"
    said=$(sed -n 's/.*bound \([0-9]*\) workload(s);.*/\1/p' "$tmp/many.log" | tail -n 1)
    check "many: the last line counts every binding it logged, those in flight at SIGTERM too" \
        test "${said:-none}" = "$(grep -c ': bound to' "$tmp/many.log")"
fi

# ---- the summary line a long run logs (every summary_interval_ms) ----
{ echo 'summary_interval_ms = 200;'; cat "$cfg"; } >"$tmp/summary.cfg"
cp -r "$TOP_SRCDIR/examples/kube" "$tmp/s-summary"
start sum "$tmp/s-summary" "$tmp/summary.cfg"
check "run logs a summary line: bound, rate, unschedulable, queue sizes" \
    wait_for 20 grep -q 'info summary: [1-9][0-9]* bound ([0-9.]*/s over the last [0-9]* s), [0-9]* unschedulable and 0 error attempts; queues: [0-9]* active, [0-9]* backoff, [1-9][0-9]* unschedulable, [0-9]* gated$' "$tmp/sum.log"
check "and logs it again after the interval" \
    wait_for 20 sh -c "[ \$(grep -c 'info summary:' '$tmp/sum.log') -ge 2 ]"
kill -TERM "$pid"
wait_for 20 stopped "$pid"
# at the default log level (warn) too: a journal shows progress without
# every info line; the interval is the config's, polled with a bound
cp -r "$TOP_SRCDIR/examples/kube" "$tmp/s-summary2"
"$TRELLIS" run -c "$tmp/summary.cfg" -s "$tmp/s-summary2" --listen 127.0.0.1:0 \
    >"$tmp/sum2.out" 2>"$tmp/sum2.log" &
pid=$!
pids="$pids $pid"
check "at the default log level the summary line is logged (as info)" \
    wait_for 20 grep -q 'info summary: [0-9]* bound ([0-9.]*/s over the last [0-9]* s), [0-9]* unschedulable and 0 error attempts; queues: [0-9]* active, [0-9]* backoff, [0-9]* unschedulable, [0-9]* gated$' "$tmp/sum2.log"
check "and no other info line" sh -c "! grep -v 'info summary:' '$tmp/sum2.log' | grep -q ' info '"
kill -TERM "$pid"
wait_for 20 stopped "$pid"
# --log-level error hides it; a summary_interval_ms of 0 turns it off
{ echo 'summary_interval_ms = 0;'; cat "$cfg"; } >"$tmp/nosummary.cfg"
cp -r "$TOP_SRCDIR/examples/kube" "$tmp/s-summary3"
start nosum "$tmp/s-summary3" "$tmp/nosummary.cfg"
check "summary_interval_ms = 0: the host runs" test -n "$port"
check "... and has scheduled what it could" \
    wait_for 20 metric_at_least 'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"}' 1
check "... without a summary line" sh -c "! grep -q 'summary:' '$tmp/nosum.log'"
kill -TERM "$pid"
wait_for 20 stopped "$pid"

# ---- more changes at once than inotify queues: the state read again ----
cp -r "$TOP_SRCDIR/examples/kube" "$tmp/s-ovf"
start ovf "$tmp/s-ovf" "$cfg"
check "overflow: the host is ready" wait_for 20 http_is /readyz 200
queued=$(cat /proc/sys/fs/inotify/max_queued_events 2>/dev/null || echo 16384)
mkdir "$tmp/s-ovf/noise"
cat >"$tmp/s-ovf/noise/watched.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: { name: watched, namespace: team }
spec: { containers: [ { name: c, image: app } ] }
Y
check "overflow: a new directory is watched" wait_for 20 grep -q "nodeName" "$tmp/s-ovf/noise/watched.yaml"
mkdir "$tmp/s-ovf/sub"
printf 'apiVersion: v1\nkind: Node\nmetadata: { name: sub-node, labels: { kubernetes.io/hostname: sub-node } }\nstatus: { allocatable: { cpu: "64", memory: 64Gi, pods: "110" } }\n' >"$tmp/s-ovf/sub/n.yaml"
# known: a probe that only it can take is bound to it (where the
# example's pending pods land is theirs to decide)
printf 'apiVersion: v1\nkind: Pod\nmetadata: { name: on-sub, namespace: team }\nspec: { nodeSelector: { kubernetes.io/hostname: sub-node }, containers: [ { name: c, image: app } ] }\n' >"$tmp/s-ovf/on-sub.yaml"
check "overflow: a node in a subdirectory is known" wait_for 20 grep -q "nodeName: sub-node" "$tmp/s-ovf/on-sub.yaml"
kill -STOP "$pid"
# each empty file is two events or more (created, closed after writing):
# the queue overflows while the host is stopped, and the pod's file is
# lost in it
mv "$tmp/s-ovf/sub" "$tmp/s-ovf/sub2" # renamed while the events are lost
(cd "$tmp/s-ovf/noise" && seq 1 $((queued / 2 + 64)) | xargs touch)
cat >"$tmp/s-ovf/after-overflow.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: { name: after-overflow, namespace: team }
spec: { containers: [ { name: c, image: app } ] }
Y
kill -CONT "$pid"
check "overflow: said, and the whole state read again" \
    wait_for 20 grep -q "more changes at once than inotify queues.*reading the whole state again" "$tmp/ovf.log"
check "overflow: the pod whose file came in the flood is bound" \
    wait_for 20 grep -q "nodeName" "$tmp/s-ovf/after-overflow.yaml"
printf 'apiVersion: v1\nkind: Pod\nmetadata: { name: in-sub2, namespace: team }\nspec: { nodeSelector: { kubernetes.io/hostname: sub-node }, containers: [ { name: c, image: app, resources: { requests: { cpu: "20" } } } ] }\n' >"$tmp/s-ovf/sub2/p.yaml"
check "overflow: a directory renamed meanwhile is watched under its new name" \
    wait_for 20 grep -q "nodeName: sub-node" "$tmp/s-ovf/sub2/p.yaml"
kill -TERM "$pid"
wait_for 20 stopped "$pid"

# ---- the default config (the systemd unit: tests/install.sh) ----
check "conf/trellis.cfg is a valid config" "$TRELLIS" validate "$TOP_SRCDIR/conf/trellis.cfg"

finish
