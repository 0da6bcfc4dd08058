#!/bin/sh
# Install what building and testing trellis needs on Debian 12, when it is
# missing. Safe to run again: installed packages are left alone.
#   scripts/deps.sh          build dependencies
#   scripts/deps.sh --test   build and test dependencies
set -eu
pkgs="build-essential autoconf automake libtool pkg-config libconfig-dev libjson-c-dev libyaml-dev libmicrohttpd-dev libcurl4-openssl-dev check"
if [ "${1:-}" = "--test" ]; then
    pkgs="$pkgs valgrind groff-base curl clang libclang-rt-14-dev clang-format systemd socat etcd-server openssl chromium tesseract-ocr tesseract-ocr-eng fonts-dejavu-core"
fi
missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0
echo "trellis: installing:$missing" >&2
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=sudo
    else
        echo "trellis: need root to install:$missing" >&2
        exit 1
    fi
else
    SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
