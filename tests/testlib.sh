# testlib.sh - what the shell tests share: TAP "ok - ..." / "not ok - ..."
# lines with the details as TAP comments under a failure, the plan and a
# closing "N passed, M failed" line, and for the tests of `trellis run`
# (run.sh, faults.sh, crash.sh, openmcp.sh) bounded polling and the hosts
# they start. Sourced, not run.
passed=0
failed=0

ok() {
    passed=$((passed + 1))
    echo "ok - $1"
}

not_ok() {
    failed=$((failed + 1))
    echo "not ok - $1"
    shift
    for line in "$@"; do
        printf '%s\n' "$line" | sed 's/^/#   /'
    done
}

# Print the TAP plan and the summary; the status is 0 only when nothing
# failed.
finish() {
    echo "1..$((passed + failed))"
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

# wait_for SECONDS COMMAND...: poll COMMAND until it succeeds, at most
# SECONDS; the status says whether it did. Nothing sleeps for a fixed time
# to wait for something.
wait_for() {
    limit=$1
    shift
    end=$(($(date +%s) + limit))
    while :; do
        "$@" >/dev/null 2>&1 && return 0
        [ "$(date +%s)" -ge "$end" ] && return 1
        sleep 0.05
    done
}

# check NAME COMMAND...: one check; a failure shows the command's output
# (needs $tmp).
check() {
    name=$1
    shift
    if "$@" >"$tmp/chk" 2>&1; then ok "$name"; else not_ok "$name" "$(head -c 1500 "$tmp/chk")"; fi
}

# hosts_setup: a temporary directory in $tmp, and the hosts `start`
# leaves in $pids killed and $tmp removed when the test ends (KEEP=1
# keeps $tmp to look at).
hosts_setup() {
    tmp=$(mktemp -d)
    pids=""
    trap hosts_cleanup EXIT INT TERM
}
hosts_cleanup() {
    for p in $pids; do kill -KILL "$p" 2>/dev/null; done
    if [ -n "${KEEP:-}" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}

# stopped PID: the process is gone.
stopped() { ! kill -0 "$1" 2>/dev/null; }

# start NAME STATE CONFIG: `trellis run` in the background, its log in
# $tmp/NAME.log; sets $pid (added to $pids) and, once it serves, $port.
start() {
    # emptied here, not only by the redirections below: those happen in the
    # background child, and until then a NAME used before would show the
    # previous host's "serving" line (and its port)
    : >"$tmp/$1.out"
    : >"$tmp/$1.log"
    # shellcheck disable=SC2086
    "$TRELLIS" run -c "$3" -s "$2" --listen 127.0.0.1:0 --log-level info ${4:-} \
        >"$tmp/$1.out" 2>"$tmp/$1.log" &
    pid=$!
    pids="$pids $pid"
    port=""
    if wait_for 20 grep -q "serving .* on http" "$tmp/$1.log"; then
        port=$(sed -n 's|.*on http://127.0.0.1:\([0-9]*\).*|\1|p' "$tmp/$1.log" | head -n 1)
    fi
}
