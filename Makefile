# syncbench: build, test, install, run.
#   make            build build/syncbench (fat binary: every CUDA 13 architecture + PTX)
#   make run        check for a GPU and its driver (else syncbench's one line, nothing built),
#                   build for this machine's GPU (nvidia-smi's compute_cap; CUDA_ARCHS wins) on
#                   every core (-j$(nproc) unless -j is given), run configs/default.ini, print the
#                   table, write results/<gpu>-<date>.*
#   make fixes      the same for configs/fixes.ini (the price list of sync-free code)
#   make perf-check run configs/ci.ini and compare it with results/baselines/<gpu>.csv
#   make plot       figures (results/plots/*.png) of PLOT_CSV, or of a fresh default.ini run
#   make test       build (every core, this GPU's architecture), then run every test this machine
#                   can run (GPU tests skip without a GPU): correctness only, no timing; the test
#                   files side by side, TEST_JOBS (the cores, at most 16) at once
#   make validate   build, then measure the accuracy and cost figures on this machine's GPU and
#                   print one table of each against its target; exit 1 on a miss
#                   (VALIDATE_ARGS="--full", "--only replay", "--only floor", "--list":
#                   tests/validate/validate.py)
#   make test-asan  unit tests and the CLI tests with AddressSanitizer + UndefinedBehaviorSanitizer
#   make fuzz       build the libFuzzer targets (tests/fuzz/) and run each FUZZ_SECONDS (60)
#   make test-valgrind  unit tests and the binary's CPU-only paths under valgrind
#   make man        build/syncbench.1, the man page, its options printed from the option tables
#   make install    PREFIX=/usr/local DESTDIR=: nothing outside them (the Python package in
#                   PREFIX/lib/pythonX.Y/site-packages)
#   make wheel      dist/syncbench-VERSION-py3-none-manylinux_2_X_ARCH.whl: the Python package with
#                   the binary and both libraries (pip install it; docs/python.md)
#   make sdist      dist/syncbench-VERSION.tar.gz: `pip install` of it builds from source (make)
#   make deps       check the Debian packages the build needs; install them when root
#   make format     clang-format every C, CUDA and header file in place

CUDA_HOME  ?= /usr/local/cuda
CUDA_ARCHS ?= 75 80 86 87 88 89 90 100 103 110 120 121
PREFIX     ?= /usr/local
DESTDIR    ?=
# Extra prefix (include/, lib/) holding inih, jansson and cmocka where pkg-config knows none of
# them, e.g. a machine with no package manager: make test DEPS_PREFIX=$PWD/.deps
DEPS_PREFIX ?=
BUILD      ?= build
V          ?= 0
# The first Python that has pytest and matplotlib (Debian's python3-pytest and
# python3-matplotlib land in /usr/bin/python3).
PYTHON     ?= $(or $(shell for p in python3 /usr/bin/python3; do $$p -c 'import pytest, matplotlib' 2>/dev/null && { echo $$p; break; }; done),python3)

# The version's one place: VERSION, read here (the binary's --version) and by setup.py (the
# Python package's metadata).
VERSION := $(strip $(shell cat VERSION))
GIT_REV := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)

# Quiet by default ("  CC  src/cli.c"); V=1 prints the full commands.
Q := $(if $(filter 1,$(V)),,@)
say = $(if $(filter 1,$(V)),,@printf '  %-5s %s\n' $(1) $(2))

NVCC    := $(CUDA_HOME)/bin/nvcc
CUDA_LIB := $(CUDA_HOME)/lib64
WARN    := -Wall -Wextra -Werror
# -isystem: the libraries' headers are not ours to warn about (cmocka's assert macros trip gcc
# 12's -Wdangling-pointer when they are not taken as system headers)
DEPS_INC := $(if $(DEPS_PREFIX),-isystem $(DEPS_PREFIX)/include)
comma := ,
DEPS_RPATH := $(if $(DEPS_PREFIX),-Wl$(comma)-rpath$(comma)$(abspath $(DEPS_PREFIX))/lib)
DEPS_LIB := $(if $(DEPS_PREFIX),-L$(DEPS_PREFIX)/lib $(DEPS_RPATH))

CPPFLAGS := -I. -Isrc -Ikernels -I$(CUDA_HOME)/include $(DEPS_INC) \
            -DSB_VERSION=\"$(VERSION)\" -DSB_GIT_REV=\"$(GIT_REV)\"
CFLAGS   ?= -O2 -g
# override: `make CFLAGS=-O1` replaces the optimization flags, never the language, the feature
# macros or the warnings the code needs
override CFLAGS += -std=c11 -D_GNU_SOURCE $(WARN)
GENCODE  := $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
            -gencode arch=compute_$(lastword $(CUDA_ARCHS)),code=compute_$(lastword $(CUDA_ARCHS))
NVFLAGS  := -O3 -std=c++17 $(GENCODE) -Ikernels -Xcompiler -Wall,-Wextra,-Werror -Werror all-warnings

# inih, jansson and libcsv are linked statically so the binary needs no -dev package at run time; cudart
# is static (it dlopens libcuda, so the binary starts without a driver and exits 3); cuBLAS has
# no static library in the toolkit and is dlopened at run time (src/gpu/cublas_api.c), from
# LD_LIBRARY_PATH or the rpath: --help, --list, --dry-run and compare need no CUDA library.
# The wheel's copies are linked without the rpath (make wheel, below).
CUDA_RPATH := -Wl,-rpath,$(CUDA_LIB)
LDLIBS := $(DEPS_LIB) -l:libinih.a -l:libjansson.a -l:libcsv.a -L$(CUDA_LIB) -lcudart_static \
          $(CUDA_RPATH) -lstdc++ -ldl -lpthread -lrt -lm

