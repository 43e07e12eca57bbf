# syncbench: build, test, install, run.
#   make            build build/syncbench (fat binary: every CUDA 13 architecture + PTX)
#   make run        build, run configs/default.ini, print the table, write results/<gpu>-<date>.*
#   make fixes      build, run configs/fixes.ini (the price list of sync-free code)
#   make perf-check run configs/ci.ini and compare it with results/baselines/<gpu>.csv
#   make plot       figures (results/plots/*.png) of PLOT_CSV, or of a fresh default.ini run
#   make test       build, then run every test this machine can run (GPU tests skip without a GPU)
#   make test-asan  unit tests built with AddressSanitizer + UndefinedBehaviorSanitizer
#   make install    PREFIX=/usr/local DESTDIR=
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

VERSION := 0.1.0
GIT_REV := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)

# Quiet by default ("  CC  src/cli.c"); V=1 prints the full commands.
Q := $(if $(filter 1,$(V)),,@)
say = $(if $(filter 1,$(V)),,@printf '  %-5s %s\n' $(1) $(2))

NVCC    := $(CUDA_HOME)/bin/nvcc
CUDA_LIB := $(CUDA_HOME)/lib64
WARN    := -Wall -Wextra -Werror
DEPS_INC := $(if $(DEPS_PREFIX),-I$(DEPS_PREFIX)/include)
comma := ,
DEPS_LIB := $(if $(DEPS_PREFIX),-L$(DEPS_PREFIX)/lib -Wl$(comma)-rpath$(comma)$(abspath $(DEPS_PREFIX))/lib)

CPPFLAGS := -Isrc -Ikernels -I$(CUDA_HOME)/include $(DEPS_INC) \
            -DSB_VERSION=\"$(VERSION)\" -DSB_GIT_REV=\"$(GIT_REV)\"
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -D_GNU_SOURCE $(WARN)
GENCODE  := $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
            -gencode arch=compute_$(lastword $(CUDA_ARCHS)),code=compute_$(lastword $(CUDA_ARCHS))
NVFLAGS  := -O3 -std=c++17 $(GENCODE) -Ikernels -Xcompiler -Wall,-Wextra,-Werror -Werror all-warnings

# inih, jansson and libcsv are linked statically so the binary needs no -dev package at run time; cudart
# is static (it dlopens libcuda, so the binary starts without a driver and exits 3); cuBLAS has
# no static library in the toolkit and is dlopened at run time (src/gpu/cublas_api.c), from
# LD_LIBRARY_PATH or the rpath: --help, --list, --dry-run and compare need no CUDA library.
LDLIBS := $(DEPS_LIB) -l:libinih.a -l:libjansson.a -l:libcsv.a -L$(CUDA_LIB) -lcudart_static \
          -Wl,-rpath,$(CUDA_LIB) -lstdc++ -ldl -lpthread -lrt -lm

