#!/bin/sh
# crash.sh - kill -9 the active host at random moments and check that the
# state stays whole. `trellis run` (conf/kube.cfg) binds Pods spread over
# many single-document files, one big multi-document file and a
# `kind: List` of 50 items; every round starts a new standby, adds more
# pending Pods (a multi-document file and a List), kills the active host
# with SIGKILL after a random delay (seeded) while it binds them and lets
# the standby take over. After each round:
#  - every file parses (a dry run reports no malformed document);
#  - each file differs from what was written into it only by binding lines;
#  - no Pod has two bindings, and no bound Pod moved to another Node;
#  - no Node holds more than its CPU allows;
#  - no temporary file is left once the new host has read the state.
# At the end every Pod is bound. Every wait polls with a bound. Run by
# `make check` with TRELLIS and TRELLIS_PLUGIN_PATH set.
set -u
: "${TRELLIS:?}" "${TOP_SRCDIR:?}"
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
hosts_setup

ROUNDS=${CRASH_ROUNDS:-10}
SEED=${CRASH_SEED:-20261124}
NODES=20          # 4000m each: 800 Pods of 100m
NODE_CPU=4000
POD_CPU=100

ready() { [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/readyz")" = 200 ]; }

st=$tmp/state
orig=$tmp/orig # every file as the test wrote it, without bindings
mkdir -p "$st" "$orig"

pod() { # pod NAME INDENT: one Pod, its lines indented by INDENT spaces
    awk -v n="$1" -v ind="$2" -v cpu="$POD_CPU" 'BEGIN {
        p = sprintf("%" ind "s", "")
        printf "%sapiVersion: v1\n%skind: Pod\n%smetadata:\n%s  name: %s\n", p, p, p, p, n
        printf "%s  namespace: crash\n%sspec:\n%s  containers:\n", p, p, p
        printf "%s  - name: app\n%s    image: registry.example/app:1\n", p, p
        printf "%s    resources:\n%s      requests:\n%s        cpu: %dm\n", p, p, p, cpu
    }'
}
# A multi-document file of Pods FROM..TO, and a List file of Pods FROM..TO.
multi() {
    k=$2
    while [ "$k" -le "$3" ]; do
        [ "$k" -gt "$2" ] && echo "---"
        echo "# pod $k"
        pod "pod-$k" 0
        k=$((k + 1))
    done >"$orig/$1"
    cp "$orig/$1" "$st/$1"
}
list() {
    {
        echo "apiVersion: v1"
        echo "kind: List"
        echo "items:"
        k=$2
        while [ "$k" -le "$3" ]; do
            pod "pod-$k" 2 | sed '1s/^  /- /'
            k=$((k + 1))
        done
    } >"$orig/$1"
    cp "$orig/$1" "$st/$1"
}

i=0
while [ "$i" -lt "$NODES" ]; do
    cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: node-$i
status:
  allocatable:
    cpu: "${NODE_CPU}m"
    memory: 64Gi
    pods: "110"
EOF
    i=$((i + 1))
done >"$orig/nodes.yaml"
cp "$orig/nodes.yaml" "$st/nodes.yaml"
i=0
while [ "$i" -lt 100 ]; do # many single-document files
    multi "single-$i.yaml" "$i" "$i"
    i=$((i + 1))
done
multi big.yaml 100 199
list list.yaml 200 249
total=250

