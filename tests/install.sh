#!/bin/sh
#
# install.sh - the install test: configure, build and install trellis into a
# temporary prefix, then build the out-of-tree example plugin
# (contrib/example-plugin) against the installation with pkg-config alone,
# install it, and check that the installed trellis finds and uses it.
#
# It checks that configure run in a source tree is quiet and leaves no
# confdefs.h; the installed files (binary, man page, SDK header, .pc file,
# plugins, the default config, the examples, no .la file in the plugin
# directory) and that trellis(1) FILES names them; the systemd unit
# (systemd-analyze verify, its paths, its user, its state directory against
# the config's, and its ExecStartPre and ExecStart lines run as they are,
# up to /readyz, READY=1 and the watchdog); the .pc variables, the example plugin's build and install
# (DESTDIR too), `trellis plugins` without TRELLIS_PLUGIN_PATH, and a small
# schedule in which prefer-label puts a Pod on the labelled one of two
# Nodes; last, that make uninstall removes what make install put. It prints "ok - ..." or "not ok - ..." per check, then
# "N passed, M failed", and exits non-zero when a check failed.
#
# A full configure and build: slow, so not part of `make check`.
# Environment: TOP_SRCDIR (default: two levels above this script),
# TOP_BUILDDIR (not needed: the build is fresh), JOBS (make -j, default 2).

here=$(cd "$(dirname "$0")" && pwd)
TOP_SRCDIR=${TOP_SRCDIR:-$here/../..}
TOP_SRCDIR=$(cd "$TOP_SRCDIR" && pwd)
JOBS=${JOBS:-2}

# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"

