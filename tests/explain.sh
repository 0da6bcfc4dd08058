#!/bin/sh
#
# explain.sh - tests of `trellis explain`, run by `make check`.
#
# Everything runs on copies of examples/kube, examples/gardener and the
# state of every tests/scenarios/* folder. An unschedulable Pod shows every
# target with each filter plugin's reason code (a taint and missing
# resources on the same Node both appear); the victims preemption would
# evict are listed; a bound workload says so and is evaluated without its
# own place; the lexicographic Gardener profile says which score plugin
# kept which seeds. Every pending workload of the examples gets the pick
# and the message `trellis schedule --dry-run` gives it, and so does every
# scenario workload the queue pops first (later ones depend on what a run
# places before them, which explain does not replay). Every JSON document
# parses (tests/tools/jsonmatch), no state file changes, and unknown,
# ambiguous or malformed names, a bad -o and broken inputs are refused with
# the documented exit status.
#
# Environment (set by tests/Makefile.am): TRELLIS, the binary; JSONMATCH;
# TOP_SRCDIR; TRELLIS_PLUGIN_PATH, the in-tree plugins and the fixtures.

: "${TRELLIS:?TRELLIS must name the trellis binary}" "${JSONMATCH:?}" "${TOP_SRCDIR:?}"
case $TRELLIS in
/*) ;;
*) TRELLIS=$(pwd)/$TRELLIS ;;
esac

# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/trellis-explain.XXXXXX") || exit 99
trap 'chmod -R u+w "$TMP"; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

KUBE=$TOP_SRCDIR/conf/kube.cfg
GARDEN=$TOP_SRCDIR/conf/gardener.cfg
cp -R "$TOP_SRCDIR/examples/kube" "$TMP/kube"
cp -R "$TOP_SRCDIR/examples/gardener" "$TMP/garden"
mkdir "$TMP/sc"
for d in "$TOP_SRCDIR"/tests/scenarios/*/; do
    [ -f "$d/profile.cfg" ] || continue
    mkdir "$TMP/sc/$(basename "$d")"
    cp -R "$d/state" "$TMP/sc/$(basename "$d")/state"
done
chmod -R u+w "$TMP"
echo '{}' >"$TMP/any.json"

# What `trellis schedule --dry-run` decides, before anything is explained.
"$TRELLIS" schedule -c "$KUBE" -s "$TMP/kube" -n -o table >"$TMP/kube.table" 2>/dev/null
"$TRELLIS" schedule -c "$GARDEN" -s "$TMP/garden" -n -o table >"$TMP/garden.table" 2>/dev/null
"$TRELLIS" schedule -c "$TOP_SRCDIR/conf/gardener-current.cfg" -s "$TMP/garden" -n -o table \
    >"$TMP/garden-current.table" 2>/dev/null
