#!/bin/sh
# etcd.sh - the etcd store against a real etcd (Debian's etcd-server) on
# 127.0.0.1: seeding it with `trellis store copy`, scheduling the kube
# and Gardener examples through it (the same decisions as the file
# store), malformed values, config errors; `trellis run` hosts sharing one
# etcd (one active: kill -9, SIGSTOP past the lease, a member of a
# 3-member cluster killed). Skipped, with the reason, when this build has
# no etcd store or no etcd is installed.
set -u
. "$SRCDIR/testlib.sh"
. "$SRCDIR/etcdlib.sh"
why=$(etcd_why_not)
if [ -n "$why" ]; then
    echo "1..0 # SKIP $why"
    exit 0
fi
hosts_setup
T=$TRELLIS
top=$TOP_SRCDIR

# a config: the profiles of CONF with the store group of STORECFG
with_store() { { cat "$top/conf/$1"; cat "$2"; } >"$3"; }
b64() { printf '%s' "$1" | base64 | tr -d '\n'; }
EURL=""
# etcd_put KEY VALUE: written (tried again while the cluster elects a leader)
etcd_put1() {
    curl -s -m 5 -X POST "${EURL:-$etcd_url_1}/v3/kv/put" \
        -d "{\"key\":\"$(b64 "$1")\",\"value\":\"$(b64 "$2")\"}" | grep -q '"revision"'
}
etcd_put() { wait_for 20 etcd_put1 "$1" "$2"; }
etcd_get() {
    curl -s -m 5 -X POST "${EURL:-$etcd_url_1}/v3/kv/range" -d "{\"key\":\"$(b64 "$1")\"}" |
        sed -n 's/.*"value":"\([^"]*\)".*/\1/p' | base64 -d
}
etcd_count() {
    curl -s -m 5 -X POST "${EURL:-$etcd_url_1}/v3/kv/range" \
        -d "{\"key\":\"$(b64 "$1")\",\"range_end\":\"$(b64 "$2")\",\"count_only\":true}" |
        sed -n 's/.*"count":"\([0-9]*\)".*/\1/p'
}

if ! etcd_cluster 1; then
    not_ok "a single etcd member starts" "$(tail -5 "$tmp/etcd-e1.log")"
    finish
    exit 1
fi
ok "a single etcd member starts and is healthy"

# ---- config errors ----
cat >"$tmp/bad1.cfg" <<'CFG'
store = { type = "etcd"; };
CFG
cat >"$tmp/bad2.cfg" <<'CFG'
store = { type = "etcd";
  endpoints = [ "127.0.0.1:2379" ]; };
CFG
cat >"$tmp/bad3.cfg" <<'CFG'
store = { type = "etcd"; endpoints = [ "http://127.0.0.1:2379" ];
  prefix = "trellis/"; };
CFG
cat >"$tmp/bad4.cfg" <<'CFG'
store = { type = "file"; endpoints = [ "http://127.0.0.1:2379" ]; };
CFG
cat >"$tmp/bad5.cfg" <<'CFG'
store = { type = "etcd"; endpoints = [ "http://127.0.0.1:2379" ];
  tls = { cert = "client.pem"; }; };
CFG
cfgerr() {
    out=$("$T" store copy "$tmp/$1" "$tmp/out-$1" 2>&1)
    [ $? -eq 2 ] && printf '%s' "$out" | grep -q "$tmp/$1:$2: .*$3"
}
check "store: an etcd store without endpoints is refused with file and line" cfgerr bad1.cfg 1 "needs endpoints"
check "store: an endpoint that is no URL is refused" cfgerr bad2.cfg 2 "expected http://HOST:PORT"
check "store: a prefix without a leading / is refused" cfgerr bad3.cfg 2 "starts with '/'"
check "store: etcd settings in a file store are refused" cfgerr bad4.cfg 1 "setting of the etcd store"
check "store: a client certificate without its key is refused" cfgerr bad5.cfg 2 "needs its key"

