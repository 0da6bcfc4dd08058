#!/bin/sh
# kube.sh - the Kubernetes API store against a real kube-apiserver
# (Debian's kubernetes 1.20, built once by scripts/kube-apiserver.sh) and
# a real etcd on 127.0.0.1: seeding it with `trellis store copy`, the
# kube example scheduled through it (Pods bound through pods/binding, the
# same decisions as the file store), the Gardener example through custom
# resources (one-shot and in `trellis run`), the openMCP and Fleet examples
# through their CustomResourceDefinitions, export back to a directory,
# config and kubeconfig errors;
# `trellis run` hosts sharing one API server through a Lease (kill -9 of
# the leader, SIGSTOP past its lease, the API server restarted mid-watch,
# an API server that is down when the host starts).
# Skipped, with the reason, when the API server cannot be built or run.
set -u
. "$SRCDIR/testlib.sh"
. "$SRCDIR/etcdlib.sh"
. "$SRCDIR/kubelib.sh"
hosts_setup
why=$(kube_why_not)
if [ -n "$why" ]; then
    echo "1..0 # SKIP $why"
    exit 0
fi
T=$TRELLIS
top=$TOP_SRCDIR

if ! etcd_cluster 1; then
    not_ok "an etcd member for the API server starts" "$(tail -5 "$tmp/etcd-e1.log")"
    finish
    exit 1
fi
if ! kube_certs; then
    not_ok "the test certificates are made" "$(tail -5 "$tmp/pki.log")"
    finish
    exit 1
fi
if kube_start; then
    ok "kube-apiserver starts on 127.0.0.1:$kube_port against etcd"
else
    not_ok "kube-apiserver starts" "$(tail -20 "$tmp/kube-apiserver.log")"
    finish
    exit 1
fi
kube_kubeconfig "$tmp/kubeconfig"
kube_kubeconfig "$tmp/kubeconfig-data" data

# a config: the profiles of CONF with the store group of STORECFG (as an
# operator would: conf/kube.cfg binds Pods through pods/binding already)
with_store() { { cat "$top/conf/$1"; cat "$2"; } >"$3"; }
# start_host NAME CONFIG [OPTION...]: `trellis run` in the background,
# its log in $tmp/NAME.log, its pid in $pid_NAME (and $pids)
start_host() { # NAME CONFIG [OPTION...]
    name=$1 cfg=$2
    shift 2
    "$T" run -c "$cfg" --listen 127.0.0.1:0 --log-level info "$@" >"$tmp/$name.out" 2>"$tmp/$name.log" &
    eval "pid_$name=$!"
    pids="$pids $!"
}
store_cfg() { # FILE KUBECONFIG [MORE]
    printf 'store = { type = "kubernetes"; kubeconfig = "%s"; %s };\n' "$2" "${3:-}" >"$1"
}

# ---- config and kubeconfig errors ----
store_cfg "$tmp/bad1.cfg" "$tmp/nothere"
expect_fail() { # NAME EXPECTED-TEXT CONFIG
    out=$("$T" store copy "$3" "$tmp/out-$(basename "$3")" 2>&1)
    rc=$?
    case $out in *"$2"*) [ $rc -ne 0 ] && ok "$1" && return ;; esac
    not_ok "$1" "rc=$rc" "$out"
}
expect_fail "config: an unreadable kubeconfig is named with the config line" "bad1.cfg:1: store.kubeconfig: cannot read $tmp/nothere" "$tmp/bad1.cfg"
printf 'store = { type = "kubernetes"; endpoints = [ "http://127.0.0.1:1" ]; };\n' >"$tmp/bad2.cfg"
expect_fail "config: an etcd setting in a Kubernetes API store is named" "store.endpoints is a setting of the etcd store" "$tmp/bad2.cfg"
printf 'store = { type = "etcd"; endpoints = [ "http://127.0.0.1:1" ]; kubeconfig = "x"; };\n' >"$tmp/bad3.cfg"
expect_fail "config: a Kubernetes API setting in an etcd store is named" "store.kubeconfig is a setting of the Kubernetes API store" "$tmp/bad3.cfg"
sed 's/current-context: test/current-context: nope/' "$tmp/kubeconfig" >"$tmp/kc-ctx"
store_cfg "$tmp/bad4.cfg" "$tmp/kc-ctx" 'kinds = [ "Pod" ];'
expect_fail "kubeconfig: a context it does not hold is named" "no context named 'nope' in contexts" "$tmp/bad4.cfg"
sed 's/^    client-key: .*/    exec: { command: get-token }/' "$tmp/kubeconfig" >"$tmp/kc-exec"
store_cfg "$tmp/bad5.cfg" "$tmp/kc-exec" 'kinds = [ "Pod" ];'
expect_fail "kubeconfig: an exec credential plugin is refused, saying what to give instead" "which trellis does not run" "$tmp/bad5.cfg"
store_cfg "$tmp/bad6.cfg" "$tmp/kubeconfig"
expect_fail "store copy out of the API needs the kinds to export" "reads only the kinds it is told" "$tmp/bad6.cfg"
store_cfg "$tmp/bad7.cfg" "$tmp/kubeconfig" 'kinds = [ "Gadget" ];'
"$T" store copy "$tmp/bad7.cfg" "$tmp/out-bad7" >"$tmp/bad7.out" 2>&1
check "a kind the API server does not serve is named" grep -q "serves no kind Gadget" "$tmp/bad7.out"
sed 's/^    certificate-authority: .*/    certificate-authority: \/dev\/null/' "$tmp/kubeconfig" >"$tmp/kc-noca"
store_cfg "$tmp/bad8.cfg" "$tmp/kc-noca" 'kinds = [ "Pod" ];'
expect_fail "TLS: a server the CA does not vouch for is refused" "cannot read which resources it serves" "$tmp/bad8.cfg"

# ---- store copy and schedule: kube ----
mkdir -p "$tmp/kube-files"
cp "$top/examples/kube/"* "$tmp/kube-files/"
chmod -R u+w "$tmp/kube-files"
for ns in shop analytics ml; do
    printf -- '---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n' "$ns" >>"$tmp/kube-files/namespaces.yaml"
done
store_cfg "$tmp/kube-store.cfg" "$tmp/kubeconfig-data" 'kinds = [ "Namespace", "Node", "Pod" ];'
with_store kube.cfg "$tmp/kube-store.cfg" "$tmp/kube-api.cfg"
"$T" store copy "$tmp/kube-files" "$tmp/kube-store.cfg" >"$tmp/copy.out" 2>&1
check "store copy: the kube example (3 Namespaces first) into the API server" grep -q "copied 15 object" "$tmp/copy.out"
check "store copy: a Node's status is written through its status subresource" sh -c "kube_get() { curl -s --cacert '$tmp/pki/ca.crt' --cert '$tmp/pki/client.crt' --key '$tmp/pki/client.key' '$kube_url'\$1; }; kube_get /api/v1/nodes/gpu-c | grep -q '\"nvidia.com/gpu\"'"
"$T" store copy "$tmp/kube-files" "$tmp/kube-store.cfg" >"$tmp/copy2.out" 2>&1
check "store copy again: what exists is named, nothing overwritten (exit 1)" grep -q "Pod shop/payments-0 exists already in the API server" "$tmp/copy2.out"