# the summary, and the end of the script wherever it is reached
stop() {
    finish
    exit
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

# tail_of FILE: the end of a log, for a failure report
tail_of() {
    tail -n 20 "$1"
}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/trellis-install.XXXXXX") || exit 99
svc_pid=""
notify_pid=""
# the service and the notification listener this test starts, and $TMP
cleanup() {
    for p in $svc_pid $notify_pid; do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PREFIX=$TMP/prefix
OUT=$TMP/out
ERR=$TMP/err

# ---- configure, build, install ---------------------------------------------

if [ ! -x "$TOP_SRCDIR/configure" ]; then
    not_ok "configure exists" "$TOP_SRCDIR/configure is missing: run autoreconf -fi"
    stop
fi

# configure in a source tree (a copy of this one): the tree's core/
# directory is no core dump to remove, so nothing on stderr and no
# confdefs.h left behind
mkdir "$TMP/src"
(cd "$TOP_SRCDIR" && tar cf - --exclude=./.git --exclude='./build*' --exclude=./autom4te.cache \
    configure configure.ac Makefile.am Makefile.in config.h.in build-aux m4 \
    core sdk plugins conf doc tests contrib) | (cd "$TMP/src" && tar xf -)
if (cd "$TMP/src" && ./configure -q --prefix="$PREFIX" >/dev/null 2>"$TMP/src-configure.err") &&
    ! grep -q . "$TMP/src-configure.err" && [ ! -e "$TMP/src/confdefs.h" ]; then
    ok "configure in the source tree: quiet, no confdefs.h left"
else
    not_ok "configure in the source tree: quiet, no confdefs.h left" \
        "$(cat "$TMP/src-configure.err")" "$(ls "$TMP/src" | grep conf)"
fi
rm -rf "$TMP/src"

mkdir "$TMP/build"
if (cd "$TMP/build" && "$TOP_SRCDIR/configure" --prefix="$PREFIX") \
    >"$TMP/configure.log" 2>&1; then
    ok "configure --prefix"
else
    not_ok "configure --prefix" "$(tail_of "$TMP/configure.log")"
    stop
fi

if make -C "$TMP/build" -j"$JOBS" install >"$TMP/install.log" 2>&1; then
    ok "make install"
else
    not_ok "make install" "$(tail_of "$TMP/install.log")"
    stop
fi

for f in bin/trellis share/man/man1/trellis.1 include/trellis/plugin.h \
    lib/pkgconfig/trellis-plugin.pc; do
    expect "installed $f" test -f "$PREFIX/$f"
done
expect "installed bin/trellis is executable" test -x "$PREFIX/bin/trellis"
for p in default-binder label-selector taint-toleration resources-fit \
    least-allocated least-utilized preemption priority-sort; do
    expect "installed lib/trellis/plugins/$p.so" \
        test -f "$PREFIX/lib/trellis/plugins/$p.so"
done

# ---- where make install puts things ------------------------------------------

expect "installed the default config etc/trellis/trellis.cfg (trellis --help names it)" \
    test -f "$PREFIX/etc/trellis/trellis.cfg"
"$PREFIX/bin/trellis" --help >"$OUT" 2>&1
expect "trellis --help names the installed default config" \
    grep -q "default $PREFIX/etc/trellis/trellis.cfg" "$OUT"
for d in kube gardener openmcp fleet; do
    expect "installed the $d examples in share/trellis/examples/$d" \
        test -d "$PREFIX/share/trellis/examples/$d"
done
expect "no share/trellis/examples/examples" test ! -e "$PREFIX/share/trellis/examples/examples"
expect "installed the Grafana dashboard share/trellis/grafana/trellis-scheduler.json" \
    test -s "$PREFIX/share/trellis/grafana/trellis-scheduler.json"
# an operator's edited config survives make install; the new default goes beside it
cp "$PREFIX/etc/trellis/trellis.cfg" "$TMP/trellis.cfg.orig"
echo "# edited by the operator" >>"$PREFIX/etc/trellis/trellis.cfg"
make -C "$TMP/build/conf" install >"$TMP/reinstall.log" 2>&1
expect "make install keeps an edited etc/trellis/trellis.cfg" \
    grep -q "edited by the operator" "$PREFIX/etc/trellis/trellis.cfg"
expect "... and installs the new default as trellis.cfg.default" \
    cmp -s "$TMP/trellis.cfg.orig" "$PREFIX/etc/trellis/trellis.cfg.default"
cp "$TMP/trellis.cfg.orig" "$PREFIX/etc/trellis/trellis.cfg"
rm -f "$PREFIX/etc/trellis/trellis.cfg.default"
find "$PREFIX/lib/trellis/plugins" -name '*.la' >"$OUT"
if [ -s "$OUT" ]; then
    not_ok "no libtool .la files in the plugin directory" "$(cat "$OUT")"
else
    ok "no libtool .la files in the plugin directory"
fi
man_files=$(sed -n '/^\.SH FILES/,/^\.SH /p' "$PREFIX/share/man/man1/trellis.1")
for f in "$PREFIX/etc/trellis/trellis.cfg" "$PREFIX/lib/systemd/system/trellis.service" \
    "$PREFIX/share/trellis/examples/" "$PREFIX/share/doc/trellis/example\\-plugin/" \
    "$PREFIX/lib/trellis/plugins/"; do
    case "$man_files" in
    *"$f"*) ok "trellis(1) FILES names $f" ;;
    *) not_ok "trellis(1) FILES names $f" "$man_files" ;;
    esac
done

# the installed page against the installed program and plugins (before
# the example plugin joins them): tests/manpage.sh
if MAN=$PREFIX/share/man/man1/trellis.1 PLUGIN_DIR=$PREFIX/lib/trellis/plugins \
    TRELLIS=$PREFIX/bin/trellis sh "$TOP_SRCDIR/tests/manpage.sh" >"$OUT" 2>&1; then
    ok "the installed trellis(1) names every command, option and installed plugin ($(grep -c '^ok' "$OUT") checks)"
else
    not_ok "the installed trellis(1) names every command, option and installed plugin" \
        "$(grep -v '^ok' "$OUT" | head -n 20)"
fi

# ---- pkg-config ------------------------------------------------------------

PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
export PKG_CONFIG_PATH
unset PKG_CONFIG_LIBDIR CPATH C_INCLUDE_PATH TRELLIS_PLUGIN_PATH

plugindir=$(pkg-config --variable=plugindir trellis-plugin 2>"$ERR")
if [ "$plugindir" = "$PREFIX/lib/trellis/plugins" ]; then
    ok "pkg-config reports the installed plugindir"
