#!/bin/sh
# fleet.sh - the Fleet profile as an operator meets it: conf/fleet.cfg and
# examples/fleet are the ones the scenario fleet-example works out by hand
# (kept the same here), `trellis validate` of the profile, `trellis
# explain` of a placement, and `trellis run` on the bundled fleet while
# it changes: a placement scaled out, a binding deleted, its policy
# changed, a member cluster removed, a heartbeat that changes nothing. The
# ClusterResourceBinding files follow KubeFleet's rules at every step.
# Every wait polls with a bound (wait_for). Run by `make check` with
# TRELLIS and TRELLIS_PLUGIN_PATH set.
set -u
: "${TRELLIS:?}" "${TOP_SRCDIR:?}"
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
hosts_setup

cfg="$TOP_SRCDIR/conf/fleet.cfg"
scenario="$TOP_SRCDIR/tests/scenarios/fleet-example"
now=$(cat "$TOP_SRCDIR/examples/fleet/args")

# ---- the example and the scenario are one ----
check "examples/fleet is the state of the scenario fleet-example" \
    diff -r -x args "$TOP_SRCDIR/examples/fleet" "$scenario/state"
check "the scenario runs at the example's clock" diff "$TOP_SRCDIR/examples/fleet/args" "$scenario/args"
# the profile, without comments and blank lines
strip() { grep -v '^ *#' "$1" | sed '/^$/d' | grep -v '^plugin_dirs'; }
strip "$cfg" >"$tmp/conf.cfg"
strip "$scenario/profile.cfg" >"$tmp/scenario.cfg"
check "conf/fleet.cfg is the scenario's profile" diff "$tmp/conf.cfg" "$tmp/scenario.cfg"
check "validate accepts conf/fleet.cfg with the example" \
    "$TRELLIS" validate -c "$cfg" --state "$TOP_SRCDIR/examples/fleet"

# ---- explain: why a cluster was passed over ----
# shellcheck disable=SC2086
"$TRELLIS" explain -c "$cfg" -s "$TOP_SRCDIR/examples/fleet" $now -o table \
    ClusterResourcePlacement/payments >"$tmp/ex" 2>&1
check "explain: required affinity passes the east over" \
    grep -q "east-2 .*fleet-affinity" "$tmp/ex"
check "explain: the stale cluster is not eligible, with KubeFleet's words" \
    grep -q "east-stale .*heartbeat" "$tmp/ex"

# ---- run ----
st="$tmp/state"
cp -r "$TOP_SRCDIR/examples/fleet" "$st"
rm -f "$st/args"
# west-2 in a file of its own, so that the test can remove it
awk 'BEGIN { RS = "\n---\n"; ORS = "\n---\n" } /\n  name: west-2\n/ { print > "/dev/stderr"; next } { print }' \
    "$st/members.yaml" >"$tmp/members" 2>"$st/west-2.yaml"
mv "$tmp/members" "$st/members.yaml"
# web-frontend's snapshot too: the host writes every snapshot's status,
# and a file the test edits should be one the host writes only for it
awk 'BEGIN { RS = "\n---\n"; ORS = "\n---\n" } /\n  name: web-frontend-0\n/ { print > "/dev/stderr"; next } { print }' \
    "$st/snapshots.yaml" >"$tmp/snaps" 2>"$st/web-frontend-0.yaml"
mv "$tmp/snaps" "$st/snapshots.yaml"
b() { echo "$st/clusterresourcebinding-$1.json"; }
# field FILE KEY: the value of "KEY": "..." in a binding file
field() { sed -n "s|.*\"$2\": \"\\([^\"]*\\)\".*|\\1|p" "$1" | head -n 1; }
is() { [ "$(field "$1" "$2")" = "$3" ]; }
# in_yaml FILE NAME KEY VALUE: the document of NAME in FILE has "KEY: VALUE"
in_yaml() {
    awk -v n="$2" 'BEGIN { RS = "\n---\n" } $0 ~ "\n  name: " n "\n" { print }' "$1" |
        grep -q "^ *$3: $4\$"
}

# shellcheck disable=SC2086
start a "$st" "$cfg" "$now"
check "run: ready" wait_for 20 curl -sf "http://127.0.0.1:$port/readyz"
spread() { test -f "$(b web-frontend-edge-1)" && test -f "$(b web-frontend-west-2)" && test -f "$(b web-frontend-east-3)"; }
check "run: web-frontend spreads over edge-1, west-2, east-3, one per cycle" wait_for 20 spread
check "run: ... each binding Scheduled, under web-frontend-0, with its cluster decision" \
    sh -c "grep -q '\"state\": \"Scheduled\"' '$(b web-frontend-east-3)' &&
           grep -q '\"schedulingPolicySnapshotName\": \"web-frontend-0\"' '$(b web-frontend-east-3)' &&
           grep -q 'topology spread score: 1): picked by scheduling policy' '$(b web-frontend-east-3)' &&
           grep -q 'kubernetes-fleet.io/scheduler-crb-cleanup' '$(b web-frontend-east-3)'"
check "run: the leaving cluster's binding is unscheduled, its state kept" \
    wait_for 20 in_yaml "$st/bindings.yaml" api-west-leaving state Unscheduled
check "run: reports is scaled down to east-1 and west-1" \
    wait_for 20 in_yaml "$st/bindings.yaml" reports-east-3 state Unscheduled
