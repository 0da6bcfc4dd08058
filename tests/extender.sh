#!/bin/sh
# extender.sh - the http-extender plugin against real HTTP extenders
# (tools/extender-server) on 127.0.0.1, started and stopped here: filter,
# prioritize and weight as kube-scheduler adds them, the requests' keys
# (Go's field names) and answers in either spelling, managedResources,
# nodeCacheCapable, slow extenders (ignorable or not), failing and
# garbage-answering ones, the bind verb, the preempt verb (candidates
# dropped, victims changed, meta victims, failures), TLS with a test CA, and the
# configuration errors `trellis validate` reports. Skipped when this
# build has no libcurl (no http-extender).
set -u
. "$SRCDIR/testlib.sh"
SERVER=$TOP_BUILDDIR/tests/tools/extender-server
if [ ! -x "$SERVER" ]; then
    echo "1..0 # SKIP this build has no libcurl: no http-extender"
    exit 0
fi
hosts_setup
T=$TRELLIS

# serve NAME ARG...: an extender started with ARGs; its port in $port,
# what it received in $tmp/NAME.rec
serve() {
    name=$1
    shift
    rm -f "$tmp/$name.port" "$tmp/$name.rec"
    "$SERVER" --port-file "$tmp/$name.port" --record "$tmp/$name.rec" "$@" \
        >"$tmp/$name.out" 2>&1 &
    pids="$pids $!"
    eval "pid_$name=$!"
    port=""
    wait_for 10 test -s "$tmp/$name.port" && port=$(cat "$tmp/$name.port")
    touch "$tmp/$name.rec"
}
unserve() { eval "kill -TERM \$pid_$1" 2>/dev/null; }

# node NAME LABELS [CPU_USED]: a Node of 4 cpu and 8Gi with LABELS
node() {
    cat <<EOF
---
apiVersion: v1
kind: Node
metadata: {name: $1, labels: {$2}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
EOF
}
# pod NAME [RESOURCES] [NODE]: a Pod requesting 1 cpu (RESOURCES: the
# container's resources, YAML flow)
pod() {
    res=${2:-}
    [ -n "$res" ] || res='{requests: {cpu: "1"}}'
    cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default, uid: uid-$1}
spec:
  containers: [{name: c, image: x, resources: $res}]
EOF
    [ -z "${3:-}" ] || echo "  nodeName: $3"
}
# state DIR: n1 (gpu, rank 2), n2 (no gpu, rank 9), n3 (gpu, rank 7)
state() {
    mkdir -p "$1"
    { node n1 'gpu: "true", rank: "2"'; node n2 'gpu: "false", rank: "9"'
      node n3 'gpu: "true", rank: "7"'; } >"$1/nodes.yaml"
    pod p1 >"$1/pods.yaml"
}
# cfg FILE ENTRY [FIT]: the kube default profile's relevant part with the
# extender entry ENTRY (its args and weight); FIT 0 leaves
# node-resources-fit out
cfg() {
    fit='{ name = "node-resources-fit"; weight = 1; },'
    [ "${3:-1}" = 0 ] && fit=""
    cat >"$1" <<EOF
profiles = ( {
  name = "default-scheduler"; default = true;
  workload = { kind = "Pod"; scheduler_name_field = "spec.schedulerName"; };
  target = { kind = "Node"; };
  binding = { field = "spec.nodeName"; };
  tie_break = "name";
  plugins = ( { name = "priority-sort"; }, $fit
    { name = "http-extender"; $2 },
    { name = "default-binder"; } );
} );
EOF
}
# run NAME CFG [ARGS]: trellis schedule of a fresh copy of $tmp/NAME.state
# into $tmp/NAME.json (the log in $tmp/NAME.log)
run() {
    rm -rf "$tmp/$1.st"
    cp -r "$tmp/$1.state" "$tmp/$1.st"
    # shellcheck disable=SC2086
    "$T" schedule -c "$2" -s "$tmp/$1.st" -o json ${3:-} >"$tmp/$1.json" 2>"$tmp/$1.log"
}
# decided NAME POD RESULT [TARGET]: the decision of POD in $tmp/NAME.json
decided() {
    awk -v p="\"name\": \"$2\"" 'index($0, p) { on = 1 } on' "$tmp/$1.json" >"$tmp/$1.one"
    grep -q "\"result\": \"$3\"" "$tmp/$1.one" || { cat "$tmp/$1.json" "$tmp/$1.log"; return 1; }
    [ -z "${4:-}" ] && return 0
    tr -d ' \n' <"$tmp/$1.one" | grep -q "\"targets\":\[\"$4\"\]" || { cat "$tmp/$1.json"; return 1; }
}
has() { grep -q -- "$2" "$tmp/$1" || { echo "no '$2' in $1:"; head -c 2000 "$tmp/$1"; return 1; }; }
hasnt() { ! grep -q -- "$2" "$tmp/$1" || { echo "'$2' in $1:"; head -c 2000 "$tmp/$1"; return 1; }; }