for d in "$TMP"/sc/*/; do
    n=$(basename "$d")
    "$TRELLIS" schedule -c "$TOP_SRCDIR/tests/scenarios/$n/profile.cfg" -s "$d/state" -n \
        -o table >"$d/table" 2>/dev/null
done

# sums: every state file with its checksum, in path order
sums() {
    (cd "$TMP" && find kube garden sc -path '*/state/*' -o -path 'kube/*' -o -path 'garden/*' |
        LC_ALL=C sort | while read -r f; do [ -f "$f" ] && cksum "$f"; done)
}
sums >"$TMP/sums.before"

# ex ARGS...: `trellis explain ARGS`; stdout in $TMP/out, stderr in $TMP/err,
# the exit status in $rc
ex() {
    "$TRELLIS" explain "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
}
K() { ex -c "$KUBE" -s "$TMP/kube" "$@"; }
G() { ex -c "$GARDEN" -s "$TMP/garden" "$@"; }
S() {
    n=$1
    shift
    ex -c "$TOP_SRCDIR/tests/scenarios/$n/profile.cfg" -s "$TMP/sc/$n/state" "$@"
}

# says DESCRIPTION STATUS FILE REGEX...: the last ex exited with STATUS and
# FILE has a line matching each extended REGEX
says() {
    desc=$1 want=$2 file=$3
    shift 3
    miss=""
    [ "$rc" = "$want" ] || miss="exit status $rc, not $want"
    for re in "$@"; do
        [ -n "$miss" ] && break
        grep -E -q -e "$re" "$file" || miss="no line matches /$re/"
    done
    if [ -z "$miss" ]; then
        ok "$desc"
    else
        not_ok "$desc" "$miss" "$(sed -n '1,25s/^/stdout: /p' "$TMP/out")" \
            "$(sed -n '1,5s/^/stderr: /p' "$TMP/err")"
    fi
}

# json_has DESCRIPTION JSON: the last ex exited 0 and printed a document
# that JSON matches as a subset
json_has() {
    printf '%s\n' "$2" >"$TMP/want.json"
    if [ "$rc" = 0 ] && "$JSONMATCH" "$TMP/want.json" "$TMP/out" >"$TMP/why" 2>&1; then
        ok "$1"
    else
        not_ok "$1" "exit status $rc" "$(cat "$TMP/why")" "$(sed -n '1,3p' "$TMP/err")"
    fi
}

# none DESCRIPTION PROBLEMS: ok when PROBLEMS is empty
none() {
    if [ -z "$2" ]; then
        ok "$1"
    else
        not_ok "$1" "$2"
    fi
}

# last_line_is DESCRIPTION TEXT: the summary line of the last ex's table
last_line_is() {
    if [ "$(tail -n 1 "$TMP/out")" = "$2" ]; then
        ok "$1"
    else
        not_ok "$1" "last line: $(tail -n 1 "$TMP/out")" "wanted:    $2"
    fi
}

# ---- an unschedulable Pod: every plugin's verdict on every target ------------

K -o table shop/search-indexer-0
says "unschedulable Pod: one row per Node, a column per filter" 0 "$TMP/out" \
    '^Pod/shop/search-indexer-0: pending, profile default-scheduler, 4 targets' \
    '^TARGET +node-unschedulable +node-name +taint-toleration +node-affinity +node-ports +node-resources-fit +pod-topology-spread +inter-pod-affinity$' \
    '^cp-1 +✓ +skip +TaintNotTolerated +skip +skip +InsufficientResources +skip +skip$' \
    '^worker-a +✓ +skip +✓ +skip +skip +InsufficientResources +skip +skip$' \
    '^worker-b +✓ +skip +✓ +skip +skip +InsufficientResources +skip +skip$'
says "a taint and missing resources on the same Node both appear" 0 "$TMP/out" \
    '^gpu-c +✓ +skip +TaintNotTolerated +skip +skip +InsufficientResources +skip +skip$' \
    '^  gpu-c +taint-toleration +TaintNotTolerated: target has taint \{nvidia\.com/gpu=present:NoSchedule\}' \
    '^  gpu-c +node-resources-fit +InsufficientResources: Insufficient memory: requested 128Gi'
says "preemption was tried and finds nothing to evict" 0 "$TMP/out" \
    '^Post-filter \(preemption\): would make no room'
msg=$(sed -n 's|^Pod/shop/search-indexer-0  *[^ ]*  *unschedulable  *-  *||p' "$TMP/kube.table")
last_line_is "the summary line carries schedule's exact message" "Result: unschedulable: $msg"

K -o json shop/search-indexer-0
json_has "unschedulable Pod as JSON: each filter's verdict and code per target" '{
  "workload": {"kind": "Pod", "namespace": "shop", "name": "search-indexer-0"},
  "profile": "default-scheduler", "bound": null, "score_mode": "weighted",
  "filters": ["node-unschedulable", "node-name", "taint-toleration", "node-affinity",
              "node-ports", "node-resources-fit", "pod-topology-spread",
              "inter-pod-affinity"],
  "pre_filter": null, "result": "unschedulable", "picked": null,
  "targets": [
    {"target": "cp-1", "feasible": false, "picked": false,
     "rejected_by": {"plugin": "taint-toleration", "code": "TaintNotTolerated"},
     "filters": [{"plugin": "node-unschedulable", "verdict": "pass"},
                 {"plugin": "node-name", "verdict": "skip"},
                 {"plugin": "taint-toleration", "verdict": "fail", "code": "TaintNotTolerated"},
                 {"plugin": "node-affinity", "verdict": "skip"},
                 {"plugin": "node-ports", "verdict": "skip"},
                 {"plugin": "node-resources-fit", "verdict": "fail",
                  "code": "InsufficientResources"},
                 {"plugin": "pod-topology-spread", "verdict": "skip"},
                 {"plugin": "inter-pod-affinity", "verdict": "skip"}]},
    {"target": "gpu-c", "feasible": false,
     "filters": [{"verdict": "pass"}, {"verdict": "skip"},
                 {"verdict": "fail", "code": "TaintNotTolerated", "unresolvable": true},
                 {"verdict": "skip"}, {"verdict": "skip"},
                 {"verdict": "fail", "code": "InsufficientResources"}, {"verdict": "skip"},
                 {"verdict": "skip"}]},
    {"target": "worker-a", "feasible": false,
     "rejected_by": {"plugin": "node-resources-fit", "code": "InsufficientResources"},
     "filters": [{"verdict": "pass"}, {"verdict": "skip"}, {"verdict": "pass", "code": ""},
                 {"verdict": "skip"}, {"verdict": "skip"},
                 {"verdict": "fail", "code": "InsufficientResources"}, {"verdict": "skip"},
                 {"verdict": "skip"}]},
    {"target": "worker-b", "feasible": false}],
  "post_filter": {"plugins": ["preemption"], "evaluated": true, "ran": true,
                  "evicted": [], "created": [], "nominated": null}}'

# ---- post-filter: the victims preemption would evict, written nowhere -------

K -o table shop/payments-0
says "preemption: the victim and the nominated Node are listed" 0 "$TMP/out" \
    '^worker-a +✓ +skip +✓ +skip +skip +InsufficientResources +skip +skip  <- picked \(after the post-filter\)$' \
    '^  evict Pod analytics/batch-report-7x2kq from worker-a$' \
    '^  nominate worker-a for the retry$'
last_line_is "preemption: the pick after the retry" \
    "Result: scheduled on worker-a after the post-filter made room"
K -o json shop/payments-0
json_has "preemption as JSON" '{"result": "scheduled", "picked": "worker-a", "attempts": 2,
  "post_filter": {"evaluated": true, "ran": true, "nominated": "worker-a", "created": [],
    "evicted": [{"kind": "Pod", "namespace": "analytics", "name": "batch-report-7x2kq",
                 "target": "worker-a"}]}}'

S post-filter-provision -o table ml/needs-gpu
says "a post-filter that creates a target: what it would create" 0 "$TMP/out" \
    '^n1 +SelectorMismatch +✓$' '^  create Node provisioned-needs-gpu$' \
    '^Result: scheduled on provisioned-needs-gpu after the post-filter made room$'

# ---- scores -----------------------------------------------------------------

K -o table shop/web-5d8f7c-fghij
says "weighted scores: a column per score plugin with its weight, the total, the pick" 0 \
    "$TMP/out" 'SCORES \(0-100, × weight\)' \
    '^TARGET +node-unschedulable +node-name +taint-toleration +node-affinity +node-ports +node-resources-fit +pod-topology-spread +inter-pod-affinity +taint-toleration ×3 +node-affinity ×2 +node-resources-fit ×1 +pod-topology-spread ×2 +inter-pod-affinity ×2 +node-resources-balanced-allocation ×1 +image-locality ×1 +TOTAL$' \
    '^worker-b +✓ +skip +✓ +skip +skip +✓ +skip +skip +[0-9]+ +skip +[0-9]+ +skip +skip +[0-9]+ +skip +[0-9]+  <- picked$' \
    '^cp-1 +✓ +skip +TaintNotTolerated +skip +skip +✓ +skip +skip$' '^Post-filter \(preemption\): not needed'
bad_total=$(awk '/^worker-[ab] / && $10 * 3 + $12 + $15 != $17 { print }' "$TMP/out")
none "the total is the weighted sum of the scores" "$bad_total"

G -o table garden/monitoring
says "lexicographic: which score plugin kept which seeds" 0 "$TMP/out" \
    '^aws-garden .* 100\* +100\* +100\* +kept  <- picked$' \
    '^aws-eu1 .* 100\* +100\* +0 +cut by least-utilized$' \
    '^  taint-toleration: aws-eu1, aws-garden$' \
    '^  gardener-region-distance: aws-eu1, aws-garden$' '^  least-utilized: aws-garden$' \
    '^aws-eu2 .*RegionMismatch .*SeedFull$'
G -o json garden/monitoring
json_has "lexicographic as JSON" '{"score_mode": "lexicographic", "picked": "aws-garden",
  "score_plugins": [{"plugin": "taint-toleration", "kept": ["aws-eu1", "aws-garden"]},
                    {"plugin": "gardener-region-distance", "kept": ["aws-eu1", "aws-garden"]},
                    {"plugin": "least-utilized", "kept": ["aws-garden"]}],
  "post_filter": {"plugins": [], "ran": false}}'

G -o table garden-web/cdn
says "Gardener: every seed's verdicts, the per-seed message" 0 "$TMP/out" \
    '^azure-eu1 +✓ +✓ +DNSDisabled +RegionMismatch +✓ +✓ +✓$' \
    '^aws-garden +✓ +ProviderNotAllowed .*TaintNotTolerated +✓$' \
    '^Result: unschedulable: 0/11 seed cluster candidate\(s\) are eligible for scheduling: \{aws-eu1 => '

# ---- bound workloads ----------------------------------------------------------

K -o table analytics/batch-report-7x2kq
says "a bound Pod says where it is bound and is still evaluated" 0 "$TMP/out" \
    '^Pod/analytics/batch-report-7x2kq: bound to worker-a \(evaluated as if pending' \
    '^worker-a +✓ +skip +✓ +skip +skip +✓ +skip +skip +[0-9]+ +skip +[0-9]+ +skip +skip +[0-9]+ +skip +[0-9]+  <- picked$'
K -o json analytics/batch-report-7x2kq
json_has "a bound Pod does not count against its own Node" '{"bound": "worker-a",
  "result": "scheduled", "picked": "worker-a",
  "targets": [{"target": "cp-1"}, {"target": "gpu-c"},
              {"target": "worker-a", "feasible": true, "picked": true,
               "filters": [{}, {}, {}, {}, {},
                           {"plugin": "node-resources-fit", "verdict": "pass"},
                           {"plugin": "pod-topology-spread", "verdict": "skip"},
                           {"plugin": "inter-pod-affinity", "verdict": "skip"}]},
              {"target": "worker-b", "feasible": true, "picked": false}]}'

# ---- targets and workloads the plugins could not prepare --------------------

S taint-toleration-edge -o json infra/app-1
json_has "a malformed target shows InvalidTarget with the plugin's complaint" '{
  "targets": [{"target": "node-a"},
              {"target": "node-b", "feasible": false,
               "rejected_by": {"plugin": "taint-toleration", "code": "InvalidTarget"},
               "filters": [{"verdict": "fail", "code": "InvalidTarget"}]},
              {"target": "node-c"}]}'
S taint-toleration-edge -o json infra/app-4
json_has "a malformed workload is an error, with no target evaluated" \
    '{"result": "error", "picked": null, "targets": []}'
says "... and the error names the plugin and the field" 0 "$TMP/out" \
    '"message": "plugin taint-toleration: spec\.tolerations\[0\]\.operator'

# ---- explain and schedule agree -----------------------------------------------

# agree NAME CFG STATE TABLE ALL: explain every workload schedule decided
# (TABLE) as JSON; each document must parse. A pending one must get
# schedule's result, pick and message: every one when ALL is 1, else those
# the queue pops first (queued_ahead 0) that did not fail in binding, which
# explain does not run. Bound ones (evicted during the run) are evaluated
# against the state as read and are not compared.
agree() {
    name=$1 cfg=$2 st=$3 table=$4 all=$5
    n_same=0 n_other=0 problems=""
    awk '/^[A-Z][A-Za-z0-9]*\// { print $1, $3, $4 }' "$table" >"$TMP/decisions"
    while read -r w res tg; do
        "$TRELLIS" explain -c "$cfg" -s "$st" -o json "$w" >"$TMP/one.json" 2>"$TMP/one.err"
        erc=$?
        if [ "$erc" != 0 ] || ! "$JSONMATCH" "$TMP/any.json" "$TMP/one.json" >/dev/null 2>&1; then
            problems="$problems
$w: exit status $erc, no JSON document: $(head -n 2 "$TMP/one.err")"
            continue
        fi
        echo '{"bound": null}' >"$TMP/pending.json"
        echo '{"queued_ahead": 0}' >"$TMP/first.json"
        if ! "$JSONMATCH" "$TMP/pending.json" "$TMP/one.json" >/dev/null ||
            { [ "$all" = 0 ] && { [ "$res" = error ] ||
                ! "$JSONMATCH" "$TMP/first.json" "$TMP/one.json" >/dev/null; }; }; then
            n_other=$((n_other + 1))
            continue
        fi
        echo '{"more_cycles": true}' >"$TMP/more.json"
        if "$JSONMATCH" "$TMP/more.json" "$TMP/one.json" >/dev/null 2>&1; then
            n_other=$((n_other + 1)) # a run goes on with further cycles
            continue
        fi
        if [ "$res" = scheduled ] && [ "${tg#*,}" != "$tg" ]; then
            picks=$(printf '%s' "$tg" | sed 's/,/", "/g')
            want="{\"result\": \"scheduled\", \"picks\": [\"$picks\"], \"message\": \"\"}"
        elif [ "$res" = scheduled ]; then
            want="{\"result\": \"scheduled\", \"picked\": \"$tg\", \"message\": \"\"}"
        else
            m=$(sed -n "s|^$w  *[^ ]*  *[^ ]*  *-  *||p" "$table" | head -n 1 |
                sed 's/\\/\\\\/g; s/"/\\"/g')
            want="{\"result\": \"$res\", \"picked\": null, \"message\": \"$m\"}"
        fi
        printf '%s\n' "$want" >"$TMP/want.json"
        if "$JSONMATCH" "$TMP/want.json" "$TMP/one.json" >"$TMP/why" 2>&1; then
            n_same=$((n_same + 1))
        else
            problems="$problems
$w: schedule says $res ${tg#-}; explain: $(cat "$TMP/why")"
        fi
    done <"$TMP/decisions"
    if [ -z "$problems" ] && { [ "$all" = 0 ] || [ "$n_same" -gt 0 ]; }; then
        ok "$name: explain agrees with schedule on $n_same workload(s) ($n_other not compared)"
    else
        not_ok "$name: explain and schedule disagree" "agreed on $n_same$problems"
    fi
}

agree "examples/kube" "$KUBE" "$TMP/kube" "$TMP/kube.table" 1
agree "examples/gardener" "$GARDEN" "$TMP/garden" "$TMP/garden.table" 1
# Current Gardener uses the new seeds of the landscape, which start empty:
# where a shoot goes depends on the shoots placed before it in the run,
# which explain (one shoot, the store as it is) does not place. Only the
# first of the queue is compared.
agree "examples/gardener, current Gardener" "$TOP_SRCDIR/conf/gardener-current.cfg" "$TMP/garden" \
    "$TMP/garden-current.table" 0
for d in "$TMP"/sc/*/; do
    n=$(basename "$d")
    agree "scenario $n" "$TOP_SRCDIR/tests/scenarios/$n/profile.cfg" "$d/state" "$d/table" 0