# ---- store copy and schedule: kube ----
etcd_store_cfg "$tmp/kube-store.cfg" /kube
with_store kube.cfg "$tmp/kube-store.cfg" "$tmp/kube-etcd.cfg"
check "store copy: the kube example into etcd" sh -c "'$T' store copy '$top/examples/kube' '$tmp/kube-store.cfg' | grep -q 'copied 12 object'"
out=$("$T" store copy "$top/examples/kube" "$tmp/kube-store.cfg" 2>&1)
rc=$?
if [ $rc -eq 1 ] && printf '%s' "$out" | grep -q "Node//worker-a: not written: already exists"; then
    ok "store copy: objects etcd holds already are named and not written (exit 1)"
else not_ok "store copy: objects etcd holds already are named and not written (exit 1)" "rc=$rc" "$out"; fi
cp -r "$top/examples/kube" "$tmp/kube-files"
chmod -R u+w "$tmp/kube-files"
"$T" schedule -c "$top/conf/kube.cfg" -s "$tmp/kube-files" -o json >"$tmp/kube-file.json" 2>"$tmp/kube-file.log"
"$T" schedule -c "$tmp/kube-etcd.cfg" -o json >"$tmp/kube-etcd.json" 2>"$tmp/kube-etcd.log"
check "schedule: kube through etcd decides as through the file store" cmp "$tmp/kube-file.json" "$tmp/kube-etcd.json"

bound=$(etcd_get /kube/o/Pod/shop/payments-0)
case $bound in *'"nodeName":"worker-a"'*) ok "schedule: payments-0 is bound to worker-a in etcd" ;;
*) not_ok "schedule: payments-0 is bound to worker-a in etcd" "$bound" ;; esac
"$T" schedule -c "$tmp/kube-etcd.cfg" -o json >"$tmp/kube-etcd2.json" 2>&1
"$T" schedule -c "$top/conf/kube.cfg" -s "$tmp/kube-files" -o json >"$tmp/kube-file2.json" 2>&1
check "schedule again: etcd and the file store still agree" cmp "$tmp/kube-file2.json" "$tmp/kube-etcd2.json"
"$T" store copy "$tmp/kube-store.cfg" "$tmp/kube-back" >"$tmp/back.out" 2>&1
check "store copy: etcd back into a directory" grep -q "copied 12 object" "$tmp/back.out"
check "store copy: no resourceVersion is copied" sh -c "! grep -rq resourceVersion '$tmp/kube-back'"
"$T" schedule -c "$top/conf/kube.cfg" -s "$tmp/kube-back" -o json -n >"$tmp/kube-back.json" 2>&1
check "the exported state has every binding (nothing left to bind)" cmp "$tmp/kube-back.json" "$tmp/kube-file2.json"

# ---- malformed values are reported and skipped ----
etcd_put /kube/o/Pod/shop/broken '{"apiVersion": "v1", "kind": "Pod", "metadata": {'
etcd_put /kube/o/Pod/shop/liar '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"other","namespace":"shop"}}'
"$T" schedule -c "$tmp/kube-etcd.cfg" -o json >"$tmp/mal.json" 2>"$tmp/mal.log"
rc=$?
if [ $rc -eq 0 ] && grep -q "/kube/o/Pod/shop/broken.*not a JSON object" "$tmp/mal.log" &&
    grep -q "/kube/o/Pod/shop/liar.*the key names Pod/shop/liar but the object is Pod/shop/other" "$tmp/mal.log"; then
    ok "malformed values: each named with its key and reason, the rest scheduled"
else not_ok "malformed values: each named with its key and reason, the rest scheduled" "rc=$rc" "$(cat "$tmp/mal.log")"; fi

# ---- Gardener ----
etcd_store_cfg "$tmp/garden-store.cfg" /garden
with_store gardener.cfg "$tmp/garden-store.cfg" "$tmp/garden-etcd.cfg"
"$T" store copy "$top/examples/gardener" "$tmp/garden-store.cfg" >/dev/null 2>&1
cp -r "$top/examples/gardener" "$tmp/garden-files"
chmod -R u+w "$tmp/garden-files"
"$T" schedule -c "$top/conf/gardener.cfg" -s "$tmp/garden-files" -o json >"$tmp/g-file.json" 2>&1
"$T" schedule -c "$tmp/garden-etcd.cfg" -o json >"$tmp/g-etcd.json" 2>&1
check "schedule: Gardener through etcd decides as through the file store" cmp "$tmp/g-file.json" "$tmp/g-etcd.json"
check "schedule: Gardener made decisions" grep -q '"result": "scheduled"' "$tmp/g-etcd.json"