# ---- filter and prioritize ----
# The extender keeps the Nodes labelled gpu=true (n1, n3) and fails n2
# with "node lacks label gpu=true"; it scores each Node its label rank.
# Every Node is empty, so node-resources-fit (LeastAllocated over cpu and
# memory, kube's non-zero default of 200Mi for a Pod without a memory
# request) gives each the same: cpu (4 - 1) * 100 / 4 = 75, memory
# (8192Mi - 200Mi) * 100 / 8192Mi = 97.5 -> 97, (75 + 97) / 2 = 86.
# kube adds score * weight * (MaxNodeScore 100 / MaxExtenderPriority 10):
#   weight 1:  n1 86 + 2 * 10 = 106, n3 86 + 7 * 10 = 156  -> n3
# Without the extender the tie goes to the first name: n1.
state "$tmp/base.state"
cp -r "$tmp/base.state" "$tmp/f.state"
serve f --label gpu=true --score-label rank
cfg "$tmp/f.cfg" "weight = 1; args = { url_prefix = \"http://127.0.0.1:$port/\";
  filter_verb = \"filter\"; prioritize_verb = \"prioritize\"; http_timeout_ms = 2000; };"
run f "$tmp/f.cfg" --explain
check "filter + prioritize: the extender's scores make n3 win (86 + 70 against 86 + 20)" \
    decided f p1 scheduled n3
check "filter: n2, which the extender failed, is rejected with its message" \
    has f.json '"reason": "node lacks label gpu=true"'
check "prioritize: the extender's 7 on n3 counts 70" sh -c "tr -d ' \n' <'$tmp/f.json' | grep -q '\"http-extender\":70'"
# The requests carry the Go field names of extender/v1, whose types have
# no json tags, as today's kube-scheduler's json.Marshal writes them:
# every field, the one not in use null.
check "the extender got the Pod and the Nodes (a NodeList) in one filter request, with Go's field names" \
    sh -c "grep '^filter ' '$tmp/f.rec' | grep -q '^filter {\"Pod\":{.*\"name\":\"p1\".*},\"Nodes\":{\"metadata\":{},\"items\":\\[.*\\]},\"NodeNames\":null}$'"
check "no request has the lower camelCase keys of the API before 1.17" \
    sh -c "! grep -q -e '\"pod\":' -e '\"nodes\":' -e '\"nodenames\":' '$tmp/f.rec'"
check "the extender was not sent n2 to score (filtered out before)" \
    sh -c "grep '^prioritize ' '$tmp/f.rec' | grep -v -q '\"name\":\"n2\"'"
"$T" explain default/p1 -c "$tmp/f.cfg" -s "$tmp/f.st" -o table >"$tmp/explain.txt" 2>&1 ||
    "$T" explain default/p1 -c "$tmp/f.cfg" -s "$tmp/f.state" -o table >"$tmp/explain.txt" 2>&1
check "trellis explain names the extender's rejection of n2 and its reason" \
    sh -c "grep n2 '$tmp/explain.txt' | grep -q 'http-extender' && grep -q 'node lacks label gpu=true' '$tmp/explain.txt'"
cfg "$tmp/none.cfg" "args = { url_prefix = \"http://127.0.0.1:$port/\"; };"
cp -r "$tmp/base.state" "$tmp/none.state"
run none "$tmp/none.cfg"
check "an extender without verbs takes no part: n1 by name" decided none p1 scheduled n1

# ---- weight ----
# n1 and n3 as above but n3 runs a Pod of 3 cpu (bound, no memory
# request): node-resources-fit on n3 is cpu (4 - 4) * 100 / 4 = 0, memory
# (8192Mi - 400Mi) * 100 / 8192Mi = 95.1 -> 95, (0 + 95) / 2 = 47; n1 86.
# rank: n1 2, n3 5 (n2 filtered out).
#   weight 1:  n1 86 + 1 * 20 = 106, n3 47 + 1 * 50 = 97   -> n1
#   weight 5:  n1 86 + 5 * 20 = 186, n3 47 + 5 * 50 = 297  -> n3
mkdir -p "$tmp/w.state"
{ node n1 'gpu: "true", rank: "2"'; node n2 'gpu: "false", rank: "9"'
  node n3 'gpu: "true", rank: "5"'; } >"$tmp/w.state/nodes.yaml"
{ pod p1; pod busy '{requests: {cpu: "3"}}' n3; } >"$tmp/w.state/pods.yaml"
for w in 1 5; do
    cfg "$tmp/w$w.cfg" "weight = $w; args = { url_prefix = \"http://127.0.0.1:$port\";
      filter_verb = \"filter\"; prioritize_verb = \"prioritize\"; };"
done
run w "$tmp/w1.cfg" --explain
check "weight 1: n1 wins, 106 against 97" decided w p1 scheduled n1
check "weight 1: n3's total is 97" sh -c "tr -d ' \n' <'$tmp/w.json' | grep -q '\"target\":\"n3\",\"verdict\":\"feasible\",\"score\":97,'"
run w "$tmp/w5.cfg" --explain
check "weight 5: n3 wins, 297 against 186" decided w p1 scheduled n3
check "weight 5: n1's total is 186" sh -c "tr -d ' \n' <'$tmp/w.json' | grep -q '\"target\":\"n1\",\"verdict\":\"feasible\",\"score\":186,'"
unserve f