done

# ---- nothing written ----------------------------------------------------------

sums >"$TMP/sums.after"
if cmp -s "$TMP/sums.before" "$TMP/sums.after"; then
    ok "no state file was changed or created"
else
    not_ok "no state file was changed or created" \
        "$(diff "$TMP/sums.before" "$TMP/sums.after" | head -n 10)"
fi

# ---- names, options and broken inputs -----------------------------------------

K -o table shop/nope
says "an unknown workload exits 1 and says so" 1 "$TMP/err" \
    "explain: no workload 'shop/nope' in the state \(workload kinds: Pod\)"
K -o table default/payments-0
says "... and names workloads of that name elsewhere" 1 "$TMP/err" \
    "did you mean Pod/shop/payments-0"
K -o table a/b/c/d
says "a name with too many parts exits 1" 1 "$TMP/err" \
    "'a/b/c/d': expected NAME, NAMESPACE/NAME, KIND/NAME or KIND/NAMESPACE/NAME"
K -o table
says "no workload named exits 1" 1 "$TMP/err" "explain: expected one workload"
K -o yaml shop/payments-0
says "a bad -o exits 1" 1 "$TMP/err" "--output: expected table or json, got 'yaml'"
K --profile nope shop/payments-0
says "an unknown --profile exits 1" 1 "$TMP/err" "no profile named 'nope'"
ex -c "$TMP/missing.cfg" -s "$TMP/kube" shop/payments-0
says "a config that cannot be read exits 2" 2 "$TMP/err" "missing\.cfg"
ex -c "$KUBE" -s "$TMP/no-such-dir" shop/payments-0
says "a state directory that cannot be read exits 2" 2 "$TMP/err" "no-such-dir"
ex -c "$KUBE" shop/payments-0
says "no state directory exits 1" 1 "$TMP/err" "no state directory"

