# SPDX-License-Identifier: GPL-2.0
# snaptrace: one hand-written GNU Makefile (docs/design.md).
#   make                 build ./snaptrace and ./snaptrace-dlfilter.so
#   make check           every test; ends with "N passed, N failed"
#   make SAN=address,undefined check   the same under ASan+UBSan (build/san)
#   make demo            install what is missing, trace the demo program
#   make bench           speed and memory figures
#   make fuzz CC=clang   libFuzzer binaries; make fuzz-smoke runs them briefly
#   make format / format-check / lint / clean
#   V=1 shows the full command lines; make -s prints nothing but errors

CC      ?= cc
WERROR  ?= 0
SAN     ?=
PREFIX  ?= /usr/local

ifeq ($(SAN),)
VARIANT := default
else
VARIANT := san
endif
B := build/$(VARIANT)

WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes \
	-Wold-style-definition -Wundef -Wwrite-strings -Wvla -Wimplicit-fallthrough
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -g -O2 -Isrc $(WARN) -MMD -MP
ifeq ($(WERROR),1)
CFLAGS_BASE += -Werror
endif
ifneq ($(SAN),)
CFLAGS_BASE += -fsanitize=$(SAN) -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS_SAN := -fsanitize=$(SAN)
endif
ALL_CFLAGS := $(CFLAGS_BASE) $(CFLAGS)

# One short line per step ("  CC      src/x.o", as the Linux kernel does); V=1 prints the
# commands instead, make -s neither. Recipes: $(call msg,TAG,WHAT) then $(Q)command;
# inside a shell loop: $(say) TAG WHAT.
V ?= 0
SILENT := $(findstring s,$(firstword -$(MAKEFLAGS)))
say := $(if $(SILENT),:,printf '  %-7s %s\n')
ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = $(if $(SILENT),,@$(say) '$(1)' '$(patsubst $(B)/%,%,$(2))')
endif
LDLIBS_SNAP := -lz -ldeflate -ldw -lelf # libdeflate: write/pgz; elfutils libdw: DWARF line tables (record/dwline.c)
# The HTTP server (libmicrohttpd) is not linked: cli/serve.c opens it for -serve only (linked,
# it and gnutls cost every command ~1.5 ms of start-up, docs/design.md). Its SONAME is the one
# of the libmicrohttpd.so this compiler finds; its header stays a build dependency.
MHD_SONAME = $(shell objdump -p "$$($(CC) -print-file-name=libmicrohttpd.so)" 2>/dev/null | \
	awk '$$1 == "SONAME" { print $$2 }')
$(B)/src/cli/serve.o: ALL_CFLAGS += -DSNAP_MHD_SONAME='"$(or $(MHD_SONAME),libmicrohttpd.so.12)"'
LDLIBS_CLI  := -ldl # dlopen (in libc since glibc 2.34)
# The in-process PT decoder (src/ptdec): libipt, libiberty's demangler, threads.
LDLIBS_PTDEC := -lipt -liberty -lpthread

LIB_SRC := $(sort $(wildcard src/util/*.c src/model/*.c src/parse/*.c src/ptdec/*.c src/stack/*.c \
	src/write/*.c src/report/*.c src/record/*.c src/source/*.c))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(B)/%.o)
LIB     := $(B)/libsnap.a

UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:%.c=$(B)/%)

FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_REPLAY := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/tests/fuzz/replay_%)

PLUGIN_SRC := src/plugin/dlfilter.c
PLUGIN := snaptrace-dlfilter.so

# Binaries the test suites need besides ./snaptrace (extended by rules.mk files).
TEST_BINS := $(UNIT_BIN) $(FUZZ_REPLAY)

.PHONY: all check unit golden golden-update e2e fuzz fuzz-smoke format format-check lint \
	clean demo bench install test-bins
all: snaptrace $(PLUGIN)

$(B)/%.o: %.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

$(B)/snaptrace: $(CLI_OBJ) $(LIB)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS_SAN) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(LDLIBS_SNAP) $(LDLIBS_PTDEC) $(LDLIBS_CLI)

# ./snaptrace is always the variant last built, so tests run what was just made.
snaptrace: $(B)/snaptrace
	$(Q)cp $< $@.tmp && mv -f $@.tmp $@

# The perf plugin is loaded into perf: never sanitized, always -fPIC, no libsnap.
snaptrace-dlfilter.so: $(PLUGIN_SRC) $(wildcard src/plugin/*.h) src/model/event.h src/model/dlrec.h
	$(call msg,CCLD,$@)
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE -g -O2 -Isrc $(WARN) $(if $(filter 1,$(WERROR)),-Werror) \
		-fPIC -shared -o $@ $(PLUGIN_SRC)

$(B)/tests/unit/%: tests/unit/%.c $(LIB)
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS_SAN) -Itests/unit -o $@ $< $(LIB) $(LDLIBS_SNAP) $(LDLIBS_PTDEC)

$(B)/tests/fuzz/replay_%: tests/fuzz/%.c tests/fuzz/replay_main.c $(LIB)
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS_SAN) -o $@ $< tests/fuzz/replay_main.c $(LIB) $(LDLIBS_SNAP) \
		$(LDLIBS_PTDEC)

-include $(sort $(wildcard tests/*/rules.mk))