check "run: ... the Bound binding of the current snapshot stays" \
    in_yaml "$st/bindings.yaml" reports-west-1 state Bound

# scale out: the snapshot's number-of-clusters goes from 3 to 4
check "run: web-frontend-0's status says 3 of 3 clusters were found" \
    wait_for 20 grep -q "SchedulingPolicyFulfilled.*found 3 cluster" "$st/web-frontend-0.yaml"
check "run: ... listing why west-1 was passed over" \
    grep -q 'ClusterUnschedulable, violated doNotSchedule topology spread constraint' "$st/web-frontend-0.yaml"
sed 's/number-of-clusters: "3"/number-of-clusters: "4"/' "$st/web-frontend-0.yaml" >"$tmp/snap" &&
    mv "$tmp/snap" "$st/web-frontend-0.yaml"
check "run: scaled out to 4: west-1 joins (domains even again)" \
    wait_for 20 test -f "$(b web-frontend-west-1)"
kept() { is "$(b web-frontend-edge-1)" state Scheduled && is "$(b web-frontend-west-2)" state Scheduled; }
check "run: ... the three bindings it had are kept as they were" kept

# a heartbeat changes nothing; then a binding deleted: batch places its
# fourth cluster again (changes are handled in order: once that is
# written, the heartbeat was seen)
check "run: batch holds east-3" wait_for 20 test -f "$(b batch-east-3)"
sums() { (cd "$st" && find . -name 'clusterresourcebinding-*' ! -name '*batch-east-3*' | sort | xargs cksum); }
sums >"$tmp/before"
sed 's/lastReceivedHeartbeat: "2026-11-20T11:59:30Z"/lastReceivedHeartbeat: "2026-11-20T11:59:45Z"/' \
    "$st/west-2.yaml" >"$tmp/w2" && mv "$tmp/w2" "$st/west-2.yaml"
rm -f "$(b batch-east-3)"
check "run: a binding removed: batch is placed on east-3 again (the only smaller domain)" \
    wait_for 20 test -f "$(b batch-east-3)"
sums >"$tmp/after"
check "run: ... and the heartbeat changed no other binding" cmp "$tmp/before" "$tmp/after"

# the policy changes: PickN 2 of the staging clusters, a new snapshot
wait_for 20 grep -q "found 4 cluster" "$st/web-frontend-0.yaml"
sed 's/is-latest-snapshot: "true"/is-latest-snapshot: "false"/' "$st/web-frontend-0.yaml" >"$tmp/snap" &&
    mv "$tmp/snap" "$st/web-frontend-0.yaml"
cat >"$st/web-frontend-1.yaml" <<'Y'
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterSchedulingPolicySnapshot
metadata:
  name: web-frontend-1
  labels:
    kubernetes-fleet.io/parent-CRP: web-frontend
    kubernetes-fleet.io/is-latest-snapshot: "true"
    kubernetes-fleet.io/policy-index: "1"
  annotations:
    kubernetes-fleet.io/CRP-generation: "2"
    kubernetes-fleet.io/number-of-clusters: "2"
spec:
  policy:
    placementType: PickN
    numberOfClusters: 2
    affinity:
      clusterAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          clusterSelectorTerms:
          - labelSelector: {matchLabels: {environment: staging}}
Y
moved() {
    is "$(b web-frontend-east-3)" schedulingPolicySnapshotName web-frontend-1 &&
        is "$(b web-frontend-west-2)" schedulingPolicySnapshotName web-frontend-1
}
staying() { is "$(b web-frontend-east-3)" state Scheduled && is "$(b web-frontend-west-2)" state Scheduled; }
dropped() { is "$(b web-frontend-edge-1)" state Unscheduled && is "$(b web-frontend-west-1)" state Unscheduled; }
check "run: policy changed: the staging clusters' bindings move to web-frontend-1" wait_for 20 moved
check "run: ... keeping their state" staying
check "run: ... the others are unscheduled, never deleted" wait_for 20 dropped
check "run: ... remembering the state they had" \
    grep -q '"kubernetes-fleet.io/previous-binding-state": "Scheduled"' "$(b web-frontend-edge-1)"

# a member cluster removed
rm -f "$st/west-2.yaml"
gone() { is "$(b web-frontend-west-2)" state Unscheduled && is "$(b monitoring-west-2)" state Unscheduled; }
check "run: west-2 removed: its bindings are unscheduled" wait_for 20 gone
check "run: ... web-frontend keeps east-3 (no other staging cluster)" \
    is "$(b web-frontend-east-3)" state Scheduled
check "run: ... and is unschedulable for its second cluster, holding east-3" \
    wait_for 20 grep -q "ClusterResourcePlacement web-frontend: unschedulable: .* 1 Held" "$tmp/a.log"

# no placement holds two placing bindings on one cluster
placing() {
    for f in "$st"/clusterresourcebinding-*.json; do
        st_=$(field "$f" state)
        [ "$st_" = Scheduled ] || [ "$st_" = Bound ] || continue
        echo "$(field "$f" kubernetes-fleet.io/parent-CRP) $(field "$f" targetCluster)"
    done | sort | uniq -d
}
placing >"$tmp/dups"
check "run: no placement holds two placing bindings on one cluster" test ! -s "$tmp/dups"
kill -TERM "$pid"
check "run: SIGTERM ends the host" wait_for 20 stopped "$pid"
finish