# ---- managed resources ----
# managed_resources example.com/gpu: the extender hears of g-limit (its
# init container limits one) and not of plain, which requests none; it
# rejects every Node (a label nobody has), so plain (not asked) goes to
# n1 by name and g-limit fits nowhere.
mkdir -p "$tmp/m.state"
cp "$tmp/base.state/nodes.yaml" "$tmp/m.state/"
cat >"$tmp/m.state/pods.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: g-limit, namespace: default}
spec:
  initContainers: [{name: i, image: x, resources: {limits: {example.com/gpu: "1"}}}]
  containers: [{name: c, image: x}]
---
apiVersion: v1
kind: Pod
metadata: {name: plain, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
EOF
serve m --label nobody=here
cfg "$tmp/m.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; filter_verb = \"filter\";
  managed_resources = [ \"example.com/gpu\" ]; };" 0
run m "$tmp/m.cfg"
check "managed_resources: a Pod requesting none of them is not sent (plain -> n1)" decided m plain scheduled n1
check "managed_resources: the extender never heard of plain" hasnt m.rec '"name":"plain"'
check "managed_resources: an init container's limit makes the Pod the extender's (g-limit sent)" has m.rec '"name":"g-limit"'
check "managed_resources: g-limit is unschedulable, 3 Nodes rejected by the extender" \
    sh -c "grep -q '0/3 targets are available: 3 ExtenderRejected' '$tmp/m.json'"
unserve m

# ---- nodeCacheCapable ----
# node_cache_capable: only names go out (NodeNames), and the answer's
# NodeNames are read: the extender keeps n3 alone
serve c --pass-names n3
cfg "$tmp/c.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; filter_verb = \"filter\";
  node_cache_capable = true; };"
cp -r "$tmp/base.state" "$tmp/c.state"
run c "$tmp/c.cfg"
check "node_cache_capable: the answer's NodeNames decide (n3)" decided c p1 scheduled n3
check "node_cache_capable: the request has NodeNames and Nodes null" \
    has c.rec '^filter {"Pod":{.*},"Nodes":null,"NodeNames":\["n1","n2","n3"\]}$'
check "node_cache_capable: and no NodeList" hasnt c.rec '"items":'
unserve c

# ---- two extenders ----
# kube calls its extenders in turn, each on what the previous left: the
# first (gpu=true) leaves n1 and n3, the second (as = "extender-2") keeps
# everything but n1 and is sent only n1 and n3 -> n3
serve two1 --label gpu=true
p1=$port
serve two2 --label rank=7
cat >"$tmp/two.cfg" <<EOF
profiles = ( {
  name = "default-scheduler"; default = true;
  workload = { kind = "Pod"; scheduler_name_field = "spec.schedulerName"; };
  target = { kind = "Node"; };
  binding = { field = "spec.nodeName"; };
  plugins = ( { name = "priority-sort"; },
    { name = "http-extender"; args = { url_prefix = "http://127.0.0.1:$p1"; filter_verb = "filter"; }; },
    { name = "http-extender"; as = "extender-2"; args = { url_prefix = "http://127.0.0.1:$port";
      filter_verb = "filter"; }; },
    { name = "default-binder"; } );
} );
EOF
cp -r "$tmp/base.state" "$tmp/two.state"
run two "$tmp/two.cfg" --explain
check "two extenders: each filters what the previous left (n3)" decided two p1 scheduled n3
check "two extenders: the second was sent n1 and n3 only" \
    sh -c "grep '^filter ' '$tmp/two2.rec' | grep -q '\"name\":\"n1\"' && ! grep -q '\"name\":\"n2\"' '$tmp/two2.rec'"
check "two extenders: the rejection names the second by its as" \
    sh -c "tr -d ' \n' <'$tmp/two.json' | grep -q '\"target\":\"n1\",\"verdict\":\"rejected\",\"plugin\":\"extender-2\"'"
unserve two1
unserve two2

# ---- answers with the keys of the API before 1.17 ----
# The server answers as a Go extender does, with Go's field names
# ("NodeNames", "FailedNodes", "Host", ...): every decision above read
# them. One written against the scheduler API before 1.17 answers with
# its lower camelCase json tags; the plugin reads those too, as Go's
# decoder matches keys without regard to case. The same extender as in
# "filter and prioritize" (n3: 86 + 70 against 86 + 20) and the
# node-cache-capable one keeping n3, now answering in the old spelling:
serve old --old-keys --label gpu=true --score-label rank
cfg "$tmp/old.cfg" "weight = 1; args = { url_prefix = \"http://127.0.0.1:$port\";
  filter_verb = \"filter\"; prioritize_verb = \"prioritize\"; };"
cp -r "$tmp/base.state" "$tmp/old.state"
run old "$tmp/old.cfg" --explain
check "old keys: the answers were in lower camelCase" \
    sh -c "grep -q '^ANSWER filter {\"nodes\":{\"metadata\":{},\"items\":\\[.*\\]},\"nodenames\":null,\"failedNodes\":{\"n2\":\"node lacks label gpu=true\"},' '$tmp/old.rec' && grep -q '^ANSWER prioritize \\[{\"host\":\"n1\",\"score\":2},{\"host\":\"n3\",\"score\":7}\\]$' '$tmp/old.rec'"
check "old keys: read as Go's spelling is, n3 wins (86 + 70 against 86 + 20)" decided old p1 scheduled n3
check "old keys: n2 is rejected with the extender's message" has old.json '"reason": "node lacks label gpu=true"'
unserve old
serve oldc --old-keys --pass-names n3
cfg "$tmp/oldc.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; filter_verb = \"filter\";
  node_cache_capable = true; };"
