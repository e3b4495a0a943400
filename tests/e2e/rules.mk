# SPDX-License-Identifier: GPL-2.0
# Programs traced by tests/e2e (run.sh, cases/): -O0 with frame pointers so fp call
# graphs keep every caller (docs/recording.md, "Call graphs"), never sanitized. The
# exceptions: omitfp is built like distribution code (-O2, no frame pointers),
# quick and early are static without libc (nothing runs before main); sigctor links
# libsigctor.so, whose constructor takes a signal before the entry point.
E2E_PROGS := $(patsubst tests/e2e/progs/%.c,$(B)/tests/e2e/%,$(wildcard tests/e2e/progs/*.c))
$(B)/tests/e2e/%: tests/e2e/progs/%.c
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) -O0 -g -fno-omit-frame-pointer -pthread -o $@ $< -ldl -lm
$(B)/tests/e2e/omitfp: tests/e2e/progs/omitfp.c
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -o $@ $<
$(B)/tests/e2e/quick $(B)/tests/e2e/early: $(B)/tests/e2e/%: tests/e2e/progs/%.c tests/progs/nolibc.h
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) -O0 -g -fno-omit-frame-pointer -fno-stack-protector -fcf-protection=none -static \
		-nostdlib -fno-pie -no-pie -Wl,--build-id=none -o $@ $<
$(B)/tests/e2e/libsigctor.so: tests/e2e/progs/lib/sigctor.c
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) -O0 -g -fno-omit-frame-pointer -fPIC -shared -o $@ $<
$(B)/tests/e2e/sigctor: tests/e2e/progs/sigctor.c $(B)/tests/e2e/libsigctor.so
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) -O0 -g -fno-omit-frame-pointer -o $@ $< -L$(@D) -lsigctor -Wl,-rpath,'$$ORIGIN'
TEST_BINS += $(E2E_PROGS) $(B)/tests/e2e/libsigctor.so
# stripfn: without PIE, so its code's addresses are not its file offsets (cfi_names.sh);
# stripfn_pad: another build of it (its code moved)
$(B)/tests/e2e/stripfn: tests/e2e/progs/stripfn.c
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) -O0 -g -fno-omit-frame-pointer -fno-pie -no-pie -o $@ $<
$(B)/tests/e2e/stripfn_pad: tests/e2e/progs/stripfn.c
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) -O0 -g -fno-omit-frame-pointer -fno-pie -no-pie -DSTRIPFN_PAD -o $@ $<
TEST_BINS += $(B)/tests/e2e/stripfn_pad
# fpo2: omitfp's code built like an ordinary -O2 -fno-omit-frame-pointer program (gcc
# leaves its leaves and shrink-wrapped paths without push %rbp: callgraph_auto.sh)
$(B)/tests/e2e/fpo2: tests/e2e/progs/omitfp.c
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) -O2 -g -fno-omit-frame-pointer -o $@ $<
TEST_BINS += $(B)/tests/e2e/fpo2
# mtstack: C++ built like distribution code (-O2, no frame pointers), a 5 KiB
# std::mt19937 on the stack (the dwarf stack copy, callgraph_auto.sh); not built
# without a C++ compiler (its case skips)
E2E_CXX := $(firstword $(shell command -v $(if $(findstring clang,$(CC)),clang++ g++,g++ clang++) \
	2>/dev/null))
$(B)/tests/e2e/mtstack: tests/e2e/progs/mtstack.cc
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(E2E_CXX) -O2 -g -o $@ $<
TEST_BINS += $(if $(E2E_CXX),$(B)/tests/e2e/mtstack)
