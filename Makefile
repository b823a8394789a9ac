# libops: the two commands of the README, and a few helpers.
#
#   make run     install missing Debian packages, build, run the examples (a tour of
#                the API, then an MLP trained on sklearn's digits data with autograd,
#                then the Python tour through the installed Python package, then a tiny
#                GPT-2-style model trained in Python, saved as safetensors, and run
#                from C to continue a prompt)
#   make check   install missing Debian packages, build, run every test (and again
#                under AddressSanitizer + LeakSanitizer + UndefinedBehaviorSanitizer),
#                and the CUDA tests on the emulated device (make test-emu)
#   make bench   build and run the benchmarks (make bench-cuda: the GPU ones); one
#                program, bench/bench NAME, runs each (bench/meson.build)
#   make check-tsan  the thread tests under ThreadSanitizer (not part of check)
#   make edit-loop   how many build steps adding one op reruns (bench/edit-loop.sh)
#   make fuzz    the registry fuzzer without an iteration bound (docs/fuzzing.md)
#   make gpu-check   on a machine with an NVIDIA GPU: a release build for that GPU alone,
#                then the CUDA tests, the conformance CUDA family, the Python CUDA tests,
#                bench-cuda and the digits MLP on the GPU, each under a time budget, into
#                one summary file (GPU_CHECK_SUMMARY=path, else $$OUT/gpu-check-summary.txt);
#                without a GPU the same sequence on the emulated device (docs/cuda.md)

BUILD     ?= build
SANBUILD  ?= build-san
# The CUDA backend on the emulated device (no GPU, no nvcc; docs/cuda.md "Emulation").
EMUBUILD  ?= build-emu
# ThreadSanitizer (make check-tsan).
TSANBUILD ?= build-tsan
MESON     ?= meson
# meson's own python3 (Debian's), never a pyenv/conda one first on PATH.
PYTHON    := /usr/bin/python3
# nvcc lives here on our machines; the CUDA backend builds when it is found.
export PATH := $(PATH):/usr/local/cuda/bin

.PHONY: all run check check-install test test-san test-emu check-tsan bench bench-cuda edit-loop gpu-check gpu-check-selftest gpu-bundle deps clean fuzz fuzz-libfuzzer fuzz-seeded $(BUILD)/tour $(BUILD)/train_mlp $(BUILD)/gpt_generate

NINJA     := ninja --quiet

all: $(BUILD)/build.ninja
	@$(NINJA) -C $(BUILD)

deps:
	@sh .ci/install-deps.sh

$(BUILD)/build.ninja: | deps
	$(MESON) setup $(BUILD) --buildtype=release

$(SANBUILD)/build.ninja: | deps
	$(MESON) setup $(SANBUILD) --buildtype=debug -Doptimization=1 \
	    -Db_sanitize=address,undefined -Db_lundef=false \
	    -Dc_args=-fno-sanitize-recover=all -Dcuda=disabled

STAGE     := $(abspath $(BUILD))/stage

# Install into a staging directory and build the example against the installed
# headers and libops.pc, as a user's program would be built, then run it.
$(BUILD)/tour: examples/tour.c all
	@rm -rf $(STAGE)
	@$(MESON) install -C $(BUILD) --destdir $(STAGE) --quiet --no-rebuild
	@pcdir=$$(dirname "$$(find $(STAGE) -name libops.pc | head -n1)"); \
	flags=$$(PKG_CONFIG_SYSROOT_DIR=$(STAGE) PKG_CONFIG_PATH=$$pcdir pkg-config --cflags --libs libops); \
	cc -std=c11 -Wall -Wextra -Werror examples/tour.c -o $@ $$flags

# The training example, built the same way (it reads the gzip file with zlib).
$(BUILD)/train_mlp: examples/train_mlp.c $(BUILD)/tour
	@pcdir=$$(dirname "$$(find $(STAGE) -name libops.pc | head -n1)"); \
	flags=$$(PKG_CONFIG_SYSROOT_DIR=$(STAGE) PKG_CONFIG_PATH=$$pcdir pkg-config --cflags --libs libops); \
	cc -std=c11 -Wall -Wextra -Werror examples/train_mlp.c -o $@ $$flags $$(pkg-config --cflags --libs zlib) -lm

# The decoder example (examples/gpt_generate.c), built the same way.
$(BUILD)/gpt_generate: examples/gpt_generate.c $(BUILD)/tour
	@pcdir=$$(dirname "$$(find $(STAGE) -name libops.pc | head -n1)"); \
	flags=$$(PKG_CONFIG_SYSROOT_DIR=$(STAGE) PKG_CONFIG_PATH=$$pcdir pkg-config --cflags --libs libops); \
	cc -std=c11 -Wall -Wextra -Werror examples/gpt_generate.c -o $@ $$flags -lm

LIBDIR = $$(dirname "$$(find $(STAGE) -name libops.so | head -n1)")
# The digits data set of Debian's python3-sklearn (read in place, never copied).
DIGITS = $$($(PYTHON) -c 'import os, sklearn.datasets as d; print(os.path.join(os.path.dirname(d.__file__), "data", "digits.csv.gz"))')

