#!/bin/sh
# faults.sh - what a misbehaving plugin or state does to the host, with the
# fixture plugin fx-faults (tests/plugins/fx_faults.c):
#  - a segfault in filter names the plugin, the hook and the workload, and
#    the next start quarantines that workload (an error decision naming the
#    plugin) until the workload or the plugin changes; in `run`, the
#    standby that takes over does the same instead of crash-looping;
#  - under --log-format json that report is one JSON line, also for a
#    crash outside any plugin call;
#  - an abort in init names the plugin and the config line;
#  - a score that never returns ends the run with exit status 4 and the
#    plugin, hook and workload named, /healthz saying why meanwhile;
#  - without a deadline, /healthz fails once the loop stops turning;
#  - a binding whose file changed on disk is an "error" decision, exit 3;
#  - deleting .trellis.lock under an active host makes it step down, and
#    a one-shot schedule beside an active host is refused.
# Every wait polls with a bound. Run by `make check`.
set -u
: "${TRELLIS:?}" "${TOP_SRCDIR:?}"
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
hosts_setup

http() { curl -s -m 5 -o "$tmp/body" -w '%{http_code}' "http://127.0.0.1:$1$2"; }
http_is() { [ "$(http "$1" "$2")" = "$3" ]; }

# A profile with fx-faults first; ARGS is its args group's body.
profile() { # profile FILE ARGS [EXTRA PROFILE SETTINGS]
    cat >"$1" <<EOF
profiles = (
  {
    name = "default-scheduler";
    default = true;
    workload = { kind = "Pod"; scheduler_name_field = "spec.schedulerName"; };
    target = { kind = "Node"; };
    binding = { field = "spec.nodeName"; };
    events = true;
    ${3:-}
    plugins = (
      { name = "fx-faults"; args = { $2 }; },
      { name = "default-binder"; }
    );
  }
);
EOF
}
state() { # state DIR: two nodes, pods a, poison, z (one file each)
    mkdir -p "$1"
    cat >"$1/nodes.yaml" <<EOF
apiVersion: v1
kind: Node
metadata:
  name: n1
---
apiVersion: v1
kind: Node
metadata:
  name: n2
EOF
    for p in a poison z; do
        printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: default\nspec:\n  containers:\n  - name: c\n    image: nginx\n' \
            "$p" >"$1/pod-$p.yaml"
    done
}

# ---- a segfault in filter, then the quarantine ----
state "$tmp/s1"
profile "$tmp/segv.cfg" 'crash_in = "filter"; crash_on = "poison";'
"$TRELLIS" schedule -c "$tmp/segv.cfg" -s "$tmp/s1" -o json >"$tmp/o1" 2>"$tmp/e1"
rc=$?
check "a segfault in a plugin kills the one-shot run by the signal" test "$rc" -gt 128
check "the crash names the plugin, its file, the hook and the workload" \
    grep -q "trellis: fatal: SIGSEGV in plugin 'fx-faults' (.*fx-faults.so), hook filter, object Pod/default/poison; recorded" "$tmp/e1"
check "the crash is recorded in the state's quarantine file" \
    grep -q "^SIGSEGV	fx-faults	.*	filter	Pod/default/poison$" "$tmp/s1/.trellis.quarantine"
"$TRELLIS" schedule -c "$tmp/segv.cfg" -s "$tmp/s1" -o json >"$tmp/o2" 2>"$tmp/e2"
rc=$?
check "the next run does not crash (exit 3: the quarantined workload is an error)" test "$rc" -eq 3
check "the poison workload is an error decision naming the plugin and the hook" \
    grep -q "quarantined: plugin 'fx-faults' (.*) crashed (SIGSEGV) in its filter hook on this object" "$tmp/o2"
check "the other workloads are scheduled" \
    sh -c "grep -q 'nodeName: n1' '$tmp/s1/pod-a.yaml' && grep -q 'nodeName: n1' '$tmp/s1/pod-z.yaml'"
check "the record learnt the workload's digest" \
    grep -q "	Pod/default/poison	[0-9a-f]\{16\}$" "$tmp/s1/.trellis.quarantine"