test-bins: $(TEST_BINS)

check: all test-bins
	@SNAP_BUILD=$(B) tests/check.sh

unit: all $(UNIT_BIN)
	@SNAP_BUILD=$(B) tests/check.sh unit

golden: all
	@SNAP_BUILD=$(B) tests/check.sh golden

golden-update: all
	@SNAP_UPDATE_GOLDEN=1 SNAP_BUILD=$(B) tests/golden/run.sh

e2e: all test-bins
	@SNAP_BUILD=$(B) tests/check.sh e2e

# libFuzzer builds (clang only).
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=build/fuzz/obj/%.o)
FUZZ_FLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -Isrc -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -MMD -MP
# Only named as prerequisites of a pattern rule: keep them (make would delete them as
# intermediate files and rebuild all of libsnap on every `make fuzz`).
.SECONDARY: $(FUZZ_LIB_OBJ)
-include $(FUZZ_LIB_OBJ:.o=.d) $(FUZZ_BIN:=.d)
build/fuzz/obj/%.o: %.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)clang $(FUZZ_FLAGS) -c -o $@ $<
build/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB_OBJ)
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)clang $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJ) $(LDLIBS_SNAP) $(LDLIBS_PTDEC)
fuzz: $(FUZZ_BIN)
FUZZ_RUNS ?= 20000
fuzz-smoke: fuzz
	@for f in $(FUZZ_BIN); do t=$${f##*/}; \
		$(say) FUZZ "$$t ($(FUZZ_RUNS) runs)"; \
		mkdir -p build/fuzz/work/$$t; \
		$$f -runs=$(FUZZ_RUNS) -max_len=4096 build/fuzz/work/$$t tests/fuzz/corpus/$$t \
			>build/fuzz/$$t.log 2>&1 || { tail -30 build/fuzz/$$t.log; exit 1; }; \
	done

FORMAT_FILES = $(shell git ls-files --cached --others --exclude-standard '*.c' '*.h' 2>/dev/null || find src tests -name '*.[ch]')
format:
	$(call msg,FORMAT,$(words $(FORMAT_FILES)) files)
	$(Q)clang-format -i $(FORMAT_FILES)
format-check:
	@clang-format --dry-run -Werror $(FORMAT_FILES) && echo "format-check: ok"

# cppcheck fails the build on any finding (--error-exitcode). Suppressed, each with its
# reason: ctuuninitvar in record/perfargs.c (snap_perfargs_build stores the pointer `out`
# in its builder before the memset that initialises *out; nothing is read). LINT_SKIP=DIR...
# leaves directories out (.ci/run: see the note there).
LINT_SKIP ?=
LINT_SUPPRESS := --suppress=ctuuninitvar:src/record/perfargs.c
lint:
	$(call msg,CPPCHECK,src $(if $(LINT_SKIP),(without $(LINT_SKIP))))
	$(Q)cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability --std=c11 \
		$(LINT_SUPPRESS) $(addprefix -i,$(LINT_SKIP)) -Isrc src
	@tests/layering.sh

# Not "demo: all": on a fresh machine the packages come first (tests/demo.sh runs
# tests/deps.sh install, then make all), or the build stops at a missing header.
demo:
	@tests/demo.sh

# make bench SNAP_BENCH_CALLGRIND=0: without the instructions per stage (callgrind, ~1 min)
SNAP_BENCH_CALLGRIND ?= 1
bench: all test-bins
	@SNAP_BENCH_CALLGRIND=$(SNAP_BENCH_CALLGRIND) tests/bench.sh

install: all
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/snaptrace
	$(Q)install -m 755 snaptrace $(DESTDIR)$(PREFIX)/bin/snaptrace
	$(Q)install -m 644 $(PLUGIN) $(DESTDIR)$(PREFIX)/lib/snaptrace/

clean:
	$(call msg,CLEAN,build)
	$(Q)rm -rf build snaptrace snaptrace-dlfilter.so

# Test binaries are compiled and linked in one step: their .d sits beside them.
-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_BINS:=.d)
