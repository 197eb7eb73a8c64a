# mdsd - multi-draft speculative decoding toolkit.
#
#   make          build ./mdsd (and build/release/libmdsd.a)
#   make MPI=1    build build/mpi/mdsd: table jobs over MPI ranks (Debian's OpenMPI)
#   make run      install missing Debian packages, build, run the main job
#   make test     install missing Debian packages, build, run the test suite
#   make sanitize the same tests under AddressSanitizer + UBSan
#   make dump     remake the shipped logit dump data/kjv-ngram.h5 (ngram backend)
#   make neural-models  retrain the shipped neural KJV pair data/kjv-neural/ (torch backend)
#   make pair-dumps, make pair-trees   both KJV pairs' large dumps in build/pairs/ (below)
#   make tree-dump-large, make tree-dump-live   large KJV tree dumps in build/ (below)
#   make papers   reproduce the seed papers' figures and tables in papers/*/
#   make papers-pairs   papers/ on both KJV pairs' large dumps (after make pair-dumps)
#   make papers-resolution  ot beside Thomas & Pal's claims (papers/resolution; makes its dumps)
#
# Every target that needs the libraries first runs `deps`, which installs the
# missing Debian packages with apt (apt-get update first), as root or via sudo.

VERSION := 0.1.0

# Debian packages the build, the tests and the jobs need.
DEBIAN_PACKAGES := build-essential pkg-config libglpk-dev glpk-utils libgsl-dev \
                   libhdf5-dev hdf5-tools gnuplot-nox libcriterion-dev nettle-dev
# The model runner (src/mdsd_runner, run by src/bin/mdsd-runner) and its default corpus;
# the tests run it under Debian's /usr/bin/python3. python3-torch (PyTorch 1.13, CPU; about
# 140 MB to download, 580 MB installed, a minute) lets `make test` run the hf backend's real
# torch code on a tiny model built in the test (tests/python/test_hf_torch.py).
DEBIAN_PACKAGES += python3 python3-numpy python3-h5py python3-torch bible-kjv bible-kjv-text
# The Python package's progress bars (tqdm, when installed; tests/python/test_mdsd_interrupt.py).
DEBIAN_PACKAGES += python3-tqdm
# mdsd.plot_matplotlib, the figures drawn with matplotlib (tests/python/test_mdsd_plot.py).
DEBIAN_PACKAGES += python3-matplotlib
# `pip install --no-build-isolation .` (pyproject.toml) offline, and its test in a venv.
DEBIAN_PACKAGES += python3-setuptools python3-wheel python3-pip python3-venv
# The Python that `make dump` runs the runner under (same values on every machine).
RUNNER_PYTHON ?= /usr/bin/python3
# make test compiles the LaTeX tables (pdflatex; booktabs is in -recommended).
DEBIAN_PACKAGES += texlive-latex-base texlive-latex-recommended

# MPI=1: the MPI flavour build/mpi/mdsd (mpicc, -DMDSD_MPI: `mdsd table` under
# mpirun splits its samples over the ranks). The default build has no MPI
# dependency; `make test` builds this flavour too, for its mpirun tests.
MPI_PACKAGES := libopenmpi-dev openmpi-bin
ifeq ($(MPI),1)
BUILD := mpi
DEBIAN_PACKAGES += $(MPI_PACKAGES)
endif
test: DEBIAN_PACKAGES += $(MPI_PACKAGES)

CC := gcc
# HDF5 and GSL ship pkg-config files (HDF5's Debian build lives under
# hdf5/serial, whose .pc adds the right -I and -L). GLPK ships none, so it is
# named directly; its header is in /usr/include. GNU Nettle (nettle-dev): the
# dumps' SHA-256 for provenance and checkpoints (src/io/hash.c).
PKGS := gsl hdf5-serial nettle
# Recursive (=) so that pkg-config runs after `deps` has installed it.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS = $(shell pkg-config --libs $(PKGS)) -lglpk $(MVEC_LIBS) -lm
# glibc's vector math library (x86-64): the softmax's exp on AVX-512 (src/core/dist.c)
HAVE_MVEC := $(shell printf 'int main(void){return 0;}' | $(CC) -x c - -lmvec -o /dev/null 2>/dev/null && uname -m | grep -qx x86_64 && echo 1)
MVEC_LIBS := $(if $(HAVE_MVEC),-lmvec)
MVEC_CFLAGS := $(if $(HAVE_MVEC),-DMDSD_LIBMVEC)

WARNINGS := -Wall -Wextra -Werror
BASE_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -DMDSD_VERSION=\"$(VERSION)\" \
               $(WARNINGS) -fopenmp -MMD -MP $(MVEC_CFLAGS)
RELEASE_CFLAGS := -O2 -g
# float-cast-overflow is not part of GCC's 'undefined' group: named here.
SANITIZE_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined,float-cast-overflow \
                   -fno-sanitize-recover=undefined,float-cast-overflow