check "the poison workload gets a FailedScheduling Event" \
    sh -c "grep -l 'quarantined: plugin' '$tmp/s1/events/'*.json"
"$TRELLIS" schedule -c "$tmp/segv.cfg" -s "$tmp/s1" >/dev/null 2>&1
check "it stays quarantined while nothing changes" \
    grep -q "Pod/default/poison" "$tmp/s1/.trellis.quarantine"
printf '  labels:\n    fixed: "yes"\n' >>"$tmp/s1/pod-poison.yaml"
profile "$tmp/fine.cfg" ''
"$TRELLIS" schedule -c "$tmp/fine.cfg" -s "$tmp/s1" -o json >"$tmp/o3" 2>"$tmp/e3"
check "a changed workload is scheduled again" grep -q "nodeName: n1" "$tmp/s1/pod-poison.yaml"
check "and its record is gone" test ! -e "$tmp/s1/.trellis.quarantine"

# ---- the lock and the quarantine are never written through a link ----
state "$tmp/sl"
printf 'precious\n' >"$tmp/victim-lock"
printf 'precious\n' >"$tmp/victim-q"
ln -s "$tmp/victim-lock" "$tmp/sl/.trellis.lock"
"$TRELLIS" schedule -c "$tmp/fine.cfg" -s "$tmp/sl" -o json >"$tmp/ol" 2>"$tmp/el"
rc=$?
check "a linked state lock is refused (exit 2), saying what to do" \
    sh -c "test $rc -eq 2 && grep -q 'trellis.lock: cannot open the state lock: it is a symbolic link.*remove it' '$tmp/el'"
check "... and the file it leads to is untouched" grep -qx precious "$tmp/victim-lock"
rm -f "$tmp/sl/.trellis.lock"
ln -s "$tmp/victim-q" "$tmp/sl/.trellis.quarantine"
"$TRELLIS" schedule -c "$tmp/segv.cfg" -s "$tmp/sl" -o json >"$tmp/ol2" 2>"$tmp/el2"
check "a crash is not recorded through a linked quarantine file" grep -qx precious "$tmp/victim-q"
check "... and the crash report says it was not recorded, and why" \
    grep -q "; not recorded: .*\.trellis\.quarantine could not be written (a link, or no room)" "$tmp/el2"
"$TRELLIS" schedule -c "$tmp/fine.cfg" -s "$tmp/sl" -o json >"$tmp/ol3" 2>"$tmp/el3"
check "... nor is it replaced by the next run" \
    sh -c "grep -qx precious '$tmp/victim-q' && test -L '$tmp/sl/.trellis.quarantine'"

# ---- the crash report under --log-format json: one JSON line ----
state "$tmp/s1j"
day_before=$(date -u +%Y-%m-%d)
"$TRELLIS" schedule -c "$tmp/segv.cfg" -s "$tmp/s1j" -o json --log-format json \
    >"$tmp/o1j" 2>"$tmp/e1j"
rc=$?
check "json logs: the segfault still kills the run by the signal" test "$rc" -gt 128
grep '"signal"' "$tmp/e1j" >"$tmp/crash.json"
cat >"$tmp/want-crash.json" <<EOF
{"level": "error", "plugin": "fx-faults", "signal": "SIGSEGV", "hook": "filter",
 "object": "Pod/default/poison"}
EOF
check "json logs: the crash report is one JSON line with the plugin, signal, hook, object" \
    sh -c "[ \$(wc -l <'$tmp/crash.json') = 1 ] && '$JSONMATCH' '$tmp/want-crash.json' '$tmp/crash.json'"
check "json logs: its msg and time are those of a log line" \
    grep -E -q '^\{"time":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z","level":"error","plugin":"fx-faults","msg":"fatal: SIGSEGV in plugin .fx-faults. \(.*fx-faults\.so\), hook filter, object Pod/default/poison; recorded: ' "$tmp/crash.json"