else
    not_ok "pkg-config reports the installed plugindir" \
        "got '$plugindir', expected '$PREFIX/lib/trellis/plugins'" "$(cat "$ERR")"
fi
cflags=$(pkg-config --cflags trellis-plugin 2>"$ERR")
case " $cflags " in
*" -I$PREFIX/include "*) ok "pkg-config --cflags names the installed headers" ;;
*) not_ok "pkg-config --cflags names the installed headers" "got '$cflags'" ;;
esac

# ---- the out-of-tree example plugin ----------------------------------------

# a copy far from the source tree, so only pkg-config can find the SDK
cp -R "$TOP_SRCDIR/contrib/example-plugin" "$TMP/example"
rm -f "$TMP/example/prefer-label.so"
if make -C "$TMP/example" >"$TMP/example.log" 2>&1 &&
    [ -f "$TMP/example/prefer-label.so" ]; then
    ok "example plugin builds with pkg-config alone"
else
    not_ok "example plugin builds with pkg-config alone" "$(tail_of "$TMP/example.log")"
fi
if grep -q -e "-I$PREFIX/include" "$TMP/example.log"; then
    ok "example plugin compiled against the installed SDK header"
else
    not_ok "example plugin compiled against the installed SDK header" \
        "$(tail_of "$TMP/example.log")"
fi

if make -C "$TMP/example" check >"$TMP/example-check.log" 2>&1 &&
    grep -q '100%: Checks: 4, Failures: 0' "$TMP/example-check.log"; then
    ok "example plugin's unit test passes through the installed mock host"
else
    not_ok "example plugin's unit test passes through the installed mock host" \
        "$(tail_of "$TMP/example-check.log")"
fi
for f in share/doc/trellis/example-plugin/README.md share/doc/trellis/example-plugin/test_prefer_label.c \
    share/doc/trellis/custom-scheduler/main.c share/trellis/mock/mock_host.c \
    share/doc/trellis/fleet.md share/doc/trellis/kube.md; do
    if [ -f "$PREFIX/$f" ]; then ok "installed $f"; else not_ok "installed $f" "missing"; fi
done
for f in plugin.h helpers.h; do
    if [ -f "$PREFIX/include/trellis/$f" ]; then ok "trellis/$f installed"; else
        not_ok "trellis/$f installed" "not in $PREFIX/include/trellis"; fi
done

if make -C "$TMP/example" install DESTDIR="$TMP/stage" >"$TMP/stage.log" 2>&1 &&
    [ -f "$TMP/stage$plugindir/prefer-label.so" ]; then
    ok "example plugin install honours DESTDIR"
else
    not_ok "example plugin install honours DESTDIR" "$(tail_of "$TMP/stage.log")"
fi

if make -C "$TMP/example" install >"$TMP/example-install.log" 2>&1 &&
    [ -f "$plugindir/prefer-label.so" ]; then
    ok "example plugin installs into the plugindir"
else
    not_ok "example plugin installs into the plugindir" \
        "$(tail_of "$TMP/example-install.log")"
fi

# ---- the installed trellis -------------------------------------------------

TRELLIS=$PREFIX/bin/trellis

"$TRELLIS" --version >"$OUT" 2>"$ERR"
rc=$?
if [ $rc = 0 ] && grep -q '^trellis .*SDK' "$OUT"; then
    ok "installed trellis runs"
else
    not_ok "installed trellis runs" "exit status $rc" "$(cat "$OUT" "$ERR")"
fi

"$TRELLIS" plugins >"$OUT" 2>"$ERR"
rc=$?
if [ $rc = 0 ] && grep -q '^prefer-label  *1\.0\.0 .*prefer-label\.so' "$OUT" &&
    grep -q '^default-binder ' "$OUT"; then
    ok "trellis plugins (no TRELLIS_PLUGIN_PATH) lists prefer-label and the in-tree plugins"
else
    not_ok "trellis plugins (no TRELLIS_PLUGIN_PATH) lists prefer-label" \
        "exit status $rc" "$(cat "$OUT" "$ERR")"
fi