# BUILD selects the flavour; `make sanitize` re-invokes make with BUILD=sanitize.
BUILD ?= release
OUT := build/$(BUILD)
ifeq ($(BUILD),sanitize)
FLAVOUR_CFLAGS := $(SANITIZE_CFLAGS)
FLAVOUR_LDFLAGS := -fsanitize=address,undefined,float-cast-overflow
else ifeq ($(BUILD),mpi)
CC := mpicc
FLAVOUR_CFLAGS := $(RELEASE_CFLAGS) -DMDSD_MPI
FLAVOUR_LDFLAGS :=
else
FLAVOUR_CFLAGS := $(RELEASE_CFLAGS)
FLAVOUR_LDFLAGS :=
endif
# The library's layers, lowest first (README, "Layout"): each folder's sources see
# the public headers (src/include) and the headers of their own layer and those
# below it only, so an include that reaches up fails to compile. verify and io
# stand side by side (neither includes the other); src/api is the public layer
# (src/include/mdsd/*.h) over the others. The theorem-check suite (src/check)
# is in the library too (mdsd/check.h: `mdsd check` from C and Python), a layer
# beside block over core, verify and io.
LAYER_core := core
LAYER_verify := core verify
LAYER_io := core io
LAYER_block := core verify io block
LAYER_job := core verify io block job
LAYER_plot := core verify io block job plot
LAYER_api := core verify io block job plot api
LAYER_check := core verify io check
# The CLI is a program over the public API (src/include/mdsd): of the library's
# internal headers it sees only src/core, src/verify, src/io and src/check's (its
# utilities and the math of dist, draft, lp, bound, accept), never src/block or
# src/job's (tests/test_cli_layers.c checks the includes too).
LAYER_cli := core verify io check cli
LIB_DIRS := src/core src/verify src/io src/block src/job src/plot src/api src/check
# Tests, benchmarks and fuzz harnesses see everything ("." is src itself:
# src/mdsd.h, the internal umbrella).
INCLUDES := -Isrc/include -Isrc $(addprefix -Isrc/,core verify io block job plot api check cli .) -Itests
# The include flags of one source file: its layer's (src/LAYER/...), else INCLUDES.
layer_of = $(word 2,$(subst /, ,$(1)))
includes_for = $(if $(and $(filter src/%,$(1)),$(LAYER_$(call layer_of,$(1)))),\
  -Isrc/include $(addprefix -Isrc/,$(LAYER_$(call layer_of,$(1)))),$(INCLUDES))
# Everything is hidden but the public API (MDSD_API in src/include/mdsd/common.h),
# checked against src/api/libmdsd.map. The user's CFLAGS, CPPFLAGS and LDFLAGS
# (`make CFLAGS=-O3`) come last, after the flags the build needs.
ALL_CFLAGS = $(BASE_CFLAGS) $(FLAVOUR_CFLAGS) -fPIC -fvisibility=hidden $(call includes_for,$<) \
             $(PKG_CFLAGS) $(CPPFLAGS) $(CFLAGS)
ALL_LDFLAGS = -fopenmp $(FLAVOUR_LDFLAGS) $(LDFLAGS)

