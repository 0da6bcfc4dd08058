#!/bin/sh
#
# cli.sh - command line tests of the trellis binary, run by `make check`.
#
# Each check runs the built binary on a small config and manifests written
# into a temporary directory and matches the key words of its output and its
# exit status: the commands and options, config errors (with file:line), the
# loader's refusal of every misbehaving fixture plugin (tests/plugins/fx_*.c),
# the decisions of the fixtures that reject everything or score out of
# range, the order of the extension points logged by fx-all-hooks (permit
# WAIT included), malformed manifests, --dry-run and the table output.
# It prints "ok - ..." or "not ok - ..." per check, then "N passed, M failed",
# and exits non-zero when a check failed.
#
# Environment (set by tests/Makefile.am): TRELLIS, the binary;
# TRELLIS_PLUGIN_PATH, the directories of the in-tree plugins and of the
# fixtures; TOP_BUILDDIR as a fallback to find them.

: "${TRELLIS:?TRELLIS must name the trellis binary}"
case $TRELLIS in
/*) ;;
*) TRELLIS=$(pwd)/$TRELLIS ;;
esac

# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/trellis-cli.XXXXXX") || exit 99
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

OUT=$TMP/out
ERR=$TMP/err

# run ARGS...: run trellis, stdout in $OUT, stderr in $ERR, status in $rc
run() {
    "$TRELLIS" "$@" >"$OUT" 2>"$ERR"
    rc=$?
}

# run_no_env ARGS...: the same without TRELLIS_PLUGIN_PATH
run_no_env() {
    (
        unset TRELLIS_PLUGIN_PATH
        exec "$TRELLIS" "$@"
    ) >"$OUT" 2>"$ERR"
    rc=$?
}

# show: the last run's output, indented, for a failure report
show() {
    echo "exit status $rc"
    sed -n '1,15s/^/stdout: /p' "$OUT"
    sed -n '1,15s/^/stderr: /p' "$ERR"
}

# check DESCRIPTION EXPECTED_STATUS FILE PATTERN...: the last run exited
# with EXPECTED_STATUS and FILE matches every extended regex PATTERN
check() {
    desc=$1 want=$2 file=$3
    shift 3
    why=""
    if [ "$rc" != "$want" ]; then
        why="expected exit status $want"
    else
        for pat in "$@"; do
            if ! grep -E -q -e "$pat" "$file"; then
                why="no match for /$pat/ in $(basename "$file")"
                break
            fi
        done
    fi
    if [ -z "$why" ]; then
        ok "$desc"
    else
        not_ok "$desc" "$why" "$(show)"
    fi
}

# expect DESCRIPTION COMMAND...: a shell condition that must hold
expect() {
    desc=$1
    shift
    if "$@"; then
        ok "$desc"
    else
        not_ok "$desc" "failed: $*"
    fi
}

# same_tree A B: the same file names with byte-identical contents
same_tree() {
    (cd "$1" && find . -type f | LC_ALL=C sort) >"$TMP/tree.a"
    (cd "$2" && find . -type f | LC_ALL=C sort) >"$TMP/tree.b"
    cmp -s "$TMP/tree.a" "$TMP/tree.b" || return 1
    while read -r f; do
        cmp -s "$1/$f" "$2/$f" || return 1
    done <"$TMP/tree.a"
    return 0
}

# first_line PATTERN FILE: number of the first line matching, or 0
first_line() {
    n=$(grep -n -E -e "$1" "$2" | head -n 1 | cut -d: -f1)
    echo "${n:-0}"
}

# ---- where the plugins are -------------------------------------------------

PLUGINS_DIR=""
FIXTURES_DIR=""
oldifs=$IFS
IFS=:
for d in ${TRELLIS_PLUGIN_PATH:-} "${TOP_BUILDDIR:-.}/plugins/.libs" \
    "${TOP_BUILDDIR:-.}/tests/plugins/.libs"; do
    [ -z "$PLUGINS_DIR" ] && [ -f "$d/default-binder.so" ] && PLUGINS_DIR=$d
    [ -z "$FIXTURES_DIR" ] && [ -f "$d/fx-reject-all.so" ] && FIXTURES_DIR=$d
done
IFS=$oldifs
if [ -z "$PLUGINS_DIR" ] || [ -z "$FIXTURES_DIR" ]; then
    echo "not ok - find the plugins: default-binder.so and fx-reject-all.so are" \
        "not in TRELLIS_PLUGIN_PATH (${TRELLIS_PLUGIN_PATH:-unset})"
    echo "1..1"
    echo "0 passed, 1 failed"
    exit 1
fi
TRELLIS_PLUGIN_PATH=$PLUGINS_DIR:$FIXTURES_DIR
export TRELLIS_PLUGIN_PATH

# ---- fixtures --------------------------------------------------------------

# profile_cfg FILE PLUGIN_ENTRIES: a one-profile config for Pods on Nodes.
# The plugin list starts on line 8.
profile_cfg() {
    cat >"$1" <<EOF
plugin_dirs = [ ];
parallelism = 2;
profiles = (
  { name = "default-scheduler"; default = true;
    workload = { kind = "Pod"; scheduler_name_field = "spec.schedulerName"; };
    target = { kind = "Node"; };
    binding = { field = "spec.nodeName"; };
    plugins = ( $2 );
  } );
EOF
}

# nodes DIR NAME...: one file with a Node per name
nodes() {
    dir=$1
    shift
    mkdir -p "$dir"
    : >"$dir/nodes.yaml"
    for n in "$@"; do
        cat >>"$dir/nodes.yaml" <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: $n
  labels:
    kubernetes.io/hostname: $n
EOF
    done
}

# pod DIR NAME [LABEL_LINE]: a pending Pod in DIR/NAME.yaml
pod() {
    mkdir -p "$1"
    {
        printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n' "$2"
        printf '  namespace: default\n'
        [ -n "${3:-}" ] && printf '  labels:\n    %s\n' "$3"
        printf 'spec:\n  containers:\n  - name: app\n    image: app:1\n'
    } >"$1/$2.yaml"
}

# ---- commands and options --------------------------------------------------

run --help
check "--help exits 0 and lists the commands" 0 "$OUT" \
    '^Usage: trellis' '^ +schedule ' '^ +validate ' '^ +plugins '

run help
check "'help' prints the usage too" 0 "$OUT" '^Usage: trellis'

run --version
check "--version prints the version and the SDK version" 0 "$OUT" \
    '^trellis [0-9]+\.[0-9]+\.[0-9]+.*SDK [0-9]+\.[0-9]+'
SDK_MAJOR=$(sed -n 's/.*SDK \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1/p' "$OUT")
SDK_MINOR=$(sed -n 's/.*SDK \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\2/p' "$OUT")
: "${SDK_MAJOR:=1}" "${SDK_MINOR:=0}"

run frobnicate
check "an unknown command exits 1" 1 "$ERR" "unknown command 'frobnicate'"

run
check "no command prints the usage and exits 1" 1 "$ERR" '^Usage: trellis'

# JSON logs: one object a line, '/' as it is; the errors that end a
# command are in that format too
nodes "$TMP/st-log" n1
pod "$TMP/st-log" p1
profile_cfg "$TMP/log.cfg" '{ name = "default-binder"; }'
run schedule -c "$TMP/log.cfg" -s "$TMP/st-log" --dry-run -o json --log-format json --log-level info
check "--log-format json: JSON lines that keep '/' unescaped" 0 "$ERR" \
    '^\{"time":"[^"]*","level":"info","msg":"loaded 1 targets .* from /'
expect "--log-format json: every line is a JSON object, no escaped '/'" \
    sh -c "! grep -v '^{' '$ERR' && ! grep -F -q '\\/' '$ERR'"
run run -c "$TMP/nowhere.cfg" --log-format json
check "run: a config that does not load is a JSON error line under --log-format json" 2 "$ERR" \
    '^\{"time":"[^"]*","level":"error","msg":"/.*nowhere\.cfg: cannot read the config file'
run schedule -c "$TMP/nowhere.cfg" --log-format json
check "schedule: the same, in the chosen format" 2 "$ERR" '^\{.*"level":"error".*nowhere\.cfg'
run schedule -c "$TMP/nowhere.cfg"
check "as text: trellis: MESSAGE, as before" 2 "$ERR" '^trellis: .*nowhere\.cfg: cannot read'

run schedul
check "an unknown command suggests the nearest one" 1 "$ERR" \
    "unknown command 'schedul'; did you mean 'schedule'\?"

run schedule --dryrun
check "an unknown option suggests the nearest one and the command's help" 1 "$ERR" \
    "unknown option '--dryrun'; did you mean '--dry-run'\?" "Try 'trellis schedule --help'"

run schedule --config
check "an option without its argument says so" 1 "$ERR" "option '--config' needs an argument"

run explain --help
check "a command's --help: its usage, its options, examples" 0 "$OUT" \
    '^Usage: trellis explain \[KIND/\]\[NAMESPACE/\]NAME' '--profile NAME' '^Examples:' \
    'trellis explain -c kube.cfg'
expect "a command's --help leaves out the options of other commands" \
    sh -c "! grep -q -e '--budget' '$OUT'"

run help deschedule
check "'help COMMAND' prints that command's help" 0 "$OUT" '^Usage: trellis deschedule' \
    '--budget N'

run help frobnicate
check "'help' of an unknown command exits 1" 1 "$ERR" "unknown command 'frobnicate'"

run schedule --output yaml
check "a bad --output value exits 1" 1 "$ERR" '--output' 'yaml'

run schedule --no-such-option
check "an unknown option exits 1" 1 "$ERR" "trellis schedule --help"

run schedule --now yesterday
check "--now that is not an RFC 3339 time exits 1" 1 "$ERR" '--now' "got 'yesterday'"

run schedule --now 2026-02-30T00:00:00Z
check "--now with a day the month lacks exits 1" 1 "$ERR" '--now' '2026-02-30'

# ---- validate --------------------------------------------------------------

profile_cfg "$TMP/good.cfg" '{ name = "default-binder"; }'
run validate "$TMP/good.cfg"
check "validate: a good config is ok" 0 "$OUT" 'good\.cfg: ok' '1 profile'

run validate -c "$TMP/good.cfg"
check "validate -c FILE works as well" 0 "$OUT" 'good\.cfg: ok'

run validate "$TMP/missing.cfg"
check "validate: a missing file exits 2" 2 "$ERR" 'missing\.cfg' 'cannot read'

printf 'parallelism = 2;\nplugin_dirs = [ ];\nprofiles = ( { name = ; } );\n' \
    >"$TMP/syntax.cfg"
run validate "$TMP/syntax.cfg"
check "validate: a syntax error names file:line" 2 "$ERR" \
    'syntax\.cfg:3: ' 'syntax error'

profile_cfg "$TMP/unknown-setting.cfg" '{ name = "default-binder"; }'
sed 's/^parallelism = 2;/paralelism = 2;/' "$TMP/unknown-setting.cfg" \
    >"$TMP/unknown-setting.tmp" && mv "$TMP/unknown-setting.tmp" "$TMP/unknown-setting.cfg"
run validate "$TMP/unknown-setting.cfg"
check "validate: an unknown setting is named with its line" 2 "$ERR" \
    "unknown-setting\.cfg:2: unknown setting 'paralelism'"

profile_cfg "$TMP/bad-now.cfg" '{ name = "default-binder"; }'
sed 's/^parallelism = 2;/parallelism = 2;\nnow = "2026-01-01 noon";/' "$TMP/bad-now.cfg" \
    >"$TMP/bad-now.tmp" && mv "$TMP/bad-now.tmp" "$TMP/bad-now.cfg"
run validate "$TMP/bad-now.cfg"
check "validate: a 'now' that is not a time names file:line" 2 "$ERR" \
    "bad-now\.cfg:3: 'now' must be an RFC 3339 time" "2026-01-01 noon"

# document arguments: a file (relative to the config) or { inline = "..."; }
printf 'kubernetes-fleet.io/parent-CRP: crp-1\nbad: [unclosed\n' >"$TMP/req-bad.yaml"
profile_cfg "$TMP/doc-bad.cfg" '{ name = "fx-labels"; args = { required = "req-bad.yaml"; }; }'
run validate "$TMP/doc-bad.cfg"
check "validate: a document argument that does not parse names its file and line" 2 "$ERR" \
    "doc-bad\.cfg:[0-9]*: plugin 'fx-labels': argument 'required': .*req-bad\.yaml:[23]"
profile_cfg "$TMP/doc-missing.cfg" '{ name = "fx-labels"; args = { required = "nowhere.yaml"; }; }'
run validate "$TMP/doc-missing.cfg"
check "validate: a missing document file is named" 2 "$ERR" "argument 'required'" "nowhere\.yaml"
profile_cfg "$TMP/doc-group.cfg" '{ name = "fx-labels"; args = { required = { text = "a: b"; }; }; }'
run validate "$TMP/doc-group.cfg"
check "validate: a document group without inline says what is expected" 2 "$ERR" \
    "argument 'required': expected { inline"
profile_cfg "$TMP/doc-ok.cfg" \
    '{ name = "fx-labels"; args = { required = { inline = "{\"a.io/b\": \"c\"}"; }; }; },
     { name = "default-binder"; }'
run validate "$TMP/doc-ok.cfg"
check "validate: an inline document argument is read" 0 "$OUT" "doc-ok\.cfg: ok"

profile_cfg "$TMP/unknown-profile-key.cfg" '{ name = "default-binder"; }'
sed 's/default = true;/default = true; tiebreak = "name";/' \
    "$TMP/unknown-profile-key.cfg" >"$TMP/upk.tmp" &&
    mv "$TMP/upk.tmp" "$TMP/unknown-profile-key.cfg"
run validate "$TMP/unknown-profile-key.cfg"
check "validate: an unknown profile setting is named with its line" 2 "$ERR" \
    "unknown-profile-key\.cfg:4: unknown setting 'tiebreak'"

profile_cfg "$TMP/bad-arg.cfg" '{ name = "default-binder"; args = { x = 1; }; }'
run validate "$TMP/bad-arg.cfg"
check "validate: an unknown plugin argument names file:line" 2 "$ERR" \
    "bad-arg\.cfg:8: unknown argument 'x'"

profile_cfg "$TMP/bad-point.cfg" \
    '{ name = "default-binder"; points = ["bnid"]; }'
run validate "$TMP/bad-point.cfg"
check "validate: an unknown extension point is named" 2 "$ERR" \
    "bad-point\.cfg:8: unknown extension point 'bnid'"

# a wrong value: reported at the field's line, once however many plugins
# read the field (priority-sort and preemption read spec.priority,
# resources-fit and least-allocated the requests), also when a syntax
# error before it (the unclosed map of the first document) is in the file
nodes "$TMP/st-values" n1
cat >"$TMP/st-values/bad.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: broken, namespace: default
spec: {containers: [{name: c, image: x}]}
---
apiVersion: v1
kind: Pod
metadata: {name: bad, namespace: default}
spec:
  priority: high
  containers:
  - name: c
    image: x
    resources:
      requests:
        cpu: [1, 2]
EOF
profile_cfg "$TMP/values.cfg" '{ name = "priority-sort"; }, { name = "resources-fit"; },
    { name = "least-allocated"; }, { name = "preemption"; }, { name = "default-binder"; }'
run schedule -c "$TMP/values.cfg" -s "$TMP/st-values" --dry-run -o json
check "a priority that is a word is reported at its own line" 3 "$ERR" \
    "bad\.yaml:10: Pod default/bad: plugin priority-sort: spec\.priority: expected an integer, got 'high'"
check "a quantity that is a list is reported at its own line" 3 "$ERR" \
    "bad\.yaml:16: Pod default/bad: plugin resources-fit: spec\.containers\[0\]\.resources\.requests\.cpu: expected a quantity"
expect "each is reported once" \
    sh -c "[ \$(grep -c 'spec.priority: expected' '$ERR') = 1 ] && [ \$(grep -c 'requests.cpu: expected' '$ERR') = 1 ]"

# targets: every target with its workloads, taints, cordon, capacity
mkdir -p "$TMP/st-fleet"
cat >"$TMP/st-fleet/all.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: 3}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
spec:
  taints:
  - {key: node.kubernetes.io/unschedulable, effect: NoSchedule}
  - {key: gpu, value: "yes", effect: PreferNoSchedule}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default}
spec: {nodeName: n1}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: shop}
spec: {nodeName: n1}
---
apiVersion: v1
kind: Pod
metadata: {name: c, namespace: default}
spec: {nodeName: n9}
---
apiVersion: v1
kind: Pod
metadata: {name: d, namespace: default}
spec: {}
EOF
cp -R "$TMP/st-fleet" "$TMP/st-fleet.orig"
profile_cfg "$TMP/fleet.cfg" '{ name = "default-binder"; }'
sed 's|binding = { field = "spec.nodeName"; };|&\n    operator = { capacity_field = "status.capacity"; };|' \
    "$TMP/fleet.cfg" >"$TMP/fleet.tmp" && mv "$TMP/fleet.tmp" "$TMP/fleet.cfg"
run targets -c "$TMP/fleet.cfg" -s "$TMP/st-fleet" -o table
check "targets: a table of every target, its state, workloads, capacity and taints" 0 "$OUT" \
    '^PROFILE default-scheduler \(Pod on Node\)$' \
    '^n1 +ready +2 +2/3 +-$' '^ +default/a$' '^ +shop/b$' \
    '^n2 +cordoned +0 +- +node\.kubernetes\.io/unschedulable:NoSchedule, gpu=yes:PreferNoSchedule$' \
    '^2 targets; 1 Pod pending; default/c on missing n9$'
run targets -c "$TMP/fleet.cfg" -s "$TMP/st-fleet" -o json
check "targets -o json: the same as JSON" 0 "$OUT" '"workload_count": 2' '"capacity": 3' \
    '"cordoned": true' '"pending": 1'
cat >"$TMP/want-fleet.json" <<'EOF'
{ "profiles": [ { "name": "default-scheduler", "workload_kind": "Pod", "target_kind": "Node",
  "targets": [
    { "name": "n1", "cordoned": false, "workloads": [ "default/a", "shop/b" ], "capacity": 3 },
    { "name": "n2", "cordoned": true, "workloads": [ ], "capacity": null,
      "taints": [ { "key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule" },
                  { "key": "gpu", "value": "yes", "effect": "PreferNoSchedule" } ] } ],
  "pending": 1, "on_missing_targets": [ { "workload": "default/c", "target": "n9" } ] } ] }
EOF
expect "targets -o json matches the view" "$JSONMATCH" "$TMP/want-fleet.json" "$OUT"
expect "targets writes nothing" same_tree "$TMP/st-fleet.orig" "$TMP/st-fleet"
run targets -c "$TMP/fleet.cfg" -s "$TMP/st-fleet" --profile nope
check "targets: an unknown --profile exits 1" 1 "$ERR" "no profile named 'nope'"

# validate --state: a field path no object has is a warning at its line
nodes "$TMP/st-paths" n1
pod "$TMP/st-paths" p1 'disk: ssd'
profile_cfg "$TMP/typo.cfg" \
    '{ name = "label-selector"; args = { field = "spec.nodeSelectr"; }; }, { name = "default-binder"; }'
profile_cfg "$TMP/paths.cfg" \
    '{ name = "label-selector"; args = { field = "metadata.labels"; }; }, { name = "default-binder"; }'
run validate "$TMP/typo.cfg" --state "$TMP/st-paths"
check "validate --state: a field path no object has is a warning at its line" 0 "$ERR" \
    "typo\.cfg:8: warning: profile 'default-scheduler': plugin label-selector: field = \"spec\.nodeSelectr\": no Pod or Node in the state has this field"
check "validate --state: the summary counts it" 0 "$OUT" "ok .*; 1 field path no object in .* has\)"
run validate "$TMP/paths.cfg" --state "$TMP/st-paths"
check "validate --state: a path objects have is no warning" 0 "$OUT" "; 0 field paths no object"
expect "validate --state: nothing on stderr then" test ! -s "$ERR"
run validate "$TMP/typo.cfg"
check "validate without --state does not read a state" 0 "$OUT" "ok \(1 profile, 2 plugin instances\)$"

profile_cfg "$TMP/no-plugin.cfg" \
    '{ name = "no-such-plugin"; }, { name = "default-binder"; }'
run validate "$TMP/no-plugin.cfg"
check "validate: a missing plugin says where it was looked for" 2 "$ERR" \
    "no-plugin\.cfg:8: " "no-such-plugin\.so not found in " "$PLUGINS_DIR"

profile_cfg "$TMP/no-binder.cfg" '{ name = "fx-reject-all"; }'
run validate "$TMP/no-binder.cfg"
check "validate: a profile without a bind plugin is refused" 2 "$ERR" \
    'no plugin binds workloads'

# ---- the loader's defences (fixtures) -------------------------------------

profile_cfg "$TMP/major.cfg" \
    '{ name = "fx-wrong-major"; }, { name = "default-binder"; }'
run validate "$TMP/major.cfg"
check "loader: a wrong SDK major names both versions" 2 "$ERR" \
    'fx-wrong-major\.so' "SDK $((SDK_MAJOR + 1))\\.0" \
    "host has SDK $SDK_MAJOR\\.$SDK_MINOR" 'major'

profile_cfg "$TMP/minor.cfg" \
    '{ name = "fx-newer-minor"; }, { name = "default-binder"; }'
run validate "$TMP/minor.cfg"
check "loader: a newer SDK minor needs a newer host" 2 "$ERR" \
    'fx-newer-minor\.so' "SDK $SDK_MAJOR\\.$((SDK_MINOR + 1))" \
    "host has SDK $SDK_MAJOR\\.$SDK_MINOR" 'minor'

profile_cfg "$TMP/entry.cfg" \
    '{ name = "fx-no-entry"; }, { name = "default-binder"; }'
run validate "$TMP/entry.cfg"
check "loader: a library without the entry symbol is not a plugin" 2 "$ERR" \
    'fx-no-entry\.so' "no symbol 'trellis_plugin_entry'" 'not a trellis plugin'

profile_cfg "$TMP/init.cfg" \
    '{ name = "default-binder"; },
                { name = "fx-failing-init"; }'
run validate "$TMP/init.cfg"
check "loader: a failing init stops with its message and the config line" 2 \
    "$ERR" 'init\.cfg:9: ' "fx-failing-init" 'init failed' \
    'cannot reach the inventory service'

profile_cfg "$TMP/dup.cfg" \
    "{ name = \"fx-dup\"; path = \"$FIXTURES_DIR/fx-dup-a.so\"; },
                { name = \"fx-dup\"; as = \"fx-dup-2\"; path = \"$FIXTURES_DIR/fx-dup-b.so\"; },
                { name = \"default-binder\"; }"
run validate "$TMP/dup.cfg"
check "loader: two files declaring one name are refused" 2 "$ERR" \
    'dup\.cfg:9: ' "fx-dup-b\\.so: duplicate plugin name 'fx-dup'" 'fx-dup-a\.so'

profile_cfg "$TMP/twice.cfg" \
    '{ name = "default-binder"; }, { name = "default-binder"; }'
run validate "$TMP/twice.cfg"
check "config: the same instance twice in a profile is refused" 2 "$ERR" \
    "twice\\.cfg:8: profile 'default-scheduler' lists 'default-binder' twice"

profile_cfg "$TMP/as.cfg" \
    '{ name = "default-binder"; }, { name = "default-binder"; as = "binder-2"; }'
run validate "$TMP/as.cfg"
check "config: 'as' gives a second instance of a plugin its own name" 0 "$OUT" \
    'as\.cfg: ok \(1 profile, 2 plugin instances\)'

# ---- plugins ---------------------------------------------------------------

# only the in-tree directory: every plugin there loads
run_no_env plugins -P "$PLUGINS_DIR"
check "plugins -P DIR lists names, versions, hooks and files" 0 "$OUT" \
    '^NAME +VERSION +SDK +HOOKS +FILE' \
    "^default-binder +[^ ]+ +$SDK_MAJOR\\.[0-9]+ +bind +.*default-binder\\.so"

run_no_env plugins -P "$FIXTURES_DIR"
check "plugins lists every hook a plugin registered" 2 "$OUT" \
    '^fx-all-hooks .*prepare-workload,prepare-target,counters,queue-sort,pre-filter,filter,filter-batch,post-filter,pre-score,score,score-batch,normalize,reserve,unreserve,permit,pre-bind,bind,post-bind ' \
    '^fx-reject-all .* filter,filter-batch '
check "plugins reports the files it cannot load, and exits 2" 2 "$ERR" \
    'fx-wrong-major\.so: incompatible SDK' 'fx-no-entry\.so: no symbol'

# alone in a directory, so that no broken fixture makes the exit status 2
mkdir "$TMP/fx-all-hooks-only"
cp "$FIXTURES_DIR/fx-all-hooks.so" "$TMP/fx-all-hooks-only/"
run_no_env plugins -P "$TMP/fx-all-hooks-only" --describe fx-all-hooks
check "plugins --describe prints a plugin's arguments" 0 "$OUT" \
    '^fx-all-hooks ' '^arguments:' '^ +log_hooks +bool +default true '

run plugins --describe no-such-plugin
check "plugins --describe of an unknown plugin exits 2" 2 "$ERR" \
    "plugin 'no-such-plugin' not found"

if [ -f "$PLUGINS_DIR/taint-toleration.so" ]; then
    run_no_env plugins -P "$PLUGINS_DIR" --describe taint-toleration
    check "plugins --describe taint-toleration prints its arguments and events" 0 "$OUT" \
        '^taint-toleration ' '^arguments:' '^ +[a-z_]+ +[a-z ]+ default ' \
        '^hooks: .*filter.*,events\(target-add,target-update\)$'
else
    ok "plugins --describe taint-toleration # SKIP taint-toleration.so not built"
fi

# ---- schedule: fixtures that reject or misbehave ---------------------------

nodes "$TMP/st-reject" n1 n2
pod "$TMP/st-reject" p1
profile_cfg "$TMP/reject.cfg" \
    '{ name = "fx-reject-all"; }, { name = "default-binder"; }'
cp -R "$TMP/st-reject" "$TMP/st-reject.orig"
run schedule -c "$TMP/reject.cfg" -s "$TMP/st-reject" -o json
check "schedule: a rejecting filter makes the workload unschedulable (exit 0)" \
    0 "$OUT" '"name": *"p1"' '"result": *"unschedulable"' \
    '"message": *"[^"]*2 RejectAll' '"unschedulable": *1'
expect "schedule: an unschedulable workload is not written" \
    same_tree "$TMP/st-reject.orig" "$TMP/st-reject"

run schedule -c "$TMP/reject.cfg" -s "$TMP/st-reject" -o json --explain
check "schedule --explain names the rejecting plugin per target" 0 "$OUT" \
    '"candidates"' '"target": *"n1"' '"verdict": *"rejected"' \
    '"plugin": *"fx-reject-all"' '"code": *"RejectAll"'

nodes "$TMP/st-score" n1 n2
pod "$TMP/st-score" p1
cp -R "$TMP/st-score" "$TMP/st-score.orig"
profile_cfg "$TMP/score.cfg" \
    '{ name = "fx-bad-score"; }, { name = "default-binder"; }'
run schedule -c "$TMP/score.cfg" -s "$TMP/st-score" -o json
check "schedule: a score outside 0..100 is an error naming the plugin, exit 3" 3 \
    "$OUT" '"result": *"error"' '"message": *"[^"]*fx-bad-score[^"]*outside 0\.\.100' \
    '"error": *1'
expect "schedule: a workload in error is not written" \
    same_tree "$TMP/st-score.orig" "$TMP/st-score"

# ---- schedule: the order of the extension points ---------------------------

nodes "$TMP/st-hooks" n1 n2
pod "$TMP/st-hooks" p1
pod "$TMP/st-hooks" p2
profile_cfg "$TMP/hooks.cfg" '{ name = "fx-all-hooks"; }'
run schedule -c "$TMP/hooks.cfg" -s "$TMP/st-hooks" -o json --log-level info
check "schedule with fx-all-hooks schedules both workloads" 0 "$OUT" \
    '"scheduled": *2'
cp "$ERR" "$TMP/hooks.log"

order_ok=1
prev=0
prev_name=start
for h in pre_filter 'filter(_batch)?' pre_score 'score(_batch)?' normalize \
    reserve permit pre_bind bind post_bind; do
    n=$(first_line "hook=$h workload=default/p1( |\$)" "$TMP/hooks.log")
    if [ "$n" -le "$prev" ]; then
        order_ok=0
        why="hook $h (line $n) is not after $prev_name (line $prev)"
        break
    fi
    prev=$n
    prev_name=$h
done
if [ $order_ok = 1 ]; then
    ok "hooks run in order: pre_filter filter pre_score score normalize reserve permit pre_bind bind post_bind"
else
    not_ok "hooks run in order" "$why" "$(grep 'hook=' "$TMP/hooks.log" | head -40)"
fi

qs=$(first_line 'hook=queue_sort ' "$TMP/hooks.log")
pf=$(first_line 'hook=pre_filter ' "$TMP/hooks.log")
pw=$(first_line 'hook=prepare_workload workload=default/p1' "$TMP/hooks.log")
pt=$(first_line 'hook=prepare_target target=n1' "$TMP/hooks.log")
expect "prepare_target and prepare_workload run at load, before the queue" \
    test "$pt" -gt 0 -a "$pw" -gt 0 -a "$pt" -lt "$pf" -a "$pw" -lt "$pf"
expect "queue_sort runs with two workloads, before the first pre_filter" \
    test "$qs" -gt 0 -a "$qs" -lt "$pf"
expect "counters are computed per workload" \
    grep -q 'hook=counters workload=default/p2' "$TMP/hooks.log"
expect "release gives prepared data back at exit" \
    grep -q 'hook=release object=default/p1' "$TMP/hooks.log"
expect "log lines carry the plugin's name" \
    grep -q '\[fx-all-hooks\] hook=bind workload=default/p1 target=n' "$TMP/hooks.log"
expect "bind wrote the binding into the manifest" \
    grep -q '^  nodeName: n1$' "$TMP/st-hooks/p1.yaml"
expect "bind wrote the second binding too" \
    grep -q '^  nodeName: n[12]$' "$TMP/st-hooks/p2.yaml"

profile_cfg "$TMP/quiet.cfg" \
    '{ name = "fx-all-hooks"; args = { log_hooks = false; }; }'
nodes "$TMP/st-quiet" n1 n2
pod "$TMP/st-quiet" p1
run schedule -c "$TMP/quiet.cfg" -s "$TMP/st-quiet" -o json --log-level info
if [ "$rc" = 0 ] && ! grep -q 'hook=' "$ERR"; then
    ok "log_hooks = false silences fx-all-hooks"
else
    not_ok "log_hooks = false silences fx-all-hooks" "$(show)"
fi

# permit WAIT: g1 waits until p1 binds (the queue sort puts g1 first)
nodes "$TMP/st-wait" n1 n2
pod "$TMP/st-wait" p1
pod "$TMP/st-wait" g1 'gang: wait'
run schedule -c "$TMP/hooks.cfg" -s "$TMP/st-wait" -o json --log-level info
check "permit WAIT: the waiting workload is bound once allowed" 0 "$OUT" \
    '"scheduled": *2'
cp "$ERR" "$TMP/wait.log"
gw=$(first_line 'hook=permit workload=default/g1 .*verdict=wait' "$TMP/wait.log")
pb=$(first_line 'hook=post_bind workload=default/p1 ' "$TMP/wait.log")
gb=$(first_line 'hook=bind workload=default/g1 ' "$TMP/wait.log")
expect "permit WAIT: g1 waits, p1's post_bind allows it, then g1 binds" \
    test "$gw" -gt 0 -a "$pb" -gt "$gw" -a "$gb" -gt "$pb"
expect "permit WAIT: g1's binding was written" \
    grep -q '^  nodeName: n[12]$' "$TMP/st-wait/g1.yaml"

# permit WAIT with nobody to allow it: rejected when the run ends
nodes "$TMP/st-alone" n1 n2
pod "$TMP/st-alone" g1 'gang: wait'
cp -R "$TMP/st-alone" "$TMP/st-alone.orig"
run schedule -c "$TMP/hooks.cfg" -s "$TMP/st-alone" -o json --log-level info
check "permit WAIT: a wait that never ends is unschedulable" 0 "$OUT" \
    '"result": *"unschedulable"' '"message": *"[^"]*PermitTimeout'
expect "permit WAIT: the timed-out workload was unreserved" \
    grep -q 'hook=unreserve workload=default/g1' "$ERR"
expect "permit WAIT: the timed-out workload was not written" \
    same_tree "$TMP/st-alone.orig" "$TMP/st-alone"

# ---- manifests, dry run, table ---------------------------------------------

profile_cfg "$TMP/bind.cfg" '{ name = "default-binder"; }'
nodes "$TMP/st-bad" n1 n2
pod "$TMP/st-bad" p1
pod "$TMP/st-bad" p2
cat >"$TMP/st-bad/broken.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata:
  name: n3
---
apiVersion: v1
kind: Pod
metadata:
  namespace: default
spec:
  containers: []
EOF
cp "$TMP/st-bad/broken.yaml" "$TMP/broken.orig"
run schedule -c "$TMP/bind.cfg" -s "$TMP/st-bad" -o json
check "a malformed document is reported with file and line" 0 "$ERR" \
    'broken\.yaml:[56]: ' 'metadata\.name'
check "the other documents are still scheduled" 0 "$OUT" '"scheduled": *2'
expect "the malformed file is left byte-identical" \
    cmp -s "$TMP/broken.orig" "$TMP/st-bad/broken.yaml"
expect "the good documents got their binding" \
    grep -q '^  nodeName: n[123]$' "$TMP/st-bad/p1.yaml"

# JSON files with a syntax error: a stream of pretty-printed documents (a
# trailing comma in the second), a stream of one document per line (a
# brace missing in the second) and a List as kubectl get -o json writes it
# (two numbers where one belongs in the second item): every other
# document and item is read, each broken one reported with file and line
nodes "$TMP/st-json" n1
cat >"$TMP/st-json/stream.json" <<'EOF'
{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {
    "name": "s1",
    "namespace": "default"
  }
}
{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {
    "name": "s2",
    "namespace": "default",
  }
}
{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {
    "name": "s3",
    "namespace": "default"
  }
}
EOF
cat >"$TMP/st-json/lines.json" <<'EOF'
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "l1", "namespace": "default"}}
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "l2", "namespace": "default"}
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "l3", "namespace": "default"}}
EOF
cat >"$TMP/st-json/list.json" <<'EOF'
{
    "apiVersion": "v1",
    "items": [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "i0",
                "namespace": "default"
            }
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "i1",
                "namespace": "default"
            },
            "spec": {"priority": 1 2}
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "i2",
                "namespace": "default"
            }
        }
    ],
    "kind": "List",
    "metadata": {
        "resourceVersion": ""
    }
}
EOF
cp -R "$TMP/st-json" "$TMP/st-json.orig"
run schedule -c "$TMP/bind.cfg" -s "$TMP/st-json" -o json --dry-run
check "JSON: each broken document or List item is reported with file and line" 3 "$ERR" \
    'stream\.json:15: document 1: syntax error: .* at line 15, column 3' \
    'lines\.json:3: document 1: syntax error: .* at line 3, column 1' \
    'list\.json:19: document 0, item 1: syntax error: .* at line 19, column 36' \
    '3 malformed documents skipped'
check "JSON: every other document and item is read" 3 "$OUT" \
    '"name": *"s1"' '"name": *"s3"' '"name": *"l1"' '"name": *"l3"' '"name": *"i0"' \
    '"name": *"i2"'
expect "JSON: the broken documents are not read" \
    sh -c "! grep -E -q '\"name\": *\"(s2|l2|i1)\"' '$OUT'"
expect "JSON: the broken files are left byte-identical" \
    same_tree "$TMP/st-json.orig" "$TMP/st-json"

nodes "$TMP/st-dry" n1 n2
pod "$TMP/st-dry" p1
pod "$TMP/st-dry" p2
cp -R "$TMP/st-dry" "$TMP/st-dry.orig"
run schedule -c "$TMP/bind.cfg" -s "$TMP/st-dry" -o json --dry-run
check "--dry-run still prints the decisions" 0 "$OUT" \
    '"result": *"scheduled"' '"scheduled": *2'
expect "--dry-run writes nothing" same_tree "$TMP/st-dry.orig" "$TMP/st-dry"

run schedule -n -c "$TMP/bind.cfg" -s "$TMP/st-dry" -o table
check "-o table prints a header row and a summary" 0 "$OUT" \
    '^WORKLOAD +PROFILE +RESULT +TARGETS +MESSAGE' \
    '^Pod/default/p1 +default-scheduler +scheduled +n[12] ' \
    '^2 scheduled, 0 unschedulable, 0 error'

run schedule -c "$TMP/bind.cfg" -s "$TMP/st-dry" -o json -n
# decisions come sorted by kind, namespace, name
p1=$(first_line '"name": *"p1"' "$OUT")
p2=$(first_line '"name": *"p2"' "$OUT")
expect "decisions are sorted by name" test "$p1" -gt 0 -a "$p2" -gt "$p1"

run schedule -c "$TMP/bind.cfg"
check "schedule without a state directory exits 1" 1 "$ERR" 'no state directory'

run schedule -c "$TMP/bind.cfg" -s "$TMP/no-such-dir"
check "schedule with a missing state directory exits 2" 2 "$ERR" 'no-such-dir'

# ---- SDK 1.3 columns: span hooks decide as the per-target hooks do ----------

# 300 nodes (several bitmap words, more than one 256-target block for two
# workers) with ranks; 40 pods, some needing a minimum rank. fx-columns
# makes the same decisions through filter_span/score_span and the columns
# as through its plain hooks, and its span hooks turn any column entry that
# disagrees with the per-target calls into an error.
mkdir -p "$TMP/st-cols"
i=0
: >"$TMP/st-cols/nodes.yaml"
while [ $i -lt 300 ]; do
    printf -- '---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n%03d\n  labels:\n    rank: "%d"\n' \
        "$i" $(((i * 37) % 101)) >>"$TMP/st-cols/nodes.yaml"
    i=$((i + 1))
done
i=0
while [ $i -lt 40 ]; do
    if [ $((i % 3)) -eq 0 ]; then
        pod "$TMP/st-cols" "p$i" "min-rank: \"$((90 + i % 11))\""
    else
        pod "$TMP/st-cols" "p$i" "weight: \"$((1 + i % 4))\""
    fi
    i=$((i + 1))
done
for cols in true false; do
    profile_cfg "$TMP/cols-$cols.cfg" \
        "{ name = \"fx-columns\"; args = { columns = $cols; }; }, { name = \"default-binder\"; }"
    run schedule -c "$TMP/cols-$cols.cfg" -s "$TMP/st-cols" -o table --dry-run
    cp "$OUT" "$TMP/cols-$cols.out"
done
check "span hooks and columns: every workload decided" 0 "$TMP/cols-true.out" \
    '^40 scheduled, 0 unschedulable, 0 error'
expect "span hooks and columns decide as the per-target hooks" \
    cmp -s "$TMP/cols-true.out" "$TMP/cols-false.out"
run schedule -c "$TMP/cols-true.cfg" -s "$TMP/st-cols" -o table --dry-run -j 1
expect "span hooks decide the same with one worker" cmp -s "$TMP/cols-true.out" "$OUT"

# ---- the equivalence cache decides as full cycles do -----------------------

# 150 nodes of three sizes in three zones, some with a NoSchedule or a
# PreferNoSchedule taint; 240 pods in runs of equal ones (a replica set's)
# of varied shapes: requests, a zone selector, a toleration, and pods too
# big for any node. Every decision with the cache must be the one a full
# cycle makes; the stats show that the cache served cycles.
mkdir -p "$TMP/st-eq"
i=0
: >"$TMP/st-eq/nodes.yaml"
while [ $i -lt 150 ]; do
    cpu=$((2 + (i % 3) * 2))
    {
        printf -- '---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-%03d\n' "$i"
        printf '  labels:\n    topology.kubernetes.io/zone: zone-%d\n' $((i % 3))
        printf 'spec:\n'
        if [ $((i % 10)) -eq 3 ]; then
            printf '  taints:\n  - {key: dedicated, value: db, effect: NoSchedule}\n'
        elif [ $((i % 7)) -eq 2 ]; then
            printf '  taints:\n  - {key: spot, effect: PreferNoSchedule}\n'
        fi
        printf 'status:\n  allocatable: {cpu: "%d", memory: %dGi, pods: "20"}\n' "$cpu" $((cpu * 4))
    } >>"$TMP/st-eq/nodes.yaml"
    i=$((i + 1))
done
i=0
: >"$TMP/st-eq/pods.yaml"
while [ $i -lt 240 ]; do
    run_len=$((1 + (i / 7) % 9)) # runs of equal pods, 1 to 9 long
    shape=$(((i / run_len) % 6))
    req=$((100 + shape * 250))
    [ $shape -eq 5 ] && req=9000
    {
        printf -- '---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-%03d\n  namespace: eq\n' "$i"
        printf 'spec:\n'
        case $shape in
        1) printf '  nodeSelector: {topology.kubernetes.io/zone: zone-%d}\n' $(((i / run_len) % 3)) ;;
        2) printf '  tolerations:\n  - {key: dedicated, operator: Equal, value: db, effect: NoSchedule}\n' ;;
        3) printf '  tolerations:\n  - {key: spot, operator: Exists}\n' ;;
        esac
        printf '  containers:\n  - name: app\n    image: app:1\n'
        printf '    resources: {requests: {cpu: %dm, memory: %dMi}}\n' "$req" $((req * 2))
    } >>"$TMP/st-eq/pods.yaml"
    i=$((i + 1))
done
for on in true false; do
    cat >"$TMP/eq-$on.cfg" <<CFG
profiles = ( {
  name = "default-scheduler"; default = true;
  workload = { kind = "Pod"; scheduler_name_field = "spec.schedulerName"; };
  target = { kind = "Node"; };
  binding = { field = "spec.nodeName"; };
  equivalence_cache = $on;
  plugins = ( { name = "priority-sort"; }, { name = "label-selector"; },
    { name = "taint-toleration"; weight = 3; }, { name = "resources-fit"; },
    { name = "least-allocated"; }, { name = "default-binder"; } );
} );
CFG
done
run schedule -c "$TMP/eq-false.cfg" -s "$TMP/st-eq" -o json --dry-run --stats "$TMP/eq-false.stats"
cp "$OUT" "$TMP/eq-false.out"
check "equivalence cache off: decisions made, some pods fit nowhere" 0 "$OUT" \
    '"result": *"scheduled"' '"result": *"unschedulable"'
expect "equivalence cache off: never used" grep -q '"equivalence_hits": 0,' "$TMP/eq-false.stats"
for j in 1 2; do
    run schedule -c "$TMP/eq-true.cfg" -s "$TMP/st-eq" -o json --dry-run -j $j \
        --stats "$TMP/eq-true.stats"
    expect "equivalence cache (-j $j): the decisions of full cycles" \
        cmp -s "$TMP/eq-false.out" "$OUT"
    expect "equivalence cache (-j $j): it served cycles" \
        grep -q '"equivalence_hits": [1-9][0-9]*,' "$TMP/eq-true.stats"
done

# The same pods under the shipped kube profile, whose spread, affinity and
# image plugins skip scoring (pre-score) a pod that has nothing for them:
# the cache serves their raw scores too, and decides as full cycles do.
# Every node is scored (the cache serves only then; the shipped profile
# samples kube-scheduler's adaptive share, 100 of these 150 nodes).
if [ -n "${TOP_SRCDIR:-}" ]; then
    sed 's/^    percentage_of_targets_to_score = 0;/    percentage_of_targets_to_score = 100;/' \
        "$TOP_SRCDIR/conf/kube.cfg" >"$TMP/kube-eq-on.cfg"
    sed 's/^    max_unschedulable_ms = .*/&\n    equivalence_cache = false;/' \
        "$TMP/kube-eq-on.cfg" >"$TMP/kube-eq-off.cfg"
    expect "kube profile: every node scored" grep -q 'percentage_of_targets_to_score = 100' \
        "$TMP/kube-eq-on.cfg"
    expect "kube profile: the cache can be turned off" grep -q 'equivalence_cache = false' \
        "$TMP/kube-eq-off.cfg"
    run schedule -c "$TMP/kube-eq-off.cfg" -s "$TMP/st-eq" -o json --dry-run \
        --stats "$TMP/keq-off.stats"
    cp "$OUT" "$TMP/keq-off.out"
    check "kube profile without the cache: decisions made" 0 "$OUT" '"result": *"scheduled"'
    expect "kube profile without the cache: never used" \
        grep -q '"equivalence_hits": 0,' "$TMP/keq-off.stats"
    for j in 1 2; do
        run schedule -c "$TMP/kube-eq-on.cfg" -s "$TMP/st-eq" -o json --dry-run -j $j \
            --stats "$TMP/keq-on.stats"
        expect "kube profile with the cache (-j $j): the decisions of full cycles" \
            cmp -s "$TMP/keq-off.out" "$OUT"
        expect "kube profile with the cache (-j $j): it served raw scores" \
            grep -q '"equivalence_score_hits": [1-9][0-9]*,' "$TMP/keq-on.stats"
    done