"$TRELLIS" plugins --describe prefer-label >"$OUT" 2>"$ERR"
rc=$?
if [ $rc = 0 ] && grep -q '^ *label  *string  *default (required)' "$OUT" &&
    grep -q '^ *required  *bool  *default false' "$OUT"; then
    ok "trellis plugins --describe prefer-label prints its arguments"
else
    not_ok "trellis plugins --describe prefer-label prints its arguments" \
        "exit status $rc" "$(cat "$OUT" "$ERR")"
fi

# two Nodes, one Pod: without prefer-label the tie would go to n1
mkdir "$TMP/state"
cat >"$TMP/state/nodes.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata:
  name: n1
---
apiVersion: v1
kind: Node
metadata:
  name: n2
  labels:
    disk: ssd
EOF
cat >"$TMP/state/pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
spec:
  containers:
  - name: web
    image: web:1
EOF
cp -R "$TMP/state" "$TMP/state-required"

# write_cfg FILE ARGS: a profile using prefer-label with ARGS and
# default-binder
write_cfg() {
    cat >"$1" <<EOF
profiles = (
  { name = "default-scheduler"; default = true;
    workload = { kind = "Pod"; scheduler_name_field = "spec.schedulerName"; };
    target = { kind = "Node"; };
    binding = { field = "spec.nodeName"; };
    plugins = (
      { name = "prefer-label"; args = { $2 }; },
      { name = "default-binder"; }
    );
  } );
EOF
}

write_cfg "$TMP/prefer.cfg" 'label = "disk"; value = "ssd";'
"$TRELLIS" validate "$TMP/prefer.cfg" >"$OUT" 2>"$ERR"
rc=$?
if [ $rc = 0 ] && grep -q ': ok' "$OUT"; then
    ok "a profile using prefer-label validates"
else
    not_ok "a profile using prefer-label validates" "exit status $rc" \
        "$(cat "$OUT" "$ERR")"
fi

"$TRELLIS" schedule -c "$TMP/prefer.cfg" -s "$TMP/state" -o json >"$OUT" 2>"$ERR"
rc=$?
if [ $rc = 0 ] && grep -q '"result": *"scheduled"' "$OUT" &&
    tr -d ' \n' <"$OUT" | grep -q '"targets":\["n2"\]'; then
    ok "prefer-label puts the Pod on the labelled Node"
else
    not_ok "prefer-label puts the Pod on the labelled Node" "exit status $rc" \
        "$(cat "$OUT" "$ERR")"
fi
expect "the binding was written into the Pod's manifest" \
    grep -q '^  nodeName: n2$' "$TMP/state/pod.yaml"

# required = true with no labelled Node left: unschedulable, LabelMissing
sed '/^---$/,$d' "$TMP/state-required/nodes.yaml" >"$TMP/nodes.tmp" &&
    mv "$TMP/nodes.tmp" "$TMP/state-required/nodes.yaml"
write_cfg "$TMP/required.cfg" 'label = "disk"; value = "ssd"; required = true;'
"$TRELLIS" schedule -c "$TMP/required.cfg" -s "$TMP/state-required" -o json \
    >"$OUT" 2>"$ERR"
rc=$?
if [ $rc = 0 ] && grep -q '"result": *"unschedulable"' "$OUT" &&
    grep -q '"message": *"[^"]*LabelMissing' "$OUT"; then
    ok "prefer-label with required = true rejects Nodes without the label"
else
    not_ok "prefer-label with required = true rejects Nodes without the label" \
        "exit status $rc" "$(cat "$OUT" "$ERR")"
fi

write_cfg "$TMP/nolabel.cfg" 'value = "ssd";'
"$TRELLIS" validate "$TMP/nolabel.cfg" >"$OUT" 2>"$ERR"
rc=$?
if [ $rc = 2 ] && grep -q "missing required argument 'label'" "$ERR"; then
    ok "prefer-label without its required argument is refused"
else
    not_ok "prefer-label without its required argument is refused" \
        "exit status $rc" "$(cat "$OUT" "$ERR")"
fi

# ---- the systemd unit --------------------------------------------------------