mkdir -p "$tmp/nons"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lost\n  namespace: nowhere\n' >"$tmp/nons/cm.yaml"
"$T" store copy "$tmp/nons" "$tmp/kube-store.cfg" >"$tmp/nons.out" 2>&1
check "store copy: an object in a Namespace the server lacks: the Namespace is named, and what to do" grep -q "ConfigMap nowhere/lost: HTTP 404: .*(create the Namespace nowhere first)" "$tmp/nons.out"
"$T" schedule -c "$top/conf/kube.cfg" -s "$tmp/kube-files" -o json >"$tmp/kube-file.json" 2>"$tmp/kube-file.log"
"$T" schedule -c "$tmp/kube-api.cfg" -o json >"$tmp/kube-api.json" 2>"$tmp/kube-api.log"
check "schedule: kube through the API server decides as through the file store" cmp "$tmp/kube-file.json" "$tmp/kube-api.json"
bound=$(kube_get /api/v1/namespaces/shop/pods/payments-0)
case $bound in *'"nodeName": "worker-a"'* | *'"nodeName":"worker-a"'*) ok "schedule: payments-0 is bound to worker-a through pods/binding" ;;
*) not_ok "schedule: payments-0 is bound to worker-a through pods/binding" "$bound" ;; esac
# the preemption that made room nominated it first (pods/status), then the
# Binding went after that patch in the same flush
case $bound in *'"nominatedNodeName": "worker-a"'* | *'"nominatedNodeName":"worker-a"'*) ok "schedule: payments-0's status.nominatedNodeName names worker-a, written before its Binding" ;;
*) not_ok "schedule: payments-0's status.nominatedNodeName names worker-a, written before its Binding" "$bound" ;; esac
"$T" schedule -c "$tmp/kube-api.cfg" -o json >"$tmp/kube-api2.json" 2>&1
"$T" schedule -c "$top/conf/kube.cfg" -s "$tmp/kube-files" -o json >"$tmp/kube-file2.json" 2>&1
# the preemption victim: the file store unbinds it (pending again, and
# unschedulable now); the API cannot unbind a Pod, so it is deleted, as
# kube-scheduler deletes its victims (gracefully: a bound Pod keeps its
# deletionTimestamp until its kubelet, which this test has none of, ends it)
check "preemption through the API server: the victim is deleted (with its resourceVersion as precondition)" sh -c "curl -s --cacert '$tmp/pki/ca.crt' --cert '$tmp/pki/client.crt' --key '$tmp/pki/client.key' '$kube_url/api/v1/namespaces/analytics/pods/batch-report-7x2kq' | grep -q deletionTimestamp"
check "schedule again: the file store retries the unbound victim, the API server's is being deleted" sh -c "grep -q batch-report '$tmp/kube-file2.json' && ! grep -q batch-report '$tmp/kube-api2.json'"
# each decision as "name result"
pairs() { awk -F'"' '/"name":/ { n = $4 } /"result":/ { print n, $4 }' "$1"; }
pairs "$tmp/kube-file2.json" | grep -v batch-report >"$tmp/f2"
pairs "$tmp/kube-api2.json" >"$tmp/a2"
check "schedule again: the other decisions agree" cmp "$tmp/f2" "$tmp/a2"
"$T" store copy "$tmp/kube-store.cfg" "$tmp/kube-back" >"$tmp/back.out" 2>&1
# 15 copied in and the API server's own Namespaces (default,
# kube-node-lease, kube-public, kube-system)
check "store copy: the API server back into a directory" grep -q "copied 19 object" "$tmp/back.out"
check "store copy: no resourceVersion is copied" sh -c "! grep -rq resourceVersion '$tmp/kube-back'"
"$T" schedule -c "$top/conf/kube.cfg" -s "$tmp/kube-back" -o json -n >"$tmp/kube-back.json" 2>&1
check "the exported state decides as the file store did after its writes" sh -c "grep -c '\"result\": \"scheduled\"' '$tmp/kube-back.json' | grep -qx 0"
# a Pod's nodeName patched instead of bound: the API server's refusal is
# explained
sed 's/ subresource = "binding";//' "$tmp/kube-api.cfg" >"$tmp/kube-patch.cfg"
cat >"$tmp/late.json" <<'POD'
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"late","namespace":"shop"},
 "spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"100m"}}}]}}
POD
kube_send POST /api/v1/namespaces/shop/pods "$tmp/late.json" >/dev/null
"$T" schedule -c "$tmp/kube-patch.cfg" -o json >"$tmp/patch.json" 2>"$tmp/patch.log"
check "a patch of spec.nodeName is refused by the API server and the profile change named" grep -q 'set binding.subresource = \\"binding\\"\|set binding.subresource = "binding"' "$tmp/patch.json" "$tmp/patch.log"