fi

# ---- the equivalence cache on the Gardener profile --------------------------

# A generated fleet (contrib/gen: seeds over providers and regions with
# taints, networks and capacities; shoots of several classes): the shipped
# Gardener profile decides the same with the cache as without it.
GEN=${TOP_BUILDDIR:-.}/contrib/trellis-gen
if [ -x "$GEN" ] && [ -n "${TOP_SRCDIR:-}" ]; then
    "$GEN" gardener "$TMP/st-geq" 60 900 7 json
    sed 's/^    default = true;/    default = true; equivalence_cache = false;/' \
        "$TOP_SRCDIR/conf/gardener.cfg" >"$TMP/gardener-off.cfg"
    run schedule -c "$TMP/gardener-off.cfg" -s "$TMP/st-geq" -o json --dry-run \
        --stats "$TMP/geq-off.stats"
    cp "$OUT" "$TMP/geq-off.out"
    check "gardener fleet without the cache: shoots placed" 0 "$OUT" '"result": *"scheduled"'
    expect "gardener fleet: the cache is off" grep -q '"equivalence_hits": 0,' "$TMP/geq-off.stats"
    run schedule -c "$TOP_SRCDIR/conf/gardener.cfg" -s "$TMP/st-geq" -o json --dry-run \
        --stats "$TMP/geq-on.stats"
    expect "gardener fleet with the cache: the decisions of full cycles" \
        cmp -s "$TMP/geq-off.out" "$OUT"
    expect "gardener fleet with the cache: it served cycles" \
        grep -q '"equivalence_hits": [1-9][0-9]*,' "$TMP/geq-on.stats"
    # the same for current Gardener's profile (its new zone, access and
    # stop rules take part; the fleet has no Project objects, so the
    # project is read from the namespace here)
    cp "$TOP_SRCDIR/conf/gardener-scheduler.yaml" "$TMP/gardener-scheduler.yaml"
    sed 's/project = "object";/project = "namespace";/' "$TOP_SRCDIR/conf/gardener-current.cfg" \
        >"$TMP/gardener-cur-on.cfg"
    sed 's/^    default = true;/    default = true; equivalence_cache = false;/' \
        "$TMP/gardener-cur-on.cfg" >"$TMP/gardener-cur-off.cfg"
    run schedule -c "$TMP/gardener-cur-off.cfg" -s "$TMP/st-geq" -o json --dry-run
    cp "$OUT" "$TMP/gcur-off.out"
    check "current gardener fleet without the cache: shoots placed" 0 "$OUT" \
        '"result": *"scheduled"'
    run schedule -c "$TMP/gardener-cur-on.cfg" -s "$TMP/st-geq" -o json --dry-run \
        --stats "$TMP/gcur-on.stats"
    expect "current gardener fleet with the cache: the decisions of full cycles" \
        cmp -s "$TMP/gcur-off.out" "$OUT"
    expect "current gardener fleet with the cache: it served cycles" \
        grep -q '"equivalence_hits": [1-9][0-9]*,' "$TMP/gcur-on.stats"