# two profiles whose workload kinds share a name
cat >"$TMP/two.cfg" <<EOF
plugin_dirs = [ ];
parallelism = 1;
profiles = (
  { name = "default-scheduler"; default = true;
    workload = { kind = "Pod"; scheduler_name_field = "spec.schedulerName"; };
    target = { kind = "Node"; };
    binding = { field = "spec.nodeName"; };
    plugins = ( "resources-fit", "default-binder" ); },
  { name = "batch"; default = true;
    workload = { kind = "Job"; };
    target = { kind = "Node"; };
    binding = { field = "spec.nodeName"; };
    plugins = ( "default-binder" ); } );
EOF
mkdir "$TMP/two"
cat >"$TMP/two/state.yaml" <<EOF
apiVersion: v1
kind: Node
metadata: { name: n1 }
status: { allocatable: { cpu: "1", memory: 1Gi, pods: "10" } }
---
apiVersion: v1
kind: Pod
metadata: { name: dup, namespace: default }
spec: { containers: [ { name: a, image: a } ] }
---
apiVersion: batch/v1
kind: Job
metadata: { name: dup, namespace: default }
spec: {}
---
apiVersion: v1
kind: Pod
metadata: { name: other, namespace: default }
spec: { schedulerName: elsewhere, containers: [ { name: a, image: a } ] }
EOF
ex -c "$TMP/two.cfg" -s "$TMP/two" -o table dup
says "an ambiguous name exits 1 and lists what matched" 1 "$TMP/err" \
    "'dup' is ambiguous: it matches (Pod/default/dup, Job/default/dup|Job/default/dup, Pod/default/dup)"