cp -r "$tmp/base.state" "$tmp/oldc.state"
run oldc "$tmp/oldc.cfg"
check "old keys: node_cache_capable, the answer is nodenames" \
    sh -c "grep -q '^ANSWER filter {\"nodes\":null,\"nodenames\":\\[\"n3\"\\],' '$tmp/oldc.rec'"
check "old keys: ... and decides (n3)" decided oldc p1 scheduled n3
unserve oldc

# ---- answers that are not a list of nodes ----
# --drop n3: the extender neither keeps nor fails n3 (rejected, without a
# message of its own); --unresolvable: failed in FailedAndUnresolvableNodes
serve d --label gpu=true --drop n3 --unresolvable
cfg "$tmp/d.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; filter_verb = \"filter\"; };"
cp -r "$tmp/base.state" "$tmp/d.state"
run d "$tmp/d.cfg" --explain
check "a node the extender leaves out is rejected; n1 is left" decided d p1 scheduled n1
check "... with a message naming the extender" has d.json "did not return this node"
unserve d
serve s --label gpu=true --stray n9
cfg "$tmp/s.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; filter_verb = \"filter\"; };"
cp -r "$tmp/base.state" "$tmp/s.state"
run s "$tmp/s.cfg"
check "an answer keeping a node it was not sent is an error naming it" \
    sh -c "grep -q 'claims a filtered node .*n9.* which is not found' '$tmp/s.json' && grep -q '\"result\": \"error\"' '$tmp/s.json'"
unserve s
serve e --error "the gpu inventory is down"
cfg "$tmp/e.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; filter_verb = \"filter\"; };"
cp -r "$tmp/base.state" "$tmp/e.state"
run e "$tmp/e.cfg"
check "an ExtenderFilterResult error is the decision's error" \
    sh -c "grep -q 'plugin http-extender: filter failed: extender http://127.0.0.1:$port: the gpu inventory is down' '$tmp/e.json'"
unserve e

# ---- slow, failing and garbage-answering extenders ----
# slow: answers after 3 s, the client gives up after 300 ms
serve slow --slow-ms 3000
for ig in true false; do
    cfg "$tmp/slow-$ig.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\";
      filter_verb = \"filter\"; prioritize_verb = \"prioritize\"; http_timeout_ms = 300;
      ignorable = $ig; };"
done
cp -r "$tmp/base.state" "$tmp/slow.state"
run slow "$tmp/slow-true.cfg"
check "slow extender, ignorable: skipped, the Pod is still scheduled (n1)" decided slow p1 scheduled n1
check "slow extender, ignorable: the skip is logged with the timeout" \
    has slow.log "skipping the ignorable extender: extender http://127.0.0.1:$port: POST http://127.0.0.1:$port/filter: timed out after 300 ms"
run slow "$tmp/slow-false.cfg"
check "slow extender, not ignorable: the decision is an error" decided slow p1 error
check "... naming the extender and the timeout" \
    has slow.json "plugin http-extender: filter failed: extender http://127.0.0.1:$port: POST http://127.0.0.1:$port/filter: timed out after 300 ms (http_timeout_ms)"
unserve slow
serve fail --status 500
cfg "$tmp/fail.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; filter_verb = \"filter\";
  prioritize_verb = \"prioritize\"; };"
cfg "$tmp/failp.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; prioritize_verb = \"prioritize\"; };"
cp -r "$tmp/base.state" "$tmp/fail.state"
run fail "$tmp/fail.cfg"
check "an extender answering 500: error, as kube words it" \
    has fail.json "failed filter with extender at URL http://127.0.0.1:$port/filter, code 500"
run fail "$tmp/failp.cfg"
check "a failing prioritize is ignored (kube: no score from it), the Pod scheduled" decided fail p1 scheduled n1
unserve fail
serve junk --garbage
cfg "$tmp/junk.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; filter_verb = \"filter\"; };"
cp -r "$tmp/base.state" "$tmp/junk.state"
run junk "$tmp/junk.cfg"
check "an extender answering garbage: error saying the answer is not JSON" \
    has junk.json "filter answer: the answer is not JSON"
unserve junk
cfg "$tmp/down.cfg" "args = { url_prefix = \"http://127.0.0.1:1\"; filter_verb = \"filter\"; };"
cp -r "$tmp/base.state" "$tmp/down.state"
run down "$tmp/down.cfg"
check "an extender nobody listens for: error naming the URL" \
    sh -c "grep -q 'extender http://127.0.0.1:1: POST http://127.0.0.1:1/filter: .*' '$tmp/down.json' && grep -q '\"result\": \"error\"' '$tmp/down.json'"

