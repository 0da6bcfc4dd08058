#!/bin/sh
#
# manpage.sh - trellis(1) against the program, run by `make check`: the
# SYNOPSIS names every command `trellis --help` lists (and no other), the
# COMMANDS section describes each, OPTIONS names every long option, PLUGINS
# names every in-tree plugin `trellis plugins` finds, and FILES names the
# configured default config and plugin directory (those --help prints).
# Each command's own --help prints its usage and exits 0. A command, option
# or plugin added without its page fails here.
#
# Environment (set by tests/Makefile.am): TRELLIS, TOP_BUILDDIR (the built
# doc/trellis.1 and plugins/.libs). tests/install.sh runs it on an
# installation instead, with MAN (the installed page) and PLUGIN_DIR (the
# installed plugin directory).
: "${TRELLIS:?}"
MAN=${MAN:-${TOP_BUILDDIR:?}/doc/trellis.1}
PLUGIN_DIR=${PLUGIN_DIR:-$TOP_BUILDDIR/plugins/.libs}
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/trellis-man.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

if [ ! -f "$MAN" ]; then
    not_ok "the built manual page exists" "$MAN is missing"
    finish
    exit
fi
# section NAME: the lines of the man page's section NAME, \- as -
section() {
    sed -n "/^\\.SH $1\$/,/^\\.SH /p" "$MAN" | sed 's/\\-/-/g'
}
section SYNOPSIS >"$tmp/synopsis"
section COMMANDS >"$tmp/commands"
section OPTIONS >"$tmp/options"
section PLUGINS >"$tmp/plugins"
section FILES >"$tmp/files"

"$TRELLIS" --help >"$tmp/help" 2>&1
sed -n '/^Commands/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' "$tmp/help" >"$tmp/cmds"
check "trellis --help lists commands" test -s "$tmp/cmds"

for c in $(cat "$tmp/cmds"); do
    check "SYNOPSIS shows trellis $c" grep -q "^\\.B trellis $c\$" "$tmp/synopsis"
    [ "$c" = help ] ||
        check "COMMANDS describes $c" grep -E -q "^\\.B[IR]? \"?$c( |\"|\$)" "$tmp/commands"
    "$TRELLIS" "$c" --help >"$tmp/cmd-help" 2>&1
    check "trellis $c --help prints its usage and exits 0" \
        sh -c "[ $? = 0 ] && grep -q '^Usage: trellis $c ' '$tmp/cmd-help' && grep -q '^Examples:' '$tmp/cmd-help'"
done
for c in $(sed -n 's/^\.B trellis \([a-z-]*\)$/\1/p' "$tmp/synopsis"); do
    check "SYNOPSIS command $c is a command" grep -q "^$c\$" "$tmp/cmds"
done

for o in $(sed -n 's/^ *\(-[a-zA-Z], \)\{0,1\}--\([a-z-]*\).*/\2/p' "$tmp/help" | sort -u); do
    check "OPTIONS names --$o" grep -q -e "--$o" "$tmp/options"
done

# the in-tree plugins: those trellis finds in the build's (or the
# installation's) plugin directory, or linked in
"$TRELLIS" plugins -P "$PLUGIN_DIR" 2>/dev/null |
    awk -v d="$PLUGIN_DIR/" 'index($NF, d) == 1 || $NF == "(built-in)" { print $1 }' \
        >"$tmp/plugin-names"
check "trellis plugins finds the in-tree plugins" test -s "$tmp/plugin-names"
for p in $(cat "$tmp/plugin-names"); do
    check "PLUGINS describes $p" grep -q "^\\.B $p\$" "$tmp/plugins"
done

config=$(sed -n 's/.*config file (default \(.*\))$/\1/p' "$tmp/help")
plugindir=$(sed -n '/^Plugins are searched/{n;s/^then \(.*\)\.$/\1/p;}' "$tmp/help")
check "--help names the default config and the plugin directory" \
    test -n "$config" -a -n "$plugindir"
check "FILES names the default config $config" grep -q "^\\.I $config\$" "$tmp/files"
check "FILES names the plugin directory $plugindir" grep -q "^\\.I $plugindir/\$" "$tmp/files"

finish
