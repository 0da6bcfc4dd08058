# kubelib.sh - a real kube-apiserver for the tests of the Kubernetes API
# store (kube.sh, scripts/bench.sh): Debian's kubernetes 1.20 built once by
# scripts/kube-apiserver.sh into a cache outside the tree, started on a
# free 127.0.0.1 port against a test etcd (etcdlib.sh), with its own CA,
# serving certificate and client certificate (openssl), and a kubeconfig
# that reaches it. Sourced after testlib.sh, etcdlib.sh and hosts_setup;
# its pid goes into $pids.
#
# The admission plugins that a cluster's controllers would answer are off:
# ServiceAccount (no controller makes the default account), Priority (the
# examples give spec.priority as numbers) and TaintNodesByCondition (no
# node lifecycle controller would lift the not-ready taint).

# kube_why_not: prints why the API server tests cannot run here, nothing
# when they can. Builds the API server when it is not cached yet
# (TRELLIS_KUBE_APISERVER names one to use instead).
kube_why_not() {
    if ! "$TRELLIS" --version 2>/dev/null | grep -q "stores:.*kubernetes"; then
        echo "this trellis was built without the Kubernetes API store (configure --with-etcd needs libcurl)"
        return
    fi
    why=$(etcd_why_not)
    if [ -n "$why" ]; then
        echo "$why"
        return
    fi
    if ! command -v openssl >/dev/null 2>&1; then
        echo "no openssl to make the test certificates"
        return
    fi
    if [ -n "${TRELLIS_KUBE_APISERVER:-}" ]; then
        [ -x "$TRELLIS_KUBE_APISERVER" ] || echo "no kube-apiserver at $TRELLIS_KUBE_APISERVER"
    elif ! sh "$TOP_SRCDIR/scripts/kube-apiserver.sh" >/dev/null 2>"$tmp/kas-build.log"; then
        echo "no kube-apiserver: scripts/kube-apiserver.sh could not build one: $(tail -n 3 "$tmp/kas-build.log" | tr '\n' ' ')"
    fi
}

# kube_apiserver: the binary kube_why_not found.
kube_apiserver() {
    if [ -n "${TRELLIS_KUBE_APISERVER:-}" ]; then
        echo "$TRELLIS_KUBE_APISERVER"
    else
        sh "$TOP_SRCDIR/scripts/kube-apiserver.sh" --path
    fi
}

# kube_certs: a CA, the server's certificate for 127.0.0.1, a client
# certificate in system:masters, a service account key pair, in $tmp/pki.
kube_certs() {
    d=$tmp/pki
    mkdir -p "$d"
    (
        cd "$d" || exit 1
        openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 \
            -subj "/CN=trellis-test-ca" &&
            openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr \
                -subj "/CN=kube-apiserver" &&
            printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >server.ext &&
            openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
                -out server.crt -days 2 -extfile server.ext &&
            openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr \
                -subj "/O=system:masters/CN=trellis" &&
            printf 'extendedKeyUsage=clientAuth\n' >client.ext &&
            openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
                -out client.crt -days 2 -extfile client.ext &&
            openssl genrsa -out sa.key 2048 && openssl rsa -in sa.key -pubout -out sa.pub
    ) >"$tmp/pki.log" 2>&1
}

# kube_ready: the API server answers /readyz.
kube_ready() {
    curl -s -m 2 --cacert "$tmp/pki/ca.crt" --cert "$tmp/pki/client.crt" \
        --key "$tmp/pki/client.key" "https://127.0.0.1:$kube_port/readyz" | grep -q '^ok'
}

# kube_start: start (or start again) the API server against the etcd
# cluster etcd_cluster started; sets kube_pid, kube_port (kept across
# restarts: another free port only when the first start finds it taken)
# and kube_url; the status says whether it is ready within 60 s.
kube_start() {
    first=0
    [ -n "${kube_port:-}" ] || { kube_port=$(etcd_port); first=1; }
    attempt=0
    while [ $attempt -lt 3 ]; do
        attempt=$((attempt + 1))
        kube_run
        wait_for 60 kube_ready && return 0
        [ $first = 1 ] && tail -n 5 "$tmp/kube-apiserver.log" | grep -q "address already in use" ||
            return 1
        kill -KILL "$kube_pid" 2>/dev/null
        kube_port=$(etcd_port)
    done
    return 1
}

kube_run() {
    "$(kube_apiserver)" --etcd-servers="$etcd_url_1" --bind-address=127.0.0.1 \
        --secure-port="$kube_port" --insecure-port=0 \
        --tls-cert-file="$tmp/pki/server.crt" --tls-private-key-file="$tmp/pki/server.key" \
        --client-ca-file="$tmp/pki/ca.crt" \
        --service-account-key-file="$tmp/pki/sa.pub" \
        --service-account-signing-key-file="$tmp/pki/sa.key" \
        --service-account-issuer=https://kubernetes.default.svc \
        --authorization-mode=AlwaysAllow \
        --disable-admission-plugins=ServiceAccount,Priority,TaintNodesByCondition \
        --service-cluster-ip-range=10.0.0.0/24 --advertise-address=127.0.0.1 \
        --cert-dir="$tmp/kas-certs" --enable-priority-and-fairness=false --profiling=false \
        ${KUBE_FLAGS:-} >>"$tmp/kube-apiserver.log" 2>&1 &
    kube_pid=$!
    pids="$pids $kube_pid"
    kube_url=https://127.0.0.1:$kube_port
}

# kube_kubeconfig FILE: a kubeconfig for the API server (with the CA and
# client certificate as files or, with "data", inline).
kube_kubeconfig() {
    if [ "${2:-}" = data ]; then
        ca="certificate-authority-data: $(base64 -w0 "$tmp/pki/ca.crt")"
        cert="client-certificate-data: $(base64 -w0 "$tmp/pki/client.crt")"
        key="client-key-data: $(base64 -w0 "$tmp/pki/client.key")"
    else
        ca="certificate-authority: $tmp/pki/ca.crt"
        cert="client-certificate: $tmp/pki/client.crt"
        key="client-key: $tmp/pki/client.key"
    fi
    cat >"$1" <<KCFG
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: $kube_url
    $ca
users:
- name: trellis
  user:
    $cert
    $key
contexts:
- name: test
  context:
    cluster: test
    user: trellis
current-context: test
KCFG
}

# kube_get PATH: GET from the API server (JSON on stdout).
kube_get() {
    curl -s -m 10 --cacert "$tmp/pki/ca.crt" --cert "$tmp/pki/client.crt" \
        --key "$tmp/pki/client.key" "$kube_url$1"
}

# kube_send METHOD PATH [BODY-FILE [CONTENT-TYPE]]: another request.
kube_send() {
    curl -s -m 10 --cacert "$tmp/pki/ca.crt" --cert "$tmp/pki/client.crt" \
        --key "$tmp/pki/client.key" -X "$1" "$kube_url$2" \
        ${3:+--data-binary "@$3"} -H "Content-Type: ${4:-application/json}"
}