ex -c "$TMP/two.cfg" -s "$TMP/two" -o json job/default/dup
json_has "KIND/NAMESPACE/NAME picks one (the kind in any case)" \
    '{"workload": {"kind": "Job", "namespace": "default", "name": "dup"}, "profile": "batch",
      "result": "scheduled", "picked": "n1"}'
ex -c "$TMP/two.cfg" -s "$TMP/two" -o json --profile batch dup
json_has "--profile narrows the search to its workloads" \
    '{"workload": {"kind": "Job"}, "profile": "batch"}'
ex -c "$TMP/two.cfg" -s "$TMP/two" -o table default/other
says "a workload that asks for no profile exits 1 and says which it asks for" 1 \
    "$TMP/err" "Pod default/other asks for scheduler 'elsewhere' \(spec\.schedulerName\)" \
    "give --profile NAME"
ex -c "$TMP/two.cfg" -s "$TMP/two" -o table --profile default-scheduler default/other
says "... which --profile evaluates against, with a note" 0 "$TMP/out" \
    "^note: Pod default/other is scheduled by no profile; evaluated against profile 'default-scheduler'" \
    '^n1 +✓  <- picked$'

# A pre-filter that narrowed the cycle (cycle_narrow): the targets it left
# out met no filter, and say why from the narrowing plugin's filter (or in
# kube's words when that passes them).
S pre-filter-narrow -o table default/a-pool
says "a target left out by a pre-filter: no filter ran on it, the narrowing plugin says why" \
    0 "$TMP/out" '^n2 +- +-$' '^n3 +- +-$' \
    '^  n2 +fx-narrow +OtherPool: n2 is in pool b, not a$' \
    "^  n3 +fx-narrow +NotInPreFilterResult: didn't satisfy plugin\\(s\\) \\[fx-narrow\\]$" \
    '^Narrowed: pre-filter fx-narrow left 2 of 4 targets in the cycle' '^Result: scheduled on n1$'
S pre-filter-narrow -o json default/a-pool
json_has "... and the JSON names the narrowing plugin, the set's size and each verdict" \
    '{"narrowed": {"by": "fx-narrow", "targets": 2}, "result": "scheduled", "picked": "n1",
      "targets": [{"target": "n1", "feasible": true},
                  {"target": "n2", "feasible": false,
                   "rejected_by": {"plugin": "fx-narrow", "code": "OtherPool"},
                   "filters": [{"plugin": "taint-toleration", "verdict": "not-run"},
                               {"plugin": "fx-narrow", "verdict": "not-run"}]},
                  {"target": "n3", "feasible": false,
                   "rejected_by": {"plugin": "fx-narrow", "code": "NotInPreFilterResult"}},
                  {"target": "n4", "feasible": false,
                   "rejected_by": {"plugin": "taint-toleration"}}]}'
S pre-filter-narrow -o json default/c-any
json_has "a workload the pre-filter does not narrow says so" '{"narrowed": null}'

finish
