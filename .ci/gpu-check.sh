#!/bin/bash
# make gpu-check: prove the CUDA backend on a GPU in one short command (docs/cuda.md
# "make gpu-check").
#
#     .ci/gpu-check.sh [SUMMARY]        (make gpu-check [GPU_CHECK_SUMMARY=path])
#
# With an NVIDIA GPU (nvidia-smi lists one): a release build with CUDA for that GPU's
# architecture only (nvidia-smi's compute_cap; sm_90 if it says nothing), no PTX, no
# sanitizer tree, only the targets the checks need, with every core.  Without one: the
# same sequence on the emulated device in the Makefile's emulation tree (shorter
# cases), so that the script itself is tested anywhere.  Then, each under its own time
# budget: the meson suite `cuda` (test_cuda*), the conformance runner's CUDA family,
# the Python suite with CUDA tensors, make bench-cuda's programs, and the digits MLP
# trained on the cpu and on the device.
#
# The summary (SUMMARY, else $OUT/gpu-check-summary.txt, else
# BUILD/gpu-check-summary.txt) is rewritten after every step, so a run cut short still
# leaves what it had done; beside it, gpu-check-log.txt holds the tails of whatever
# failed.  Exit status: 0 when every step passed, 1 otherwise, 2 on bad usage.
#
# Environment: GPU_CHECK_MODE=gpu|emu (default: gpu when nvidia-smi lists a device),
# GPU_CHECK_BUILD (build dir; default build-gpu, or the Makefile's EMUBUILD, which it
# passes as GPU_CHECK_EMU_BUILD, default build-emu),
# GPU_CHECK_DEADLINE_S (the whole run's limit: steps are cut to what is left; default
# 570 on a GPU, so a 600 s lease call always brings a summary back; 7200 emulated),
# GPU_CHECK_JOBS (build jobs; default nproc), GPU_CHECK_BUDGET_SCALE (an integer every
# step budget is multiplied by: the GPU sequence on a slow machine, e.g.
# GPU_CHECK_MODE=gpu GPU_CHECK_BUDGET_SCALE=10 tries the nvcc build without a GPU),
# GPU_CHECK_PYTHON (the python3 to build and test with; default: the first of
# /usr/bin/python3, python3 on PATH, /opt/torch/.venv/bin/python3 that has PyYAML,
# Jinja2 and NumPy, preferring one with its C headers; with none that has headers the
# Python module is not built and the python step is NOT-RUN, not a failure),
# GPU_CHECK_BUNDLE=auto|use|only (the Debian packages of `make gpu-bundle` in
# .gpu-debs/, unpacked with dpkg -x into GPU_CHECK_DEPS_PREFIX, default
# /tmp/libops-deps, never into /: auto when something is missing, use always, only
# always and with the system's pkg-config files hidden, which tries the bundle on a
# machine that has everything).
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
export PATH="$PATH:/usr/local/cuda/bin"
T0=$(date +%s)
TARGET_S=480 # the issue's target for the whole command on a GPU machine, build included

if [ $# -gt 1 ] || [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
    echo "usage: $0 [SUMMARY_PATH]" >&2
    exit 2
fi

# ---- the device ---------------------------------------------------------------
gpu_line=""
if command -v nvidia-smi >/dev/null 2>&1; then
    gpu_line=$(nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total \
        --format=csv,noheader 2>/dev/null | head -n 1)
    case "$gpu_line" in *,*) ;; *) gpu_line="" ;; esac # "No devices were found", errors
fi
MODE=${GPU_CHECK_MODE:-}
[ -z "$MODE" ] && { [ -n "$gpu_line" ] && MODE=gpu || MODE=emu; }
case "$MODE" in
gpu)
    arch=$(printf '%s' "$gpu_line" | cut -d, -f2 | tr -dc '0-9')
    [ -z "$arch" ] && arch=90
    BUILD=${GPU_CHECK_BUILD:-build-gpu}
    DEADLINE=${GPU_CHECK_DEADLINE_S:-570}
    device="${gpu_line:-none listed by nvidia-smi}"
    QUICK=""
    # cudart and cuBLAS for the test programs, wherever the loader's paths miss them
    export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    # step budgets in seconds (docs/cuda.md "make gpu-check" explains them)
    B_DEPS=120 B_CONF=60 B_BUILD=300 B_UNIT=90 B_CONFORM=150 B_PY=60 B_BENCH=90 B_E2E=60
    ;;