LIB_SRC  := $(filter-out src/main.c,$(wildcard src/*/*.c))
CU_SRC   := $(wildcard kernels/*.cu)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
ASAN_OBJ := $(LIB_SRC:%.c=$(BUILD)/asan/%.o)
CU_OBJ   := $(CU_SRC:%.cu=$(BUILD)/obj/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
ASAN_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests-asan/%)
NVTX_LIB := $(BUILD)/tests/libnvtx_record.so
# GPU programs `syncbench audit` is tested on (tests/audit/audit_*.c): known blocking calls
AUDIT_TEST_SRC := $(wildcard tests/audit/audit_*.c)
AUDIT_TEST_BIN := $(AUDIT_TEST_SRC:tests/audit/%.c=$(BUILD)/tests/%)
# CPU stand-ins for the audit's tests (tests/inject/)
# The plain floor make validate holds the harness to (tests/floor/): each primitive the
# scenarios time, in the simplest loop and in the scenario's own, with nothing of the harness
FLOOR_BIN := $(BUILD)/syncbench-floor
FLOOR_SRC := $(wildcard tests/floor/*.c)
FAKE_CUDA := $(BUILD)/tests/fake_cuda
FAKE_CUPTI := $(BUILD)/tests/fake-cupti/libcupti.so.13
PYFRAMES_PROBE := $(BUILD)/tests/libpyframes_probe.so
BIN      := $(BUILD)/syncbench
# The CUPTI injection library `syncbench audit` loads into the audited program (inject/, a
# product of its own: it shares only the record format, src/record/, and src/base/):
# found beside the binary, or in $(PREFIX)/lib/syncbench/ once installed.
AUDIT_LIB := $(BUILD)/libsyncbench_audit.so
AUDIT_SRC := $(wildcard inject/*.c) src/record/json_text.c src/record/classes.c \
             src/record/gpu_window.c src/base/utf8.c \
             src/base/dynlib.c src/base/envvars.c
# The hand-offs between the audited program's threads (waits/): libc only, no CUPTI; the launcher
# preloads it with --gpu-activity from beside the injection library (make install puts it there).
WAITS_LIB := $(BUILD)/libsyncbench_waits.so
WAITS_SRC := $(wildcard waits/*.c)
# Its CPU tests (tests/waits/): the hand-offs recorded under LD_PRELOAD (C's and C++'s), and its
# cost's figures
WAITS_TEST := $(BUILD)/tests/waits_handoffs
WAITS_CXX  := $(BUILD)/tests/waits_cxx
WAITS_COST := $(BUILD)/tests/waits_cost
ASAN_WAITS_LIB := $(BUILD)/asan-bin/libsyncbench_waits.so
ASAN_WAITS_TEST := $(BUILD)/tests-asan/waits_handoffs
SANITIZE := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

.PHONY: FORCE all man run fixes plot perf-check perf-build perf-metrics test test-build validate test-asan unit install uninstall \
        clean deps format test-programs fuzz fuzz-build fuzz-deps test-valgrind valgrind-deps \
        wheel wheel-natives sdist
.DEFAULT_GOAL := all

all: $(BIN) $(AUDIT_LIB) $(WAITS_LIB) $(FLOOR_BIN) test-programs

# The audit's GPU test programs (build/tests/audit_*), run by tests/gpu/test_audit.py, and the CPU
# ones of the launcher and the waits library.
test-programs: $(AUDIT_TEST_BIN) $(FAKE_CUDA) $(FAKE_CUPTI) $(PYFRAMES_PROBE) $(WAITS_TEST) \
               $(WAITS_CXX) $(WAITS_COST)

# make run and make fixes measure on this machine's GPU, so they look for one before building
# anything: without the driver (libcuda.so.1, loaded as the binary loads it) or a GPU (nvidia-smi
# -L, /dev/nvidia0...) they print the line the binary would print and stop (exit 3; make's own
# status is then 2). With a GPU the build is for its architectures alone (nvidia-smi's
# compute_cap), unless CUDA_ARCHS is given; make wheel, sdist, all and install build all of
# them. The build is a make of its own, so that the check comes first and, when the user gave
# no -j, it runs on every core. GPU_DRIVER_LIB and NVIDIA_SMI are for the tests.
GPU_DRIVER_LIB ?= libcuda.so.1
NVIDIA_SMI     ?= nvidia-smi
GPU_CHECK = { $(PYTHON) -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' $(GPU_DRIVER_LIB) \
	  2>/dev/null || ldconfig -p 2>/dev/null | grep -q '[[:space:]]$(GPU_DRIVER_LIB) '; } || \
	{ echo "syncbench: no usable CUDA device: the NVIDIA driver is not installed ($(GPU_DRIVER_LIB) \
	not found); run on a machine with an NVIDIA GPU" >&2; exit 3; }; \
	$(NVIDIA_SMI) -L 2>/dev/null | grep -q '^GPU ' || ls /dev/nvidia[0-9]* >/dev/null 2>&1 || \
	{ echo "syncbench: no usable CUDA device: no device found; check that an NVIDIA GPU and its \
	driver are installed (nvidia-smi)" >&2; exit 3; }
# $(call gpu_build,TARGETS): TARGETS for this machine's GPU, -j$(nproc) unless -j was given.
gpu_build = archs=$(if $(filter file,$(origin CUDA_ARCHS)),$$($(NVIDIA_SMI) \
	  --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d '. ' | \
	  grep -x '[0-9][0-9]*' | sort -un | tr '\n' ' ')); \
	$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$$(nproc)) \
	  $${archs:+CUDA_ARCHS="$$archs"} $(1)

run:
	@$(GPU_CHECK)
	+@$(call gpu_build,$(BIN) $(AUDIT_LIB))
	@mkdir -p results
	$(BIN) --config configs/default.ini --csv 'results/{gpu}-{date}.csv' \
	  --json 'results/{gpu}-{date}.json'

# The price list of sync-free code (configs/fixes.ini), and its figure.
fixes:
	@$(GPU_CHECK)
	+@$(call gpu_build,$(BIN))
	@mkdir -p results
	$(BIN) --config configs/fixes.ini --csv 'results/{gpu}-fixes-{date}.csv'

# Figures. With no PLOT_CSV, runs configs/default.ini first (on this machine's GPU).
PLOT_CSV ?=
PLOT_DIR ?= results/plots
plot: deps
	@csv="$(PLOT_CSV)"; \
	if [ -z "$$csv" ]; then \
	  $(MAKE) --no-print-directory $(BIN) && mkdir -p results && csv=results/plot-input.csv && \
	  $(BIN) --config configs/default.ini --csv $$csv || exit $$?; \
	fi; \
	$(PYTHON) plot/plot.py "$$csv" -o $(PLOT_DIR)

# The CI performance gate. The baseline is the file in results/baselines/ whose name starts the
# local GPU's slug ("h100-80gb-hbm3" -> h100.csv); BASELINE=path picks another. Its samples
# (h100.samples.csv beside it) and this run's give each row the bootstrap CI of
# `syncbench compare`; without them compare falls back to its summary rule and says so.
# Rows that come out REGRESSION or inconclusive are measured again once (compare --rerun
# writes the suite) and the verdict is that run's (compare --subset): a noisy moment on a
# shared runner is not a failed build, a slowdown that is still there is.
# Under GitHub Actions only the verdict annotates and goes into the step summary: the first
# comparison runs with --ci none (a REGRESSION there is measured again before it counts), the
# confirmation with compare's default (docs/ci.md).
PERF_CSV      ?= $(BUILD)/perf-check.csv
PERF_MARKDOWN ?= $(BUILD)/perf-check.md
PERF_RERUN    ?= $(BUILD)/perf-rerun.ini
PERF_CONFIRM  ?= $(BUILD)/perf-confirm.csv
PERF_CONFIRM_MARKDOWN ?= $(BUILD)/perf-confirm.md
# The verdict as JUnit XML (docs/ci.md): the first comparison's, or the confirmation's when one
# ran (its rows are the verdict).
PERF_JUNIT    ?= $(BUILD)/perf-check.xml
# Metrics that hold still between runs on one machine. Left out: the wall-clock figures of
# launch-bound loops, idle readbacks and the microseconds a pinned copy call takes, which swing
# with the host CPU's speed on shared runners and VMs (seen on the H100 VM: 7 vs 12 us).
PERF_METRICS  ?= kernel_us,TFLOPs,overhead_us,wait_us,GBps,total_ms,efficiency
perf-metrics:
	@echo $(PERF_METRICS)

# Metrics that move more than the threshold between machines of one kind: pinned PCIe
# bandwidth differed by 8.9 % and 10.7 % between H100 VM starts (another PCIe placement),
# while back-to-back runs on one VM agree within 0.2 %.
PERF_THRESHOLDS ?= GBps=12
perf-build:
	+@$(call gpu_build,$(BIN))

# The binary built for this GPU, unless BIN names another (tests/cli/test_gate.py's stand-in).
perf-check: $(if $(filter file,$(origin BIN)),perf-build,$(BIN))
	$(BIN) --config configs/ci.ini --csv $(PERF_CSV) --samples $(PERF_CSV:.csv=.samples.csv) \
	  --markdown $(BUILD)/perf-run.md
	@base="$(BASELINE)"; \
	if [ -z "$$base" ]; then \
	  slug=$$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | tr 'A-Z' 'a-z' | \
	          sed -e 's/^nvidia //' -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/-$$//'); \
	  for f in results/baselines/*.csv; do \
	    case "$$f" in *.samples.csv) continue;; esac; \
	    b=$$(basename $$f .csv); case "$$slug" in "$$b"*) base=$$f;; esac; done; \
	fi; \
	if [ -z "$$base" ]; then echo "perf-check: no baseline in results/baselines/ for this GPU; \
	make one with: $(BIN) --config configs/ci.ini --min-reps 30 --csv results/baselines/NAME.csv \
	--samples results/baselines/NAME.samples.csv" >&2; exit 2; fi; \
	echo "perf-check: comparing with $$base"; \
	rc=0; $(BIN) compare "$$base" $(PERF_CSV) --metric $(PERF_METRICS) \
	  --threshold-for $(PERF_THRESHOLDS) --ci none --junit $(PERF_JUNIT) \
	  --markdown $(PERF_MARKDOWN) --rerun $(PERF_RERUN) || rc=$$?; \
	if [ $$rc -ge 2 ] || ! grep -q '^\[' $(PERF_RERUN); then exit $$rc; fi; \
	echo "perf-check: measuring again the rows that came out REGRESSION or inconclusive:"; \
	sed -n 's/^; confirm: /  /p' $(PERF_RERUN); \
	$(BIN) --config $(PERF_RERUN) --csv $(PERF_CONFIRM) --samples $(PERF_CONFIRM:.csv=.samples.csv) \
	  --quiet || exit $$?; \
	echo "perf-check: the verdict is the confirmation run's"; \
	$(BIN) compare "$$base" $(PERF_CONFIRM) --subset --metric $(PERF_METRICS) \
	  --threshold-for $(PERF_THRESHOLDS) --junit $(PERF_JUNIT) \
	  --markdown $(PERF_CONFIRM_MARKDOWN)

# What the Python tests read: the binary, the NVTX recorder, the injection library, the waits
# library and the audit's test programs of this BUILD.
TEST_ENV = SYNCBENCH=$(abspath $(BIN)) NVTX_RECORD_LIB=$(abspath $(NVTX_LIB)) \
           SYNCBENCH_AUDIT_LIB=$(abspath $(AUDIT_LIB)) \
           SYNCBENCH_WAITS_LIB=$(abspath $(WAITS_LIB)) \
           SYNCBENCH_FLOOR=$(abspath $(FLOOR_BIN)) \
           SYNCBENCH_TEST_PROGRAMS=$(abspath $(BUILD))/tests
# make test: the unit tests, then the CLI tests (one pytest, as ever), every GPU test file and the
# validation runner's own tests side by side, TEST_JOBS at once (tests/gpu/run_files.py: each
# job's summary line, the output of a failed one, a last `N passed, N failed ...` line; every
# job's whole output in $(BUILD)/test-logs/). Correctness only: no test compares a measured time
# with a threshold or with another (that is make validate), so running side by side makes them
# slower, never wrong. TEST_JOBS=1 runs one at a time.
# What make test and make validate run (a target of its own: the build's sub-make names it
# alone, and says nothing when it is up to date).
test-build: $(BIN) $(AUDIT_LIB) $(WAITS_LIB) $(FLOOR_BIN) $(UNIT_BIN) $(NVTX_LIB) test-programs
	@:

# TEST_JOBS defaults to the machine's cores, at most 16 (the jobs share one GPU and its memory);
# what the tests need is built on every core, for this machine's GPU only (gpu_build: all
# architectures without one), as make validate and make perf-check do.
TEST_JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 8); echo $$(( n < 16 ? n : 16 )))
test: deps
	+@$(call gpu_build,test-build)
	@for t in $(UNIT_BIN); do echo "== $$t"; $$t || exit 1; done
	$(TEST_ENV) $(PYTHON) tests/gpu/run_files.py -j $(TEST_JOBS) --logs $(BUILD)/test-logs \
	  tests/cli/. tests/gpu tests/validate

# make validate: the accuracy and cost figures (the replay against measured savings, the audit's
# overhead, the scenarios' promised figures, big-gemm against torch.mm, each primitive against
# the plain floor of build/syncbench-floor, the gate on real runs), measured on this machine's
# GPU, one table of each against its target; exit 1 on a MISS or a check that could not run.
# No GPU at all: one line, nothing validated, exit 0.
# VALIDATE_ARGS: --full (the long checks too), --only PATTERN, --list, --keep DIR, --json FILE.
VALIDATE_ARGS ?=
validate:
	+@$(call gpu_build,test-build)
	$(TEST_ENV) $(PYTHON) tests/validate/validate.py $(VALIDATE_ARGS)

# The unit tests, then the binary's CLI tests against a binary built with the sanitizers.
# tests/cli/test_nvtx.py runs the plain engine test (an injected NVTX library and ASan's runtime
# do not mix), so it is built here too. The waits library's own test program runs built with
# them, the library too, ASan's runtime preloaded first (it must come first).
ASAN_SYNCBENCH := $(BUILD)/asan-bin/syncbench
test-asan: $(ASAN_BIN) $(ASAN_SYNCBENCH) $(AUDIT_LIB) $(WAITS_LIB) $(ASAN_WAITS_LIB) \
           $(ASAN_WAITS_TEST) $(NVTX_LIB) $(BUILD)/tests/test_measure $(FLOOR_BIN) test-programs
	@for t in $(ASAN_BIN); do echo "== $$t"; $$t || exit 1; done
	ASAN_OPTIONS=abort_on_error=0:exitcode=99 UBSAN_OPTIONS=halt_on_error=1:exitcode=99 \
	  SYNCBENCH=$(abspath $(ASAN_SYNCBENCH)) NVTX_RECORD_LIB=$(abspath $(NVTX_LIB)) \
	  SYNCBENCH_AUDIT_LIB=$(abspath $(AUDIT_LIB)) SYNCBENCH_WAITS_LIB=$(abspath $(WAITS_LIB)) \
	  SYNCBENCH_WAITS_TEST=$(abspath $(ASAN_WAITS_TEST)) SYNCBENCH_FLOOR=$(abspath $(FLOOR_BIN)) \
	  SYNCBENCH_WAITS_TEST_PRELOAD="$$($(CC) -print-file-name=libasan.so) $(abspath $(ASAN_WAITS_LIB))" \
	  $(PYTHON) -m pytest -q -x tests/cli

$(ASAN_SYNCBENCH): $(BUILD)/asan/src/main.o $(BUILD)/libsyncbench-asan.a
	@mkdir -p $(dir $@)
	$(call say,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(SANITIZE) -o $@ $^ $(LDLIBS)

unit: $(UNIT_BIN)
	@for t in $(UNIT_BIN); do $$t || exit 1; done

$(BIN): $(BUILD)/obj/src/main.o $(BUILD)/libsyncbench.a
	$(call say,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libsyncbench.a: $(LIB_OBJ) $(CU_OBJ)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

$(BUILD)/libsyncbench-asan.a: $(ASAN_OBJ) $(CU_OBJ)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

$(BUILD)/obj/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/asan/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(call say,CC-SAN,$<)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(SANITIZE) -MMD -MP -c -o $@ $<

# The architectures the kernels were built for (GENCODE), rewritten only when they change, so
# that a build for one GPU (make run) is not taken for a build for all (make wheel).
ARCH_STAMP := $(BUILD)/obj/kernels/gencode
$(ARCH_STAMP): FORCE
	@mkdir -p $(dir $@)
	@[ "$$(cat $@ 2>/dev/null)" = "$(GENCODE)" ] || echo "$(GENCODE)" >$@
FORCE:

# -MMD -MP: a kernel's own header (kernels/<concept>.h) is a dependency too
$(BUILD)/obj/kernels/%.o: kernels/%.cu kernels/kernels.h $(ARCH_STAMP) | deps
	@mkdir -p $(dir $@)
	$(call say,NVCC,$<)
	$(Q)$(NVCC) $(NVFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/test_%: tests/unit/test_%.c $(BUILD)/libsyncbench.a
	@mkdir -p $(dir $@)
	$(call say,LINK,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libsyncbench.a -lcmocka $(LDLIBS)

$(BUILD)/tests-asan/test_%: tests/unit/test_%.c $(BUILD)/libsyncbench-asan.a
	@mkdir -p $(dir $@)
	$(call say,LINK,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(SANITIZE) -o $@ $< $(BUILD)/libsyncbench-asan.a -lcmocka $(LDLIBS)

# Parts of the injection library are tested on their own, each built into its test, which stands
# in for what the part calls: the blocks (the in-process API's counting; the stack tables stood
# in for), the API callback over the blocks (watch.c; CUPTI, the record file, the NVTX ranges
# and the stacks stood in for) and the stacks' reuse over the real stack table (stackreuse.c,
# stacks.c; the record file stood in for).
INJECT_UNIT := test_blocks test_watch test_stackreuse
$(INJECT_UNIT:%=$(BUILD)/tests/%) $(INJECT_UNIT:%=$(BUILD)/tests-asan/%): inject/blocks.c
$(BUILD)/tests/test_watch $(BUILD)/tests-asan/test_watch: inject/watch.c inject/stackreuse.c
$(BUILD)/tests/test_stackreuse $(BUILD)/tests-asan/test_stackreuse: inject/stacks.c \
  inject/stackreuse.c

$(INJECT_UNIT:%=$(BUILD)/tests/%): $(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libsyncbench.a
	@mkdir -p $(dir $@)
	$(call say,LINK,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $(filter %.c,$^) $(BUILD)/libsyncbench.a -lcmocka \
	  $(LDLIBS)

$(INJECT_UNIT:%=$(BUILD)/tests-asan/%): $(BUILD)/tests-asan/%: tests/unit/%.c $(BUILD)/libsyncbench-asan.a
	@mkdir -p $(dir $@)
	$(call say,LINK,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(SANITIZE) -o $@ $(filter %.c,$^) \
	  $(BUILD)/libsyncbench-asan.a -lcmocka $(LDLIBS)

# InitializeInjection and the in-process API (inject/api.h) are exported (-fvisibility=hidden
# hides the rest); libcupti is linked by its soname, found through the rpath, or where the
# launcher and the Python package find it (src/cmd/cupti_find.c, python/syncbench/_cupti.py).
AUDIT_DEPS := $(AUDIT_SRC) $(wildcard inject/*.h) $(wildcard src/record/*.h) src/base/utf8.h \
              src/base/dynlib.h src/base/envvars.h waits/waits.h
AUDIT_LINK = $(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -shared -fvisibility=hidden -o $@ $(AUDIT_SRC) \
	  -L$(CUDA_LIB) -lcupti $(1) -lpthread -ldl
$(AUDIT_LIB): $(AUDIT_DEPS) | deps
	@mkdir -p $(dir $@)
	$(call say,CC-SO,$@)
	$(Q)$(call AUDIT_LINK,$(CUDA_RPATH))

# The waits library: the interposed calls and the API (waits/waits.h) are exported
# (-fvisibility=hidden hides the rest); libc, libdl and libpthread only.
$(WAITS_LIB): $(WAITS_SRC) $(wildcard waits/*.h) | deps
	@mkdir -p $(dir $@)
	$(call say,CC-SO,$@)
	$(Q)$(CC) $(CFLAGS) -fPIC -shared -fvisibility=hidden -o $@ $(WAITS_SRC) -lpthread -ldl

$(ASAN_WAITS_LIB): $(WAITS_SRC) $(wildcard waits/*.h) | deps
	@mkdir -p $(dir $@)
	$(call say,CC-SAN,$@)
	$(Q)$(CC) $(CFLAGS) $(SANITIZE) -fPIC -shared -fvisibility=hidden -o $@ $(WAITS_SRC) \
	  -lpthread -ldl

# The test program finds the library's API with dlsym, as the injection library does; the cost
# program is built with the library's sources, to time its inner steps alone.
$(WAITS_TEST): tests/waits/waits_handoffs.c tests/waits/asleep.h waits/waits.h
	@mkdir -p $(dir $@)
	$(call say,LINK,$@)
	$(Q)$(CC) -I. $(CFLAGS) -o $@ $< -lpthread -ldl

# std::condition_variable: libstdc++'s waits are pthread's, which the library interposes.
$(WAITS_CXX): tests/waits/waits_cxx.cc waits/waits.h
	@mkdir -p $(dir $@)
	$(call say,LINK,$@)
	$(Q)$(CXX) -std=c++17 -I. -O2 -g $(WARN) -pthread -o $@ $< -ldl

$(ASAN_WAITS_TEST): tests/waits/waits_handoffs.c tests/waits/asleep.h waits/waits.h
	@mkdir -p $(dir $@)
	$(call say,LINK,$@)
	$(Q)$(CC) -I. $(CFLAGS) $(SANITIZE) -o $@ $< -lpthread -ldl

$(WAITS_COST): tests/waits/waits_cost.c $(WAITS_SRC) $(wildcard waits/*.h)
	@mkdir -p $(dir $@)
	$(call say,LINK,$@)
	$(Q)$(CC) -I. $(CFLAGS) -o $@ $(filter %.c,$^) -lpthread -ldl

# The audit's test programs: C11, the CUDA runtime (static, as the binary), NVTX3 (header-only),
# the kernel launchers of kernels/ from the library.
$(BUILD)/tests/audit_%: tests/audit/audit_%.c tests/audit/check.h $(BUILD)/libsyncbench.a
	@mkdir -p $(dir $@)
	$(call say,LINK,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libsyncbench.a -L$(CUDA_LIB) -lcudart_static \
	  -lstdc++ -ldl -lpthread -lrt -lm

# The floor: C11 host code, the CUDA runtime (static, as the binary), the kernels' launchers of
# kernels/ from the library, and nothing else of it.
$(FLOOR_BIN): $(FLOOR_SRC) $(wildcard tests/floor/*.h) $(BUILD)/libsyncbench.a
	$(call say,LINK,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $(FLOOR_SRC) $(BUILD)/libsyncbench.a -L$(CUDA_LIB) \
	  -lcudart_static -lstdc++ -ldl -lpthread -lrt -lm

# The one that holds CUPTI's subscription itself also links CUPTI.
$(BUILD)/tests/audit_subscriber: tests/audit/audit_subscriber.c tests/audit/check.h $(BUILD)/libsyncbench.a
	@mkdir -p $(dir $@)
	$(call say,LINK,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libsyncbench.a -L$(CUDA_LIB) -lcudart_static \
	  -lcupti -Wl,-rpath,$(CUDA_LIB) -lstdc++ -ldl -lpthread -lrt -lm

# CPU stand-ins for the audit's launcher tests (tests/inject/): a program that initializes the
# injection library as the driver would, and the Python-frame reader alone, loaded by ctypes.
$(FAKE_CUDA): tests/inject/fake_cuda.c tests/waits/asleep.h
	@mkdir -p $(dir $@)
	$(call say,LINK,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -lpthread -ldl

# CUPTI that accepts the subscription and records nothing (but the launches' API records, when
# asked), so that fake_cuda is watched on a machine whose real CUPTI refuses (no driver): the
# soname and symbol version of the real one.
$(FAKE_CUPTI): tests/inject/fake_cupti.c tests/inject/fake_cupti.map
	@mkdir -p $(dir $@)
	$(call say,CC-SO,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Wno-unused-parameter -fPIC -shared \
	  -Wl,--version-script=tests/inject/fake_cupti.map \
	  -Wl,-soname,libcupti.so.13 -o $@ $< -lpthread

$(PYFRAMES_PROBE): tests/inject/pyframes_probe.c inject/pyframes.c inject/pywalk.c inject/pyoffsets.c inject/out.c \
                   src/record/json_text.c src/base/utf8.c src/base/dynlib.c src/base/dynlib.h \
                   src/base/envvars.c src/base/envvars.h $(wildcard inject/*.h)
	@mkdir -p $(dir $@)
	$(call say,CC-SO,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -shared -fvisibility=hidden -o $@ $(filter %.c,$^) \
	  -lpthread -ldl

# NVTX injection library for the NVTX tests: records every range pushed in every domain.
$(NVTX_LIB): tests/nvtx/nvtx_record.c | deps
	@mkdir -p $(dir $@)
	$(call say,CC-SO,$<)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -shared -o $@ $<

# The Python package (python/: syncbench.no_syncs and its pytest plugin) goes under PREFIX too,
# in $(PYTHON)'s version's site-packages (PREFIX/lib/pythonX.Y/site-packages, under DESTDIR when
# packaging), never into the system's Python: pip --target, which also skips PEP 668's check
# meant for the system's packages. Built from the project's setup.py alone (SYNCBENCH_NATIVE=none:
# no binary, no libraries, no console script, which would replace the binary on PATH; the
# package finds the library in PREFIX/lib/syncbench/), from a copy (pip leaves its build folders
# beside the sources), with no cache (nothing written outside PREFIX). Where that folder is not
# on $(PYTHON)'s path, make install prints the PYTHONPATH that puts it there.
PIP := $(PYTHON) -m pip
PIP_INSTALL := SYNCBENCH_NATIVE=none PIP_ROOT_USER_ACTION=ignore $(PIP) install -q --no-deps --no-build-isolation --no-index \
               --no-cache-dir --upgrade
PY_SITE = $(PREFIX)/lib/python$$($(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')/site-packages
PY_PROJECT := pyproject.toml setup.py MANIFEST.in VERSION README.md python
# The man page: the prose of src/cmd/man.c, the option lists from the tables --help prints.
MAN_PAGE := $(BUILD)/syncbench.1
man: $(MAN_PAGE)
$(MAN_PAGE): $(BIN)
	$(call say,MAN,$@)
	$(Q)$(BIN) __man >$@.tmp && mv $@.tmp $@

install: $(BIN) $(AUDIT_LIB) $(WAITS_LIB) $(MAN_PAGE)
	install -D -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/syncbench
	install -D -m 644 $(MAN_PAGE) $(DESTDIR)$(PREFIX)/share/man/man1/syncbench.1
	install -D -m 755 $(AUDIT_LIB) $(DESTDIR)$(PREFIX)/lib/syncbench/libsyncbench_audit.so
	install -D -m 755 $(WAITS_LIB) $(DESTDIR)$(PREFIX)/lib/syncbench/libsyncbench_waits.so
	install -d $(DESTDIR)$(PREFIX)/share/syncbench/configs
	install -m 644 configs/*.ini $(DESTDIR)$(PREFIX)/share/syncbench/configs/
	@site=$(PY_SITE) && src=$$(mktemp -d) && cp -r $(PY_PROJECT) "$$src" && \
	  rm -rf "$$src/python/build" && echo "$(PIP_INSTALL) --target $(DESTDIR)$$site" && \
	  $(PIP_INSTALL) --target "$(DESTDIR)$$site" "$$src"; rc=$$?; rm -rf "$$src"; \
	  [ $$rc = 0 ] || exit $$rc; \
	  $(PYTHON) -c 'import sys; sys.exit(sys.argv[1] not in sys.path)' "$$site" 2>/dev/null || \
	  echo "make install: the Python package is in $$site, which $(PYTHON) does not look in;" \
	    "add it: export PYTHONPATH=$$site$${PYTHONPATH:+:\$$PYTHONPATH}"

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/syncbench $(DESTDIR)$(PREFIX)/share/man/man1/syncbench.1
	rm -rf $(DESTDIR)$(PREFIX)/lib/syncbench
	rm -rf $(DESTDIR)$(PREFIX)/share/syncbench
	rm -rf $(DESTDIR)$(PREFIX)/lib/python3*/site-packages/syncbench \
	  $(DESTDIR)$(PREFIX)/lib/python3*/site-packages/syncbench-*.dist-info

clean:
	rm -rf $(BUILD)

# The wheel: the Python package with the binary and both libraries in syncbench/_bin/ (the
# console script `syncbench` runs the binary; docs/python.md), tagged manylinux_2_X for the
# highest GLIBC_2.X their symbols need (setup.py, with objdump -T). The wheel's copies are linked
# without the rpath to this machine's toolkit: they find CUPTI and cuBLAS where the user has
# them (src/base/cudalib.h). Built offline with WHEEL_PYTHON's setuptools and wheel (the first
# Python that has both); setup.py takes the copies from WHEEL_NATIVE (SYNCBENCH_NATIVE). From the
# sdist, or `pip install .` of the tree, setup.py runs `make wheel-natives` itself.
WHEEL_PYTHON ?= $(or $(shell for p in python3 /usr/bin/python3; do $$p -c 'import setuptools, wheel' 2>/dev/null && { echo $$p; break; }; done),python3)
DIST ?= dist
WHEEL_NATIVE := $(BUILD)/wheel
# The man page comes along (setup.py packs it and configs/*.ini as the package's share/, which
# is to the binary in _bin/ what PREFIX/share is to PREFIX/bin: `--config NAME.ini` finds them).
wheel-natives: $(WHEEL_NATIVE)/syncbench $(WHEEL_NATIVE)/libsyncbench_audit.so \
               $(WHEEL_NATIVE)/libsyncbench_waits.so $(WHEEL_NATIVE)/syncbench.1

$(WHEEL_NATIVE)/syncbench.1: $(WHEEL_NATIVE)/syncbench
	$(call say,MAN,$@)
	$(Q)$< __man >$@.tmp && mv $@.tmp $@

$(WHEEL_NATIVE)/syncbench: $(BUILD)/obj/src/main.o $(BUILD)/libsyncbench.a
	@mkdir -p $(dir $@)
	$(call say,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(filter-out $(CUDA_RPATH) $(DEPS_RPATH),$(LDLIBS))

$(WHEEL_NATIVE)/libsyncbench_audit.so: $(AUDIT_DEPS) | deps
	@mkdir -p $(dir $@)
	$(call say,CC-SO,$@)
	$(Q)$(call AUDIT_LINK,)

$(WHEEL_NATIVE)/libsyncbench_waits.so: $(WAITS_LIB)
	@mkdir -p $(dir $@)
	$(Q)cp $< $@

wheel: wheel-natives
	@rm -rf $(BUILD)/py
	SYNCBENCH_NATIVE=$(abspath $(WHEEL_NATIVE)) SYNCBENCH_BUILD=$(BUILD) $(WHEEL_PYTHON) -m pip wheel \
	  -q --no-deps --no-build-isolation --no-index -w $(DIST) .
	@ls -1 $(DIST)/syncbench-$(VERSION)-*.whl

sdist:
	@rm -rf $(BUILD)/py
	SYNCBENCH_NATIVE=none SYNCBENCH_BUILD=$(BUILD) $(WHEEL_PYTHON) setup.py -q sdist -d $(DIST)

format:
	clang-format -i src/*.c src/*/*.c src/*/*.h inject/*.c inject/*.h waits/*.c waits/*.h \
	  kernels/*.cu kernels/*.h tests/unit/*.c tests/unit/*.h tests/nvtx/*.c tests/audit/*.c \
	  tests/audit/*.h tests/fuzz/*.c tests/fuzz/*.h tests/waits/*.c tests/waits/*.cc \
	  tests/waits/*.h tests/floor/*.c tests/floor/*.h

# Debian packages the build and the tests need: pkg-config module or Python module -> package.
# The Python modules (the tests' and the figures') are not asked for when every goal only
# packages (make wheel, make sdist, and setup.py's make wheel-natives): DEPS_PY=0.
DEPS_PY ?= $(if $(MAKECMDGOALS),$(if $(filter-out wheel wheel-natives sdist,$(MAKECMDGOALS)),1,0),1)
DEPS_PC := inih:libinih-dev jansson:libjansson-dev cmocka:libcmocka-dev
# libcsv has no pkg-config file: look for its header and static library.
DEPS_CSV_OK = test -e $(DEPS_PREFIX)/include/csv.h -o -e /usr/include/csv.h
deps:
	@test -x $(NVCC) || { echo "make: CUDA toolkit not found at $(CUDA_HOME) (no $(NVCC)); set CUDA_HOME" >&2; exit 1; }
	@missing=""; \
	have_pc=0; command -v pkg-config >/dev/null 2>&1 && have_pc=1; \
	for pair in $(DEPS_PC); do mod=$${pair%%:*}; pkg=$${pair#*:}; \
	  if [ -n "$(DEPS_PREFIX)" ] && ls $(DEPS_PREFIX)/lib/lib$$mod.* >/dev/null 2>&1; then continue; fi; \
	  if [ $$have_pc = 1 ] && pkg-config --exists $$mod; then continue; fi; \
	  missing="$$missing $$pkg"; done; \
	if [ -n "$$missing" ] && [ $$have_pc = 0 ]; then missing="pkg-config$$missing"; fi; \
	$(DEPS_CSV_OK) || missing="$$missing libcsv-dev"; \
	if [ "$(DEPS_PY)" = 1 ]; then \
	  $(PYTHON) -c 'import pytest' 2>/dev/null || missing="$$missing python3-pytest"; \
	  $(PYTHON) -c 'import matplotlib' 2>/dev/null || missing="$$missing python3-matplotlib"; \
	fi; \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "make deps: installing$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq$$missing >/dev/null || exit 1; \
	else \
	  echo "make deps: missing Debian packages:$$missing" >&2; \
	  echo "  install them with: sudo apt-get install -y$$missing" >&2; exit 1; \
	fi

# Fuzzing: libFuzzer targets (tests/fuzz/fuzz_*.c) built with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer from the pure C sources they need; no CUDA (tests/fuzz/cuda_stubs.c
# says why the scenario registry links without it). `make fuzz` replays the committed crash
# reproducers (tests/fuzz/regressions/TARGET/), then runs each target FUZZ_SECONDS seconds on a
# copy of its seed corpus (tests/fuzz/corpus/TARGET/, copied to $(BUILD)/fuzz/corpus/ so that the
# committed one does not grow); a crash fails it and leaves the input in $(BUILD)/fuzz/artifacts/.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := fuzz_ini fuzz_csv_compare fuzz_numbers fuzz_audit fuzz_fw_rules fuzz_baseline
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_FLAGS   := -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=all
# cmd/ drives the GPU and the sink set: left out, but for compare's entry (the subcommand
# fuzz_csv_compare runs). compare needs the grid and its output file.
FUZZ_LIB_SRC := $(wildcard src/base/*.c src/cli/*.c src/suite/*.c src/scenarios/*.c src/gpu/*.c \
                  src/engine/*.c src/compare/*.c src/record/*.c \
                  src/model/*.c src/replay/*.c src/analyze/*.c src/report/*.c src/sinks/*.c \
                  src/outputs/*.c) src/cmd/compare_cmd.c
FUZZ_LIB_OBJ := $(FUZZ_LIB_SRC:%.c=$(FUZZ_DIR)/obj/%.o)
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_DIR)/%)
FUZZ_LIBS    := $(DEPS_LIB) -l:libinih.a -l:libcsv.a -l:libjansson.a -ldl -lm -lstdc++

fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	  reg=tests/fuzz/regressions/$$t; \
	  if ls $$reg/* >/dev/null 2>&1; then \
	    echo "== $$t: replaying $$reg/"; \
	    $(FUZZ_DIR)/$$t $$reg/* >$(FUZZ_DIR)/$$t-regressions.log 2>&1 || \
	      { tail -40 $(FUZZ_DIR)/$$t-regressions.log; echo "make fuzz: $$t: a regression input fails again" >&2; exit 1; }; \
	  fi; \
	  corpus=$(FUZZ_DIR)/corpus/$$t; mkdir -p $$corpus $(FUZZ_DIR)/artifacts; \
	  cp tests/fuzz/corpus/$$t/* $$corpus/; \
	  echo "== $$t: $(FUZZ_SECONDS) s (log: $(FUZZ_DIR)/$$t.log)"; \
	  if ! $(FUZZ_DIR)/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=30 -rss_limit_mb=2048 \
	       -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/artifacts/$$t- \
	       $$corpus >$(FUZZ_DIR)/$$t.log 2>&1; then \
	    tail -60 $(FUZZ_DIR)/$$t.log; \
	    echo "make fuzz: $$t failed; reproduce with: $(FUZZ_DIR)/$$t $$(sed -n 's/.*Test unit written to //p' $(FUZZ_DIR)/$$t.log | tail -1)" >&2; \
	    exit 1; \
	  fi; \
	  grep -E '^stat::(number_of_executed_units|new_units_added|peak_rss_mb)|^Done ' $(FUZZ_DIR)/$$t.log; \
	done

fuzz-build: $(FUZZ_BINS)
.SECONDARY: $(FUZZ_TARGETS:%=$(FUZZ_DIR)/obj/tests/fuzz/%.o)

$(FUZZ_DIR)/obj/%.o: %.c | deps fuzz-deps
	@mkdir -p $(dir $@)
	$(call say,CC-FUZ,$<)
	$(Q)$(FUZZ_CC) $(CPPFLAGS) -std=c11 -D_GNU_SOURCE $(WARN) $(FUZZ_FLAGS) -MMD -MP -c -o $@ $<

$(FUZZ_DIR)/libsyncbench-fuzz.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

# An archive, so that only the targets that load the scenario registry pull the stubs in.
$(FUZZ_DIR)/libcuda-stubs.a: $(FUZZ_DIR)/obj/tests/fuzz/cuda_stubs.o
	@rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/obj/tests/fuzz/fuzz_%.o $(FUZZ_DIR)/libsyncbench-fuzz.a \
                    $(FUZZ_DIR)/libcuda-stubs.a
	$(call say,LINK,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $^ $(FUZZ_LIBS)

# clang with the libFuzzer and sanitizer runtimes: probed by building an empty target.
FUZZ_PROBE = mkdir -p $(FUZZ_DIR) && \
  printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }\n' | \
  $(FUZZ_CC) $(FUZZ_FLAGS) -x c - -o $(FUZZ_DIR)/.probe >/dev/null 2>&1
fuzz-deps:
	@$(FUZZ_PROBE) && exit 0; \
	$(call apt_install,clang libclang-rt-dev,make fuzz-deps) && $(FUZZ_PROBE) || \
	  { echo "make fuzz-deps: $(FUZZ_CC) cannot build a libFuzzer target with ASan and UBSan" >&2; exit 1; }

# Valgrind: the unit tests and the binary's paths that need no GPU. tests/valgrind.supp holds
# the one known false positive (glibc's dynamic loader mapping cuBLAS, which syncbench dlopens).
VALGRIND := valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
            --suppressions=tests/valgrind.supp
# test_coproc is left out: it starts /proc/self/exe as its helper, which under valgrind is
# valgrind's own tool, not the test (make test and make test-asan run it).
VALGRIND_UNITS := $(filter-out $(BUILD)/tests/test_coproc,$(UNIT_BIN))
test-valgrind: valgrind-deps $(BIN) $(VALGRIND_UNITS)
	@for t in $(VALGRIND_UNITS); do echo "== valgrind $$t"; $(VALGRIND) $$t || exit 1; done
	@for args in "--help" "--list" "--config configs/ci.ini --dry-run"; do \
	  echo "== valgrind $(BIN) $$args"; $(VALGRIND) $(BIN) $$args >/dev/null || exit 1; done

# libc6-dbg names the loader's functions (Debian strips ld.so), which the suppression matches.
valgrind-deps:
	@missing=""; command -v valgrind >/dev/null 2>&1 || missing=valgrind; \
	if command -v dpkg-query >/dev/null 2>&1 && \
	   ! dpkg-query -W -f='$${Status}' libc6-dbg 2>/dev/null | grep -q 'ok installed'; then \
	  missing="$$missing libc6-dbg"; fi; \
	[ -z "$$missing" ] || $(call apt_install,$$missing,make valgrind-deps)

# $(call apt_install,PACKAGES,WHO): installs Debian packages when root, else says how.
apt_install = if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "$(2): installing $(1)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1) >/dev/null; \
	else \
	  echo "$(2): missing Debian packages: $(1)" >&2; \
	  echo "  install them with: sudo apt-get install -y $(1)" >&2; false; \
	fi

-include $(LIB_OBJ:.o=.d) $(ASAN_OBJ:.o=.d) $(CU_OBJ:.o=.d) $(BUILD)/obj/src/main.d \
         $(FUZZ_LIB_OBJ:.o=.d) $(FUZZ_DIR)/obj/tests/fuzz/cuda_stubs.d \
         $(FUZZ_TARGETS:%=$(FUZZ_DIR)/obj/tests/fuzz/%.d)