# The directory of the installed Python package (meson install put libops/ there).
PYDIR = $$(dirname "$$(find $(STAGE) -path '*/libops/__init__.py' | head -n1)")/..

run: deps $(BUILD)/tour $(BUILD)/train_mlp $(BUILD)/gpt_generate
	@LD_LIBRARY_PATH=$(LIBDIR) $(BUILD)/tour
	@LD_LIBRARY_PATH=$(LIBDIR) $(BUILD)/train_mlp $(DIGITS)
	@PYTHONPATH=$(PYDIR) PYTHONDONTWRITEBYTECODE=1 $(PYTHON) examples/python_tour.py
	@PYTHONPATH=$(PYDIR) PYTHONDONTWRITEBYTECODE=1 $(PYTHON) examples/tiny_gpt.py train $(BUILD)/tiny_gpt.safetensors
	@LD_LIBRARY_PATH=$(LIBDIR) $(BUILD)/gpt_generate $(BUILD)/tiny_gpt.safetensors --prompt "To be" --tokens 120

check-install: deps $(BUILD)/tour $(BUILD)/train_mlp $(BUILD)/gpt_generate
	@LD_LIBRARY_PATH=$(LIBDIR) $(BUILD)/tour > /dev/null
	@echo "install check: the example builds against the installed libops.pc and runs"
	@LD_LIBRARY_PATH=$(LIBDIR) $(BUILD)/train_mlp $(DIGITS) | tail -n 1
	@echo "training check: the MLP reaches >= 95% held-out accuracy on the digits"
	@PYTHONPATH=$(PYDIR) PYTHONDONTWRITEBYTECODE=1 $(PYTHON) examples/python_tour.py > /dev/null
	@echo "python check: the installed package imports and examples/python_tour.py runs"
	@PYTHONPATH=$(PYDIR) PYTHONDONTWRITEBYTECODE=1 $(PYTHON) examples/tiny_gpt.py train $(BUILD)/tiny_gpt.safetensors > /dev/null
	@LD_LIBRARY_PATH=$(LIBDIR) $(BUILD)/gpt_generate $(BUILD)/tiny_gpt.safetensors --tokens 40 \
	    --save $(BUILD)/gpt_run.npz > /dev/null
	@PYTHONPATH=$(PYDIR) PYTHONDONTWRITEBYTECODE=1 $(PYTHON) examples/tiny_gpt.py check \
	    $(BUILD)/tiny_gpt.safetensors $(BUILD)/gpt_run.npz

test: deps $(BUILD)/build.ninja
	@$(NINJA) -C $(BUILD)
	$(MESON) test -C $(BUILD) --print-errorlogs --num-processes 2

test-san: deps $(SANBUILD)/build.ninja
	@$(NINJA) -C $(SANBUILD)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_odr_violation=0 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	$(MESON) test -C $(SANBUILD) --print-errorlogs --num-processes 2 --timeout-multiplier 4

$(EMUBUILD)/build.ninja: | deps
	$(MESON) setup $(EMUBUILD) --buildtype=debugoptimized -Dcuda=disabled -Dcuda-emulation=true

# The `cuda` suite (test_cuda*, the conformance runner's CUDA family) on the emulated
# device.  Only what that suite needs is built: the tree's other tests repeat `test`.
test-emu: deps $(EMUBUILD)/build.ninja
	@$(NINJA) -C $(EMUBUILD) $$($(PYTHON) .ci/suite_targets.py $(EMUBUILD) cuda)
	$(MESON) test -C $(EMUBUILD) --suite cuda --no-rebuild --print-errorlogs --num-processes 2

$(TSANBUILD)/build.ninja: | deps
	$(MESON) setup $(TSANBUILD) --buildtype=debug -Doptimization=1 \
	    -Db_sanitize=thread -Db_lundef=false -Dcuda=disabled

# Threads sharing libops state (tests/unit/test_threads.c: independent graphs, a
# shared leaf, generators, grad mode from 8 threads) and the autograd engine's tests,
# under ThreadSanitizer; only their programs are built.  The tests keep the kernels'
# OpenMP at one thread: libgomp is not TSan-instrumented, and its barriers would show
# as false races.  tests/tsan.supp holds the suppressions, each explained.  (Both are
# programs of the `checks` runner, tests/meson.build.)
TSAN_TESTS := test_threads test_autograd
check-tsan: deps $(TSANBUILD)/build.ninja
	@$(NINJA) -C $(TSANBUILD) tests/checks
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(abspath tests/tsan.supp)" \
	OMP_NUM_THREADS=1 $(MESON) test -C $(TSANBUILD) --no-rebuild --print-errorlogs --num-processes 1 \
	    --timeout-multiplier 4 $(TSAN_TESTS)

check: test test-emu check-install test-san gpu-check-selftest
	@$(PYTHON) .ci/summary.py $(BUILD) $(EMUBUILD) $(SANBUILD)