# ---- the Gardener example through custom resources ----
# Seeds, Shoots, CloudProfiles and Projects as CustomResourceDefinitions
# (schemaless, with a status subresource), as a garden cluster serves them
crd_in() { # GROUP VERSION KIND PLURAL SCOPE
    cat >"$tmp/crd-$4.json" <<CRD
{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"$4.$1"},
 "spec":{"group":"$1","scope":"$5",
  "names":{"kind":"$3","plural":"$4","singular":"$(echo "$3" | tr 'A-Z' 'a-z')","listKind":"$3List"},
  "versions":[{"name":"$2","served":true,"storage":true,"subresources":{"status":{}},
   "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}
CRD
    kube_send POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions "$tmp/crd-$4.json" >/dev/null
}
crd() { crd_in core.gardener.cloud v1beta1 "$@"; } # KIND PLURAL SCOPE
crd Seed seeds Cluster
crd Shoot shoots Namespaced
crd CloudProfile cloudprofiles Cluster
crd Project projects Cluster
served() { kube_get /apis/core.gardener.cloud/v1beta1 | grep -q '"name": "projects"'; }
check "the Gardener CustomResourceDefinitions are served" wait_for 30 served
mkdir -p "$tmp/garden-files"
cp "$top/examples/gardener/"* "$tmp/garden-files/"
chmod -R u+w "$tmp/garden-files"
for ns in garden garden-data garden-ml garden-shop garden-web; do
    printf -- '---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n' "$ns" >>"$tmp/garden-files/namespaces.yaml"
done
store_cfg "$tmp/garden-store.cfg" "$tmp/kubeconfig" 'kinds = [ "Namespace", "Seed", "Shoot", "CloudProfile", "Project", "ConfigMap" ];'
with_store gardener.cfg "$tmp/garden-store.cfg" "$tmp/garden-api.cfg"
"$T" store copy "$tmp/garden-files" "$tmp/garden-store.cfg" >"$tmp/g-copy.out" 2>&1
check "store copy: the Gardener example into the API server as custom resources" sh -c "grep -q 'copied 45 object' '$tmp/g-copy.out'"
cp -r "$tmp/garden-files" "$tmp/garden-files2"
"$T" schedule -c "$top/conf/gardener.cfg" -s "$tmp/garden-files2" -o json >"$tmp/g-file.json" 2>&1
"$T" schedule -c "$tmp/garden-api.cfg" -o json >"$tmp/g-api.json" 2>"$tmp/g-api.log"
check "schedule: Gardener through the API server decides as through the file store" cmp "$tmp/g-file.json" "$tmp/g-api.json"
check "schedule: Gardener made decisions" grep -q '"result": "scheduled"' "$tmp/g-api.json"
# the first Shoot scheduled and its Seed, as the decision says
sched=$(awk -F'"' '/"namespace":/ { ns = $4 } /"name":/ { n = $4 } /"result": "scheduled"/ { s = 1 } s && /"targets"/ { getline; print ns, n, $2; exit }' "$tmp/g-api.json")
set -- $sched
check "schedule: the scheduled Shoot $1/$2 has spec.seedName $3 in the API server" sh -c "curl -s --cacert '$tmp/pki/ca.crt' --cert '$tmp/pki/client.crt' --key '$tmp/pki/client.key' '$kube_url/apis/core.gardener.cloud/v1beta1/namespaces/$1/shoots/$2' | grep -qE '\"seedName\": ?\"$3\"'"

# conf/gardener.cfg writes Events: core/v1 Events in the Shoots'
# namespaces, as many as the file store wrote files
nev=$(ls "$tmp/garden-files2/events" | wc -l)
check "schedule: the $nev Events the file store wrote are core/v1 Events in the API server" sh -c "[ \$(curl -s --cacert '$tmp/pki/ca.crt' --cert '$tmp/pki/client.crt' --key '$tmp/pki/client.key' '$kube_url/api/v1/events' | grep -c '\"reportingComponent\": \"trellis\"') -eq $nev ] && [ $nev -gt 0 ]"
check "schedule: no Event was refused" sh -c "! grep -q 'event for .* not written\|not written' '$tmp/g-api.log'"

# the Gardener profile in `trellis run`: a Shoot created in the API
# server (as YAML, as kubectl would send it) gets a Seed
awk 'BEGIN { RS = "\n---\n" } /name: monitoring/' "$top/examples/gardener/shoots-garden.yaml" |
    sed 's/name: monitoring/name: monitoring-2/; /uid:/d' >"$tmp/shoot2.yaml"
store_cfg "$tmp/garden-run-store.cfg" "$tmp/kubeconfig" 'lease_name = "trellis-garden";'
with_store gardener.cfg "$tmp/garden-run-store.cfg" "$tmp/garden-run.cfg"
"$T" run -c "$tmp/garden-run.cfg" --listen 127.0.0.1:0 --log-level info >"$tmp/g-run.out" 2>"$tmp/g-run.log" &
pid_g=$!
pids="$pids $pid_g"
check "run: the Gardener profile reads the custom resources" wait_for 30 grep -q "state kubernetes" "$tmp/g-run.log"
kube_send POST /apis/core.gardener.cloud/v1beta1/namespaces/garden/shoots "$tmp/shoot2.yaml" application/yaml >"$tmp/shoot2.out"
check "run: a Shoot created in the API server is scheduled" wait_for 30 grep -q "Shoot garden/monitoring-2: bound to" "$tmp/g-run.log"
check "run: its spec.seedName is in the API server" sh -c "curl -s --cacert '$tmp/pki/ca.crt' --cert '$tmp/pki/client.crt' --key '$tmp/pki/client.key' '$kube_url/apis/core.gardener.cloud/v1beta1/namespaces/garden/shoots/monitoring-2' | grep -qE '\"seedName\": ?\"aws-garden\"'"
kill -TERM "$pid_g"
wait_for 20 stopped "$pid_g"

# a kind named in store.resources (no discovery needed to find it) still
# has its status written through the status subresource, where the
# server keeps it (a status in the POST is dropped)
mkdir -p "$tmp/seed-files"
sed 's/^  name: \(.*\)$/  name: named-\1/' "$tmp/garden-files/seeds.yaml" >"$tmp/seed-files/seeds.yaml"
store_cfg "$tmp/seed-store.cfg" "$tmp/kubeconfig" 'kinds = [ "Seed" ]; resources = ( { kind = "Seed"; api_version = "core.gardener.cloud/v1beta1"; plural = "seeds"; namespaced = false; } );'
"$T" store copy "$tmp/seed-files" "$tmp/seed-store.cfg" >"$tmp/seed-copy.out" 2>&1
nver=$(grep -c 'kubernetesVersion' "$tmp/seed-files/seeds.yaml")
check "store copy: the status of a kind named in store.resources goes through its status subresource" sh -c "[ \$(curl -s --cacert '$tmp/pki/ca.crt' --cert '$tmp/pki/client.crt' --key '$tmp/pki/client.key' '$kube_url/apis/core.gardener.cloud/v1beta1/seeds' | grep -o '\"kubernetesVersion\"' | wc -l) -eq \$((2 * $nver)) ] && [ $nver -gt 0 ]"

# a CustomResourceDefinition deleted while a host watches its kind: the
# host says which resource is no longer served (once, not every few
# seconds), lists it until it is served again, and then goes on
"$T" run -c "$tmp/garden-api.cfg" --listen 127.0.0.1:0 --log-level debug >"$tmp/crd.out" 2>"$tmp/crd.log" &
pid_crd=$!
pids="$pids $pid_crd"
check "CRD deleted: a Gardener host reads the state" wait_for 30 grep -q "state kubernetes" "$tmp/crd.log"
kube_send DELETE /apis/apiextensions.k8s.io/v1/customresourcedefinitions/shoots.core.gardener.cloud >/dev/null
check "CRD deleted: the host names the resource no longer served and what to look at" wait_for 30 grep -q "warn .*watch of Shoot: HTTP 404: .*no longer serves /apis/core.gardener.cloud/v1beta1/shoots (was its CustomResourceDefinition deleted?)" "$tmp/crd.log"
check "CRD deleted: the Shoots it held are deleted" wait_for 30 grep -q "store: Shoot .* deleted" "$tmp/crd.log"
gone_ok() { [ "$(grep -c 'warn .*Shoot.*404' "$tmp/crd.log")" -le 2 ] && grep -q "debug kubernetes store: listing Shoot again: .*HTTP 404" "$tmp/crd.log"; }
check "CRD deleted: said once, then tried again quietly" wait_for 30 gone_ok
kube_send POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions "$tmp/crd-shoots.json" >/dev/null
cat >"$tmp/shoot-late.json" <<'SHOOT'
{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{"name":"late","namespace":"garden"},
 "spec":{"cloudProfileName":"aws","region":"eu-west-1","provider":{"type":"aws"}}}
SHOOT
wait_for 30 sh -c "curl -s -m 5 --cacert '$tmp/pki/ca.crt' --cert '$tmp/pki/client.crt' --key '$tmp/pki/client.key' -X POST -H 'Content-Type: application/json' --data-binary @'$tmp/shoot-late.json' '$kube_url/apis/core.gardener.cloud/v1beta1/namespaces/garden/shoots' | grep -q '\"uid\"'"
check "CRD created again: the host says the watch works again" wait_for 30 grep -q "the watch of Shoot works again" "$tmp/crd.log"
check "CRD created again: a Shoot made then is scheduled" wait_for 30 grep -q "Shoot garden/late: bound to" "$tmp/crd.log"
kill -TERM "$pid_crd" 2>/dev/null
wait_for 20 stopped "$pid_crd"
# a host started while a kind's CRD is not installed: the kind is read
# once the CRD is (before, it was never read until a restart)
kube_send DELETE /apis/apiextensions.k8s.io/v1/customresourcedefinitions/shoots.core.gardener.cloud >/dev/null
wait_for 30 sh -c "! curl -s -m 5 --cacert '$tmp/pki/ca.crt' --cert '$tmp/pki/client.crt' --key '$tmp/pki/client.key' '$kube_url/apis/core.gardener.cloud/v1beta1' | grep -q '\"name\": \"shoots\"'"
"$T" run -c "$tmp/garden-api.cfg" --listen 127.0.0.1:0 --log-level debug >"$tmp/crd2.out" 2>"$tmp/crd2.log" &
pid_crd2=$!
pids="$pids $pid_crd2"
check "CRD not installed at start: the host says so, and that it reads Shoots once they are served" wait_for 30 grep -q "warn .*serves no kind Shoot .*; Shoot is read once it is served" "$tmp/crd2.log"
kube_send POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions "$tmp/crd-shoots.json" >/dev/null
sed 's/"name":"late"/"name":"later"/' "$tmp/shoot-late.json" >"$tmp/shoot-later.json"
wait_for 30 sh -c "curl -s -m 5 --cacert '$tmp/pki/ca.crt' --cert '$tmp/pki/client.crt' --key '$tmp/pki/client.key' -X POST -H 'Content-Type: application/json' --data-binary @'$tmp/shoot-later.json' '$kube_url/apis/core.gardener.cloud/v1beta1/namespaces/garden/shoots' | grep -q '\"uid\"'"
check "CRD installed later: the host reads the Shoots then and schedules a new one" wait_for 30 grep -q "Shoot garden/later: bound to" "$tmp/crd2.log"
kill -TERM "$pid_crd2" 2>/dev/null
wait_for 20 stopped "$pid_crd2"

# ---- the openMCP and Fleet examples through custom resources ----
# their CustomResourceDefinitions as the openMCP operator and KubeFleet
# install them (schemaless here, each with a status subresource): a
# status written with the object is dropped by the API server, so what
# lands shows the status subresource was used
crd_in clusters.openmcp.cloud v1alpha1 Cluster clusters Namespaced
crd_in clusters.openmcp.cloud v1alpha1 ClusterRequest clusterrequests Namespaced
crd_in placement.kubernetes-fleet.io v1beta1 ClusterResourcePlacement clusterresourceplacements Cluster
crd_in placement.kubernetes-fleet.io v1beta1 ClusterSchedulingPolicySnapshot clusterschedulingpolicysnapshots Cluster
crd_in placement.kubernetes-fleet.io v1beta1 ClusterResourceBinding clusterresourcebindings Cluster
crd_in cluster.kubernetes-fleet.io v1beta1 MemberCluster memberclusters Cluster
mc_served() {
    kube_get /apis/clusters.openmcp.cloud/v1alpha1 | grep -q '"name": "clusterrequests"' &&
        kube_get /apis/placement.kubernetes-fleet.io/v1beta1 | grep -q '"name": "clusterresourcebindings"' &&
        kube_get /apis/cluster.kubernetes-fleet.io/v1beta1 | grep -q '"name": "memberclusters"'
}
check "the openMCP and Fleet CustomResourceDefinitions are served" wait_for 30 mc_served

# openMCP: the example's decisions through the API server are the file
# store's; the request's status (phase, cluster) is where the status
# subresource keeps it, the Clusters carry the requests' finalizers, and
# the Cluster made for an Exclusive request exists with its labels
mkdir -p "$tmp/omcp-files" "$tmp/omcp-clusters"
cp "$top/examples/openmcp/requests.yaml" "$tmp/omcp-files/"
cp "$top/examples/openmcp/clusters.yaml" "$tmp/omcp-clusters/"
chmod -R u+w "$tmp/omcp-files" "$tmp/omcp-clusters"
for ns in $(sed -n 's/^  namespace: //p' "$top/examples/openmcp/"*.yaml | sort -u); do
    printf -- '---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n' "$ns" >>"$tmp/omcp-files/namespaces.yaml"
done
cp "$top/conf/openmcp-scheduler.yaml" "$tmp/" # named in openmcp.cfg, beside it
store_cfg "$tmp/omcp-store.cfg" "$tmp/kubeconfig" 'kinds = [ "Namespace", "Cluster", "ClusterRequest" ];'
with_store openmcp.cfg "$tmp/omcp-store.cfg" "$tmp/omcp-api.cfg"
"$T" store copy "$tmp/omcp-files" "$tmp/omcp-store.cfg" >"$tmp/o-copy.out" 2>&1
# the API server gives each request its own uid: the example's Clusters
# carry the requests' finalizers by uid (recovery), so they are copied in
# with the uids the server gave, and the file store decides on the same
awk '/^  name: / { n = $2 } /^  namespace: / { ns = $2 } /^  uid: / { print ns, n, $2 }' "$tmp/omcp-files/requests.yaml" >"$tmp/o-uids"
while read -r ns n old; do
    new=$(kube_get "/apis/clusters.openmcp.cloud/v1alpha1/namespaces/$ns/clusterrequests/$n" | sed -n 's/.*"uid": *"\([^"]*\)".*/\1/p')
    [ -n "$new" ] && sed -i "s/$old/$new/" "$tmp/omcp-clusters/clusters.yaml" "$tmp/omcp-files/requests.yaml"
done <"$tmp/o-uids"
"$T" store copy "$tmp/omcp-clusters" "$tmp/omcp-store.cfg" >>"$tmp/o-copy.out" 2>&1
nobj=$(cat "$tmp/omcp-files/"*.yaml "$tmp/omcp-clusters/"*.yaml | grep -c '^kind:')
check "store copy: the openMCP example ($nobj objects) into the API server, the requests' uids as it gave them" sh -c "[ \$(sed -n 's/^copied \\([0-9]*\\) .*/\\1/p' '$tmp/o-copy.out' | awk '{ n += \$1 } END { print n }') -eq $nobj ] && ! grep -q '5f0c1a2b-0001-4d3e-9f00-000000000001' '$tmp/omcp-clusters/clusters.yaml'"
mkdir -p "$tmp/omcp-files2"
cp "$tmp/omcp-files/"* "$tmp/omcp-clusters/"* "$tmp/omcp-files2/"
"$T" schedule -c "$top/conf/openmcp.cfg" -s "$tmp/omcp-files2" -o json >"$tmp/o-file.json" 2>&1
"$T" schedule -c "$tmp/omcp-api.cfg" -o json >"$tmp/o-api.json" 2>"$tmp/o-api.log"
check "schedule: openMCP through the API server decides as through the file store" cmp "$tmp/o-file.json" "$tmp/o-api.json"
check "schedule: openMCP made decisions, a Cluster created among them" sh -c "grep -q '\"result\": \"scheduled\"' '$tmp/o-api.json' && grep -q '\"created\"' '$tmp/o-api.json'"
# every request the file store granted is Granted in the API server, on
# the Cluster the file store wrote, which carries its finalizer
o_granted() {
    for f in "$tmp/omcp-files2/"*; do
        awk 'BEGIN { RS = "\n---\n" }
            /kind: ClusterRequest/ && /phase: Granted/ {
                k = split($0, l, "\n")
                for (i = 1; i <= k; i++) {
                    if (l[i] ~ /^  name: /) n = substr(l[i], 9)
                    if (l[i] ~ /^  namespace: /) ns = substr(l[i], 14)
                    if (l[i] ~ /^    name: /) c = substr(l[i], 11)
                    if (l[i] ~ /^    namespace: /) cns = substr(l[i], 16)
                }
                print ns, n, cns, c
            }' "$f"
    done
}
o_granted >"$tmp/o-granted"
ngr=$(wc -l <"$tmp/o-granted")
o_api_ok() {
    while read -r ns n cns c; do
        r=$(kube_get "/apis/clusters.openmcp.cloud/v1alpha1/namespaces/$ns/clusterrequests/$n")
        echo "$r" | tr -d ' \n' | grep -q "\"phase\":\"Granted\"" || { echo "$ns/$n: not Granted: $r"; return 1; }
        echo "$r" | tr -d ' \n' | grep -q "\"cluster\":{\"name\":\"$c\",\"namespace\":\"$cns\"}" || { echo "$ns/$n: status.cluster is not $cns/$c: $r"; return 1; }
        k=$(kube_get "/apis/clusters.openmcp.cloud/v1alpha1/namespaces/$cns/clusters/$c")
        uid=$(kube_get "/apis/clusters.openmcp.cloud/v1alpha1/namespaces/$ns/clusterrequests/$n" | sed -n 's/.*"uid": *"\([^"]*\)".*/\1/p')
        echo "$k" | grep -q "\"request.clusters.openmcp.cloud/$uid\"" || { echo "$cns/$c lacks the finalizer of $ns/$n ($uid): $k"; return 1; }
    done <"$tmp/o-granted"
}
check "schedule: the file store granted requests ($ngr)" test "$ngr" -gt 2
check "schedule: they are Granted in the API server (status subresource), on the same Clusters, which carry their finalizers" o_api_ok

# openMCP in `trellis run`: a request made, Granted a new Cluster, then
# deleted: its finalizer comes off the Cluster, the Cluster (labelled
# delete-without-requests) is deleted, then the request goes (the
# Cluster's patch and its deletion in one flush were refused, and the
# request stayed, being deleted, for good)
store_cfg "$tmp/omcp-run-store.cfg" "$tmp/kubeconfig" 'lease_name = "trellis-openmcp";'
with_store openmcp.cfg "$tmp/omcp-run-store.cfg" "$tmp/omcp-run.cfg"
start_host omcp "$tmp/omcp-run.cfg"
check "run: the openMCP profile reads the custom resources" wait_for 30 grep -q "state kubernetes" "$tmp/omcp.log"
cat >"$tmp/req-late.json" <<'REQ'
{"apiVersion":"clusters.openmcp.cloud/v1alpha1","kind":"ClusterRequest",
 "metadata":{"name":"mcp-late","namespace":"team-c"},"spec":{"purpose":"mcp"}}
REQ
kube_send POST /apis/clusters.openmcp.cloud/v1alpha1/namespaces/team-c/clusterrequests "$tmp/req-late.json" >/dev/null
late_granted() {
    kube_get /apis/clusters.openmcp.cloud/v1alpha1/namespaces/team-c/clusterrequests/mcp-late | tr -d ' \n' | grep -q '"phase":"Granted"'
}
check "run: a request for an Exclusive purpose is Granted a new Cluster" wait_for 30 late_granted
late_cluster=$(kube_get /apis/clusters.openmcp.cloud/v1alpha1/namespaces/team-c/clusterrequests/mcp-late | tr -d ' \n' | sed -n 's/.*"cluster":{"name":"\([^"]*\)".*/\1/p')
kube_send DELETE /apis/clusters.openmcp.cloud/v1alpha1/namespaces/team-c/clusterrequests/mcp-late >/dev/null
gone() { kube_get "$1" | grep -q '"code": *404\|"code":404'; }
check "run: the request deleted, its Cluster $late_cluster (delete-without-requests) is deleted" wait_for 30 gone "/apis/clusters.openmcp.cloud/v1alpha1/namespaces/mcp-clusters/clusters/$late_cluster"
check "run: ... and then the request goes (its finalizer released)" wait_for 30 gone /apis/clusters.openmcp.cloud/v1alpha1/namespaces/team-c/clusterrequests/mcp-late
# ... and one whose Cluster another finalizer holds: the Cluster is
# marked deleted (a DELETE: the server sets deletionTimestamp, which a
# patch may not) and keeps only the other finalizer; the request goes
sed 's/"mcp-late"/"mcp-late2"/' "$tmp/req-late.json" >"$tmp/req-late2.json"
kube_send POST /apis/clusters.openmcp.cloud/v1alpha1/namespaces/team-c/clusterrequests "$tmp/req-late2.json" >/dev/null
late2_granted() {
    kube_get /apis/clusters.openmcp.cloud/v1alpha1/namespaces/team-c/clusterrequests/mcp-late2 | tr -d ' \n' | grep -q '"phase":"Granted"'
}
check "run: a second request for the Exclusive purpose is Granted a new Cluster" wait_for 30 late2_granted
r2=$(kube_get /apis/clusters.openmcp.cloud/v1alpha1/namespaces/team-c/clusterrequests/mcp-late2 | tr -d ' \n')
c2=$(echo "$r2" | sed -n 's/.*"cluster":{"name":"\([^"]*\)".*/\1/p')
u2=$(echo "$r2" | sed -n 's/.*"uid":"\([^"]*\)".*/\1/p')
printf '{"metadata":{"finalizers":["request.clusters.openmcp.cloud/%s","example.com/cleanup"]}}' "$u2" >"$tmp/fin2.json"
kube_send PATCH "/apis/clusters.openmcp.cloud/v1alpha1/namespaces/mcp-clusters/clusters/$c2" "$tmp/fin2.json" application/merge-patch+json >/dev/null
kube_send DELETE /apis/clusters.openmcp.cloud/v1alpha1/namespaces/team-c/clusterrequests/mcp-late2 >/dev/null
check "run: ... deleted while another finalizer holds its Cluster: the request goes" wait_for 30 gone /apis/clusters.openmcp.cloud/v1alpha1/namespaces/team-c/clusterrequests/mcp-late2
c2_marked() {
    kube_get "/apis/clusters.openmcp.cloud/v1alpha1/namespaces/mcp-clusters/clusters/$c2" | tr -d ' \n' |
        grep '"deletionTimestamp"' | grep -q '"finalizers":\["example.com/cleanup"\]'
}
check "run: ... its Cluster $c2 is marked deleted and keeps only the other finalizer" wait_for 30 c2_marked
# (nor a finalizer taken off a request or Cluster the server had deleted
# already: that was logged as an error, HTTP 404; a 409 may be right, as
# the test changes the Cluster's finalizers itself)
check "run: ... no write of the host was refused" sh -c "! grep -E 'HTTP (404|422)' '$tmp/omcp.log'"
kill -TERM "$pid_omcp"
wait_for 20 stopped "$pid_omcp"

# Fleet: the example at its clock; the ClusterResourceBindings the file
# store wrote are created in the API server with the same names, states
# and clusters, and the policy snapshots' status lands
mkdir -p "$tmp/fleet-files"
cp "$top/examples/fleet/"*.yaml "$tmp/fleet-files/"
chmod -R u+w "$tmp/fleet-files"
cp -r "$tmp/fleet-files" "$tmp/fleet-files2"
store_cfg "$tmp/kf-store.cfg" "$tmp/kubeconfig" 'kinds = [ "ClusterResourcePlacement", "ClusterSchedulingPolicySnapshot", "ClusterResourceBinding", "MemberCluster" ];'
with_store fleet.cfg "$tmp/kf-store.cfg" "$tmp/kf-api.cfg"
"$T" store copy "$tmp/fleet-files" "$tmp/kf-store.cfg" >"$tmp/kf-copy.out" 2>&1
nobj=$(cat "$tmp/fleet-files/"*.yaml | grep -c '^kind:')
check "store copy: the Fleet example ($nobj objects) into the API server" grep -q "copied $nobj object" "$tmp/kf-copy.out"
"$T" schedule -c "$top/conf/fleet.cfg" -s "$tmp/fleet-files2" --now 2026-11-20T12:00:00Z -o json >"$tmp/kf-file.json" 2>&1
"$T" schedule -c "$tmp/kf-api.cfg" --now 2026-11-20T12:00:00Z -o json >"$tmp/kf-api.json" 2>"$tmp/kf-api.log"
check "schedule: Fleet through the API server decides as through the file store" cmp "$tmp/kf-file.json" "$tmp/kf-api.json"
# each binding as "name state cluster", both stores exported alike
kf_rows() { # DIR
    for f in "$1"/clusterresourcebinding-*.json; do
        echo "$(basename "$f" .json) $(grep -o '"state": "[^"]*"' "$f") $(grep -o '"targetCluster": "[^"]*"' "$f")"
    done
}
"$T" store copy "$tmp/fleet-files2" "$tmp/kf-file-back" >/dev/null 2>&1
"$T" store copy "$tmp/kf-store.cfg" "$tmp/kf-back" >"$tmp/kf-back.out" 2>&1
kf_rows "$tmp/kf-file-back" >"$tmp/kf-file-rows"
kf_rows "$tmp/kf-back" >"$tmp/kf-api-rows"
nb=$(wc -l <"$tmp/kf-file-rows")
check "schedule: the $nb ClusterResourceBindings of the file store are in the API server, same names, states and clusters" sh -c "[ $nb -gt 11 ] && cmp '$tmp/kf-file-rows' '$tmp/kf-api-rows'"
check "schedule: the latest policy snapshots' Scheduled condition landed (status subresource)" sh -c "kube_get() { curl -s --cacert '$tmp/pki/ca.crt' --cert '$tmp/pki/client.crt' --key '$tmp/pki/client.key' '$kube_url'\$1; }; kube_get /apis/placement.kubernetes-fleet.io/v1beta1/clusterschedulingpolicysnapshots | grep -q SchedulingPolicyFulfilled"

# kinds of two API groups named in store.resources: each group's
# subresources are read (a second group used to wait 5 s after the
# first, and the statuses of its kind went into the POST, where the
# server drops them)
mkdir -p "$tmp/two-groups"
cat >"$tmp/two-groups/objects.yaml" <<'TWO'
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: { name: two-groups }
spec: { policy: { placementType: PickAll } }
status: { observedResourceIndex: "0" }
---
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: { name: two-groups }
spec: { identity: { kind: ServiceAccount, name: agent, namespace: fleet-system } }
status:
  agentStatus:
  - type: MemberAgent
    lastReceivedHeartbeat: "2026-11-20T11:59:30Z"
TWO
store_cfg "$tmp/two-store.cfg" "$tmp/kubeconfig" 'kinds = [ "ClusterResourcePlacement", "MemberCluster" ];
  resources = ( { kind = "ClusterResourcePlacement"; api_version = "placement.kubernetes-fleet.io/v1beta1"; plural = "clusterresourceplacements"; namespaced = false; },
                { kind = "MemberCluster"; api_version = "cluster.kubernetes-fleet.io/v1beta1"; plural = "memberclusters"; namespaced = false; } );'
"$T" store copy "$tmp/two-groups" "$tmp/two-store.cfg" >"$tmp/two-copy.out" 2>&1
check "store copy: kinds of two groups named in store.resources, each status through its subresource" sh -c "curl -s --cacert '$tmp/pki/ca.crt' --cert '$tmp/pki/client.crt' --key '$tmp/pki/client.key' '$kube_url/apis/cluster.kubernetes-fleet.io/v1beta1/memberclusters/two-groups' | grep -q lastReceivedHeartbeat && curl -s --cacert '$tmp/pki/ca.crt' --cert '$tmp/pki/client.crt' --key '$tmp/pki/client.key' '$kube_url/apis/placement.kubernetes-fleet.io/v1beta1/clusterresourceplacements/two-groups' | grep -q observedResourceIndex"

# Fleet in `trellis run` at the example's clock: reports (PickN 2) is
# scaled out to 3 clusters, then in to 1, by its latest snapshot's
# number-of-clusters annotation, as KubeFleet's placement controller
# changes it; then only the snapshot's CRP-generation annotation moves.
# The snapshot's status is written after each cycle, sooner than the
# watch brings the host the server's copy: written with the copy's
# resourceVersion as precondition, it was refused (409) and undone, and
# bindings flapped; a status written by a cycle that binds nothing
# waited for some later binding's flush.
store_cfg "$tmp/kf-run-store.cfg" "$tmp/kubeconfig" 'kinds = [ "ClusterResourcePlacement", "ClusterSchedulingPolicySnapshot", "ClusterResourceBinding", "MemberCluster" ]; lease_name = "trellis-fleet";'
with_store fleet.cfg "$tmp/kf-run-store.cfg" "$tmp/kf-run.cfg"
start_host kf "$tmp/kf-run.cfg" --now 2026-11-20T12:00:00Z
check "run: the Fleet profile reads the custom resources" wait_for 30 grep -q "state kubernetes" "$tmp/kf.log"
kf_snap=/apis/placement.kubernetes-fleet.io/v1beta1/clusterschedulingpolicysnapshots/reports-1
kf_reports() { # STATE: how many of reports' bindings are in STATE
    kube_get "/apis/placement.kubernetes-fleet.io/v1beta1/clusterresourcebindings?labelSelector=kubernetes-fleet.io%2Fparent-CRP%3Dreports" |
        tr -d ' \n' | grep -o "\"state\":\"$1\"" | wc -l
}
kf_holds() { # N: reports holds N clusters (Scheduled or Bound) and its snapshot says so
    [ $(($(kf_reports Scheduled) + $(kf_reports Bound))) -eq "$1" ] &&
        kube_get "$kf_snap" | grep -q "found $1 cluster(s)"
}
kf_scale() { # N
    printf '{"metadata":{"annotations":{"kubernetes-fleet.io/number-of-clusters":"%s"}}}' "$1" >"$tmp/kf-scale.json"
    kube_send PATCH "$kf_snap" "$tmp/kf-scale.json" application/merge-patch+json >/dev/null
}
check "run: reports holds its 2 clusters" wait_for 30 kf_holds 2
kf_scale 3
check "run: scaled out to 3, reports holds 3 clusters and its snapshot's status says so" wait_for 30 kf_holds 3
kf_scale 1
kf_scaled_in() { kf_holds 1 && [ "$(kf_reports Bound)" -eq 1 ]; }
check "run: scaled in to 1, it keeps only its Bound cluster" wait_for 30 kf_scaled_in
printf '{"metadata":{"annotations":{"kubernetes-fleet.io/CRP-generation":"7"}}}' >"$tmp/kf-gen.json"
kube_send PATCH "$kf_snap" "$tmp/kf-gen.json" application/merge-patch+json >/dev/null
kf_observed() { kube_get "$kf_snap" | tr -d ' \n' | grep -q '"observedCRPGeneration":7'; }
check "run: a cycle that binds nothing: its snapshot's status is written at once" wait_for 20 kf_observed
# (a status of reports-1 the host writes as the test changes the snapshot
# is refused: it was made without seeing that change)
check "run: no write of the Fleet host was refused or undone but where the test wrote" sh -c "! grep -E 'HTTP 409|was not made|binding to .* failed' '$tmp/kf.log' | grep -v reports-1"
kill -TERM "$pid_kf"
wait_for 20 stopped "$pid_kf"

# ---- trellis run: hosts sharing one API server through a Lease ----
# three nodes of 6 CPUs, pods of 1 CPU each: at most 6 on a node (the
# kube example's nodes are there too, with room for a few)
mkdir -p "$tmp/fleet"
for n in n1 n2 n3; do
    cat >>"$tmp/fleet/nodes.yaml" <<NODE
---
apiVersion: v1
kind: Node
metadata: { name: $n, labels: { kubernetes.io/hostname: $n } }
status: { allocatable: { cpu: "6", memory: 16Gi, pods: "110" } }
NODE
done
pod_json() {
    printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"run"},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"1"}}}]}}' "$1"
}
printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: run\n' >"$tmp/fleet/ns.yaml"
i=1
while [ $i -le 6 ]; do pod_json "p$i" >"$tmp/fleet/p$i.json"; i=$((i + 1)); done
add_pods() { # FROM TO: pods pFROM..pTO created in the API server
    i=$1
    while [ "$i" -le "$2" ]; do
        pod_json "p$i" >"$tmp/pod.json"
        wait_for 30 sh -c "curl -s -m 5 --cacert '$tmp/pki/ca.crt' --cert '$tmp/pki/client.crt' --key '$tmp/pki/client.key' -X POST -H 'Content-Type: application/json' --data-binary @'$tmp/pod.json' '$kube_url/api/v1/namespaces/run/pods' | grep -q '\"uid\"'"
        i=$((i + 1))
    done
}
# bound_lines: every "bound to" a host logged, one pod per line
bound_lines() { cat "$tmp"/h*.log | sed -n 's/.*Pod run\/\(p[0-9]*\): bound to .*/\1/p'; }
bound_count() { [ "$(bound_lines | sort -u | wc -l)" -eq "$1" ]; }
# the state as the API server holds it: N pods each bound, once, no node
# of these three over 6, nothing lost
state_ok() {
    kube_get /api/v1/namespaces/run/pods >"$tmp/pods.json" || return 1
    np=$(grep -o '"name": "p[0-9]*"' "$tmp/pods.json" | wc -l)
    [ "$np" -eq "$1" ] || { echo "$np of $1 pods"; return 1; }
    nb=$(grep -oE '"nodeName": "[^"]*"' "$tmp/pods.json" | wc -l)
    [ "$nb" -eq "$1" ] || { echo "$nb of $1 pods bound"; return 1; }
    over=$(grep -oE '"nodeName": "n[0-9]"' "$tmp/pods.json" | sort | uniq -c | awk '$1 > 6')
    [ -z "$over" ] || { echo "over capacity: $over"; return 1; }
    twice=$(bound_lines | sort | uniq -d)
    [ -z "$twice" ] || { echo "bound twice: $twice"; return 1; }
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }

store_cfg "$tmp/run-store.cfg" "$tmp/kubeconfig" 'lease_ttl_s = 3; timeout_ms = 3000; lease_name = "trellis-run";'
with_store kube.cfg "$tmp/run-store.cfg" "$tmp/run-api.cfg"
store_cfg "$tmp/fleet-store.cfg" "$tmp/kubeconfig" 'kinds = [ "Namespace", "Node", "Pod" ];'
"$T" store copy "$tmp/fleet" "$tmp/fleet-store.cfg" >"$tmp/fleet-copy.out" 2>&1
check "run: the nodes, a Namespace and 6 pods copied in" grep -q "copied 10 object" "$tmp/fleet-copy.out"
start_host h1 "$tmp/run-api.cfg"
check "run: the first host takes the Lease and binds the 6 pods" wait_for 30 bound_count 6
check "run: the Lease names the leader" sh -c "curl -s --cacert '$tmp/pki/ca.crt' --cert '$tmp/pki/client.crt' --key '$tmp/pki/client.key' '$kube_url/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/trellis-run' | grep -q '\"holderIdentity\": \"[^\"]*_${pid_h1}_'"
start_host h2 "$tmp/run-api.cfg"
check "run: the second host waits as a standby" wait_for 20 grep -q "standby: Lease kube-system/trellis-run .* is held by" "$tmp/h2.log"
check "run: after it, the state is whole" state_ok 6
t0=$(now_ms)
kill -KILL "$pid_h1"
if wait_for 30 grep -q "took over" "$tmp/h2.log"; then
    ok "run: kill -9 of the active host: the standby takes over ($(($(now_ms) - t0)) ms, lease 3 s)"