UNIT=$PREFIX/lib/systemd/system/trellis.service
expect "installed lib/systemd/system/trellis.service" test -f "$UNIT"
# unit_value KEY: the value of KEY= in the installed unit
unit_value() {
    sed -n "s/^$1=//p" "$UNIT" | head -n 1
}
expect "the unit has no unsubstituted @name@" sh -c "! grep -n '@[a-z]*@' '$UNIT'"
for key in ExecStart ExecStartPre; do
    case "$(unit_value $key)" in
    "$TRELLIS "*"$PREFIX/etc/trellis/trellis.cfg"*) ok "$key runs the installed trellis on the installed config" ;;
    *) not_ok "$key runs the installed trellis on the installed config" "$(unit_value $key)" ;;
    esac
done
expect "the unit is Type=notify with a watchdog" \
    sh -c "grep -q '^Type=notify$' '$UNIT' && grep -q '^WatchdogSec=[1-9]' '$UNIT'"
# the user exists when the service starts: a dynamic one, or one sysusers.d makes
if grep -q '^DynamicUser=yes$' "$UNIT"; then
    ok "the unit's user is made when it starts (DynamicUser=yes)"
else
    not_ok "the unit's user is made when it starts (DynamicUser=yes)" "$(grep '^User=' "$UNIT")"
fi
# StateDirectory=NAME is /var/lib/NAME: the state directory of the shipped config
cfg_state=$(sed -n 's/^store = {.*path = "\([^"]*\)".*/\1/p' "$PREFIX/etc/trellis/trellis.cfg")
unit_state=/var/lib/$(unit_value StateDirectory)
if [ -n "$cfg_state" ] && [ "$cfg_state" = "$unit_state" ]; then
    ok "StateDirectory= is the store.path of the installed config ($cfg_state)"
else
    not_ok "StateDirectory= is the store.path of the installed config" \
        "config: '$cfg_state', unit: '$unit_state'"
fi

# systemd-analyze verify: the unit's syntax, its commands exist and are
# executable, its man page is there
if command -v systemd-analyze >/dev/null 2>&1; then
    man_opt=--man=yes
    command -v man >/dev/null 2>&1 || man_opt=--man=no
    if MANPATH=$PREFIX/share/man systemd-analyze verify "$man_opt" "$UNIT" >"$OUT" 2>&1 &&
        ! grep -q . "$OUT"; then
        ok "systemd-analyze verify accepts the installed unit"
    else
        not_ok "systemd-analyze verify accepts the installed unit" "$(cat "$OUT")"
    fi
else
    not_ok "systemd-analyze verify accepts the installed unit" \
        "systemd-analyze is missing (Debian: apt-get install systemd)"
fi

# ExecStartPre, as the unit has it
# shellcheck disable=SC2046
if $(unit_value ExecStartPre) >"$OUT" 2>&1; then
    ok "the unit's ExecStartPre passes on the installed config"
else
    not_ok "the unit's ExecStartPre passes on the installed config" "$(cat "$OUT")"
fi