# ---- Fleet in `trellis run`, at the example's clock ----
# reports (PickN 2) scaled out to 3 clusters, then in to 1, by its latest
# snapshot's number-of-clusters annotation (the whole object put again,
# as another writer does), then only its CRP-generation moved. The
# snapshot's status is written after each cycle, sooner than the watch
# brings the host etcd's copy: a write compared with the copy's
# mod_revision was refused, though only the host's own writes came
# between; a status written by a cycle that binds nothing waited for some
# later binding's flush.
etcd_store_cfg "$tmp/kf-store.cfg" /kf "lease_ttl_s = 2;"
with_store fleet.cfg "$tmp/kf-store.cfg" "$tmp/kf-etcd.cfg"
"$T" store copy "$top/examples/fleet" "$tmp/kf-store.cfg" >/dev/null 2>&1
"$T" run -c "$tmp/kf-etcd.cfg" --listen 127.0.0.1:0 --log-level info --now 2026-11-20T12:00:00Z >/dev/null 2>"$tmp/kf.log" &
kf_pid=$!
pids="$pids $kf_pid"
kf_snap=/kf/o/ClusterSchedulingPolicySnapshot//reports-1
kf_reports() { # STATE: how many of reports' bindings are in STATE
    curl -s -m 5 -X POST "$etcd_url_1/v3/kv/range" \
        -d "{\"key\":\"$(b64 /kf/o/ClusterResourceBinding/)\",\"range_end\":\"$(b64 /kf/o/ClusterResourceBinding0)\"}" |
        grep -o '"value":"[^"]*"' | sed 's/"value":"\(.*\)"/\1/' | while read -r v; do
        printf '%s' "$v" | base64 -d | tr -d ' \n'
        echo
    done | grep '"kubernetes-fleet.io/parent-CRP":"reports"' | grep -c "\"state\":\"$1\""
}
kf_holds() { # N: reports holds N clusters (Scheduled or Bound) and its snapshot says so
    [ $(($(kf_reports Scheduled) + $(kf_reports Bound))) -eq "$1" ] &&
        etcd_get "$kf_snap" | grep -q "found $1 cluster(s)"
}
kf_annotate() { # ANNOTATION VALUE: the snapshot put again with it
    etcd_put "$kf_snap" "$(etcd_get "$kf_snap" | tr -d '\n' |
        sed "s|\"kubernetes-fleet.io/$1\": *\"[^\"]*\"|\"kubernetes-fleet.io/$1\":\"$2\"|")"
}
check "run: Fleet through etcd: reports holds its 2 clusters" wait_for 30 kf_holds 2
kf_annotate number-of-clusters 3
check "run: scaled out to 3, reports holds 3 clusters and its snapshot's status says so" wait_for 30 kf_holds 3
kf_annotate number-of-clusters 1
kf_scaled_in() { kf_holds 1 && [ "$(kf_reports Bound)" -eq 1 ]; }
check "run: scaled in to 1, it keeps only its Bound cluster" wait_for 30 kf_scaled_in
kf_annotate CRP-generation 7
kf_observed() { etcd_get "$kf_snap" | tr -d ' \n' | grep -q '"observedCRPGeneration":7'; }
check "run: a cycle that binds nothing: its snapshot's status is written at once" wait_for 20 kf_observed
# (a status of reports-1 the host writes as the test changes the snapshot
# is refused: it was made without seeing that change)
check "run: no write of the Fleet host was refused or undone but where the test wrote" sh -c "! grep -E 'changed since it was read|was not made|binding to .* failed' '$tmp/kf.log' | grep -v reports-1"
kill -TERM "$kf_pid"
wait_for 20 stopped "$kf_pid"

# ---- trellis run: hosts sharing one etcd, one active ----
# three nodes of 4 CPUs, pods of 1 CPU each: at most 4 on a node
mkdir -p "$tmp/fleet"
for n in n1 n2 n3; do
    cat >>"$tmp/fleet/nodes.yaml" <<NODE