else
    not_ok "gardener equivalence cache" "no trellis-gen in ${TOP_BUILDDIR:-.}/contrib"
fi

# ---- Gardener's own configuration file ---------------------------------------

# plugin_args.config names a SchedulerConfiguration: its strategy decides,
# the controller's keys are accepted and named as ignored, a key the format
# does not have is an error naming its path, file and line, and a strategy
# that disagrees with the argument is an error.
if [ -n "${TOP_SRCDIR:-}" ]; then
    GC=$TOP_SRCDIR/tests/scenarios/gardener-config-file
    mkdir -p "$TMP/gc"
    cp "$GC/profile.cfg" "$TMP/gc/p.cfg"
    gcfile() { cp "$GC/gardener-scheduler.yaml" "$TMP/gc/gardener-scheduler.yaml"; }
    gcfile
    run validate "$TMP/gc/p.cfg"
    check "gardener config: validate accepts Gardener's file" 0 "$OUT" 'ok \(1 profile'
    check "gardener config: validate names the keys that only tune the controller" 0 "$ERR" \
        'accepted and ignored .*: clientConnection, leaderElection, logLevel, logFormat, server, debugging, schedulers.backupBucket, schedulers.shoot.concurrentSyncs'
    sed '/^  shoot:/,$ s/^    concurrentSyncs: 5$/    concurentSyncs: 5/' "$GC/gardener-scheduler.yaml" \
        >"$TMP/gc/gardener-scheduler.yaml"
    run validate "$TMP/gc/p.cfg"
    check "gardener config: an unknown key is an error naming its path, file and line" 2 "$ERR" \
        'gardener-region.*config [^ ]*/gc/gardener-scheduler\.yaml:30: schedulers\.shoot\.concurentSyncs: unknown key \(this level has: concurrentSyncs, candidateDeterminationStrategy\)'
    sed 's/MinimalDistance$/Nearest/' "$GC/gardener-scheduler.yaml" >"$TMP/gc/gardener-scheduler.yaml"
    run validate "$TMP/gc/p.cfg"
    check "gardener config: an unknown strategy is an error" 2 "$ERR" \
        "gardener-scheduler\.yaml:31: schedulers\.shoot\.candidateDeterminationStrategy: expected SameRegion or MinimalDistance, got 'Nearest'"
    sed 's/^kind: .*/kind: ControllerManagerConfiguration/' "$GC/gardener-scheduler.yaml" \
        >"$TMP/gc/gardener-scheduler.yaml"
    run validate "$TMP/gc/p.cfg"
    check "gardener config: another kind of file is refused" 2 "$ERR" \
        "gardener-scheduler\.yaml:4: kind: expected SchedulerConfiguration, got 'ControllerManagerConfiguration'"
    gcfile
    sed 's/args = { distances = \[ \]; }; },/args = { strategy = "SameRegion"; distances = [ ]; }; },/' \
        "$GC/profile.cfg" >"$TMP/gc/p.cfg"
    run validate "$TMP/gc/p.cfg"
    check "gardener config: a strategy argument that disagrees with the file is an error" 2 "$ERR" \
        "strategy: 'SameRegion' here, but config sets schedulers\.shoot\.candidateDeterminationStrategy: MinimalDistance"