# ---- bind ----
# With bind_verb the extender binds (ExtenderBindingArgs) and trellis
# writes no binding of its own: kube-scheduler creates no Binding when a
# binder extender is interested. The Pod stays unbound in the state
# (the extender is to write it); one the extender is not interested in
# (managed_resources) is bound by default-binder.
serve b
cfg "$tmp/b.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; bind_verb = \"bind\";
  managed_resources = [ \"cpu\" ]; };"
mkdir -p "$tmp/b.state"
cp "$tmp/base.state/nodes.yaml" "$tmp/b.state/"
{ pod p1; pod other '{requests: {memory: "1Gi"}}'; } >"$tmp/b.state/pods.yaml"
run b "$tmp/b.cfg"
check "bind: the decision is scheduled" decided b p1 scheduled n1
check "bind: the extender recorded the binding (namespace/name, uid, node)" has b.rec "^BOUND default/p1 uid-p1 n1$"
check "bind: the request is ExtenderBindingArgs" has b.rec '^bind {"PodName":"p1","PodNamespace":"default","PodUID":"uid-p1","Node":"n1"}$'
check "bind: trellis wrote no binding of p1 into the state" \
    sh -c "awk '/name: p1,/ { on = 1 } /name: other,/ { on = 0 } on' '$tmp/b.st/pods.yaml' | grep -vq nodeName"
# other (1Gi of memory) comes after p1, which is assumed on n1: n2 and n3
# are emptier and tie, n2 is the first name
check "bind: a Pod the extender does not manage is bound by default-binder (n2)" \
    sh -c "awk '/name: other,/ { on = 1 } on' '$tmp/b.st/pods.yaml' | grep -q 'nodeName: n2'"
check "bind: the extender never heard of it" hasnt b.rec '"PodName":"other"'
# trellis run: the binding cycle calls the extender from its own thread;
# the Pod the extender bound is not bound again while the host runs
cp -r "$tmp/base.state" "$tmp/brun"
start brun "$tmp/brun" "$tmp/b.cfg"
check "run: the binding thread has the extender bind p1" wait_for 20 grep -q "^BOUND default/p1 uid-p1 n1$" "$tmp/b.rec"
check "run: the host logs the binding" wait_for 20 grep -q "Pod default/p1: bound to n1" "$tmp/brun.log"
kill -TERM "$pid"
check "run: the host exits when asked" wait_for 20 stopped "$pid"
check "run: the extender bound p1 once in the run (twice with schedule's above)" \
    sh -c "[ \$(grep -c '^BOUND default/p1 ' '$tmp/b.rec') -eq 2 ]"
unserve b
serve be --error "binding refused"
cfg "$tmp/be.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; bind_verb = \"bind\"; };"
cp -r "$tmp/base.state" "$tmp/be.state"
run be "$tmp/be.cfg"
check "bind: an extender's binding error fails the binding, with its message" \
    sh -c "grep -q 'binding refused' '$tmp/be.json' '$tmp/be.log' && awk '/name: p1,/ { on = 1 } on' '$tmp/be.st/pods.yaml' | grep -vq nodeName"
unserve be
serve beo --old-keys --error "binding refused"
cfg "$tmp/beo.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; bind_verb = \"bind\"; };"
cp -r "$tmp/base.state" "$tmp/beo.state"
run beo "$tmp/beo.cfg"
check "bind, old keys: the answer is {\"error\": ...}" has beo.rec '^ANSWER bind {"error":"binding refused"}$'
check "bind, old keys: read the same, the binding fails with the message" \
    sh -c "grep -q 'binding refused' '$tmp/beo.json' '$tmp/beo.log' && awk '/name: p1,/ { on = 1 } on' '$tmp/beo.st/pods.yaml' | grep -vq nodeName"
unserve beo

# ---- preempt ----
# kube's DefaultPreemption hands its candidates to every extender with a
# preempt verb before it picks one (callExtenders). Nodes of 4 cpu:
#   n1 runs a1 (priority 1, 4 cpu)
#   n2 runs b1 and b2 (priority 5, 2 cpu each; b1 started first)
#   n3 runs c1 (priority 200, 4 cpu)
# p (priority 100, 2 cpu) fits nowhere (node-resources-fit). Preemption
# tries every Node (10% of 3 is 0, at least 100, at most 3):
#   n1: a1 (1 < 100) must go: [a1], highest victim priority 1
#   n2: b1 and b2 are below 100; b1, the more important (same priority,
#       earlier start), is put back first: without b2 p fits (2 + 2 = 4),
#       b2 back too would make 6 > 4: [b2], highest 5
#   n3: c1 (200) is not below 100: no candidate
# Without an extender n1 wins (highest victim priority 1 < 5): a1 goes.
# ppod NAME PRIORITY CPU [NODE START]: a Pod with a priority
ppod() {
    cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default, uid: uid-$1}
spec:
  priority: $2
  containers: [{name: c, image: x, resources: {requests: {cpu: "$3"}}}]
EOF
    [ -z "${4:-}" ] || printf '  nodeName: %s\nstatus: {phase: Running, startTime: "%s"}\n' "$4" "$5"
}
mkdir -p "$tmp/pre.state"
{ node n1 'rank: "1"'; node n2 'rank: "2"'; node n3 'rank: "3"'; } >"$tmp/pre.state/nodes.yaml"
{ ppod a1 1 4 n1 2026-01-01T08:00:00Z; ppod b1 5 2 n2 2026-01-01T08:00:00Z
  ppod b2 5 2 n2 2026-01-01T09:00:00Z; ppod c1 200 4 n3 2026-01-01T08:00:00Z
  ppod p 100 2; } >"$tmp/pre.state/pods.yaml"
