#!/bin/sh
# Install the Debian packages libops builds and tests with, if any is missing.
# Quiet and quick when everything is already there.  (g++: the emulated CUDA tree
# compiles kernels/cuda/*.cu as C++.)  Extra package names given as arguments are
# installed the same way (make fuzz: clang).
set -e
pkgs="meson ninja-build gcc g++ pkg-config check libopenblas-dev libyaml-dev
      python3 python3-dev python3-jinja2 python3-yaml python3-numpy libdlpack-dev
      python3-sklearn zlib1g-dev libsleef-dev libzip-dev libdnnl-dev $*"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
        || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
if [ "$(id -u)" != 0 ]; then
    echo "error: missing Debian packages:$missing (run as root, or install them)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