fi

# ---- a binding object the store cannot write -------------------------------
# The scenario binding-object-failures with crp-blocked's binding file on m2
# taken by a directory: the decision is an error holding m1 only, m2 is not
# in added, and the run exits 3.
if [ -n "${SRCDIR:-}" ]; then
    BOF="$SRCDIR/scenarios/binding-object-failures"
    rm -rf "$TMP/bof" && cp -R "$BOF/state" "$TMP/bof"
    mkdir "$TMP/bof/clusterresourcebinding-crp-blocked-m2.json"
    run schedule -c "$BOF/profile.cfg" -s "$TMP/bof" -o json
    check "a binding object that cannot be written: the decision is an error holding what landed" \
        3 "$OUT" '"name": "crp-blocked"' '"result": "error"' \
        'binding to m2 not written: .*clusterresourcebinding-crp-blocked-m2.json'
    if tr -d ' \n' <"$OUT" |
        grep -q '"name":"crp-blocked"},"profile":"fleet","result":"error","targets":\["m1"\],"added":\["m1"\]'; then
        ok "... its targets and added are m1 alone"
    else
        not_ok "... its targets and added are m1 alone" "$(head -c 600 "$OUT")"
    fi
    printf 'apiVersion: v1\nkind: ClusterResourceBinding\nmetadata:\n  name: odd\n  labels: {kubernetes-fleet.io/parent-CRP: crp-gone}\nspec: {state: Bound}\n' \
        >"$TMP/bof/odd.yaml"
    run schedule -c "$BOF/profile.cfg" -s "$TMP/bof" -o json --dry-run
    check "a binding object without a target is named, with its file and line" 3 "$ERR" \
        'odd\.yaml:1: ClusterResourceBinding odd names no target \(spec\.targetCluster: expected a string\): it places nothing'