# bindings FILE...: "pod node" for every binding line, in file order
bindings() {
    awk '$1 == "name:" && $2 ~ /^pod-/ { pod = $2 }
         $1 == "nodeName:" { print pod, $2 }' "$@"
}
# Only binding lines differ from what the test wrote.
only_bindings() {
    for f in "$orig"/*; do
        b=$(basename "$f")
        grep -v 'nodeName:' "$st/$b" >"$tmp/now" || true
        if ! cmp -s "$f" "$tmp/now"; then
            echo "$b: differs beyond its bindings"
            diff "$f" "$tmp/now" | head -n 20
            return 1
        fi
    done
}
# One binding per Pod, none moved since the last round ($tmp/seen).
not_twice_nor_moved() {
    bindings "$st"/*.yaml | sort >"$tmp/now-bound"
    dup=$(awk '{ print $1 }' "$tmp/now-bound" | uniq -d | head -n 5)
    [ -z "$dup" ] || { echo "bound twice: $dup"; return 1; }
    moved=$(join "$tmp/seen" "$tmp/now-bound" | awk '$2 != $3' | head -n 5)
    [ -z "$moved" ] || { echo "moved: $moved"; return 1; }
    cp "$tmp/now-bound" "$tmp/seen"
}
within_capacity() {
    bindings "$st"/*.yaml | awk -v cap="$NODE_CPU" -v req="$POD_CPU" '
        { used[$2] += req }
        END { for (n in used) if (used[n] > cap) { print n, used[n] "m of", cap "m"; bad = 1 }
              exit bad }'
}
parses() {
    "$TRELLIS" schedule -c "$TOP_SRCDIR/conf/kube.cfg" -s "$st" --dry-run -o json \
        >/dev/null 2>"$tmp/parse.err"
    ! grep -q "malformed\|skipped" "$tmp/parse.err"
}
# No temporary file (.NAME.tmp.HOST.PID.<random suffix>) of a dead host is left;
# the live host's own may exist, mid-write.
no_temp_files() {
    left=$(find "$st" -name '.*.tmp.*' | while read -r f; do
        pid=$(basename "$f" | sed -n 's/.*\.\([0-9][0-9]*\)\.[^.]*$/\1/p')
        if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then echo "$f"; fi
    done | head -n 5)
    [ -z "$left" ] || { echo "left: $left"; return 1; }
}
all_bound() { [ "$(bindings "$st"/*.yaml | wc -l)" -eq "$total" ]; }

: >"$tmp/seen"
start host0 "$st" "$TOP_SRCDIR/conf/kube.cfg"
active=$pid
aport=$port
check "the first host becomes active" wait_for 20 ready "$aport"
t_end=$(($(date +%s) + 120))
round=1
while [ "$round" -le "$ROUNDS" ] && [ "$(date +%s)" -lt "$t_end" ]; do
    start "host$round" "$st" "$TOP_SRCDIR/conf/kube.cfg"
    standby=$pid
    sport=$port
    wait_for 20 grep -q "standby:" "$tmp/host$round.log"
    # more pending work, a multi-document file and a List, then the kill
    # at a random moment (from the seed) while it is being bound: 0 to 60 ms
    multi "round-$round.yaml" "$total" $((total + 24))
    total=$((total + 25))
    list "round-$round-list.yaml" "$total" $((total + 9))
    total=$((total + 10))
    delay=$(awk -v s="$SEED" -v r="$round" 'BEGIN { srand(s + r); printf "%.3f", rand() * 0.06 }')
    sleep "$delay"
    kill -KILL "$active"
    wait_for 20 stopped "$active"
    if ! wait_for 30 ready "$sport"; then
        not_ok "round $round: the standby takes over" "$(tail -n 20 "$tmp/host$round.log")"
        break
    fi
    check "round $round (kill after ${delay}s): every file parses" parses
    check "round $round: only binding lines changed" only_bindings
    check "round $round: nothing bound twice or moved" not_twice_nor_moved
    check "round $round: no node over capacity" within_capacity
    check "round $round: no temporary file left after the takeover" no_temp_files
    active=$standby
    aport=$sport
    round=$((round + 1))
done
# how often a kill caught a write half done (a diagnostic, not a check)
stale=$(cat "$tmp"/host*.log | sed -n 's/.*removed \([0-9]*\) stale temporary.*/\1/p' |
    awk '{ s += $1 } END { print s + 0 }')
echo "# $((round - 1)) rounds; temporary files of a killed write removed at takeovers: $stale"
check "every pod is bound in the end ($total)" wait_for 60 all_bound
check "finally: only binding lines changed" only_bindings
check "finally: nothing bound twice or moved" not_twice_nor_moved
check "finally: no node over capacity" within_capacity
kill -TERM "$active"
check "the last host stops on SIGTERM" wait_for 30 stopped "$active"
check "finally: no temporary file left" no_temp_files
finish