else not_ok "run: kill -9 of the active host: the standby takes over" "$(tail -5 "$tmp/h2.log")"; fi
add_pods 7 8
check "run: the new leader binds what comes after" wait_for 20 bound_count 8
check "run: after kill -9, every pod bound once, no node over capacity, nothing lost" state_ok 8

# the API server restarted mid-watch: the watches open again (410 Gone
# when the server's watch cache no longer has their resourceVersion:
# listed again); what was made meanwhile is scheduled
# (killed: a server that is sent SIGTERM waits for its open watches)
kill -KILL "$kube_pid"
wait_for 30 stopped "$kube_pid"
if kube_start; then
    ok "run: the API server restarts on the same port"
else not_ok "run: the API server restarts" "$(tail -20 "$tmp/kube-apiserver.log")"; fi
add_pods 9 10
check "run: after the API server restarted, the watch resumes and the new pods are bound" wait_for 30 bound_count 10
check "run: after the restart, every pod bound once, no node over capacity, nothing lost" state_ok 10

# SIGSTOP past the lease: a third host takes over; the paused one, when
# it resumes, steps down; the binding it may still send is refused by
# the API server (a bound Pod cannot be bound again)
start_host h3 "$tmp/run-api.cfg"
wait_for 20 grep -q "standby: Lease" "$tmp/h3.log"
kill -STOP "$pid_h2"
check "run: SIGSTOP of the active host past its lease: the standby takes over" wait_for 30 grep -q "took over" "$tmp/h3.log"
add_pods 11 12
check "run: the new leader binds while the old one is paused" wait_for 20 bound_count 12
kill -CONT "$pid_h2"
check "run: the resumed host steps down (the Lease is another's)" wait_for 20 grep -q "stepping down" "$tmp/h2.log"
add_pods 13 14
check "run: scheduling goes on after the old leader resumed" wait_for 20 bound_count 14
check "run: after SIGSTOP/SIGCONT, every pod bound once, no node over capacity, nothing lost" state_ok 14
kill -TERM "$pid_h2" "$pid_h3" 2>/dev/null
check "run: the leader releases the Lease when it stops" wait_for 20 sh -c "curl -s --cacert '$tmp/pki/ca.crt' --cert '$tmp/pki/client.crt' --key '$tmp/pki/client.key' '$kube_url/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/trellis-run' | grep -q '\"holderIdentity\": \"\"'"