fi

# ---- ids too long for the binding object index (binding model "object") ----
# A workload whose id (kind/namespace/name) is over 767 bytes, and a
# binding object naming it: the binding object places nothing and says
# why, naming itself; the workload is an error decision saying why; the
# others are scheduled as ever. Nothing is cut.
if [ -n "${TOP_SRCDIR:-}" ]; then
    sc="$TOP_SRCDIR/tests/scenarios/binding-object-several"
    cp -R "$sc/state" "$TMP/st-long"
    long=crp-$(printf '%0800d' 0 | tr 0 x)
    cat >>"$TMP/st-long/placements.yaml" <<EOF
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: $long
spec:
  count: 1
EOF
    cat >>"$TMP/st-long/bindings.yaml" <<EOF
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourceBinding
metadata:
  name: long-member-a
  labels:
    kubernetes-fleet.io/parent-CRP: $long
spec:
  targetCluster: member-a
  state: Bound
EOF
    run schedule -c "$sc/profile.cfg" -s "$TMP/st-long" -o json --dry-run
    check "a binding object naming a workload id too long: it places nothing, and says so" 3 "$ERR" \
        'bindings\.yaml:[0-9]+: ClusterResourceBinding long-member-a names workload ClusterResourcePlacement//crp-x{36}\.\.\. whose id \(kind/namespace/name\) is 830 bytes; binding model "object" supports at most 767: it places nothing'
    check "the workload is an error decision naming the limit" 3 "$OUT" \
        "\"name\": \"$long\"" \
        'its id \(kind/namespace/name\) is 830 bytes; binding model \\"object\\" supports at most 767: shorten its name' \
        '"scheduled": 5' '"error": 2'
    # a short enough id works: 767 bytes in all
    short=crp-$(printf '%0737d' 0 | tr 0 y)
    sed "s/$long/$short/" "$TMP/st-long/placements.yaml" >"$TMP/p.yaml" &&
        mv "$TMP/p.yaml" "$TMP/st-long/placements.yaml"
    sed "s/$long/$short/" "$TMP/st-long/bindings.yaml" >"$TMP/b.yaml" &&
        mv "$TMP/b.yaml" "$TMP/st-long/bindings.yaml"
    run schedule -c "$sc/profile.cfg" -s "$TMP/st-long" -o json --dry-run
    # it holds member-a through its binding and wants one: scheduled, nothing added
    check "an id of 767 bytes is placed as any other: its binding is found" 3 "$OUT" \
        '"scheduled": 6' '"error": 1'
    expect "... it holds member-a and adds nothing" sh -c "tr -d ' \n' <'$OUT' |
        grep -q '\"name\":\"$short\"},\"profile\":\"fleet\",\"result\":\"scheduled\",\"targets\":\[\"member-a\"\],\"added\":\[\]'"
    expect "... and nothing warns about it" sh -c "! grep -q 'long-member-a' '$ERR'"
fi

# ---------------------------------------------------------------------------

finish