# ExecStart, as the unit has it, with the state and the HTTP address of
# this test instead of /var/lib/trellis and a fixed port, under a
# NOTIFY_SOCKET and a watchdog as systemd would give it
svc_port() {
    sed -n 's|.*on http:[\\/]*127.0.0.1:\([0-9][0-9]*\).*|\1|p' "$TMP/svc.log" | head -n 1
}
svc_ready() {
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$(svc_port)/readyz")" = 200 ]
}
mkdir "$TMP/svc-state"
cp "$PREFIX"/share/trellis/examples/kube/*.yaml "$TMP/svc-state/"
if command -v socat >/dev/null 2>&1; then
    socat -u "UNIX-RECV:$TMP/notify" "OPEN:$TMP/notify.out,creat,append" &
    notify_pid=$!
    wait_for 10 test -S "$TMP/notify"
else
    not_ok "systemd notifications" "socat is missing (Debian: apt-get install socat)"
fi
# shellcheck disable=SC2046
NOTIFY_SOCKET=$TMP/notify WATCHDOG_USEC=200000 \
    $(unit_value ExecStart) --state "$TMP/svc-state" --listen 127.0.0.1:0 \
    >"$TMP/svc.out" 2>"$TMP/svc.log" &
svc_pid=$!
if wait_for 30 svc_ready; then
    ok "the unit's ExecStart line serves /readyz 200 on the installed config"
else
    not_ok "the unit's ExecStart line serves /readyz 200 on the installed config" \
        "$(tail_of "$TMP/svc.log")"
fi
if [ -n "$notify_pid" ]; then
    expect "it tells systemd it is ready (READY=1)" wait_for 10 grep -q 'READY=1' "$TMP/notify.out"
    expect "it pings the watchdog (WATCHDOG=1)" wait_for 10 grep -q 'WATCHDOG=1' "$TMP/notify.out"
fi
if grep -v -q '^{' "$TMP/svc.log"; then
    not_ok "its log is JSON, one object a line (--log-format json)" "$(tail_of "$TMP/svc.log")"
else
    ok "its log is JSON, one object a line (--log-format json)"
fi
kill -TERM "$svc_pid" 2>/dev/null
wait "$svc_pid"
rc=$?
svc_pid=""
expect "SIGTERM (systemctl stop) ends it with status 0" test "$rc" = 0
[ -n "$notify_pid" ] && kill "$notify_pid" 2>/dev/null
notify_pid=""

# ---- a custom scheduler on the installed libtrellis -------------------------

for f in lib/libtrellis.so include/trellis/embed.h lib/pkgconfig/trellis.pc; do
    if [ -e "$PREFIX/$f" ]; then ok "installed $f"; else not_ok "installed $f" "missing"; fi
done
cp -R "$TOP_SRCDIR/contrib/custom-scheduler" "$TMP/custom"
rm -f "$TMP/custom/one-per-target"
if make -C "$TMP/custom" >"$TMP/custom.log" 2>&1 && [ -x "$TMP/custom/one-per-target" ]; then
    ok "the custom scheduler builds against libtrellis with pkg-config alone"
else
    not_ok "the custom scheduler builds against libtrellis with pkg-config alone" \
        "$(tail_of "$TMP/custom.log")"
fi
"$TMP/custom/one-per-target" plugins >"$OUT" 2>"$ERR"
if grep -q '^max-per-target .*(built-in)$' "$OUT" && grep -q '^default-binder ' "$OUT"; then
    ok "its plugin is listed as built-in, beside the installed ones"
else
    not_ok "its plugin is listed as built-in, beside the installed ones" "$(cat "$OUT" "$ERR")"
fi
mkdir "$TMP/state-custom"
{
    for n in n1 n2; do
        printf 'apiVersion: v1\nkind: Node\nmetadata: {name: %s}\n---\n' "$n"
    done
    for p in a b c; do
        printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default}\nspec: {}\n---\n' "$p"
    done
} >"$TMP/state-custom/objects.yaml"
"$TMP/custom/one-per-target" schedule -c "$TMP/custom/one-per-target.cfg" \
    -s "$TMP/state-custom" -o json >"$OUT" 2>"$ERR"
rc=$?
if [ $rc = 0 ] && [ "$(grep -c '"result": "scheduled"' "$OUT")" = 2 ] &&
    grep -q 'TargetFull' "$OUT" && [ "$(grep -c 'nodeName' "$TMP/state-custom/objects.yaml")" = 2 ]; then
    ok "the custom scheduler places one Pod per Node and writes the bindings"
else
    not_ok "the custom scheduler places one Pod per Node and writes the bindings" \
        "exit status $rc" "$(cat "$OUT" "$ERR")"
fi

# ---- make uninstall ----------------------------------------------------------

# what is left is what the example plugin installed beside trellis
if make -C "$TMP/build" uninstall >"$TMP/uninstall.log" 2>&1; then
    ok "make uninstall"
else
    not_ok "make uninstall" "$(tail_of "$TMP/uninstall.log")"
fi
find "$PREFIX" -type f ! -path "$plugindir/prefer-label.so" >"$OUT"
if [ -s "$OUT" ]; then
    not_ok "make uninstall removes every file it installed" "$(head -n 20 "$OUT")"
else
    ok "make uninstall removes every file it installed"
fi

# ---------------------------------------------------------------------------

stop
