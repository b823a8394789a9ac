#!/bin/sh
# bench/edit-loop.sh: how much of the build one added elementwise op rebuilds
# (docs/codegen.md "The edit loop").
#
# On a copy of the source tree in a temporary directory (the working tree and its
# build dirs are never touched; uncommitted and untracked, not ignored, files are
# copied as they are), it configures and fully builds a CPU-only tree, then adds
# `logit` as docs/adding-an-op.md does, with the kernel in the unary kernel file:
#
#   tests/newop/logit.yaml              appended to ops/native_functions.yaml
#   tests/newop/logit_conformance.yaml  appended to ops/conformance/unary.yaml
#   tests/newop/logit_derivatives.yaml  appended to ops/derivatives.yaml
#   tests/newop/logit.c (its code)      appended to kernels/cpu/unary.c
#
# (EDIT_LOOP_NEW_FILE=1: tests/newop/logit.c copied to kernels/cpu/ instead, a new
# kernel file and so a new shard).  A dry run (`ninja -n`) cannot answer alone: it does
# not apply ninja's restat, so right after a schema edit it lists everything
# downstream of the generators.  So the generator steps are run for real (meson's
# regeneration and every custom command, counted), and then `ninja -n` lists what is
# left.  It prints
#
#   steps of a full build (`ninja -t commands all` after the edit),
#   the generator steps, the compiles and links left (with their files: -v),
#   steps rebuilt / total, with and without the generator steps.
#
#   bench/edit-loop.sh [-v] [-k]      -v: list the rebuilt steps; -k: keep the copy
#
# Environment: MESON_ARGS (default: --buildtype=debugoptimized -Dcuda=disabled),
# JOBS (ninja -j for the full build, default 2), TMPDIR.  ccache (which meson uses when
# installed) is pointed at the copy (CCACHE_BASEDIR, CCACHE_NOHASHDIR), so a second run
# compiles from the cache; the counts do not depend on it.
set -eu

verbose=0
keep=0
for a in "$@"; do
    case "$a" in
    -v) verbose=1 ;;
    -k) keep=1 ;;
    *) echo "usage: $0 [-v] [-k]" >&2; exit 2 ;;
    esac
done

src=$(cd "$(dirname "$0")/.." && pwd)
MESON=${MESON:-meson}
NINJA=${NINJA:-ninja}
MESON_ARGS=${MESON_ARGS:---buildtype=debugoptimized -Dcuda=disabled}
JOBS=${JOBS:-2}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/libops-edit-loop.XXXXXX")
cleanup() { if [ "$keep" = 1 ]; then echo "kept: $tmp" >&2; else rm -rf "$tmp"; fi; }
trap cleanup EXIT INT TERM

# The working tree as it is: tracked and untracked files that git does not ignore
# (build dirs are ignored), read only.
mkdir "$tmp/src"
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
    tar --null --no-recursion --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$tmp/src"

export CCACHE_BASEDIR="$tmp" CCACHE_NOHASHDIR=1
cd "$tmp/src"
# shellcheck disable=SC2086
"$MESON" setup build $MESON_ARGS > "$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log" >&2; exit 1; }
echo "full build of the copy ($tmp) ..." >&2
"$NINJA" -C build -j"$JOBS" > "$tmp/build.log" 2>&1 || { tail -n 40 "$tmp/build.log" >&2; exit 1; }
before_total=$("$NINJA" -C build -t commands all | wc -l)

# The guide's addition.
fx=tests/newop
cat "$fx/logit.yaml" >> ops/native_functions.yaml
cat "$fx/logit_conformance.yaml" >> ops/conformance/unary.yaml
cat "$fx/logit_derivatives.yaml" >> ops/derivatives.yaml
if [ "${EDIT_LOOP_NEW_FILE:-0}" = 1 ]; then
    where="a new file, kernels/cpu/logit.c"
    cp "$fx/logit.c" kernels/cpu/logit.c
else
    where="kernels/cpu/unary.c"
    # the code without its includes (unary.c has them, and includes its own shard)
    { printf '\n'; grep -v '^#include' "$fx/logit.c"; } >> kernels/cpu/unary.c
fi


# The generator steps, run for real: meson's regeneration (the schema is a configure
# dependency) and every custom command (the generators, the conformance cases).
gen_targets=$("$NINJA" -C build -t targets rule CUSTOM_COMMAND | grep -v '^meson-internal__' | tr '\n' ' ')
# shellcheck disable=SC2086
"$NINJA" -C build $gen_targets > "$tmp/gen.log" 2>&1 || { cat "$tmp/gen.log" >&2; exit 1; }
gen=$(grep -c '^\[' "$tmp/gen.log" || true)
"$NINJA" -C build -n > "$tmp/left.log"
grep '^\[' "$tmp/left.log" | sed 's/^\[[0-9]*\/[0-9]*\] //' > "$tmp/steps.txt" || true
left=$(wc -l < "$tmp/steps.txt")
compiles=$(grep -c '^Compiling' "$tmp/steps.txt" || true)
links=$(grep -c '^Linking' "$tmp/steps.txt" || true)
lib_compiles=$(grep '^Compiling' "$tmp/steps.txt" | grep -c 'libops\.\|libops_' || true)
total=$("$NINJA" -C build -t commands all | wc -l)

pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f%%", 100 * a / b }'; }
echo "edit loop: logit added as docs/adding-an-op.md does, its kernel in $where"
echo "  configured with: $MESON_ARGS"
echo "  steps of a full build:        $total (before the edit: $before_total)"
echo "  generator steps run:          $gen"
echo "  left after them:              $left ($compiles compiles, $lib_compiles of them the library's; $links links; $((left - compiles - links)) other)"
echo "  rebuilt, generators included: $((gen + left)) / $total = $(pct $((gen + left)) "$total")"
echo "  rebuilt, generators left out: $left / $total = $(pct "$left" "$total")"
if [ "$verbose" = 1 ]; then
    echo "generator steps:"
    grep '^\[' "$tmp/gen.log" | sed 's/^/  /'
    echo "left:"
    sed 's/^/  /' "$tmp/steps.txt"
fi