# the API server restarted under a leader whose Lease outlasts it: its
# watches resume at resourceVersions the new server's watch cache does
# not have (410 Gone), list again, and go on
wait_for 20 stopped "$pid_h3"
store_cfg "$tmp/long-store.cfg" "$tmp/kubeconfig" 'lease_ttl_s = 60; lease_name = "trellis-long";'
with_store kube.cfg "$tmp/long-store.cfg" "$tmp/long-api.cfg"
start_host h5 "$tmp/long-api.cfg"
check "410: a host with a 60 s Lease leads" wait_for 30 grep -q "state kubernetes" "$tmp/h5.log"
add_pods 15 15
check "410: it binds a new pod" wait_for 20 bound_count 15
kill -KILL "$kube_pid"
wait_for 30 stopped "$kube_pid"
kube_start
check "410: after the restart its watches are too old and list again" wait_for 60 grep -q "is too old (410 Gone): listing again" "$tmp/h5.log"
add_pods 16 17
check "410: the pods made after the restart are bound" wait_for 30 bound_count 17
check "410: it kept leading through the restart" sh -c "! grep -q 'stepping down' '$tmp/h5.log'"
check "410: every pod bound once, nothing lost" state_ok 17

# a store that is down at start: the host waits, says why, and goes on
# once a second API server (on the same etcd) comes up where its
# kubeconfig points
kill -TERM "$pid_h5" 2>/dev/null
wait_for 20 stopped "$pid_h5"
first_port=$kube_port
first_pid=$kube_pid
kube_port=$(etcd_port)
kube_url=https://127.0.0.1:$kube_port
kube_kubeconfig "$tmp/kubeconfig-late"
store_cfg "$tmp/late-store.cfg" "$tmp/kubeconfig-late" 'lease_name = "trellis-late";'
with_store kube.cfg "$tmp/late-store.cfg" "$tmp/late-api.cfg"
start_host h6 "$tmp/late-api.cfg"
check "down at start: the host waits for the API server and says why" wait_for 30 grep -q "the store is not ready: .*Couldn't connect" "$tmp/h6.log"
kube_run
check "down at start: a second API server starts where the kubeconfig points" wait_for 60 kube_ready
check "down at start: the host takes the Lease and reads the state without a restart" wait_for 60 grep -q "state kubernetes" "$tmp/h6.log"
add_pods 18 18
check "down at start: then it binds a new pod" wait_for 30 bound_count 18
check "down at start: every pod bound once, nothing lost" state_ok 18
kill -TERM "$pid_h6" 2>/dev/null
kube_port=$first_port
kube_pid=$first_pid

finish
