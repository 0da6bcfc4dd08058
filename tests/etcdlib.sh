# etcdlib.sh - real etcd servers for the tests of the etcd store (etcd.sh,
# scripts/bench.sh): members started on free 127.0.0.1 ports with their
# data in $tmp, polled for health with a bound, and killed with the test
# (their pids go into $pids, which testlib.sh's hosts_cleanup kills).
# Sourced after testlib.sh and hosts_setup.
ETCD_BIN=${ETCD_BIN:-etcd}
# ETCD_SCHEME=https serves the client URLs with TLS (ETCD_FLAGS names the
# files); ETCD_CURL_OPTS are curl's options to reach them.
ETCD_SCHEME=${ETCD_SCHEME:-http}
ETCD_CURL_OPTS=${ETCD_CURL_OPTS:-}

# etcd_why_not: prints why the etcd tests cannot run here, nothing when
# they can.
etcd_why_not() {
    if ! "$TRELLIS" --version 2>/dev/null | grep -q "stores:.*etcd"; then
        echo "this trellis was built without the etcd store (configure --with-etcd needs libcurl)"
    elif ! command -v "$ETCD_BIN" >/dev/null 2>&1; then
        echo "no etcd binary (Debian: etcd-server; scripts/deps.sh --test installs it)"
    elif ! command -v curl >/dev/null 2>&1; then
        echo "no curl to ask etcd for its health"
    fi
}

# etcd_port: a port nobody listens on, below the kernel's ephemeral ports
# (random in 10000 up to them): a port a server is to take later must not
# be one an outgoing connection may be given meanwhile -- among them a
# waiting client's own attempts to reach it, which on Linux can connect
# the socket to itself (a TCP self-connect) and hold the port.
etcd_port() {
    lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
    case "$lo" in '' | *[!0-9]*) lo=32768 ;; esac
    [ "$lo" -gt 12000 ] || lo=60000
    while :; do
        p=$(($(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % (lo - 10000) + 10000))
        hex=$(printf '%04X' "$p")
        grep -q ":$hex 00000000:0000 0A" /proc/net/tcp 2>/dev/null || { echo "$p"; return; }
    done
}

# etcd_healthy URL: the member there answers and has a leader.
etcd_healthy() {
    # shellcheck disable=SC2086
    curl -s -m 2 $ETCD_CURL_OPTS "$1/health" | grep -q '"health":"true"'
}

# etcd_cluster N: start N members e1..eN of one new cluster. Sets
# etcd_endpoints (a libconfig list body: "http://127.0.0.1:P1", ...),
# etcd_url_K and etcd_pid_K for each member; the status says whether all
# are healthy within 30 s. ETCD_FLAGS adds flags to every member.
etcd_cluster() {
    n=$1
    attempt=0
    while [ $attempt -lt 3 ]; do
        attempt=$((attempt + 1))
        cluster=""
        i=1
        while [ "$i" -le "$n" ]; do
            eval "etcd_cport_$i=$(etcd_port) etcd_pport_$i=$(etcd_port)"
            eval "pp=\$etcd_pport_$i"
            cluster="${cluster:+$cluster,}e$i=http://127.0.0.1:$pp"
            i=$((i + 1))
        done
        etcd_endpoints=""
        etcd_cluster_spec=$cluster
        etcd_token="trellis-test-$$-$attempt"
        i=1
        while [ "$i" -le "$n" ]; do
            rm -rf "$tmp/etcd-e$i"
            etcd_member "$i"
            eval "cp=\$etcd_cport_$i"
            etcd_endpoints="${etcd_endpoints:+$etcd_endpoints, }\"$ETCD_SCHEME://127.0.0.1:$cp\""
            i=$((i + 1))
        done
        all=1
        i=1
        while [ "$i" -le "$n" ]; do
            eval "u=\$etcd_url_$i"
            wait_for 30 etcd_healthy "$u" || all=0
            i=$((i + 1))
        done
        [ $all = 1 ] && return 0
        # a port taken meanwhile: start again on others
        i=1
        while [ "$i" -le "$n" ]; do
            eval "kill -KILL \$etcd_pid_$i 2>/dev/null"
            i=$((i + 1))
        done
    done
    return 1
}

# etcd_member K: start (or start again, on its data) member K of the
# cluster etcd_cluster started; sets etcd_pid_K and etcd_url_K.
etcd_member() {
    eval "cp=\$etcd_cport_$1 pp=\$etcd_pport_$1"
    # shellcheck disable=SC2086
    "$ETCD_BIN" --name "e$1" --data-dir "$tmp/etcd-e$1" \
        --listen-client-urls "$ETCD_SCHEME://127.0.0.1:$cp" \
        --advertise-client-urls "$ETCD_SCHEME://127.0.0.1:$cp" \
        --listen-peer-urls "http://127.0.0.1:$pp" \
        --initial-advertise-peer-urls "http://127.0.0.1:$pp" \
        --initial-cluster "$etcd_cluster_spec" --initial-cluster-state new \
        --initial-cluster-token "$etcd_token" \
        --logger zap --log-outputs stderr --log-level error ${ETCD_FLAGS:-} \
        >>"$tmp/etcd-e$1.log" 2>&1 &
    eval "etcd_pid_$1=$! etcd_url_$1=$ETCD_SCHEME://127.0.0.1:$cp"
    pids="$pids $!"
}

# etcd_store_cfg FILE PREFIX [MORE]: a config holding only a store group
# for the cluster started last.
etcd_store_cfg() {
    printf 'store = { type = "etcd"; endpoints = [ %s ]; prefix = "%s"; %s };\n' \
        "$etcd_endpoints" "$2" "${3:-}" >"$1"
}