# pcfg FILE ENTRY: priority-sort, node-resources-fit, preemption, the
# extender entry ENTRY (its args), default-binder
pcfg() {
    cat >"$1" <<EOF
profiles = ( {
  name = "default-scheduler"; default = true;
  workload = { kind = "Pod"; scheduler_name_field = "spec.schedulerName"; };
  target = { kind = "Node"; };
  binding = { field = "spec.nodeName"; };
  tie_break = "name";
  plugins = ( { name = "priority-sort"; }, { name = "node-resources-fit"; },
    { name = "preemption"; }, { name = "http-extender"; $2 },
    { name = "default-binder"; } );
} );
EOF
}
# evicted NAME POD VICTIM: POD's decision evicted VICTIM alone
evicted() {
    tr -d ' \n' <"$tmp/$1.json" | grep -q "\"name\":\"$2\"},\"profile\":\"default-scheduler\",\"result\":\"scheduled\",\"targets\":\[\"[^\"]*\"\],\"message\":\"\",\"evicted\":\[{\"kind\":\"Pod\",\"namespace\":\"default\",\"name\":\"$3\"}\]" ||
        { cat "$tmp/$1.json"; return 1; }
}
# picked NAME TARGET VICTIM: p went to TARGET, evicting VICTIM alone
picked() { decided "$1" p scheduled "$2" && evicted "$1" p "$3"; }
# refused NAME TEXT: p stayed unschedulable, TEXT in the decisions
refused_with() { decided "$1" p unschedulable && has "$1.json" "$2"; }
serve pe
pcfg "$tmp/pe.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; preempt_verb = \"preempt\"; };"
cp -r "$tmp/pre.state" "$tmp/pe.state"
run pe "$tmp/pe.cfg"
check "preempt: an extender keeping every candidate as it is: n1 as without it (a1 evicted)" \
    picked pe n1 a1
check "preempt: the request is ExtenderPreemptionArgs with the Pod and each candidate's victims, whole" \
    sh -c "grep '^preempt ' '$tmp/pe.rec' | head -1 | grep -q '^preempt {\"Pod\":{.*\"name\":\"p\".*},\"NodeNameToVictims\":{\"n1\":{\"Pods\":\[{.*\"uid\":\"uid-a1\".*}\],\"NumPDBViolations\":0},\"n2\":{\"Pods\":\[{.*\"uid\":\"uid-b2\".*}\],\"NumPDBViolations\":0}},\"NodeNameToMetaVictims\":null}$'"
check "preempt: n3, no candidate, is not sent" sh -c "! grep '^preempt ' '$tmp/pe.rec' | head -1 | grep -q '\"n3\"'"
check "preempt: the verb is called, so nothing says it is not" hasnt pe.log "not called"
unserve pe
# --preempt-drop n1: n2 [b2] is left: b2 goes, p lands on n2
serve pd --preempt-drop n1
pcfg "$tmp/pd.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; preempt_verb = \"preempt\"; };"
cp -r "$tmp/pre.state" "$tmp/pd.state"
run pd "$tmp/pd.cfg"
check "preempt: the extender drops n1: p goes to n2, b2 is evicted" picked pd n2 b2
# kube-scheduler's own configuration: an extender's preemptVerb reaches
# the plugin (trellis config convert, kubesched.c) and kube's default
# profile (DefaultPreemption) consults it: n1 dropped as above -> n2, b2
cat >"$tmp/pk.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: "http://127.0.0.1:$port"
  preemptVerb: "preempt"
  httpTimeout: 2s
EOF
cp -r "$tmp/pre.state" "$tmp/pk.state"
run pk "$tmp/pk.yaml"
check "preempt: a KubeSchedulerConfiguration's preemptVerb is called (n1 dropped: n2, b2 evicted)" \
    picked pk n2 b2
check "... and its conversion carries preempt_verb" \
    sh -c "'$T' config convert '$tmp/pk.yaml' | grep -q 'preempt_verb = \"preempt\"'"
