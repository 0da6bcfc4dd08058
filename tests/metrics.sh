#!/bin/sh
#
# metrics.sh - /metrics of a real `trellis run` on examples/kube
# (conf/kube.cfg, plugin calls timed in every cycle), read as a Prometheus
# server reads it: the text format checked line by line without a parser
# (HELP and TYPE once per family, before its samples; sample names of
# their family; counters ending in _total; histogram series with buckets
# rising in le and count, le="+Inf" last and equal to _count, _sum there;
# label values escaped; a profile whose name holds a quote and a
# backslash), kube-scheduler's families and process_* there, and every
# metric name the Grafana dashboard (contrib/grafana) queries present in
# the scrape with samples, so the dashboard shows no empty panel for want
# of a name.
#
# Environment (set by tests/Makefile.am): TRELLIS, TOP_SRCDIR.
: "${TRELLIS:?}" "${TOP_SRCDIR:?}"
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
hosts_setup

dash="$TOP_SRCDIR/contrib/grafana/trellis-scheduler.json"
st="$tmp/state"
cp -r "$TOP_SRCDIR/examples/kube" "$st"
# a second profile, named to need escaping; it schedules nothing
cat "$TOP_SRCDIR/conf/kube.cfg" - >"$tmp/kube.cfg" <<'CFG'
http = { plugin_metrics_sample_percent = 100; };
CFG
sed 's|^profiles = (|profiles = ( { name = "odd \\"quoted\\" \\\\ name"; workload = { kind = "Pod"; scheduler_name_field = "spec.schedulerName"; }; target = { kind = "Node"; }; binding = { field = "spec.nodeName"; }; plugins = ( { name = "node-resources-fit"; }, { name = "default-binder"; } ); },|' \
    "$tmp/kube.cfg" >"$tmp/two.cfg"
start a "$st" "$tmp/two.cfg"
check "run serves HTTP" test -n "$port"
check "the example pods are bound (payments-0 after a preemption)" \
    wait_for 20 grep -q "payments-0: bound to" "$tmp/a.log"
check "search-indexer-0 waits, unschedulable" \
    wait_for 20 grep -q "search-indexer-0: unschedulable" "$tmp/a.log"
# the metrics are reported once per loop turn: one after the bindings
wait_for 20 sh -c "curl -s http://127.0.0.1:$port/metrics | grep -q '^scheduler_pod_scheduling_sli_duration_seconds_count'"
scrape="$tmp/metrics.txt"
curl -s -o "$scrape" -D "$tmp/headers" "http://127.0.0.1:$port/metrics"
check "the scrape is Prometheus text 0.0.4" grep -q -i '^content-type: text/plain; version=0.0.4' "$tmp/headers"
check "the scrape is not empty and ends with a newline" \
    sh -c "test -s '$scrape' && [ \"\$(tail -c 1 '$scrape' | od -An -c | tr -d ' ')\" = '\\n' ]"

