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
etcd_put() {
    curl -s -m 5 -X POST "$etcd_url_1/v3/kv/put" \
        -d "{\"key\":\"$(b64 "$1")\",\"value\":\"$(b64 "$2")\"}" >/dev/null
}
etcd_get() {
    curl -s -m 5 -X POST "$etcd_url_1/v3/kv/range" -d "{\"key\":\"$(b64 "$1")\"}" |
        sed -n 's/.*"value":"\([^"]*\)".*/\1/p' | base64 -d
}
etcd_count() {
    curl -s -m 5 -X POST "$etcd_url_1/v3/kv/range" \
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

finish