unserve pd
# ... and names b1 as n2's victim instead of b2 (2 cpu too, enough): b1
# goes, b2 stays
serve pv --preempt-drop n1 --preempt-victims n2=uid-b1
pcfg "$tmp/pv.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; preempt_verb = \"preempt\"; };"
cp -r "$tmp/pre.state" "$tmp/pv.state"
run pv "$tmp/pv.cfg"
check "preempt: the extender changes n2's victims to b1: b1 is evicted, not b2" picked pv n2 b1
unserve pv
# the same answer in the lower camelCase of the API before 1.17
serve pvo --old-keys --preempt-drop n1 --preempt-victims n2=uid-b1
pcfg "$tmp/pvo.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; preempt_verb = \"preempt\"; };"
cp -r "$tmp/pre.state" "$tmp/pvo.state"
run pvo "$tmp/pvo.cfg"
check "preempt, old keys: the answer is nodeNameToMetaVictims with pods and uid" \
    has pvo.rec '^ANSWER preempt {"nodeNameToMetaVictims":{"n2":{"pods":\[{"uid":"uid-b1"}\],"numPDBViolations":0}}}$'
check "preempt, old keys: read the same: b1 is evicted, not b2" picked pvo n2 b1
unserve pvo
# nodeCacheCapable: only the victims' UIDs go out (NodeNameToMetaVictims)
serve pm
pcfg "$tmp/pm.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; preempt_verb = \"preempt\";
  node_cache_capable = true; };"
cp -r "$tmp/pre.state" "$tmp/pm.state"
run pm "$tmp/pm.cfg"
check "preempt: node_cache_capable sends meta victims (UIDs) with the violations" \
    sh -c "grep '^preempt ' '$tmp/pm.rec' | head -1 | grep -q '^preempt {\"Pod\":{.*},\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":\[{\"UID\":\"uid-a1\"}\],\"NumPDBViolations\":0},\"n2\":{\"Pods\":\[{\"UID\":\"uid-b2\"}\],\"NumPDBViolations\":0}}}$'"
check "preempt: ... and no Pods" sh -c "! grep '^preempt ' '$tmp/pm.rec' | grep -q '\"NodeNameToVictims\":{'"
check "preempt: node_cache_capable: n1 as without the extender" decided pm p scheduled n1
unserve pm
# failures: a status other than 200, an extender that is too slow, a
# Node that was no candidate, no candidates left
serve pf --status 500
pcfg "$tmp/pf.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; preempt_verb = \"preempt\"; };"
cp -r "$tmp/pre.state" "$tmp/pf.state"
run pf "$tmp/pf.cfg"
check "preempt: a failing extender (500), not ignorable: p stays unschedulable" decided pf p unschedulable
check "... nothing is evicted" sh -c "! tr -d ' \n' <'$tmp/pf.json' | grep -q '\"evicted\":\[{'"
check "... and the decision's notes name the extender and the failure" \
    has pf.json "preemption: preemption failed: plugin http-extender: extender http://127.0.0.1:$port: failed preempt with extender at URL http://127.0.0.1:$port/preempt, code 500"
unserve pf
serve ps --slow-ms 3000
for ig in true false; do
    pcfg "$tmp/ps-$ig.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; preempt_verb = \"preempt\";
      http_timeout_ms = 300; ignorable = $ig; };"
done
cp -r "$tmp/pre.state" "$tmp/ps.state"
run ps "$tmp/ps-true.cfg"
check "preempt: a slow extender, ignorable: skipped, preemption as without it (n1, a1 evicted)" \
    picked ps n1 a1
check "... the skip is logged with the timeout" \
    has ps.log "skipping the ignorable extender: extender http://127.0.0.1:$port: POST http://127.0.0.1:$port/preempt: timed out after 300 ms"
run ps "$tmp/ps-false.cfg"
check "preempt: a slow extender, not ignorable: p stays unschedulable, naming the timeout" \
    refused_with ps "preemption failed: plugin http-extender: extender http://127.0.0.1:$port: POST http://127.0.0.1:$port/preempt: timed out after 300 ms"
unserve ps
serve pst --preempt-stray n9
pcfg "$tmp/pst.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; preempt_verb = \"preempt\"; };"
cp -r "$tmp/pre.state" "$tmp/pst.state"
run pst "$tmp/pst.cfg"
check "preempt: an answer naming a Node that was no candidate fails the preemption" \
    refused_with pst 'claims to preempt on node \\"n9\\", which is not a candidate'
unserve pst
serve pn --preempt-none
pcfg "$tmp/pn.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; preempt_verb = \"preempt\"; };"
cp -r "$tmp/pre.state" "$tmp/pn.state"
run pn "$tmp/pn.cfg"
check "preempt: an empty answer leaves no candidate: p unschedulable" \
    refused_with pn "the review left none: no candidate node for preemption"
unserve pn
# a Node answered without victims: kube's "expected at least one victim
# pod on node"; an ignorable extender's such Node is dropped alone: n1
# goes, n2 [b2] is left (b2 evicted, p to n2)
serve pe0 --preempt-victims n1=
for ig in true false; do
    pcfg "$tmp/pe0-$ig.cfg" "args = { url_prefix = \"http://127.0.0.1:$port\"; preempt_verb = \"preempt\";
      ignorable = $ig; };"