# ---- the text format, strictly ----
# Prints one line per violation; nothing when the text is well formed.
format_errors() {
    awk '
    function fail(msg) { print "line " NR ": " msg ": " $0; bad = 1 }
    # the label set of a sample without its le, and its le (global le_of)
    function split_labels(s,    rest, out, pair, eq, name, val, c, i, n) {
        le_of = ""; out = ""
        rest = s
        while (rest != "") {
            if (!match(rest, /^[a-zA-Z_][a-zA-Z0-9_]*="/)) return "!"
            name = substr(rest, 1, RLENGTH - 2)
            rest = substr(rest, RLENGTH + 1)
            val = ""; n = length(rest)
            for (i = 1; i <= n; i++) {
                c = substr(rest, i, 1)
                if (c == "\\") {
                    c = substr(rest, i + 1, 1)
                    if (c != "\\" && c != "\"" && c != "n") return "!"
                    val = val "\\" c; i++
                } else if (c == "\"") {
                    break
                } else {
                    val = val c
                }
            }
            if (i > n) return "!"
            rest = substr(rest, i + 1)
            if (name == "le") le_of = val
            else out = out name "=" val ";"
            if (seen_label[name]++) return "!"
            if (substr(rest, 1, 1) == ",") rest = substr(rest, 2)
            else if (rest != "") return "!"
        }
        return out
    }
    /^# HELP / {
        fam = $3
        if (help[fam]++) fail("HELP twice for " fam)
        if (done[fam]) fail("family " fam " comes back")
        if (cur != "" && cur != fam) done[cur] = 1
        cur = fam; typed = 0
        if (NF < 4) fail("HELP without text")
        next
    }
    /^# TYPE / {
        if ($3 != cur) fail("TYPE not right after its HELP")
        if (type[$3] != "") fail("TYPE twice for " $3)
        type[$3] = $4; typed = 1
        if ($4 != "counter" && $4 != "gauge" && $4 != "histogram") fail("unknown type")
        if ($4 == "counter" && $3 !~ /_total$/) fail("counter not ending in _total")
        next
    }
    /^#/ { fail("a comment that is neither HELP nor TYPE"); next }
    {
        if (!typed) { fail("sample before its TYPE"); next }
        if (!match($0, /^[a-zA-Z_:][a-zA-Z0-9_:]*/)) { fail("bad metric name"); next }
        name = substr($0, 1, RLENGTH); rest = substr($0, RLENGTH + 1)
        labels = ""
        delete seen_label
        if (substr(rest, 1, 1) == "{") {
            # a label value may hold "} ": the last one ends the labels
            end = 0
            while ((p = index(substr(rest, end + 1), "} ")) > 0) end += p
            if (!end) { fail("unterminated labels"); next }
            labels = split_labels(substr(rest, 2, end - 2))
            if (labels == "!") { fail("bad labels"); next }
            rest = substr(rest, end + 1)
        } else {
            le_of = ""
        }
        if (rest !~ /^ (-?[0-9.]+([eE][-+]?[0-9]+)?|[-+]Inf|NaN)$/) { fail("bad value"); next }
        value = substr(rest, 2) + 0
        t = type[cur]
        if (t != "histogram") {
            if (name != cur) fail("sample " name " in family " cur)
            if (le_of != "") fail("le outside a histogram")
            next
        }
        key = cur "|" labels
        if (name == cur "_bucket") {
            if (le_of == "") { fail("bucket without le"); next }
            if (inf[key]) fail("bucket after +Inf")
            if (le_of == "+Inf") { inf[key] = 1; infv[key] = value }
            else if (key in lastle && le_of + 0 <= lastle[key]) fail("le not rising")
            else lastle[key] = le_of + 0
            if (key in lastv && value < lastv[key]) fail("bucket count falls")
            lastv[key] = value
            series[key] = 1
        } else if (name == cur "_count") {
            if (!inf[key]) fail("_count before the +Inf bucket")
            else if (value != infv[key]) fail("_count differs from the +Inf bucket")
            counted[key] = 1
        } else if (name == cur "_sum") {
            summed[key] = 1
        } else {
            fail("sample " name " in histogram " cur)
        }
    }
    END {
        for (k in series) {
            if (!inf[k]) { print "no le=\"+Inf\" bucket in " k; bad = 1 }
            if (!counted[k]) { print "no _count in " k; bad = 1 }
            if (!summed[k]) { print "no _sum in " k; bad = 1 }
        }
        for (f in help) if (type[f] == "") { print "no TYPE for " f; bad = 1 }
    }' "$1"
}
format_errors "$scrape" >"$tmp/format-errors"
check "the scrape is well-formed text exposition" test ! -s "$tmp/format-errors"
[ -s "$tmp/format-errors" ] && head -n 20 "$tmp/format-errors" | sed 's/^/# /'

# the checker itself catches what it is for
printf '# HELP a_total x\n# TYPE a_total counter\na_total 1\n# HELP a_total x\n# TYPE a_total counter\n' >"$tmp/bad1"
printf '# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n' >"$tmp/bad2"
printf '# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n' >"$tmp/bad3"
printf '# HELP g x\n# TYPE g gauge\ng{a="x\\q"} 1\n' >"$tmp/bad4"
printf '# HELP g x\n# TYPE g gauge\ng{a="x"} 1\n# HELP f_total x\n# TYPE f_total counter\ng{a="y"} 1\n' >"$tmp/bad5"
printf '# HELP c x\n# TYPE c counter\nc 1\n' >"$tmp/bad6"
for b in 1 2 3 4 5 6; do
    format_errors "$tmp/bad$b" >"$tmp/bad$b.out"
    check "the format check refuses a bad text ($b)" test -s "$tmp/bad$b.out"
done