emu)
    arch=""
    BUILD=${GPU_CHECK_BUILD:-${GPU_CHECK_EMU_BUILD:-build-emu}}
    DEADLINE=${GPU_CHECK_DEADLINE_S:-7200}
    device="emulated (no GPU: ${gpu_line:+nvidia-smi forced off}${gpu_line:-nvidia-smi absent or lists none})"
    QUICK="--quick"
    # 2 shared cores here: the emulated tree takes far longer to build than 16 cores do
    B_DEPS=600 B_CONF=300 B_BUILD=3600 B_UNIT=1200 B_CONFORM=1200 B_PY=300 B_BENCH=300 B_E2E=600
    ;;
*)
    echo "gpu-check: GPU_CHECK_MODE must be gpu or emu, not '$MODE'" >&2
    exit 2
    ;;
esac
SCALE=${GPU_CHECK_BUDGET_SCALE:-1}
case "$SCALE" in '' | *[!0-9]* | 0) echo "gpu-check: GPU_CHECK_BUDGET_SCALE must be a positive integer" >&2; exit 2 ;; esac
for b in B_DEPS B_CONF B_BUILD B_UNIT B_CONFORM B_PY B_BENCH B_E2E; do eval "$b=\$((\$$b * SCALE))"; done
JOBS=${GPU_CHECK_JOBS:-$(nproc 2>/dev/null || echo 2)}
# Tests in parallel: each process holds its own CUDA context; more than 8 buys nothing.
TJOBS=$JOBS
[ "$TJOBS" -gt 8 ] && TJOBS=8

SUMMARY=${1:-}
if [ -z "$SUMMARY" ]; then
    if [ -n "${OUT:-}" ]; then SUMMARY="$OUT/gpu-check-summary.txt"; else SUMMARY="$BUILD/gpu-check-summary.txt"; fi
fi
mkdir -p "$(dirname "$SUMMARY")" "$BUILD" || exit 2
SUMMARY=$(cd "$(dirname "$SUMMARY")" && pwd)/$(basename "$SUMMARY")
EXCERPTS="$(dirname "$SUMMARY")/gpu-check-log.txt"
WORK="$(cd "$BUILD" && pwd)/gpu-check"
rm -rf "$WORK"
mkdir -p "$WORK/steps" "$WORK/logs"
: >"$EXCERPTS"

# The python3 to build with (meson -Dpython=): see GPU_CHECK_PYTHON above.  Sets PY
# and PY_HEADERS (yes/no); PY stays a python3 that runs the report script in any case.
py_ok() { "$1" -c 'import yaml, jinja2, numpy' 2>/dev/null; }
py_headers() {
    "$1" -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null
}
pick_python() {
    local c first=""
    if [ -n "${GPU_CHECK_PYTHON:-}" ]; then
        set -- "$GPU_CHECK_PYTHON"
    else
        set -- /usr/bin/python3 "$(command -v python3 2>/dev/null)" /opt/torch/.venv/bin/python3
    fi
    for c in "$@"; do
        [ -n "$c" ] && [ -x "$c" ] && py_ok "$c" || continue
        if py_headers "$c"; then PY=$c; PY_HEADERS=yes; return 0; fi
        [ -z "$first" ] && first=$c
    done
    PY_HEADERS=no
    if [ -n "$first" ]; then PY=$first; return 0; fi
    PY=$(command -v python3 || echo /usr/bin/python3)
    return 1
}
pick_python
REPORT="$ROOT/.ci/gpu-check-report.py"

commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo "no git")
[ "$commit" != "no git" ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && commit="$commit + local changes"
started=$(date -u '+%Y-%m-%d %H:%M UTC')

# ---- the summary ----------------------------------------------------------------
# A step's record: $WORK/steps/NN-name.rec holding "result|wall|budget|detail", and
# NN-name.txt its section.  render() rebuilds the whole summary from them.
STEP_NO=0
RUNNING=""
render() {
    local total=$(($(date +%s) - T0)) failed=0 ran=0 notrun="" f name result wall budget detail verdict
    for f in "$WORK"/steps/*.rec; do
        [ -e "$f" ] || continue
        ran=$((ran + 1))
        IFS='|' read -r result _ <"$f"
        # NOT-RUN: a step this machine cannot run (the python step without Python
        # headers), said plainly and not counted as a failure
        if [ "$result" = NOT-RUN ]; then
            name=$(basename "$f" .rec)
            notrun="$notrun ${name#*-}"
        else
            [ "$result" = PASS ] || failed=$((failed + 1))
        fi
    done
    if [ -n "$RUNNING" ]; then
        verdict="INCOMPLETE (running: $RUNNING; $failed of $ran steps so far failed)"
    elif [ "$failed" -eq 0 ] && [ -z "$notrun" ]; then
        verdict="PASS (all $ran steps)"
    elif [ "$failed" -eq 0 ]; then
        verdict="PASS ($((ran - $(echo $notrun | wc -w))) of $ran steps; not run:$notrun)"
    else
        verdict="FAIL ($failed of $ran steps failed${notrun:+; not run:$notrun})"
    fi
    {
        echo "gpu-check: $verdict"
        echo "mode:    $MODE$([ "$MODE" = emu ] && echo ' (emulated device: not a GPU result)')"
        echo "device:  $device"
        echo "host:    $(nproc 2>/dev/null) cores; $(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/nvcc \1/p' | head -n 1)${arch:+; built for sm_$arch only}"
        echo "python:  $PY ($([ "$PY_HEADERS" = yes ] && echo 'with its headers' || echo 'no headers: no Python module'))"
        [ -n "$BUNDLE_NOTE" ] && echo "deps:    $BUNDLE_NOTE"
        echo "commit:  $commit"
        echo "started: $started; wall so far ${total} s (target ${TARGET_S} s on a GPU machine; deadline ${DEADLINE} s)"
        echo
        printf '%-12s %-8s %7s %7s  %s\n' step result wall budget detail
        for f in "$WORK"/steps/*.rec; do
            [ -e "$f" ] || continue
            name=$(basename "$f" .rec)
            IFS='|' read -r result wall budget detail <"$f"
            printf '%-12s %-8s %6ss %6ss  %s\n' "${name#*-}" "$result" "$wall" "$budget" "$detail"
        done
        [ -n "$RUNNING" ] && printf '%-12s %-8s\n' "$RUNNING" running
        for f in "$WORK"/steps/*.txt; do
            [ -s "$f" ] || continue
            name=$(basename "$f" .txt)
            echo
            echo "== ${name#*-} =="
            cat "$f"
        done
    } >"$SUMMARY.tmp" && mv "$SUMMARY.tmp" "$SUMMARY"
}

# record NAME RESULT WALL BUDGET DETAIL [SECTION_FILE]
record() {
    STEP_NO=$((STEP_NO + 1))
    local id
    id=$(printf '%02d-%s' "$STEP_NO" "$1")
    printf '%s|%s|%s|%s\n' "$2" "$3" "$4" "$5" >"$WORK/steps/$id.rec"
    if [ -n "${6:-}" ] && [ -s "$6" ]; then cp "$6" "$WORK/steps/$id.txt"; fi
    RUNNING=""
    render
    printf 'gpu-check: %-12s %-8s %4ss  %s\n' "$1" "$2" "$3" "$5"
}

# The time a step may take: its budget, cut to what the deadline leaves (0: none left).
allowance() {
    local left=$((DEADLINE - ($(date +%s) - T0) - 5))
    [ "$left" -lt "$1" ] && echo $((left < 0 ? 0 : left)) || echo "$1"
}

# timed LOG SECONDS CMD...: run CMD with stdout+stderr to LOG under timeout; sets RC
# (124: out of time) and WALL.
timed() {
    local log=$1 secs=$2 t
    shift 2
    t=$(date +%s)
    timeout -k 10 "$secs" "$@" >"$log" 2>&1 </dev/null
    RC=$?
    [ "$RC" -eq 137 ] && RC=124
    WALL=$(($(date +%s) - t))
}

# section NAME: a report's lines after its first (the summary's section), as a file
section() {
    tail -n +2 "$WORK/logs/$1.report" >"$WORK/logs/$1.section"
    echo "$WORK/logs/$1.section"
}

# excerpt TITLE LOG: the last lines of a failed step's log into gpu-check-log.txt
excerpt() {
    { echo "==== $1 ($2, last 60 lines) ===="; tail -n 60 "$2"; echo; } >>"$EXCERPTS"
}

# Steps after a failed build (or deps) cannot run: recorded as such, and failed.
skip_rest() {
    local s
    for s in "$@"; do record "$s" SKIP 0 0 "not run: $FATAL"; done
    render
    echo "gpu-check: summary in $SUMMARY"
    exit 1
}
STEPS_AFTER_BUILD="unit conformance python bench e2e"

# ---- deps: what the build and the checks need ------------------------------------
# Tolerates what is installed; installs what is missing as make check does (quietly,
# as root, where apt can reach a mirror); else fails naming each missing piece.
# The Python headers are wanted, not needed: "python3-dev" is listed (so that apt
# installs it where it can) but hard_missing() leaves it out.
missing_deps() {
    local m="" c
    for c in meson ninja cc c++ pkg-config timeout; do command -v "$c" >/dev/null 2>&1 || m="$m $c"; done
    if py_ok "$PY"; then
        [ "$PY_HEADERS" = yes ] || m="$m python3-dev"
    else
        m="$m python3-with-yaml-jinja2-numpy"
    fi
    if command -v pkg-config >/dev/null 2>&1; then
        for c in check openblas sleef zlib libzip; do pkg-config --exists "$c" 2>/dev/null || m="$m pkg-config:$c"; done
    fi
    if command -v cc >/dev/null 2>&1; then
        echo '#include <dlpack/dlpack.h>' | cc -E -x c - >/dev/null 2>&1 || m="$m dlpack/dlpack.h"
    fi
    [ -n "$(digits_path)" ] || m="$m sklearn-digits"
    if [ "$MODE" = gpu ]; then
        command -v nvcc >/dev/null 2>&1 || m="$m nvcc"
        ls /usr/local/cuda/lib64/libcublas.so* >/dev/null 2>&1 || ldconfig -p 2>/dev/null | grep -q libcublas.so || m="$m cuBLAS"
    fi
    echo "$m"
}
# sklearn's digits data (Debian's python3-sklearn, else any python3 with sklearn)
digits_path() {
    local p
    for p in "$PY" /usr/bin/python3 python3; do
        "$p" -c 'import os, sklearn.datasets as d; f = os.path.join(os.path.dirname(d.__file__), "data", "digits.csv.gz"); assert os.path.exists(f); print(f)' 2>/dev/null && return
    done
}

hard_missing() { echo "$1" | tr ' ' '\n' | grep -v -x -e '' -e python3-dev | tr '\n' ' '; }

# use_bundle: the .debs of `make gpu-bundle` (.gpu-debs/) unpacked into DEPS_PREFIX,
# and the environment pointed at them: pkg-config files rewritten from /usr to the
# prefix, headers (CPATH), libraries to link (LIBRARY_PATH) and, in DEPS_PREFIX/ld,
# links to the shared libraries the programs load that the system's loader does not
# already find (LD_LIBRARY_PATH: the prefix's libz or libgfortran must not replace
# newer ones of the image).
DEBS="$ROOT/.gpu-debs"
BUNDLE=${GPU_CHECK_BUNDLE:-auto}
case "$BUNDLE" in auto | use | only) ;; *) echo "gpu-check: GPU_CHECK_BUNDLE must be auto, use or only" >&2; exit 2 ;; esac
DEPS_PREFIX=${GPU_CHECK_DEPS_PREFIX:-/tmp/libops-deps}
BUNDLE_NOTE=""
use_bundle() {
    local P=$DEPS_PREFIX f n=0 link target so file ldconf
    local L=$P/usr/lib/x86_64-linux-gnu
    rm -rf "$P" && mkdir -p "$P/ld" || return 1
    for f in "$DEBS"/*.deb; do
        [ -e "$f" ] || continue
        if command -v dpkg >/dev/null 2>&1; then
            dpkg -x "$f" "$P" || return 1
        else
            # no dpkg: a .deb is an ar archive holding data.tar.*
            (d=$(mktemp -d) && cd "$d" && ar x "$f" && tar -xf data.tar.* -C "$P" && rm -rf "$d") || return 1
        fi
        n=$((n + 1))
    done
    [ "$n" -gt 0 ] || return 1
    # Absolute links (zlib1g-dev's libz.so -> /lib/...) point into the prefix instead.
    find "$P" -type l | while read -r link; do
        target=$(readlink "$link")
        case "$target" in /*) [ -e "$P$target" ] && ln -sfn "$P$target" "$link" ;; esac
    done
    # Debian's alternatives (/etc/alternatives), which dpkg -x does not make: OpenBLAS
    # as the system's libopenblas, libblas and openblas.pc.
    mkdir -p "$L/pkgconfig"
    ln -sfn openblas-pthread/libopenblas.so.0 "$L/libopenblas.so.0"
    ln -sfn openblas-pthread/libopenblas.so "$L/libopenblas.so"
    ln -sfn openblas-pthread/libblas.so.3 "$L/libblas.so.3"
    ln -sfn ../openblas-pthread/pkgconfig/openblas.pc "$L/pkgconfig/openblas.pc"
    # .pc files say prefix=/usr, libdir=/usr/lib/...: the same paths under the prefix
    find "$P" -name '*.pc' -type f -exec sed -i \
        -e "s#\(^\|[=[:space:]]\|-I\|-L\)/usr\(/\|\$\)#\1$P/usr\2#g" \
        -e "s#\(^\|[=[:space:]]\|-I\|-L\)/lib/#\1$P/lib/#g" {} + || return 1
    ldconf=$(ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null)
    for so in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0 libsleef.so.3 libsubunit.so.0 libpkgconf.so.3 libz.so.1 libzip.so.4; do
        # OpenBLAS is always the prefix's (what the build links); the others only
        # where the system has none (or with GPU_CHECK_BUNDLE=only)
        [ "$so" != libopenblas.so.0 ] && [ "$BUNDLE" != only ] && [ -n "$ldconf" ] &&
            printf '%s\n' "$ldconf" | grep -q "^[[:space:]]*$so " && continue
        file=$(find "$P/usr/lib" "$P/lib" -name "$so" ! -path "$P/ld/*" 2>/dev/null | sort | head -n 1)
        [ -n "$file" ] && ln -sfn "$(readlink -f "$file")" "$P/ld/$so"
    done
    if [ "$BUNDLE" = only ]; then
        export PATH="$P/usr/bin:$PATH"
        export PKG_CONFIG="$P/usr/bin/pkg-config"
        export PKG_CONFIG_LIBDIR="$L/pkgconfig:$P/usr/share/pkgconfig"
    else
        export PATH="$PATH:$P/usr/bin" # pkg-config, where the image has none
    fi
    export PKG_CONFIG_PATH="$L/pkgconfig:$P/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    export CPATH="$P/usr/include${CPATH:+:$CPATH}"
    export LIBRARY_PATH="$L${LIBRARY_PATH:+:$LIBRARY_PATH}"
    export LD_LIBRARY_PATH="$P/ld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export CMAKE_PREFIX_PATH="$P/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    BUNDLE_NOTE="$n .debs of .gpu-debs unpacked into $P ($(cd "$P/ld" && ls | tr '\n' ' ')from the prefix at run time)"
}

RUNNING=deps
render
t=$(date +%s)
log="$WORK/logs/deps.log"
: >"$log"
miss=$(missing_deps)
detail="all present"
if [ -e "$DEBS" ] && { [ "$BUNDLE" != auto ] || [ -n "$(hard_missing "$miss")" ]; }; then
    echo "missing:$miss; unpacking $DEBS" >>"$log"
    if use_bundle >>"$log" 2>&1; then
        pick_python
        miss=$(missing_deps)
        detail="from .gpu-debs (make gpu-bundle)"
    else
        echo "unpacking $DEBS into $DEPS_PREFIX failed" >>"$log"
    fi
fi
# apt only for what is needed, or for the headers where no bundle says "offline"
if [ -n "$(hard_missing "$miss")" ] ||
    { [ -n "$miss" ] && [ -z "$BUNDLE_NOTE" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }; then
    echo "missing:$miss" >>"$log"
    timed "$log.install" "$(allowance $B_DEPS)" sh .ci/install-deps.sh
    cat "$log.install" >>"$log"
    pick_python
    miss=$(missing_deps)
    detail="installed what was missing"
fi
if [ -z "$(hard_missing "$miss")" ] && [ -n "$miss" ]; then
    detail="$detail; no Python headers for $PY: the Python module is not built"
    miss=""
fi
if [ -n "$miss" ]; then
    excerpt deps "$log"
    FATAL="deps missing"
    record deps FAIL $(($(date +%s) - t)) $B_DEPS "missing:$miss (no apt here? make gpu-bundle, and carry .gpu-debs)"
    skip_rest configure build $STEPS_AFTER_BUILD
fi
record deps PASS $(($(date +%s) - t)) $B_DEPS "$detail"

# ---- configure --------------------------------------------------------------------
RUNNING=configure
render
if [ "$MODE" = gpu ]; then
    opts="--buildtype=release -Dcuda=enabled -Dcuda-arch=$arch -Dcuda-ptx=false -Dcuda-emulation=false -Dtests=true"
    what="release, CUDA for sm_$arch only (no PTX)"
else
    # the Makefile's emulation tree, as make test-emu configures it
    opts="--buildtype=debugoptimized -Dcuda=disabled -Dcuda-emulation=true -Dtests=true"
    what="debugoptimized, emulated device (the Makefile's test-emu tree)"
fi
opts="$opts -Dpython=$PY -Dpython-module=$([ "$PY_HEADERS" = yes ] && echo enabled || echo disabled)"
log="$WORK/logs/configure.log"
if [ -e "$BUILD/build.ninja" ]; then
    # shellcheck disable=SC2086
    timed "$log" "$(allowance $B_CONF)" meson setup --reconfigure "$BUILD" $opts
else
    # shellcheck disable=SC2086
    timed "$log" "$(allowance $B_CONF)" meson setup "$BUILD" $opts
fi
if [ "$RC" -ne 0 ]; then
    excerpt configure "$log"
    FATAL="configure failed"
    record configure "$([ $RC -eq 124 ] && echo TIMEOUT || echo FAIL)" "$WALL" $B_CONF "meson setup $BUILD: exit $RC"
    skip_rest build $STEPS_AFTER_BUILD
fi
# The tree must be what the mode says: a real CUDA build, or the emulated one.
if ! grep -q 'define OPS_WITH_CUDA' "$BUILD/ops_config.h" 2>/dev/null ||
    { [ "$MODE" = gpu ] && grep -q 'define OPS_CUDA_EMULATION' "$BUILD/ops_config.h"; }; then
    FATAL="configure gave no CUDA build"
    record configure FAIL "$WALL" $B_CONF "$BUILD/ops_config.h: not a $MODE CUDA build"
    skip_rest build $STEPS_AFTER_BUILD
fi
record configure PASS "$WALL" $B_CONF "$BUILD: $what"

# ---- build: only what the checks run ----------------------------------------------
RUNNING=build
render
targets=$( ("$PY" .ci/suite_targets.py "$BUILD" cuda && "$PY" .ci/suite_targets.py "$BUILD" cuda-python) |
    sort -u | tr '\n' ' ')
targets="$targets libops.so libops.a bench/bench_cuda bench/bench_cuda_reduce"
log="$WORK/logs/build.log"
t=$(date +%s)
# shellcheck disable=SC2086
timed "$log" "$(allowance $B_BUILD)" ninja -C "$BUILD" -j "$JOBS" $targets
stage="$WORK/stage"
if [ "$RC" -eq 0 ]; then
    # train_mlp as a user builds it (make run): against the installed headers and libops.pc
    # shellcheck disable=SC2086,SC2046
    {
        meson install -C "$BUILD" --destdir "$stage" --no-rebuild --quiet --tags runtime,devel &&
            pcdir=$(dirname "$(find "$stage" -name libops.pc | head -n 1)") &&
            flags=$(PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_PATH="$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" pkg-config --cflags --libs libops) &&
            cc -std=c11 -Wall -Wextra -Werror examples/train_mlp.c -o "$WORK/train_mlp" $flags \
                $(pkg-config --cflags --libs zlib) -lm
    } >>"$log" 2>&1
    RC=$?
fi
WALL=$(($(date +%s) - t))
ntargets=$(echo $targets | wc -w)
if [ "$RC" -ne 0 ]; then
    excerpt build "$log"
    FATAL="build failed"
    record build "$([ $RC -eq 124 ] && echo TIMEOUT || echo FAIL)" "$WALL" $B_BUILD "ninja -j$JOBS, $ntargets targets: exit $RC (gpu-check-log.txt)"
    skip_rest $STEPS_AFTER_BUILD
fi
record build PASS "$WALL" $B_BUILD "ninja -j$JOBS, $ntargets targets + train_mlp (installed libops)"

# ---- the checks -----------------------------------------------------------------
# meson_step NAME BUDGET MESON-TEST-ARGS...: a meson test run, judged by its test log
meson_step() {
    local name=$1 budget=$2 allow
    shift 2
    RUNNING=$name
    render
    allow=$(allowance "$budget")
    if [ "$allow" -le 0 ]; then
        record "$name" SKIP 0 "$budget" "not run: the deadline (${DEADLINE} s) was reached"
        return
    fi
    rm -f "$BUILD/meson-logs/gpucheck-$name.json"
    timed "$WORK/logs/$name.log" "$allow" meson test -C "$BUILD" --no-rebuild --print-errorlogs \
        --num-processes "$TJOBS" --logbase "gpucheck-$name" "$@"
    local rc=$RC
    "$PY" "$REPORT" meson "$BUILD/meson-logs/gpucheck-$name.json" --excerpts "$EXCERPTS" \
        >"$WORK/logs/$name.report" 2>&1
    local prc=$? result=PASS
    [ "$prc" -ne 0 ] || [ "$rc" -ne 0 ] && result=FAIL
    [ "$rc" -eq 124 ] && result=TIMEOUT
    [ "$result" = PASS ] || excerpt "$name (meson test)" "$WORK/logs/$name.log"
    head -n 1 "$WORK/logs/$name.report" >"$WORK/logs/$name.detail"
    tail -n +2 "$WORK/logs/$name.report" >"$WORK/logs/$name.section"
    record "$name" "$result" "$WALL" "$budget" "$(cat "$WORK/logs/$name.detail")" "$WORK/logs/$name.section"
}

# unit: the `cuda` suite's test programs (test_cuda*, and the emulator's own tests in
# the emulated tree); the conformance family and the Python test have their own steps.
meson_step unit $B_UNIT --suite cuda --no-suite conformance --no-suite python

# conformance: the runner's CUDA family, every case on cuda:0 against the cpu (the whole
# family on the emulated device too: about 20 s there)
RUNNING=conformance
render
allow=$(allowance $B_CONFORM)
if [ "$allow" -le 0 ]; then
    record conformance SKIP 0 $B_CONFORM "not run: the deadline (${DEADLINE} s) was reached"
else
    timed "$WORK/logs/conformance.log" "$allow" "$BUILD/tests/conformance/conformance" \
        "$BUILD/tests/conformance/cases.bin" --backend cuda --cuda-exceptions docs/cuda-exceptions.md
    rc=$RC
    "$PY" "$REPORT" conformance "$WORK/logs/conformance.log" "$rc" >"$WORK/logs/conformance.report" 2>&1 &&
        result=PASS || result=FAIL
    [ "$rc" -eq 124 ] && result=TIMEOUT
    [ "$result" = PASS ] || excerpt conformance "$WORK/logs/conformance.log"
    record conformance "$result" "$WALL" $B_CONFORM "$(head -n 1 "$WORK/logs/conformance.report")" \
        "$(section conformance)"
fi

# python: the Python suite with CUDA tensors (not run where the python3 has no headers)
if [ "$PY_HEADERS" = yes ]; then
    meson_step python $B_PY python-cuda
else
    record python NOT-RUN 0 $B_PY "not run: no Python headers for $PY (skipped: the module is not built)"
fi

# bench: make bench-cuda's programs (--quick on the emulated device)
RUNNING=bench
render
allow=$(allowance $B_BENCH)
if [ "$allow" -le 0 ]; then
    record bench SKIP 0 $B_BENCH "not run: the deadline (${DEADLINE} s) was reached"
else
    blog="$WORK/logs/bench.log"
    t=$(date +%s)
    # shellcheck disable=SC2086
    timed "$blog.mm" "$allow" "$BUILD/bench/bench_cuda" $QUICK
    rc1=$RC
    # shellcheck disable=SC2086
    timed "$blog.reduce" "$(allowance $((allow - WALL)))" "$BUILD/bench/bench_cuda_reduce" $QUICK
    rc2=$RC
    cat "$blog.mm" "$blog.reduce" >"$blog"
    "$PY" "$REPORT" bench "$blog.mm" "$rc1" "$blog.reduce" "$rc2" >"$WORK/logs/bench.report" 2>&1 &&
        result=PASS || result=FAIL
    { [ "$rc1" -eq 124 ] || [ "$rc2" -eq 124 ]; } && result=TIMEOUT
    [ "$result" = PASS ] || excerpt bench "$blog"
    record bench "$result" $(($(date +%s) - t)) $B_BENCH "$(head -n 1 "$WORK/logs/bench.report")" \
        "$(section bench)"
fi

# e2e: the digits MLP trained on the cpu, then on the device from the same start
RUNNING=e2e
render
allow=$(allowance $B_E2E)
if [ "$allow" -le 0 ]; then
    record e2e SKIP 0 $B_E2E "not run: the deadline (${DEADLINE} s) was reached"
else
    t=$(date +%s)
    digits=$(digits_path)
    libdir=$(dirname "$(find "$stage" -name libops.so | head -n 1)")
    export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    timed "$WORK/logs/e2e-cpu.log" "$allow" "$WORK/train_mlp" --device cpu --model mlp "$digits"
    rc1=$RC
    timed "$WORK/logs/e2e-cuda.log" "$(allowance $((allow - WALL)))" "$WORK/train_mlp" --device cuda:0 --model mlp "$digits"
    rc2=$RC
    "$PY" "$REPORT" e2e "$WORK/logs/e2e-cpu.log" "$rc1" "$WORK/logs/e2e-cuda.log" "$rc2" >"$WORK/logs/e2e.report" 2>&1 &&
        result=PASS || result=FAIL
    { [ "$rc1" -eq 124 ] || [ "$rc2" -eq 124 ]; } && result=TIMEOUT
    if [ "$result" != PASS ]; then
        excerpt "e2e (cpu)" "$WORK/logs/e2e-cpu.log"
        excerpt "e2e (cuda:0)" "$WORK/logs/e2e-cuda.log"
    fi
    record e2e "$result" $(($(date +%s) - t)) $B_E2E "$(head -n 1 "$WORK/logs/e2e.report")" \
        "$(section e2e)"
fi

render
echo "gpu-check: summary in $SUMMARY"
[ -s "$EXCERPTS" ] && echo "gpu-check: logs of what failed in $EXCERPTS"
head -n 1 "$SUMMARY"
head -n 1 "$SUMMARY" | grep -q '^gpu-check: PASS'
