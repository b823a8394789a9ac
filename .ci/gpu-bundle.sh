#!/bin/bash
# make gpu-bundle: download, HERE (Debian 12, with its archive reachable), the Debian
# packages that `make gpu-check` needs and the GPU machine's image lacks, into .gpu-debs/
# (git-ignored), so that a `run` call can carry them: `carry: [".gpu-debs"]`.  On that
# machine (no network, no apt) .ci/gpu-check.sh unpacks them with `dpkg -x` into a
# private prefix, never into / (docs/cuda.md "make gpu-check").
#
#     .ci/gpu-bundle.sh [DIR]        (default .gpu-debs)
#
# What the image has (nvcc, cmake, ninja, meson and a python3 with PyYAML, Jinja2,
# NumPy, scikit-learn and pytest) is not bundled; what it lacks: Check (+ subunit, its
# pkg-config dependency), OpenBLAS (the pthread flavour, + libgfortran5/libquadmath0 it
# links), SLEEF (the CPU's vector math, kernels/cpu/vec/), the DLPack header, zlib's
# header and .pc, and pkg-config itself (pkgconf: its /usr/bin/pkg-config).
# Exact versions are those of this machine's archive; only the amd64 packages.
set -eu
cd "$(dirname "$0")/.."
DIR=${1:-.gpu-debs}
LIMIT_KIB=$((40 * 1024)) # the run tool carries 64 MiB in all, the working tree included

PKGS="check libsubunit-dev libsubunit0
      libopenblas-dev libopenblas0 libopenblas-pthread-dev libopenblas0-pthread
      libgfortran5 libquadmath0
      libsleef-dev libsleef3
      libdlpack-dev zlib1g-dev zlib1g libzip-dev libzip4
      pkgconf pkgconf-bin libpkgconf3"

command -v apt-get >/dev/null || { echo "gpu-bundle: needs apt-get (Debian 12)" >&2; exit 1; }
mkdir -p "$DIR"
rm -f "$DIR"/*.deb "$DIR/MANIFEST"
# apt-get download fetches as the calling user into the current directory; an amd64
# architecture is named so that the bundle is right on an arm64 machine too.
arch=-oAPT::Architecture=amd64
if ! (cd "$DIR" && apt-get -qq "$arch" download $PKGS); then
    echo "gpu-bundle: apt-get download failed; try \`apt-get update\` as root first" >&2
    exit 1
fi
# Every package named must be there, and nothing the image has pulled in by accident.
missing=""
for p in $PKGS; do ls "$DIR/${p}_"*.deb >/dev/null 2>&1 || missing="$missing $p"; done
[ -z "$missing" ] || { echo "gpu-bundle: not downloaded:$missing" >&2; exit 1; }
(cd "$DIR" && for f in *.deb; do dpkg-deb -W --showformat="\${Package} \${Version} \${Architecture}\n" "$f"; done) >"$DIR/MANIFEST"
kib=$(du -sk "$DIR" | cut -f1)
echo "gpu-bundle: $(ls "$DIR"/*.deb | wc -l) packages in $DIR, $((kib / 1024)).$((kib % 1024 * 10 / 1024)) MiB"
if [ "$kib" -gt "$LIMIT_KIB" ]; then
    echo "gpu-bundle: over $((LIMIT_KIB / 1024)) MiB: too much to carry beside the working tree" >&2
    exit 1
fi