# ---- what is there ----
has() { grep -q "^$1[{ ]" "$scrape"; }
for f in scheduler_schedule_attempts_total scheduler_scheduling_attempt_duration_seconds_bucket \
    scheduler_pending_pods scheduler_framework_extension_point_duration_seconds_bucket \
    scheduler_plugin_execution_duration_seconds_bucket scheduler_preemption_attempts_total \
    scheduler_preemption_victims_bucket scheduler_pod_scheduling_sli_duration_seconds_bucket \
    scheduler_pod_scheduling_attempts_bucket scheduler_unschedulable_pods \
    scheduler_queue_incoming_pods_total scheduler_scheduler_cache_size \
    process_cpu_seconds_total process_resident_memory_bytes process_virtual_memory_bytes \
    process_open_fds process_max_fds process_start_time_seconds trellis_build_info; do
    check "the scrape has $f" has "$f"
done
check "no go_* metrics" sh -c "! grep -q '^go_' '$scrape'"
check "kube's stability level leads the help text" \
    grep -q '^# HELP scheduler_schedule_attempts_total \[STABLE\] Number of attempts' "$scrape"
check "kube's label values: extension points and statuses" \
    grep -q '^scheduler_framework_extension_point_duration_seconds_bucket{extension_point="PreFilter",profile="default-scheduler",status="Success",le="0.0001"}' "$scrape"
check "kube's plugin buckets: 1.5 apart from 10 microseconds" \
    grep -q '^scheduler_plugin_execution_duration_seconds_bucket{extension_point="Filter",plugin="node-resources-fit",status="Success",le="1.5000000000000002e-05"}' "$scrape"
check "kube's SLI attempts label" grep -q '^scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"}' "$scrape"
check "a profile name with a quote and a backslash is escaped" \
    grep -q '^trellis_pending_workloads{profile="odd \\"quoted\\" \\\\ name",queue="active"}' "$scrape"
check "the process started in the past" \
    awk -v now="$(date +%s)" '$1 == "process_start_time_seconds" { f = ($2 > now - 600 && $2 <= now + 1) } END { exit !f }' "$scrape"

# ---- the dashboard ----
check "the dashboard is there" test -s "$dash"
check "the dashboard is valid JSON" "$JSONMATCH" "$dash" "$dash"
check "the dashboard has a recent schemaVersion" \
    sh -c "grep -E -q '\"schemaVersion\": (3[6-9]|[4-9][0-9])' '$dash'"
check "the dashboard has a \${datasource} Prometheus variable" \
    sh -c "grep -q '\"uid\": \"\${datasource}\"' '$dash' && grep -A3 '\"name\": \"datasource\"' '$dash' | grep -q '\"type\": \"datasource\"' &&
           grep -A4 '\"name\": \"datasource\"' '$dash' | grep -q '\"query\": \"prometheus\"'"
check "the dashboard has a profile variable" grep -q '"name": "profile"' "$dash"
# every metric name in the expressions (and the variables' queries):
# strings, label matchers, ranges and by (...) lists taken out, then every
# identifier not followed by "(" nor a keyword
sed -n -e 's/^ *"expr": "\(.*\)",\{0,1\}$/\1/p' -e 's/^ *"definition": "\(.*\)",\{0,1\}$/\1/p' "$dash" |
    sed -e 's/\\"[^\\]*\\"//g' -e 's/{[^}]*}//g' -e 's/\[[^]]*\]//g' \
        -e 's/\(by\|without\|on\|ignoring\) *([^)]*)//g' \
        -e 's/label_values(\([a-zA-Z_:][a-zA-Z0-9_:]*\) *, *[a-zA-Z_]*)/\1/g' |
    grep -o -E '[a-zA-Z_:][a-zA-Z0-9_:]*[[:space:]]*\(?' | grep -v '($' | tr -d ' \t' |
    grep -v -x -E 'by|without|on|ignoring|group_left|group_right|bool|and|or|unless|offset|le|Inf|NaN' |
    sort -u >"$tmp/dash-names"
check "the dashboard queries metrics" test "$(wc -l <"$tmp/dash-names")" -ge 15
while read -r n; do
    check "the dashboard's $n is in the scrape" has "$n"
done <"$tmp/dash-names"

kill -TERM "$pid"
check "the host stops" wait_for 20 stopped "$pid"
finish