LIB_SRC  := $(filter-out src/main.c,$(wildcard src/*/*.c))
CU_SRC   := $(wildcard kernels/*.cu)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
ASAN_OBJ := $(LIB_SRC:%.c=$(BUILD)/asan/%.o)
CU_OBJ   := $(CU_SRC:%.cu=$(BUILD)/obj/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
ASAN_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests-asan/%)
NVTX_LIB := $(BUILD)/tests/libnvtx_record.so
BIN      := $(BUILD)/syncbench
SANITIZE := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

.PHONY: all run fixes plot perf-check perf-metrics test test-asan unit install uninstall clean deps format
.DEFAULT_GOAL := all

all: $(BIN)

run: $(BIN)
	@mkdir -p results
	$(BIN) --config configs/default.ini --csv 'results/{gpu}-{date}.csv' \
	  --json 'results/{gpu}-{date}.json'

# The price list of sync-free code (configs/fixes.ini), and its figure.
fixes: $(BIN)
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
PERF_CSV      ?= $(BUILD)/perf-check.csv
PERF_MARKDOWN ?= $(BUILD)/perf-check.md
PERF_RERUN    ?= $(BUILD)/perf-rerun.ini
PERF_CONFIRM  ?= $(BUILD)/perf-confirm.csv
PERF_CONFIRM_MARKDOWN ?= $(BUILD)/perf-confirm.md
# Metrics that hold still between runs on one machine. Left out: the wall-clock figures of
# launch-bound loops, idle readbacks and the microseconds a pinned copy call takes, which swing
# with the host CPU's speed on shared runners and VMs (seen on the H100 VM: 7 vs 12 us).
PERF_METRICS  ?= kernel_us,TFLOPs,overhead_us,wait_us,GBps,total_ms,efficiency
perf-metrics:
	@echo $(PERF_METRICS)

perf-check: $(BIN)
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
	  --markdown $(PERF_MARKDOWN) --rerun $(PERF_RERUN) || rc=$$?; \
	if [ $$rc -ge 2 ] || ! grep -q '^\[' $(PERF_RERUN); then exit $$rc; fi; \
	echo "perf-check: measuring again the rows that came out REGRESSION or inconclusive:"; \
	sed -n 's/^; confirm: /  /p' $(PERF_RERUN); \
	$(BIN) --config $(PERF_RERUN) --csv $(PERF_CONFIRM) --samples $(PERF_CONFIRM:.csv=.samples.csv) \
	  --quiet || exit $$?; \
	echo "perf-check: the verdict is the confirmation run's"; \
	$(BIN) compare "$$base" $(PERF_CONFIRM) --subset --metric $(PERF_METRICS) \
	  --markdown $(PERF_CONFIRM_MARKDOWN)

test: deps $(BIN) $(UNIT_BIN) $(NVTX_LIB)
	@for t in $(UNIT_BIN); do echo "== $$t"; $$t || exit 1; done
	SYNCBENCH=$(abspath $(BIN)) NVTX_RECORD_LIB=$(abspath $(NVTX_LIB)) \
	  $(PYTHON) -m pytest -q -rs tests/cli tests/gpu

test-asan: $(ASAN_BIN)
	@for t in $(ASAN_BIN); do echo "== $$t"; $$t || exit 1; done

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

# -MMD -MP: a kernel's own header (kernels/<concept>.h) is a dependency too
$(BUILD)/obj/kernels/%.o: kernels/%.cu kernels/kernels.h | deps
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

# NVTX injection library for the NVTX tests: records every range pushed in every domain.
$(NVTX_LIB): tests/nvtx/nvtx_record.c | deps
	@mkdir -p $(dir $@)
	$(call say,CC-SO,$<)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -shared -o $@ $<

install: $(BIN)
	install -D -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/syncbench
	install -d $(DESTDIR)$(PREFIX)/share/syncbench/configs
	install -m 644 configs/*.ini $(DESTDIR)$(PREFIX)/share/syncbench/configs/ 2>/dev/null || true

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/syncbench
	rm -rf $(DESTDIR)$(PREFIX)/share/syncbench

clean:
	rm -rf $(BUILD)

format:
	clang-format -i src/*.c src/*/*.c src/*/*.h kernels/*.cu kernels/*.h tests/unit/*.c tests/unit/*.h tests/nvtx/*.c

# Debian packages the build and the tests need: pkg-config module or Python module -> package.
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
	$(PYTHON) -c 'import pytest' 2>/dev/null || missing="$$missing python3-pytest"; \
	$(PYTHON) -c 'import matplotlib' 2>/dev/null || missing="$$missing python3-matplotlib"; \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "make deps: installing$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq$$missing >/dev/null || exit 1; \
	else \
	  echo "make deps: missing Debian packages:$$missing" >&2; \
	  echo "  install them with: sudo apt-get install -y$$missing" >&2; exit 1; \
	fi

-include $(LIB_OBJ:.o=.d) $(ASAN_OBJ:.o=.d) $(CU_OBJ:.o=.d) $(BUILD)/obj/src/main.d