day=$(sed -n 's/^{"time":"\([0-9-]*\)T.*/\1/p' "$tmp/crash.json")
check "json logs: its time is today's (written without gmtime in the handler)" \
    sh -c "[ '$day' = '$day_before' ] || [ '$day' = \"\$(date -u +%Y-%m-%d)\" ]"
check "json logs: nothing of it is plain text" sh -c "! grep -q '^trellis: fatal' '$tmp/e1j'"
# every line on standard error is JSON: the log's and the crash's (the
# shell may add its own word on the signal)
check "json logs: every line on standard error is a JSON object" \
    sh -c "! grep -v -e '^{\".*}\$' -e '^Segmentation fault' '$tmp/e1j'"
# a crash outside any plugin call, in `run`
state "$tmp/s1k"
rm "$tmp/s1k/pod-poison.yaml"
start outside "$tmp/s1k" "$tmp/fine.cfg" "--log-format json"
opid=$pid
check "json logs: the host serves" test -n "$port"
kill -SEGV "$opid"
check "json logs: a SIGSEGV outside a plugin ends the host" wait_for 20 stopped "$opid"
check "json logs: and is reported as a JSON line" \
    grep -E -q '^\{"time":"[^"]*","level":"error","msg":"fatal: SIGSEGV outside any plugin call","signal":"SIGSEGV"\}$' "$tmp/outside.log"

# ---- a score that fails, in tuple mode (first in name order, and last) ----
# Two nodes, one score plugin: the host looks for the first and finds the
# failed score on the way; the decision is an error that names the target.
for tb in name name-desc; do
    state "$tmp/sf-$tb"
    profile "$tmp/sf-$tb.cfg" 'fail_score_on = "n2";' "score_mode = \"tuple\"; tie_break = \"$tb\";"
    "$TRELLIS" schedule -c "$tmp/sf-$tb.cfg" -s "$tmp/sf-$tb" --dry-run -o json >"$tmp/sf-$tb.out" 2>&1
    check "tuple, tie_break $tb: a failed score makes the decision an error naming the target" \
        grep -q '"message": *"plugin fx-faults: score failed for target n2: told to fail on n2"' "$tmp/sf-$tb.out"
    check "tuple, tie_break $tb: no pod is bound" test "$(grep -c '"result": *"error"' "$tmp/sf-$tb.out")" -eq 3
done

# ---- an abort in init ----
state "$tmp/s2"
profile "$tmp/abort.cfg" 'crash_in = "init"; how = "abort";'
"$TRELLIS" schedule -c "$tmp/abort.cfg" -s "$tmp/s2" >/dev/null 2>"$tmp/e4"
rc=$?
check "an abort in init ends the run by the signal" test "$rc" -gt 128
line=$(grep -n fx-faults "$tmp/abort.cfg" | cut -d: -f1)
check "the abort names the plugin and the config line" \
    grep -q "trellis: fatal: SIGABRT in plugin 'fx-faults' (.*), hook init, config $tmp/abort.cfg:$line" "$tmp/e4"
check "a crash in init quarantines nothing" test ! -e "$tmp/s2/.trellis.quarantine"

# ---- a score that never returns ----
state "$tmp/s3"
profile "$tmp/hang.cfg" 'hang_in = "score"; hang_on = "poison";' 'hook_deadline_ms = 1000;'
"$TRELLIS" schedule -c "$tmp/hang.cfg" -s "$tmp/s3" >/dev/null 2>"$tmp/e5"
rc=$?
check "a hook past its deadline ends the run with status 4" test "$rc" -eq 4
check "the message names the plugin, the hook, the deadline and the workload" \
    grep -q "plugin 'fx-faults' (.*): hook score has not returned after 1\.[0-9] s (deadline 1000 ms) on Pod/default/poison" "$tmp/e5"
check "the hang is recorded" grep -q "^deadline	fx-faults	.*	score	Pod/default/poison$" "$tmp/s3/.trellis.quarantine"
"$TRELLIS" schedule -c "$tmp/hang.cfg" -s "$tmp/s3" -o json >"$tmp/o6" 2>/dev/null
check "the next run quarantines the workload and finishes" \
    grep -q "did not return in time in its score hook" "$tmp/o6"