---
apiVersion: v1
kind: Node
metadata: { name: $n, labels: { kubernetes.io/hostname: $n } }
status: { allocatable: { cpu: "4", memory: 16Gi, pods: "110" } }
NODE
done
pod_json() {
    printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"default"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}' "$1"
}
i=1
while [ $i -le 6 ]; do pod_json "p$i" >"$tmp/fleet/p$i.json"; i=$((i + 1)); done
add_pods() { # FROM TO: pods pFROM..pTO put into etcd
    i=$1
    while [ "$i" -le "$2" ]; do etcd_put "/run/o/Pod/default/p$i" "$(pod_json "p$i")"; i=$((i + 1)); done
}
# bound_lines: every "bound to" a host logged, one pod per line
bound_lines() { cat "$tmp"/h*.log | sed -n 's/.*Pod default\/\(p[0-9]*\): bound to .*/\1/p'; }
bound_count() { [ "$(bound_lines | sort -u | wc -l)" -eq "$1" ]; }
# the state as etcd holds it: N pods each bound, once, no node over 4,
# nothing lost (the 3 nodes and N pods are there)
state_ok() {
    rm -rf "$tmp/export"
    "$T" store copy "$tmp/run-store.cfg" "$tmp/export" >"$tmp/export.out" 2>&1 || return 1
    grep -q "copied $(($1 + 3)) object" "$tmp/export.out" || { cat "$tmp/export.out"; return 1; }
    nb=$(grep -rhoE '"nodeName": ?"[^"]*"' "$tmp/export" | wc -l)
    [ "$nb" -eq "$1" ] || { echo "$nb of $1 pods bound"; return 1; }
    over=$(grep -rhoE '"nodeName": ?"[^"]*"' "$tmp/export" | sort | uniq -c | awk '$1 > 4')
    [ -z "$over" ] || { echo "over capacity: $over"; return 1; }
    twice=$(bound_lines | sort | uniq -d)
    [ -z "$twice" ] || { echo "bound twice: $twice"; return 1; }
}
start_host() { # NAME CONFIG
    "$T" run -c "$2" --listen 127.0.0.1:0 --log-level info >"$tmp/$1.out" 2>"$tmp/$1.log" &
    eval "pid_$1=$!"
    pids="$pids $!"
}
ready_port() { sed -n 's|.*on http://127.0.0.1:\([0-9]*\).*|\1|p' "$tmp/$1.log" | head -n 1; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

etcd_store_cfg "$tmp/run-store.cfg" /run "lease_ttl_s = 2; timeout_ms = 2000;"
with_store kube.cfg "$tmp/run-store.cfg" "$tmp/run-etcd.cfg"
"$T" store copy "$tmp/fleet" "$tmp/run-store.cfg" >/dev/null 2>&1
start_host h1 "$tmp/run-etcd.cfg"
check "run: the first host leads and binds the 6 pods" wait_for 30 bound_count 6
start_host h2 "$tmp/run-etcd.cfg"
check "run: the second host waits as a standby" wait_for 20 grep -q "standby: etcd .* is held by" "$tmp/h2.log"
check "run: the standby is not ready, and says why" sh -c "p=\$(sed -n 's|.*on http://127.0.0.1:\\([0-9]*\\).*|\\1|p' '$tmp/h2.log'); curl -s http://127.0.0.1:\$p/readyz | grep -q standby"
check "run: after it, the state is whole" state_ok 6
t0=$(now_ms)
kill -KILL "$pid_h1"
if wait_for 20 grep -q "took over" "$tmp/h2.log"; then
    ok "run: kill -9 of the active host: the standby takes over ($(($(now_ms) - t0)) ms, lease 2 s)"
else not_ok "run: kill -9 of the active host: the standby takes over" "$(tail -5 "$tmp/h2.log")"; fi
add_pods 7 8
check "run: the new leader binds what comes after" wait_for 20 bound_count 8
check "run: after kill -9, every pod bound once, no node over capacity, nothing lost" state_ok 8

# SIGSTOP past the lease: a third host takes over; the paused one, when it
# resumes, steps down, and its writes are refused by etcd itself
start_host h3 "$tmp/run-etcd.cfg"
wait_for 20 grep -q "standby: etcd" "$tmp/h3.log"
kill -STOP "$pid_h2"
check "run: SIGSTOP of the active host past its lease: the standby takes over" wait_for 20 grep -q "took over" "$tmp/h3.log"
add_pods 9 10
check "run: the new leader binds while the old one is paused" wait_for 20 bound_count 10
kill -CONT "$pid_h2"
check "run: the resumed host steps down (its lease is gone)" wait_for 20 grep -q "stepping down" "$tmp/h2.log"
add_pods 11 12
check "run: scheduling goes on after the old leader resumed" wait_for 20 bound_count 12
check "run: after SIGSTOP/SIGCONT, every pod bound once, no node over capacity, nothing lost" state_ok 12

# the write a paused leader sends when it resumes: etcd refuses it
if [ -x "$TOP_BUILDDIR/tests/tools/etcdfence" ]; then
    kill -TERM "$pid_h2" "$pid_h3" 2>/dev/null
    wait_for 20 stopped "$pid_h3"
    "$TOP_BUILDDIR/tests/tools/etcdfence" "$tmp/run-store.cfg" Pod/default/p1 \
        metadata.labels.stale yes "$tmp/GO" >"$tmp/fence.out" 2>"$tmp/fence.err" &
    fpid=$!
    pids="$pids $fpid"
    wait_for 20 grep -q "^leading" "$tmp/fence.out"
    kill -STOP "$fpid"
    start_host h4 "$tmp/run-etcd.cfg"
    check "fence: another host leads once the paused one's lease expired" wait_for 20 grep -q "took over\|bound\|state etcd" "$tmp/h4.log"
    kill -CONT "$fpid"
    touch "$tmp/GO"
    wait_for 20 stopped "$fpid"
    wait "$fpid"
    frc=$?
    if [ $frc -eq 0 ] && grep -q "refused: Pod/default/p1: etcd refused the write: this host no longer leads" "$tmp/fence.out" &&
        ! etcd_get /run/o/Pod/default/p1 | grep -q stale; then
        ok "fence: the paused leader's write after it resumed is refused by etcd, the object unchanged"
    else not_ok "fence: the paused leader's write after it resumed is refused by etcd" "rc=$frc" "$(cat "$tmp/fence.out" "$tmp/fence.err")"; fi
    kill -TERM "$pid_h4" 2>/dev/null
    wait_for 20 stopped "$pid_h4"
else
    not_ok "fence: tools/etcdfence is built" "missing $TOP_BUILDDIR/tests/tools/etcdfence"
fi

# ---- compaction: a host whose watch resumes at a compacted revision
# lists again and takes the differences (p1 deleted and "late" added
# meanwhile; the addition is what the log shows) ----
etcd_store_cfg "$tmp/cmp-store.cfg" /cmp "lease_ttl_s = 60; timeout_ms = 2000;"
with_store kube.cfg "$tmp/cmp-store.cfg" "$tmp/cmp-etcd.cfg"
"$T" store copy "$tmp/fleet" "$tmp/cmp-store.cfg" >/dev/null 2>&1
start_host hc "$tmp/cmp-etcd.cfg"
wait_for 30 sh -c "grep -c 'bound to' '$tmp/hc.log' | grep -qx 6"
kill -STOP "$pid_hc"
kill -KILL "$etcd_pid_1"
wait_for 20 stopped "$etcd_pid_1"
etcd_member 1
wait_for 30 etcd_healthy "$etcd_url_1"
etcd_put /cmp/o/Pod/default/late "$(pod_json late)"
curl -s -m 5 -X POST "$etcd_url_1/v3/kv/deleterange" -d "{\"key\":\"$(b64 /cmp/o/Pod/default/p1)\"}" >/dev/null
rev=$(curl -s -m 5 -X POST "$etcd_url_1/v3/kv/range" -d "{\"key\":\"$(b64 /cmp/o/Pod/default/late)\"}" |
    sed -n 's/.*"revision":"\([0-9]*\)".*/\1/p')
curl -s -m 5 -X POST "$etcd_url_1/v3/kv/compaction" -d "{\"revision\":\"$rev\"}" >/dev/null
kill -CONT "$pid_hc"
check "compaction: the resumed watch finds its revision compacted and lists again" wait_for 30 grep -q "was compacted: listing again" "$tmp/hc.log"
check "compaction: what was added meanwhile is bound" wait_for 30 grep -q "Pod default/late: bound to" "$tmp/hc.log"
kill -TERM "$pid_hc"
wait_for 20 stopped "$pid_hc"

# ---- a 3-member cluster: one member killed, scheduling goes on ----
for p in $pids; do kill -KILL "$p" 2>/dev/null; done
if etcd_cluster 3; then
    ok "a 3-member etcd cluster starts"
    EURL=$etcd_url_2
    # a lease long enough that the cluster's own election after a member
    # dies (and a loaded machine) does not end it: this part is about the
    # store, failover is tested above
    etcd_store_cfg "$tmp/run-store.cfg" /run "lease_ttl_s = 10; timeout_ms = 2000;"
    with_store kube.cfg "$tmp/run-store.cfg" "$tmp/run-etcd.cfg"
    rm -f "$tmp"/h*.log
    "$T" store copy "$tmp/fleet" "$tmp/run-store.cfg" >/dev/null 2>&1
    start_host h5 "$tmp/run-etcd.cfg"
    check "cluster: the host binds the 6 pods" wait_for 30 bound_count 6
    start_host h6 "$tmp/run-etcd.cfg"
    wait_for 20 grep -q "standby: etcd" "$tmp/h6.log"
    kill -KILL "$etcd_pid_1" # the members' first endpoint, which the hosts use
    add_pods 7 9
    check "cluster: with member 1 killed, the host binds what comes (next endpoint)" wait_for 30 bound_count 9
    check "cluster: every pod bound once, no node over capacity, nothing lost" state_ok 9
    check "cluster: the standby stays a standby (the leader kept its lease)" sh -c "! grep -q 'took over' '$tmp/h6.log'"

    # the whole cluster down: a host that starts now waits, says why, and
    # goes on once a quorum is back, without a restart
    for p in $pids; do kill -KILL "$p" 2>/dev/null; done
    wait_for 20 sh -c "! kill -0 $etcd_pid_2 2>/dev/null && ! kill -0 $etcd_pid_3 2>/dev/null"
    start_host h7 "$tmp/run-etcd.cfg"
    wait_for 20 grep -q "serving" "$tmp/h7.log"
    p7=$(ready_port h7)
    check "down at start: /readyz says it waits for the store, and why" wait_for 20 sh -c "curl -s http://127.0.0.1:$p7/readyz | grep -q 'waiting for the store: .*connect'"
    check "down at start: the log says so" grep -q "the store is not ready: .*trying again" "$tmp/h7.log"
    etcd_member 2
    etcd_member 3
    wait_for 30 etcd_healthy "$etcd_url_2"
    check "down at start: once a quorum is back, the host leads without a restart" wait_for 40 grep -q "the store answers again" "$tmp/h7.log"
    add_pods 10 10
    check "down at start: it binds what comes" wait_for 30 bound_count 10
    check "down at start: /readyz is ready" sh -c "curl -s http://127.0.0.1:$p7/readyz | grep -q '^ok'"
    check "down at start: every pod bound once, nothing lost" state_ok 10
else
    not_ok "a 3-member etcd cluster starts" "$(tail -3 "$tmp"/etcd-e*.log)"
fi

# ---- TLS: client certificates, verification on ----
for p in $pids; do kill -KILL "$p" 2>/dev/null; done
if ! command -v openssl >/dev/null 2>&1; then
    echo "# TLS checks skipped: no openssl to make certificates"
    ok "TLS # SKIP no openssl to make certificates"
else
    pki="$tmp/pki"
    mkdir -p "$pki"
    (
        cd "$pki" || exit 1
        openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 \
            -subj /CN=trellis-test-ca
        openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key -out other-ca.pem \
            -days 2 -subj /CN=another-ca
        # clientAuth too: etcd's gateway calls its own gRPC server with it
        printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' >server.ext
        openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=etcd
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
            -out server.pem -days 2 -extfile server.ext
        printf 'extendedKeyUsage=clientAuth\n' >client.ext
        openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj /CN=trellis
        openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
            -out client.pem -days 2 -extfile client.ext
    ) >"$tmp/pki.log" 2>&1
    ETCD_SCHEME=https
    ETCD_FLAGS="--cert-file $pki/server.pem --key-file $pki/server.key --client-cert-auth --trusted-ca-file $pki/ca.pem"
    ETCD_CURL_OPTS="--cacert $pki/ca.pem --cert $pki/client.pem --key $pki/client.key"
    if etcd_cluster 1; then
        ok "TLS: an etcd member that wants client certificates starts"
        etcd_store_cfg "$tmp/tls-store.cfg" /tls \
            "tls = { ca = \"$pki/ca.pem\"; cert = \"$pki/client.pem\"; key = \"$pki/client.key\"; };"
        with_store kube.cfg "$tmp/tls-store.cfg" "$tmp/tls-etcd.cfg"
        check "TLS: store copy with a client certificate" sh -c "'$T' store copy '$tmp/fleet' '$tmp/tls-store.cfg' | grep -q 'copied 9 object'"
        "$T" schedule -c "$tmp/tls-etcd.cfg" -o json >"$tmp/tls.json" 2>&1
        check "TLS: schedule binds through it" sh -c "[ \$(grep -c '\"result\": \"scheduled\"' '$tmp/tls.json') -eq 6 ]"
        etcd_store_cfg "$tmp/nocert.cfg" /tls "tls = { ca = \"$pki/ca.pem\"; };"
        out=$("$T" store copy "$tmp/nocert.cfg" "$tmp/nocert-out" 2>&1)
        rc=$?
        if [ $rc -eq 2 ] && printf '%s' "$out" | grep -q "cannot list"; then
            ok "TLS: without a client certificate etcd refuses, and trellis says so"
        else not_ok "TLS: without a client certificate etcd refuses, and trellis says so" "rc=$rc" "$out"; fi
        etcd_store_cfg "$tmp/wrongca.cfg" /tls \
            "tls = { ca = \"$pki/other-ca.pem\"; cert = \"$pki/client.pem\"; key = \"$pki/client.key\"; };"
        out=$("$T" store copy "$tmp/wrongca.cfg" "$tmp/wrongca-out" 2>&1)
        rc=$?
        if [ $rc -eq 2 ] && printf '%s' "$out" | grep -q -i "certificate"; then
            ok "TLS: a server certificate the CA did not sign is refused (verification is on)"
        else not_ok "TLS: a server certificate the CA did not sign is refused (verification is on)" "rc=$rc" "$out"; fi
    else
        not_ok "TLS: an etcd member that wants client certificates starts" "$(cat "$tmp/pki.log")" "$(tail -5 "$tmp/etcd-e1.log")"
    fi
fi

# ---- progress notifications keep an idle watch open ----
# etcd sends one every second here; the host drops a watch that brought
# nothing for 3 s (libcurl judges the speed over its last seconds: without
# notifications the drop comes about 9 s after the last message). Idle
# through seven 2 s summaries (14 s), it never does.
ETCD_SCHEME=http
ETCD_FLAGS="--experimental-watch-progress-notify-interval=1s"
ETCD_CURL_OPTS=""
if etcd_cluster 1; then
    etcd_store_cfg "$tmp/pn-store.cfg" /pn "watch_timeout_ms = 3000;"
    { echo "summary_interval_ms = 2000;"; cat "$top/conf/kube.cfg" "$tmp/pn-store.cfg"; } >"$tmp/pn.cfg"
    "$T" store copy "$tmp/fleet" "$tmp/pn-store.cfg" >/dev/null 2>&1
    "$T" run -c "$tmp/pn.cfg" --listen 127.0.0.1:0 --log-level info >/dev/null 2>"$tmp/pn.log" &
    pn_pid=$!
    pids="$pids $pn_pid"
    summaries() { [ "$(grep -c 'summary:' "$tmp/pn.log")" -ge "$1" ]; }
    check "progress notifications: the host leads and binds" wait_for 30 summaries 1
    check "progress notifications: idle for seven summaries (14 s)" wait_for 40 summaries 8
    check "progress notifications: the idle watch (timeout 3 s) was never dropped" sh -c "! grep -q 'the watch ended' '$tmp/pn.log'"
    kill -TERM "$pn_pid"
else
    not_ok "progress notifications: an etcd member starts" "$(tail -5 "$tmp/etcd-e1.log")"
fi

finish