LIB_SRC := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c))
CLI_SRC := $(wildcard src/cli/*.c)
TEST_SRC := $(wildcard tests/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(OUT)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(OUT)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(OUT)/%.o)
LIB := $(OUT)/libmdsd.a
# The shared library: real name, soname (ABI 0), linker name.
SONAME := libmdsd.so.0
SHLIB := $(OUT)/libmdsd.so.$(VERSION)
SHLIB_MAP := src/api/libmdsd.map
BIN := $(OUT)/mdsd
TEST_BIN := $(OUT)/mdsd-tests

# Criterion runs tests in parallel worker processes.
TEST_JOBS ?= 2

.PHONY: all deps build run test test-run sanitize clean dump install tree-dump
.DEFAULT_GOAL := all

all: deps
	@$(MAKE) --no-print-directory build

build: $(BIN) $(SHLIB)
ifeq ($(BUILD),release)
	@cp $(BIN) mdsd.tmp && mv -f mdsd.tmp mdsd
endif

deps:
	@missing=""; \
	for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing missing Debian packages:$$missing"; \
	  if [ "$$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi; \
	  $$sudo apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing; \
	fi

$(LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(LIB) $(OUT)/flags
	$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(PKG_LIBS)

$(TEST_BIN): $(TEST_OBJ) $(LIB) $(OUT)/flags
	$(CC) $(ALL_LDFLAGS) -o $@ $(TEST_OBJ) $(LIB) -lcriterion $(PKG_LIBS)

$(SHLIB): $(LIB_OBJ) $(SHLIB_MAP) $(OUT)/flags
	@mkdir -p $(@D)
	$(CC) -shared $(ALL_LDFLAGS) -Wl,-soname,$(SONAME) -Wl,--version-script=$(SHLIB_MAP) \
	  -Wl,--no-undefined -o $@ $(LIB_OBJ) $(PKG_LIBS)
	ln -sf $(notdir $@) $(OUT)/$(SONAME)
	ln -sf $(SONAME) $(OUT)/libmdsd.so

# The flags are part of the build's inputs: $(OUT)/flags holds the compile and
# link lines; when they change (make CFLAGS=..., another CC) it is rewritten
# and every object and binary of the flavour is rebuilt. The candidate is written
# under a name of its own (the shell's PID): tests run `make install` in the same
# tree at once, and a shared flags.new was moved away under the other make's feet.
BUILD_FLAGS = $(CC) $(BASE_CFLAGS) $(FLAVOUR_CFLAGS) $(PKG_CFLAGS) $(CPPFLAGS) $(CFLAGS) | $(ALL_LDFLAGS) $(PKG_LIBS)
$(OUT)/flags: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' '$(subst ','\'',$(BUILD_FLAGS))' > $@.new.$$$$; \
	if cmp -s $@.new.$$$$ $@; then rm -f $@.new.$$$$; else mv -f $@.new.$$$$ $@; fi
.PHONY: FORCE
FORCE:

$(OUT)/%.o: %.c $(OUT)/flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The main job: Hu et al.'s Table 1 layout (T = 0.7, n = 3) on the shipped
# dump, then the analysis/ recipes: a sweep over temperatures and draft counts
# (Hu Fig. 1 and 2, SpecHub Fig. 9, gap to alpha*; tables in Markdown and
# LaTeX), the drafter comparison and the block-efficiency study on the shipped
# tree dump, figures in plots/figures/.
RUN_DUMP ?= data/kjv-ngram.h5
RUN_TREES ?= data/kjv-trees.h5
RUN_OUT ?= build/run
RUN_FIGURES ?= plots/figures
RUN_VERIFIERS := sd,rrs,rrsw,kseq,greedy,spechub
run: all
	@mkdir -p $(RUN_OUT) $(RUN_FIGURES)
	./mdsd info $(RUN_DUMP)
	./mdsd table $(RUN_DUMP) -o $(RUN_OUT)/table.csv -t 0.7 -d 3 -s iid,wor,greedy --draft-model kn2,kn3 \
	  -v rrs,rrsw,kseq,greedy --trials 1000 --markdown
	FIGDIR=$(RUN_FIGURES) VERIFIERS=$(RUN_VERIFIERS) analysis/sweep.sh $(RUN_DUMP) $(RUN_OUT)
	FIGDIR=$(RUN_FIGURES) analysis/drafters.sh $(RUN_DUMP) $(RUN_OUT)
	FIGDIR=$(RUN_FIGURES) analysis/block.sh $(RUN_TREES) $(RUN_OUT)
	@echo "== results: $(RUN_OUT)/table.csv, $(RUN_OUT)/sweep.csv (.md, .tex), $(RUN_OUT)/drafters.csv, $(RUN_OUT)/block.csv; figures: $(RUN_FIGURES)/"

test: deps
	@$(MAKE) --no-print-directory test-run

# MDSD_MPI_BIN: the MPI flavour, for the mpirun tests (tests/test_scale.c).
test-run: $(BIN) $(TEST_BIN) $(SHLIB)
ifeq ($(BUILD),release)
	@cp $(BIN) mdsd.tmp && mv -f mdsd.tmp mdsd
endif
	@$(MAKE) --no-print-directory MPI=1 BUILD=mpi build/mpi/mdsd
	MDSD_BIN=$(CURDIR)/$(BIN) MDSD_LIBRARY=$(CURDIR)/build/release/$(SONAME) MDSD_BUILD=$(OUT) \
	  MDSD_MPI_BIN=$(CURDIR)/build/mpi/mdsd $(TEST_BIN) --jobs $(TEST_JOBS)

# Python loads the release libmdsd.so (a sanitizer build's needs its runtime loaded first).
sanitize: deps
	@$(MAKE) --no-print-directory BUILD=release build/release/libmdsd.so.$(VERSION)
	@MDSD_SANITIZE=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  $(MAKE) --no-print-directory BUILD=sanitize test-run

# libFuzzer harnesses (tests/fuzz/fuzz_*.c), built with Debian's clang against the
# library sources under ASan + UBSan (clang's 'undefined' includes float-cast-overflow),
# each run for FUZZ_SECONDS on a corpus kept in build/fuzz/corpus/NAME (so runs add up).
# Dumps: seed with tests/fuzz/seed_dumps.sh (fuzz_dump runs in fork mode, see its header).
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ_FLAGS := -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
              -fno-sanitize-recover=undefined -Wno-pass-failed -fopenmp -std=c11 -D_POSIX_C_SOURCE=200809L \
              -DMDSD_VERSION=\"$(VERSION)\" $(INCLUDES)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
.PHONY: fuzz fuzz-build
fuzz-build: deps
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz needs clang (apt-get install clang libomp-dev)"; exit 1; }
	@$(MAKE) --no-print-directory $(FUZZ_BIN)
build/fuzz/%: tests/fuzz/%.c $(LIB_SRC)
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) $(PKG_CFLAGS) -o $@ $< $(LIB_SRC) $(PKG_LIBS)
fuzz: fuzz-build
	@for f in $(FUZZ_BIN); do \
	  name=$$(basename $$f); mkdir -p build/fuzz/corpus/$$name; \
	  echo "== $$name ($(FUZZ_SECONDS) s)"; \
	  extra=""; [ $$name = fuzz_dump ] && extra="-fork=1 -ignore_crashes=0"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 $$extra build/fuzz/corpus/$$name \
	    2>&1 | grep -E "stat::number_of_executed_units|ERROR|SUMMARY|Done|INFO: exiting" || exit 1; \
	done

clean:
	rm -rf build mdsd

# make install PREFIX=/usr/local DESTDIR=: the library (libmdsd.so.0, libmdsd.a), the
# public headers (<mdsd/mdsd.h>), mdsd.pc, the programs mdsd and mdsd-runner, the man
# page mdsd.1 (made from the help texts), the gnuplot scripts of `mdsd plot` under
# PREFIX/share/mdsd/plots (where an installed mdsd looks), the Python package mdsd under
# PYTHON_SITE and the runner's package under PREFIX/lib/mdsd/python, where the
# mdsd-runner wrapper looks for it. PYTHON_SITE: the site directory under PREFIX/lib that
# INSTALL_PYTHON has on its sys.path (Debian's /usr/bin/python3: /usr/local/lib/python3.X/
# dist-packages for /usr/local, /usr/lib/python3/dist-packages for /usr; a venv's python
# with its own PREFIX: its site-packages); for any other PREFIX, PREFIX/lib/python3/
# dist-packages (add it to PYTHONPATH).
PREFIX ?= /usr/local
DESTDIR ?=
INSTALL_PYTHON ?= /usr/bin/python3
PYTHON_SITE ?= $(or $(shell $(INSTALL_PYTHON) -c 'import site, sys; lib = sys.argv[1].rstrip("/") + "/lib/"; \
  print(next((d for d in site.getsitepackages() if d.startswith(lib)), ""))' '$(PREFIX)' 2>/dev/null), \
  $(PREFIX)/lib/python3/dist-packages)
INSTALL_LIB := $(DESTDIR)$(PREFIX)/lib
install: all
	@$(MAKE) --no-print-directory install-files

.PHONY: install-files
install-files: $(BIN) $(LIB) $(SHLIB)
	install -d $(INSTALL_LIB)/pkgconfig $(DESTDIR)$(PREFIX)/include/mdsd $(DESTDIR)$(PREFIX)/bin \
	  $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PYTHON_SITE)/mdsd \
	  $(INSTALL_LIB)/mdsd/python/mdsd_runner $(DESTDIR)$(PREFIX)/share/mdsd/plots
	install -m 644 $(LIB) $(INSTALL_LIB)/libmdsd.a
	install -m 755 $(SHLIB) $(INSTALL_LIB)/$(notdir $(SHLIB))
	ln -sf $(notdir $(SHLIB)) $(INSTALL_LIB)/$(SONAME)
	ln -sf $(SONAME) $(INSTALL_LIB)/libmdsd.so
	install -m 644 src/include/mdsd/*.h $(DESTDIR)$(PREFIX)/include/mdsd/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' src/api/mdsd.pc.in \
	  > $(INSTALL_LIB)/pkgconfig/mdsd.pc
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/mdsd
	sed -e 's|@PYTHON_SITE@|$(PYTHON_SITE)|' src/bin/mdsd-runner > $(DESTDIR)$(PREFIX)/bin/mdsd-runner
	chmod 755 $(DESTDIR)$(PREFIX)/bin/mdsd-runner
	src/cli/mkman.sh $(BIN) $(VERSION) > $(DESTDIR)$(PREFIX)/share/man/man1/mdsd.1
	install -m 644 src/python/mdsd/*.py $(DESTDIR)$(PYTHON_SITE)/mdsd/
	printf '"""Written by make install."""\nLIBDIR = "%s"\n' '$(PREFIX)/lib' \
	  > $(DESTDIR)$(PYTHON_SITE)/mdsd/_install.py
	install -m 644 src/mdsd_runner/*.py $(INSTALL_LIB)/mdsd/python/mdsd_runner/
	install -m 644 plots/*.gp $(DESTDIR)$(PREFIX)/share/mdsd/plots/
	@echo "Python package: $(PYTHON_SITE)/mdsd$$($(INSTALL_PYTHON) -c 'import sys; \
	  print("" if sys.argv[1] in sys.path else " (not on the path of $(INSTALL_PYTHON): add it to PYTHONPATH)")' \
	  '$(PYTHON_SITE)' 2>/dev/null)"

# The shipped dump: Kneser-Ney 4-gram target, bigram and trigram drafters, trained on the
# King James Bible, 40 samples. Same values on every run (data/README.md).
DUMP_OUT ?= data/kjv-ngram.h5
dump: deps
	@$(MAKE) --no-print-directory build
	MDSD_PYTHON=$(RUNNER_PYTHON) src/bin/mdsd-runner ngram --corpus kjv --order 4 --draft-order 2 --draft-order 3 \
	  --vocab-size 8192 --prompts data/prompts/kjv-openings.jsonl --num-samples 40 \
	  --seed 1 --gen-temperature 1 --max-new-tokens 64 --logits-dtype float16 \
	  --compression gzip -o $(DUMP_OUT)

# The shipped tree dump (data/README.md, "Tree dumps"): 4 i.i.d. draft sequences of
# length 4 from the bigram drafter at up to 4 contexts along each of 40 target responses
# (Kneser-Ney 4-gram target, V = 2048). Same values on every run.
TREE_DUMP_OUT ?= data/kjv-trees.h5
TREE_DUMP_ARGS := ngram --corpus kjv --order 4 --draft-order 2 --vocab-size 2048 \
  --prompts data/prompts/kjv-openings.jsonl --num-samples 40 --seed 1 --gen-temperature 1 \
  --max-new-tokens 64 --logits-dtype float16 --compression gzip --tree-contexts 4 --tree-stride 8
tree-dump: deps
	src/bin/mdsd-runner $(TREE_DUMP_ARGS) --tree-policy seq --tree-sequences 4 --tree-depth 4 \
	  -o $(TREE_DUMP_OUT)

# The neural KJV pair (data/README.md, "The neural pair"): causal transformers trained with
# Debian's PyTorch on the KJV (held-out verses excluded) by src/mdsd_runner/train.py: target
# tf4 (4 layers, width 256) on one core while the drafters tf1 and tf2 (1 and 2 layers, width
# 128) train on the other; 2,766 CPU-seconds, about 28 minutes on two free cores (tf4's
# 1,703 CPU-s on one core; tf1 then tf2, 1,063, on the other). Same
# weights every run on the same machine (one thread each). Debian's torch calls libblas.so.3;
# the reference BLAS is 8 times slower, so the target uses OpenBLAS unpacked into
# build/openblas (apt-get download; the system's BLAS is left as it is).
NEURAL_DIR ?= data/kjv-neural
OPENBLAS_DIR := build/openblas
OPENBLAS_LIB = $(CURDIR)/$(OPENBLAS_DIR)/usr/lib/$(shell gcc -dumpmachine)/openblas-pthread
TRAIN = OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 LD_LIBRARY_PATH=$(OPENBLAS_LIB) PYTHONPATH=src:src/python \
  nice $(RUNNER_PYTHON) -m mdsd_runner.train model --seed 1
.PHONY: neural-models
$(OPENBLAS_DIR)/.unpacked:
	@mkdir -p $(OPENBLAS_DIR)
	cd $(OPENBLAS_DIR) && { apt-get download libopenblas0-pthread 2>/dev/null || \
	  { if [ "$$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi; $$sudo apt-get update -qq && \
	    apt-get download libopenblas0-pthread; }; } && dpkg -x libopenblas0-pthread_*.deb . && touch .unpacked
neural-models: deps $(OPENBLAS_DIR)/.unpacked
	$(TRAIN) --out $(NEURAL_DIR)/tf4 --name tf4 --d-model 256 --n-layer 4 --steps 900 --lr 1.5e-3 & \
	target=$$!; \
	{ $(TRAIN) --out $(NEURAL_DIR)/tf1 --name tf1 --d-model 128 --n-layer 1 --steps 650 && \
	  $(TRAIN) --out $(NEURAL_DIR)/tf2 --name tf2 --d-model 128 --n-layer 2 --steps 650; }; \
	drafts=$$?; wait $$target && [ $$drafts -eq 0 ]

# Dumps that resolve orderings, for both pairs (data/README.md, "Pair dumps"; not shipped:
# about 0.1 GB (ngram) and 0.5-0.8 GB (neural) per file): 400 responses to the openings of the
# held-out verses, regenerated at each temperature of PAIR_TEMPERATURES (as Hu et al. do),
# in $(PAIR_DIR)/kjv-PAIR-T<T>.h5 with PAIR ngram (the Kneser-Ney pair of `make dump`) or
# neural (tf4 with drafters tf1, tf2); and tree dumps in PAIR_TREE_PARTS parts of 200
# samples each, $(PAIR_DIR)/kjv-PAIR-trees/part-NNN.h5 (`mdsd block DIR` reads them as one):
# seq K = 4, L = 4, T = 1, drafted by kn2 or tf1, at every 8th response position (at most 8
# per sample); part k draws with --seed k from the prompts 200 (k - 1) on. Every file is
# written atomically and kept: an interrupted make resumes; -j2 makes two at a time.
PAIR_DIR ?= build/pairs
PAIR_TEMPERATURES ?= 0.05 0.1 0.3 0.5 0.6 0.7 0.9 1
PAIR_TREE_PARTS ?= 25
PAIR_PROMPTS := data/prompts/kjv-held-out.jsonl
PAIR_RUNNER = MDSD_PYTHON=$(RUNNER_PYTHON) OMP_NUM_THREADS=1 nice src/bin/mdsd-runner
PAIR_ngram := ngram --corpus kjv --order 4 --draft-order 2 --draft-order 3 --vocab-size 8192
PAIR_neural = torch --target $(NEURAL_DIR)/tf4 --draft $(NEURAL_DIR)/tf1 --draft $(NEURAL_DIR)/tf2 \
  --device cpu --threads 1
# The neural pair runs with OpenBLAS too (as neural-models trains: the reference BLAS is slower).
PAIR_ENV_neural = LD_LIBRARY_PATH=$(OPENBLAS_LIB) OPENBLAS_NUM_THREADS=1
PAIR_NEEDS_neural := $(OPENBLAS_DIR)/.unpacked
PAIR_COMMON := --dataset kjv-held-out --max-new-tokens 64 --logits-dtype float16 --compression gzip -q
.PHONY: pair-dumps pair-trees pair-trees-l8
pair-dumps: deps
	@$(MAKE) --no-print-directory $(foreach p,ngram neural,$(foreach t,$(PAIR_TEMPERATURES),$(PAIR_DIR)/kjv-$(p)-T$(t).h5))
pair-trees: deps
	@$(MAKE) --no-print-directory $(foreach p,ngram neural,$(foreach k,$(shell seq -f %03g 1 $(PAIR_TREE_PARTS)),$(PAIR_DIR)/kjv-$(p)-trees/part-$(k).h5))
# The same trees at Thomas & Pal's block length (issue 41): seq K = 4, L = 8, in
# $(PAIR_DIR)/kjv-PAIR-trees-L8/, PAIR_TREE8_PARTS parts (part k as part k above, depth 8).
PAIR_TREE8_PARTS ?= 4
pair-trees-l8: deps
	@$(MAKE) --no-print-directory $(foreach p,ngram neural,$(foreach k,$(shell seq -f %03g 1 $(PAIR_TREE8_PARTS)),$(PAIR_DIR)/kjv-$(p)-trees-L8/part-$(k).h5))
# PAIR_RULES PAIR TREE_DRAFTER: the two rules of a pair. Part k's prompts: the held-out
# openings from line 200 (k - 1) + 1 on, cyclically.
define PAIR_RULES
$(PAIR_DIR)/kjv-$(1)-T%.h5: | $(PAIR_NEEDS_$(1))
	@mkdir -p $$(@D)
	$(PAIR_ENV_$(1)) $(PAIR_RUNNER) $$(PAIR_$(1)) $(PAIR_COMMON) --prompts $(PAIR_PROMPTS) --num-samples 400 \
	  --seed 1 --gen-temperature $$* -o $$@
endef
# PAIR_TREE_RULE PAIR TREE_DRAFTER DIR_SUFFIX DEPTH: the tree dump parts of a pair at one depth.
define PAIR_TREE_RULE
$(PAIR_DIR)/kjv-$(1)-trees$(3)/part-%.h5: | $(PAIR_NEEDS_$(1))
	@mkdir -p $$(@D)
	k=$$$$(expr $$* + 0); awk -v s=$$$$(( (k - 1) * 200 )) \
	  '{ p[NR - 1] = $$$$0 } END { for (j = 0; j < 200; j++) print p[(s + j) % NR] }' \
	  $(PAIR_PROMPTS) > $$(@D)/prompts-$$*.jsonl && \
	$(PAIR_ENV_$(1)) $(PAIR_RUNNER) $$(PAIR_$(1)) $(PAIR_COMMON) --prompts $$(@D)/prompts-$$*.jsonl \
	  --num-samples 200 --seed $$$$k --gen-temperature 1 --tree-policy seq --tree-sequences 4 \
	  --tree-depth $(4) --tree-contexts 8 --tree-stride 8 --tree-drafter $(2) -o $$@
endef
$(eval $(call PAIR_RULES,ngram,kn2))
$(eval $(call PAIR_RULES,neural,tf1))
$(eval $(call PAIR_TREE_RULE,ngram,kn2,,4))
$(eval $(call PAIR_TREE_RULE,neural,tf1,,4))
$(eval $(call PAIR_TREE_RULE,ngram,kn2,-L8,8))
$(eval $(call PAIR_TREE_RULE,neural,tf1,-L8,8))
# papers/ on both pairs (papers/pairs/README.md): Hu Table 1 and Fig. 1, SpecHub Tables 1-3,
# Khisti's drafter comparison on the pair dumps (run `make pair-dumps` first; refused, naming
# the missing dump, without them). Not part of `make papers` or `make test`: the dumps are
# not shipped. Same bits on every machine, as `make papers`.
.PHONY: papers-pairs
papers-pairs: export MDSD_PORTABLE_EXP = 1
papers-pairs: all
	PAIR_DIR=$(PAIR_DIR) papers/pairs/run.sh
	/usr/bin/python3 papers/check_numbers.py
# papers/pairs/block.sh (issue 30; papers/pairs/BLOCK.md): every verifier on both pairs'
# tree dumps, side by side; about 63 CPU-minutes for the 25 parts, resumable; not part of `make papers`.
.PHONY: papers-pairs-block
papers-pairs-block: export MDSD_PORTABLE_EXP = 1
papers-pairs-block: all pair-trees
	PAIR_DIR=$(PAIR_DIR) papers/pairs/block.sh

# papers/resolution/run.sh (issue 37; papers/resolution/README.md): the optimal verifier ot
# beside Thomas & Pal's Partial and Global Resolution on both pairs' T = 0.7 dumps and the
# first RESOLUTION_PARTS (5) parts of their tree dumps, its overhead per token, and toys.
.PHONY: papers-resolution
papers-resolution: export MDSD_PORTABLE_EXP = 1
papers-resolution: all
	@$(MAKE) --no-print-directory build/release/bench-driver \
	  $(foreach p,ngram neural,$(PAIR_DIR)/kjv-$(p)-T0.7.h5 $(foreach k,001 002 003 004 005,$(PAIR_DIR)/kjv-$(p)-trees/part-$(k).h5))
	PAIR_DIR=$(PAIR_DIR) BENCH_DRIVER=build/release/bench-driver papers/resolution/run.sh
# Tree dumps large enough to order the verifiers (data/README.md, "Large tree dumps"; not
# shipped: about 23 MB per part, 552 MB in all): the KJV pair of tree-dump, seq K = 4, L = 4, in
# parts that `mdsd block DIR` reads as one dump; part k draws with --seed k. Each part is
# written atomically and kept: an interrupted make resumes; -j2 makes two at a time.
#   make tree-dump-large  TREE_LARGE_PARTS parts of 200 samples, a tree at every 8th
#                         response position (at most 8 per sample)
#   make tree-dump-live   TREE_LIVE_PARTS parts of 40 samples, the trees at the block
#                         starts of live decoding with TREE_LIVE_VERIFIER (mdsd-runner
#                         --tree-live): mdsd block reports live tokens per target call
TREE_LARGE_COMMON := ngram --corpus kjv --order 4 --draft-order 2 --vocab-size 2048 \
  --prompts data/prompts/kjv-openings.jsonl --gen-temperature 1 --max-new-tokens 64 \
  --logits-dtype float16 --compression gzip --tree-policy seq --tree-sequences 4 --tree-depth 4 -q
TREE_LARGE_DIR ?= build/kjv-trees-large
TREE_LARGE_PARTS ?= 24
TREE_LIVE_VERIFIER ?= rrs
TREE_LIVE_DIR ?= build/kjv-trees-live-$(TREE_LIVE_VERIFIER)
TREE_LIVE_PARTS ?= 40
RUNNER_SRC := $(wildcard src/mdsd_runner/*.py)
.PHONY: tree-dump-large tree-dump-live
tree-dump-large: deps
	@$(MAKE) --no-print-directory $(foreach k,$(shell seq -f %03g 1 $(TREE_LARGE_PARTS)),$(TREE_LARGE_DIR)/part-$(k).h5)
$(TREE_LARGE_DIR)/part-%.h5: $(RUNNER_SRC)
	@mkdir -p $(@D)
	MDSD_PYTHON=$(RUNNER_PYTHON) nice src/bin/mdsd-runner $(TREE_LARGE_COMMON) --num-samples 200 \
	  --tree-contexts 8 --tree-stride 8 --seed $$(expr $* + 0) -o $@
tree-dump-live: all
	@$(MAKE) --no-print-directory $(foreach k,$(shell seq -f %03g 1 $(TREE_LIVE_PARTS)),$(TREE_LIVE_DIR)/part-$(k).h5)
$(TREE_LIVE_DIR)/part-%.h5: $(RUNNER_SRC) $(SHLIB)
	@mkdir -p $(@D)
	MDSD_PYTHON=$(RUNNER_PYTHON) nice src/bin/mdsd-runner $(TREE_LARGE_COMMON) --num-samples 40 \
	  --tree-live $(TREE_LIVE_VERIFIER) --seed $$(expr $* + 0) -o $@

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d)

# Benchmark (not a test): verifier set-up cost and trials per second at
# V = 32,000, n = 3 (tests/bench/bench_accept.c).
BENCH_ACCEPT := $(OUT)/bench-accept
.PHONY: bench-accept
bench-accept: deps
	@$(MAKE) --no-print-directory $(BENCH_ACCEPT)
	$(BENCH_ACCEPT)

$(BENCH_ACCEPT): $(OUT)/tests/bench/bench_accept.o $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(PKG_LIBS)

# Benchmark (not a test): alpha* by sort-and-scan (softmax included),
# positions per second per core at V = 32,000 and 152,064, every scheme,
# n = 2, 3, 5 (tests/bench/bench_bound.c).
BENCH_BOUND := $(OUT)/bench-bound
.PHONY: bench-bound
bench-bound: deps
	@$(MAKE) --no-print-directory $(BENCH_BOUND)
	$(BENCH_BOUND)

$(BENCH_BOUND): $(OUT)/tests/bench/bench_bound.o $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(PKG_LIBS)

# Measurement (not a test): table-job scaling over MPI ranks (README, "Running on a
# cluster"): tests/bench/bench_scale.sh; BENCH_SCALE_NP="1 2 4" for other rank counts.
BENCH_SCALE_NP ?= 1 2
.PHONY: bench-scale
bench-scale:
	@$(MAKE) --no-print-directory MPI=1 deps build/mpi/mdsd
	tests/bench/bench_scale.sh build/mpi/mdsd $(BENCH_SCALE_NP)

# The theorem regression suite, thorough profile: 10^4 instances per check (minutes).
# `make test` runs its quick profile (tests/test_check.c).
.PHONY: check
check: all
	./mdsd check --profile thorough

# Benchmark (not a test): mdsd beside numpy/scipy peers (Debian's python3-numpy,
# python3-scipy) on identical inputs, printing the table of README's
# Performance section; BENCH_ARGS=--quick for a smoke run
# (tests/bench/run_bench.py, tests/bench/bench_driver.c, tests/bench/peers.py).
BENCH_DRIVER := $(OUT)/bench-driver
BENCH_ARGS ?=
.PHONY: bench
bench: deps
	@dpkg-query -W -f='$${Status}' python3-scipy 2>/dev/null | grep -q 'install ok installed' || \
	  { if [ "$$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi; \
	    $$sudo apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends python3-scipy; }
	@$(MAKE) --no-print-directory $(BENCH_DRIVER) build
	/usr/bin/python3 tests/bench/run_bench.py --driver $(BENCH_DRIVER) --mdsd ./mdsd --out build/bench $(BENCH_ARGS)

$(BENCH_DRIVER): $(OUT)/tests/bench/bench_driver.o $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(PKG_LIBS)

# The runner's checkpoint under kill -9 at a larger count than make test's 50
# (tests/python/fault_injection.py): FAULT_RUNS runs killed at random points while they write
# OUT.partial, each resumed; every resume must end with a dump identical to an uninterrupted
# run's, or refuse with a message. About 0.5 s of CPU per run on two cores.
FAULT_RUNS ?= 1000
FAULT_SEED ?= 1
.PHONY: fault-injection
fault-injection: deps $(SHLIB)
	MDSD_LIBRARY=$(CURDIR)/build/release/$(SONAME) PYTHONPATH=src:src/python:tests/python \
	  $(RUNNER_PYTHON) tests/python/fault_injection.py --runs $(FAULT_RUNS) --seed $(FAULT_SEED) --jobs 2

# The runner's input parsers fuzzed at a larger count than make test's 100
# (tests/python/fuzz_runner_inputs.py): FUZZ_RUNNER_CASES mutated prompt files, corpora,
# import arrays (.npy, .npz, .safetensors) and checkpoints; each must succeed or be refused
# with a message (failing cases are kept in build/fuzz-runner/). About 0.1 s per case.
FUZZ_RUNNER_CASES ?= 5000
.PHONY: fuzz-runner
fuzz-runner: deps $(SHLIB)
	MDSD_LIBRARY=$(CURDIR)/build/release/$(SONAME) PYTHONPATH=src:src/python:tests/python \
	  $(RUNNER_PYTHON) tests/python/fuzz_runner_inputs.py --cases $(FUZZ_RUNNER_CASES) \
	  --seed $(FAULT_SEED) --keep build/fuzz-runner

# Measurement (not a test): peak memory and time of `mdsd-runner hf` on CPU at V = 152,064,
# logits only where stored against logits at every position (tests/bench/runner_memory.py).
.PHONY: bench-runner-memory
bench-runner-memory: deps
	/usr/bin/python3 tests/bench/runner_memory.py

# The seed papers' figures and tables, reproduced with the toolkit next to the published
# numbers (papers/README.md): results, figures and READMEs' inputs in papers/<paper>/.
.PHONY: papers
# The papers' results are the same bits on every machine: the portable exp, not libmvec's
# (which differs by a few ulp between CPUs and so moves Monte-Carlo cells in the 4th digit).
papers: export MDSD_PORTABLE_EXP = 1
papers: all
	papers/spectr/run.sh
	papers/spectr/appb_tight.sh
	papers/spechub/run.sh
	PYTHONPATH=src/python MDSD_LIBRARY=$(CURDIR)/build/release/$(SONAME) /usr/bin/python3 papers/spechub/theorems.py
	papers/khisti/run.sh
	PYTHONPATH=src/python MDSD_LIBRARY=$(CURDIR)/build/release/$(SONAME) /usr/bin/python3 papers/khisti/remark4.py 1000
	PYTHONPATH=src/python MDSD_LIBRARY=$(CURDIR)/build/release/$(SONAME) /usr/bin/python3 papers/khisti/remark4_stability.py 1000 10
	PYTHONPATH=src/python MDSD_LIBRARY=$(CURDIR)/build/release/$(SONAME) /usr/bin/python3 papers/khisti/binary.py
	papers/hu/run.sh
	papers/hu/cps_vs_wor_positions.sh
	PYTHONPATH=src/python MDSD_LIBRARY=$(CURDIR)/build/release/$(SONAME) /usr/bin/python3 papers/hu/wor_search.py --restarts 30 --steps 30 --exact-max-V 9 -o - 2>/dev/null
	papers/block/run.sh
	/usr/bin/python3 papers/check_numbers.py
