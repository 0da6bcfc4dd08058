#!/bin/sh
# Build a kube-apiserver for the Kubernetes-API store tests, once, into a
# cache outside the repository, and print its path.
#
# Debian 12 packages no kube-apiserver, but its `kubernetes` source package
# (1.20.2, vendored dependencies included) builds one with Debian's Go.
# The apt source entry is derived from the machine's own apt sources (no
# mirror is named here). The vendored modern-go/reflect2 1.0.1 crashes
# under Go 1.19; the files of Debian's golang-github-modern-go-reflect2-dev
# (1.0.2) replace it.
#
#   scripts/kube-apiserver.sh           build when missing, print the path
#   scripts/kube-apiserver.sh --path    print the path it would have
#
# Environment: TRELLIS_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/trellis).
# Exit 0 with the path on stdout; otherwise 1, and the reason on stderr.
set -eu
version=1.20.2
cache=${TRELLIS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trellis}
bin="$cache/kube-apiserver-$version/kube-apiserver"
if [ "${1:-}" = "--path" ]; then
    echo "$bin"
    exit 0
fi
if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then
    echo "$bin"
    exit 0
fi
say() { echo "kube-apiserver.sh: $*" >&2; }
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else SUDO=; fi
else
    SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
need=""
for p in golang-go golang-github-modern-go-reflect2-dev dpkg-dev rsync jq; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        need="$need $p"
done
if [ -n "$need" ]; then
    if [ "$(id -u)" -ne 0 ] && [ -z "$SUDO" ]; then
        say "need root to install:$need"
        exit 1
    fi
    $SUDO apt-get update -qq >&2 || true
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq --no-install-recommends $need >&2 || {
        say "could not install:$need"
        exit 1
    }
fi
# A deb-src entry for each deb entry the machine has, when apt knows no
# source package yet.
if ! apt-cache showsrc kubernetes 2>/dev/null | grep -q '^Package: kubernetes'; then
    list=$(mktemp)
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        sed -n '/^Types:.*\bdeb\b/,/^$/p' "$f" | sed 's/^Types:.*/Types: deb-src/'
        echo
    done >"$list.sources"
    {
        grep -h '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
            sed 's/^deb /deb-src /'
    } >"$list.list" || true
    [ -s "$list.sources" ] && $SUDO cp "$list.sources" /etc/apt/sources.list.d/trellis-deb-src.sources
    [ -s "$list.list" ] && $SUDO cp "$list.list" /etc/apt/sources.list.d/trellis-deb-src.list
    rm -f "$list" "$list.sources" "$list.list"
    $SUDO apt-get update -qq >&2 || true
    if ! apt-cache showsrc kubernetes 2>/dev/null | grep -q '^Package: kubernetes'; then
        say "apt knows no source package 'kubernetes' (no deb-src entry could be derived)"
        exit 1
    fi
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/trellis-k8s.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
say "fetching Debian's kubernetes source package"
apt-get source -qq kubernetes >&2 2>/dev/null || apt-get source kubernetes >&2 || {
    say "apt-get source kubernetes failed"
    exit 1
}
src=$(find . -maxdepth 1 -type d -name 'kubernetes-*' | head -n 1)
[ -n "$src" ] || {
    say "no source tree after apt-get source"
    exit 1
}
cd "$src"
r2=/usr/share/gocode/src/github.com/modern-go/reflect2
[ -d "$r2" ] || {
    say "$r2 missing"
    exit 1
}
rm -rf vendor/github.com/modern-go/reflect2
mkdir -p vendor/github.com/modern-go/reflect2
cp "$r2"/*.go "$r2"/*.s vendor/github.com/modern-go/reflect2/ 2>/dev/null ||
    cp "$r2"/*.go vendor/github.com/modern-go/reflect2/
mkdir -p .go/src/k8s.io
[ -L .go/src/k8s.io/kubernetes ] || ln -s ../../.. .go/src/k8s.io/kubernetes
say "building kube-apiserver $version (several minutes, once)"
env GOPATH="$PWD/.go" PATH="/usr/lib/go/bin:$PATH" CGO_ENABLED=0 GOFLAGS= \
    HOME="$work/home" GOCACHE="$work/gocache" \
    make WHAT=cmd/kube-apiserver >"$work/build.log" 2>&1 || {
    say "build failed; the end of its log:"
    tail -n 30 "$work/build.log" >&2
    exit 1
}
out=_output/bin/kube-apiserver
[ -x "$out" ] || out=$(find _output -type f -name kube-apiserver | head -n 1)
[ -n "$out" ] && [ -x "$out" ] || {
    say "the build left no kube-apiserver"
    exit 1
}
mkdir -p "$(dirname "$bin")"
cp "$out" "$bin.tmp.$$" && mv "$bin.tmp.$$" "$bin"
echo "$bin"