done
cp -r "$tmp/pre.state" "$tmp/pe0.state"
run pe0 "$tmp/pe0-false.cfg"
check "preempt: a Node answered without victims fails the preemption" \
    refused_with pe0 'expected at least one victim pod on node \\"n1\\"'
run pe0 "$tmp/pe0-true.cfg"
check "preempt: ... an ignorable extender's such Node is dropped alone: n2, b2 evicted" \
    picked pe0 n2 b2
unserve pe0

# ---- TLS ----
if command -v openssl >/dev/null 2>&1; then
    pki=$tmp/pki
    mkdir -p "$pki"
    {
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=extender-test-ca \
            -keyout "$pki/ca.key" -out "$pki/ca.crt" &&
            openssl req -newkey rsa:2048 -nodes -subj /CN=extender.test \
                -keyout "$pki/server.key" -out "$pki/server.csr" &&
            printf 'subjectAltName=DNS:extender.test\n' >"$pki/ext" &&
            openssl x509 -req -in "$pki/server.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
                -CAcreateserial -days 2 -extfile "$pki/ext" -out "$pki/server.crt"
    } >"$pki/log" 2>&1
    serve tls --tls "$pki/server.crt" "$pki/server.key" --label gpu=true
    cp -r "$tmp/base.state" "$tmp/tls.state"
    u="url_prefix = \"https://127.0.0.1:$port\"; filter_verb = \"filter\";"
    cfg "$tmp/tls-ca.cfg" "args = { $u tls_ca_file = \"$pki/ca.crt\"; tls_server_name = \"extender.test\"; };"
    run tls "$tmp/tls-ca.cfg"
    check "TLS: the test CA's file and the server name: filtered over https (n1)" decided tls p1 scheduled n1
    check "TLS: the request went over https" has tls.rec '^filter '
    ca_text=$(awk '{ printf "%s\\n", $0 }' "$pki/ca.crt")
    cfg "$tmp/tls-data.cfg" "args = { $u tls_ca_data = \"$ca_text\"; tls_server_name = \"extender.test\"; };"
    run tls "$tmp/tls-data.cfg"
    check "TLS: the CA as PEM text (tls_ca_data) works as the file does" decided tls p1 scheduled n1
    cfg "$tmp/tls-name.cfg" "args = { $u tls_ca_file = \"$pki/ca.crt\"; };"
    run tls "$tmp/tls-name.cfg"
    check "TLS: without the server name the certificate (for extender.test) does not match 127.0.0.1" \
        sh -c "grep -q '\"result\": \"error\"' '$tmp/tls.json' && grep -q 'POST https://127.0.0.1:$port/filter: .*' '$tmp/tls.json'"
    cfg "$tmp/tls-none.cfg" "args = { $u };"
    run tls "$tmp/tls-none.cfg"
    check "TLS: an unknown CA is refused" decided tls p1 error
    cfg "$tmp/tls-insecure.cfg" "args = { $u tls_insecure = true; };"
    run tls "$tmp/tls-insecure.cfg"
    check "TLS: tls_insecure skips the verification" decided tls p1 scheduled n1
    unserve tls
else
    ok "TLS # SKIP openssl is not installed"
fi

# ---- configuration errors ----
# validate CFG_ENTRY PATTERN: trellis validate refuses it (status 2), the
# message matching PATTERN with the file and line of the entry
refused() {
    cfg "$tmp/bad.cfg" "$1"
    "$T" validate -c "$tmp/bad.cfg" >"$tmp/bad.out" 2>&1
    rc=$?
    [ $rc -eq 2 ] && grep -q "$tmp/bad.cfg:8: .*$2" "$tmp/bad.out" || { echo "rc=$rc"; cat "$tmp/bad.out"; return 1; }
}
check "validate: a missing url_prefix is named" refused "args = { filter_verb = \"filter\"; };" \
    "missing required argument 'url_prefix'"
check "validate: a url_prefix that is no http(s) URL" refused "args = { url_prefix = \"127.0.0.1:80\"; };" \
    "url_prefix '127.0.0.1:80': expected an http:// or https:// URL"
check "validate: a verb that is no path segment" \
    refused "args = { url_prefix = \"http://127.0.0.1:1\"; filter_verb = \"fil ter\"; };" \
    "filter_verb 'fil ter': expected a path segment"
check "validate: a negative timeout" \
    refused "args = { url_prefix = \"http://127.0.0.1:1\"; http_timeout_ms = -5; };" \
    "http_timeout_ms -5: expected 0 (5000, kube's default) or more"
check "validate: a client certificate without its key" \
    refused "args = { url_prefix = \"https://127.0.0.1:1\"; tls_cert_data = \"x\"; };" \
    "a client certificate needs its key"
check "validate: a CA file that cannot be read" \
    refused "args = { url_prefix = \"https://127.0.0.1:1\"; tls_ca_file = \"$tmp/none.pem\"; };" \
    "tls_ca_file '$tmp/none.pem': cannot be read"
check "validate: an unknown argument" \
    refused "args = { url_prefix = \"http://127.0.0.1:1\"; urlPrefix = \"x\"; };" "urlPrefix"
finish