# An ignorable plugin is cut short instead and sits out the cycle.
state "$tmp/s9"
cat >"$tmp/ignorable.cfg" <<EOF
profiles = ( {
    name = "default-scheduler";
    default = true;
    workload = { kind = "Pod"; };
    target = { kind = "Node"; };
    binding = { field = "spec.nodeName"; };
    hook_deadline_ms = 500;
    plugins = (
      { name = "fx-faults"; ignorable = true; args = { hang_in = "score"; hang_on = "poison"; }; },
      { name = "fx-faults"; as = "stuck-filter"; ignorable = true;
        args = { hang_in = "filter"; hang_on = "z"; }; },
      { name = "default-binder"; }
    );
} );
EOF
"$TRELLIS" schedule -c "$tmp/ignorable.cfg" -s "$tmp/s9" -o json >"$tmp/o9" 2>"$tmp/e9"
rc=$?
check "an ignorable plugin past its deadline does not end the run" test "$rc" -eq 0
check "its score call is cut short and logged" \
    grep -q "\[fx-faults\] score cut short at its deadline (500 ms) on Pod/default/poison: ignorable, skipped" "$tmp/e9"
check "its filter call too" \
    grep -q "\[stuck-filter\] filter cut short at its deadline (500 ms) on Pod/default/z" "$tmp/e9"
check "every workload is scheduled without it" \
    sh -c "grep -q 'nodeName: n1' '$tmp/s9/pod-poison.yaml' && grep -q 'nodeName: n1' '$tmp/s9/pod-z.yaml' && grep -q 'nodeName: n1' '$tmp/s9/pod-a.yaml'"
check "nothing is quarantined" test ! -e "$tmp/s9/.trellis.quarantine"

# In `run`: /healthz says why while the host ends.
state "$tmp/s4"
start h1 "$tmp/s4" "$tmp/hang.cfg"
check "/healthz fails with the stuck plugin's reason" \
    wait_for 20 sh -c "curl -s -m 2 http://127.0.0.1:$port/healthz | grep -q 'unhealthy: plugin .fx-faults.*hook score has not returned'"
check "the run ends" wait_for 20 stopped "$pid"
wait "$pid"
rc=$?
check "with status 4" test "$rc" -eq 4

# Without a deadline the loop stops turning, and liveness says so.
state "$tmp/s5"
profile "$tmp/nodeadline.cfg" 'hang_in = "score"; hang_on = "poison";' 'hook_deadline_ms = 0;'
printf 'http = { liveness_timeout_ms = 1000; };\n' >>"$tmp/nodeadline.cfg"
start h2 "$tmp/s5" "$tmp/nodeadline.cfg"
check "/healthz fails once the scheduling loop stops turning" \
    wait_for 20 sh -c "curl -s -m 2 http://127.0.0.1:$port/healthz | grep -q 'unhealthy: the scheduling loop has not turned for'"
kill -KILL "$pid" 2>/dev/null

# ---- a crash in `run`: the standby takes over and quarantines ----
state "$tmp/s6"
mv "$tmp/s6/pod-poison.yaml" "$tmp/poison.yaml"
start active "$tmp/s6" "$tmp/segv.cfg"
apid=$pid
aport=$port
check "the active host is ready" wait_for 20 http_is "$aport" /readyz 200
start standby "$tmp/s6" "$tmp/segv.cfg"
spid=$pid
check "the second host waits as a standby" wait_for 20 grep -q "standby:" "$tmp/standby.log"
mv "$tmp/poison.yaml" "$tmp/s6/pod-poison.yaml"
check "the active host dies of the crash" wait_for 20 stopped "$apid"
check "it named the plugin and the workload" \
    grep -q "fatal: SIGSEGV in plugin 'fx-faults' .*object Pod/default/poison" "$tmp/active.log"
check "the standby takes over and reports the poison workload instead of crashing" \
    wait_for 20 grep -q "Pod default/poison: quarantined: plugin 'fx-faults'" "$tmp/standby.log"
