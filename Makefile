# libops: the two commands of the README, and a few helpers.
#
#   make run     install missing Debian packages, build, run the main example
#   make check   install missing Debian packages, build, run every test (and again
#                under AddressSanitizer + LeakSanitizer + UndefinedBehaviorSanitizer)
#   make bench   build and run the benchmarks

BUILD     ?= build
SANBUILD  ?= build-san
MESON     ?= meson
# meson's own python3 (Debian's), never a pyenv/conda one first on PATH.
PYTHON    := /usr/bin/python3

.PHONY: all run check test test-san bench deps clean

all: $(BUILD)/build.ninja
	ninja -C $(BUILD)

deps:
	@sh .ci/install-deps.sh

$(BUILD)/build.ninja: | deps
	$(MESON) setup $(BUILD) --buildtype=release

$(SANBUILD)/build.ninja: | deps
	$(MESON) setup $(SANBUILD) --buildtype=debug -Doptimization=1 \
	    -Db_sanitize=address,undefined -Db_lundef=false \
	    -Dc_args=-fno-sanitize-recover=all -Dcuda=disabled

run: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)
	$(BUILD)/examples/tour

test: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)
	$(MESON) test -C $(BUILD) --print-errorlogs --num-processes 2

test-san: deps $(SANBUILD)/build.ninja
	ninja -C $(SANBUILD)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_odr_violation=0 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	$(MESON) test -C $(SANBUILD) --print-errorlogs --num-processes 2 --timeout-multiplier 4

check: test test-san

bench: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)
	$(BUILD)/bench/bench_add

clean:
	rm -rf $(BUILD) $(SANBUILD)