bench: deps $(BUILD)/build.ninja
	@$(NINJA) -C $(BUILD)
	$(BUILD)/bench/bench bench_vec
	$(BUILD)/bench/bench bench_add
	$(BUILD)/bench/bench bench_mm
	$(BUILD)/bench/bench bench_reduce
	$(BUILD)/bench/bench bench_conv
	$(BUILD)/bench/bench bench_norm
	$(BUILD)/bench/bench bench_sort
	OMP_NUM_THREADS=1 $(BUILD)/bench/bench bench_autograd
	OMP_NUM_THREADS=1 $(PYTHON) bench/bench_autograd_torch.py
	PYTHONPATH=$(BUILD)/python $(PYTHON) bench/bench_python.py
	PYTHONPATH=$(BUILD)/python $(PYTHON) bench/bench_vs_peers.py
	OPS_CPU_CAPABILITY=avx2 PYTHONPATH=$(BUILD)/python $(PYTHON) bench/bench_vs_peers.py --threads 1

# What adding one elementwise op rebuilds (docs/codegen.md "The edit loop"), measured
# on a copy of the tree in a temporary directory; the working tree is not touched.
edit-loop: deps
	@sh bench/edit-loop.sh

# GPU only: elementwise and reductions against cudaMemcpy's device-to-device bandwidth,
# mm against a direct cuBLAS call (each exits 77, skipped, without a device).
bench-cuda: deps $(BUILD)/build.ninja
	@$(NINJA) -C $(BUILD) bench/bench_cuda bench/bench_cuda_reduce
	$(BUILD)/bench/bench_cuda
	$(BUILD)/bench/bench_cuda_reduce

# The registry fuzzer (tests/fuzz/, docs/fuzzing.md) without an iteration bound.  With
# clang (installed here when missing and we may), libFuzzer drives it over a libops
# instrumented for coverage, in its own tree, keeping its corpus in $(FUZZBUILD)/corpus;
# FUZZ_ARGS go to libFuzzer (-max_total_time=600, -jobs=2, ...).  (-Werror stays with the
# gcc trees: clang warns about other things in generated code.)  Without clang, the
# seeded generator runs in the sanitizer tree from FUZZ_SEED until stopped.
# FUZZ_TARGET=fuzz_serialize fuzzes the safetensors / .npy parsers the same way.
FUZZBUILD ?= build-fuzz
FUZZ_TARGET ?= fuzz_registry
FUZZ_CORPUS ?= $(FUZZBUILD)/corpus$(subst -fuzz_registry,,-$(FUZZ_TARGET))
FUZZ_SEED ?= $$(date +%s)
FUZZ_ARGS ?=
FUZZ_ENV  := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_odr_violation=0 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

fuzz: deps
	@command -v clang >/dev/null 2>&1 || sh .ci/install-deps.sh clang || true
	@if command -v clang >/dev/null 2>&1; then $(MAKE) --no-print-directory fuzz-libfuzzer; \
	else echo "fuzz: no clang, running the seeded generator"; $(MAKE) --no-print-directory fuzz-seeded; fi

$(FUZZBUILD)/build.ninja: | deps
	CC=clang $(MESON) setup $(FUZZBUILD) --buildtype=debug -Doptimization=1 -Dwerror=false \
	    -Db_sanitize=address,undefined -Db_lundef=false \
	    -Dc_args='-fno-sanitize-recover=all -fsanitize=fuzzer-no-link' -Dcuda=disabled

fuzz-libfuzzer: $(FUZZBUILD)/build.ninja
	@$(NINJA) -C $(FUZZBUILD) tests/fuzz/$(FUZZ_TARGET)_libfuzzer
	@mkdir -p $(FUZZ_CORPUS)
	$(FUZZ_ENV) $(FUZZBUILD)/tests/fuzz/$(FUZZ_TARGET)_libfuzzer $(FUZZ_CORPUS) $(FUZZ_ARGS)

fuzz-seeded: $(SANBUILD)/build.ninja
	@$(NINJA) -C $(SANBUILD) tests/fuzz/$(FUZZ_TARGET)
	$(FUZZ_ENV) OPS_FUZZ_SEED=$(FUZZ_SEED) OPS_FUZZ_ITERS=0 $(SANBUILD)/tests/fuzz/$(FUZZ_TARGET)

# One prepared command for a GPU machine (docs/cuda.md "make gpu-check"); it installs
# what is missing itself, as deps does, and tolerates what is there.
GPU_CHECK_SUMMARY ?=
gpu-check:
	@GPU_CHECK_EMU_BUILD=$(EMUBUILD) bash .ci/gpu-check.sh $(GPU_CHECK_SUMMARY)

# The Debian packages gpu-check needs and the GPU machine's image lacks, downloaded here
# into .gpu-debs/ for the run tool to carry (docs/cuda.md "make gpu-check").
gpu-bundle:
	@bash .ci/gpu-bundle.sh

# Its report parser against made-up outputs (under a second; part of make check).
gpu-check-selftest:
	@$(PYTHON) .ci/gpu-check-selftest.py

clean:
	rm -rf $(BUILD) $(SANBUILD) $(EMUBUILD) $(TSANBUILD) $(FUZZBUILD) build-gpu