check "every other pod is bound" \
    sh -c "grep -q 'nodeName:' '$tmp/s6/pod-a.yaml' && grep -q 'nodeName:' '$tmp/s6/pod-z.yaml'"
check "the standby stays up" kill -0 "$spid"
kill -TERM "$spid" 2>/dev/null
wait_for 20 stopped "$spid"

# ---- a binding whose file changed on disk ----
state "$tmp/s7"
profile "$tmp/touch.cfg" "touch = \"$tmp/s7/pod-a.yaml\";"
rm "$tmp/s7/pod-poison.yaml" "$tmp/s7/pod-z.yaml"
"$TRELLIS" schedule -c "$tmp/touch.cfg" -s "$tmp/s7" -o json >"$tmp/o7" 2>"$tmp/e7"
rc=$?
check "a binding not written gives exit status 3" test "$rc" -eq 3
check "its decision is an error (json)" grep -q '"result": "error"' "$tmp/o7"
check "with the write's message" grep -q 'binding to n1 not written: .*changed on disk since it was read' "$tmp/o7"
check "json names the result error" grep -q '"error": 1' "$tmp/o7"
"$TRELLIS" schedule -c "$tmp/touch.cfg" -s "$tmp/s7" -o table >"$tmp/o8" 2>/dev/null
check "the table says error too" grep -q "error.*changed on disk" "$tmp/o8"
check "the file keeps the outside change and no binding" \
    sh -c "grep -q 'changed while trellis' '$tmp/s7/pod-a.yaml' && ! grep -q nodeName '$tmp/s7/pod-a.yaml'"

# ---- the lock file deleted under an active host ----
state "$tmp/s8"
profile "$tmp/ok.cfg" ''
start one "$tmp/s8" "$tmp/ok.cfg"
p1=$pid
port1=$port
check "the first host is ready" wait_for 20 http_is "$port1" /readyz 200
"$TRELLIS" schedule -c "$tmp/ok.cfg" -s "$tmp/s8" >/dev/null 2>"$tmp/e10"
rc=$?
check "a one-shot schedule beside an active host is refused (exit 2)" test "$rc" -eq 2
check "naming the lock and its holder" \
    grep -q "trellis: $tmp/s8/.trellis.lock is held by another trellis (pid $p1), which schedules this state" "$tmp/e10"
check "a dry run is not refused" "$TRELLIS" schedule -c "$tmp/ok.cfg" -s "$tmp/s8" --dry-run -o json
rm -f "$tmp/s8/.trellis.lock"
start two "$tmp/s8" "$tmp/ok.cfg"
p2=$pid
port2=$port
# whichever locks the new file first is active, the other waits
one_ready() {
    r1=$(http "$port1" /readyz)
    r2=$(http "$port2" /readyz)
    { [ "$r1" = 200 ] && [ "$r2" = 503 ]; } || { [ "$r1" = 503 ] && [ "$r2" = 200 ]; }
}
check "the first host notices the lock is gone and steps down" \
    wait_for 20 grep -q "was removed or replaced while this host held it.*stepping down" "$tmp/one.log"
check "then exactly one host is ready" wait_for 20 one_ready
if [ "$(http "$port1" /readyz)" = 200 ]; then active=$p1 standby=$p2 sport=$port2; else active=$p2 standby=$p1 sport=$port1; fi
check "and the other waits as a standby" grep -q "standby:" "$tmp/one.log" "$tmp/two.log"
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: late\n  namespace: default\nspec:\n  containers: []\n' >"$tmp/s8/pod-late.yaml"
check "a new pod is bound" wait_for 20 grep -q "nodeName:" "$tmp/s8/pod-late.yaml"
check "exactly once" test "$(grep -c nodeName: "$tmp/s8/pod-late.yaml")" -eq 1
check "still exactly one host is ready" one_ready
kill -TERM "$active" 2>/dev/null
check "when the active one stops, the other takes over" wait_for 20 http_is "$sport" /readyz 200
kill -TERM "$standby" 2>/dev/null
wait_for 20 stopped "$standby"

finish
