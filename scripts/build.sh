#!/bin/sh
# Configure and build trellis in DIR (default: build/) unless it is built
# already. Extra arguments go to configure.
#   scripts/build.sh [DIR [CONFIGURE-ARGS...]]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-build}
[ $# -gt 0 ] && shift
cd "$top"
[ -x configure ] || autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
mkdir -p "$dir"
cd "$dir"
[ -f Makefile ] || "$top/configure" -q "$@"
make -s -j"$(nproc)" >/dev/null
