# SPDX-License-Identifier: GPL-2.0
# Test target programs (tests/progs): tiny programs with known call trees that the
# PT synthesis suite (tests/ptsynth) single-steps. Never sanitized, always -O0 with
# frame pointers (fp call graphs keep every caller); tail.c is -O2 on purpose (a real tail call).
PROGS_DIR := $(B)/tests/progs
PROGS_CFLAGS := -g -O0 -fno-omit-frame-pointer -fno-stack-protector -fcf-protection=none
PROGS_NOLIBC := -static -nostdlib -fno-pie -no-pie -Wl,--build-id=none

$(PROGS_DIR)/static_calls: tests/progs/static_calls.c tests/progs/tail.c tests/progs/nolibc.h
	@mkdir -p $(@D)
	$(call msg,CC,$@.tail.o)
	$(Q)$(CC) $(PROGS_CFLAGS) -O2 -fno-pie -c -o $@.tail.o tests/progs/tail.c
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(PROGS_CFLAGS) $(PROGS_NOLIBC) -o $@ tests/progs/static_calls.c $@.tail.o

$(PROGS_DIR)/threads: tests/progs/threads.c tests/progs/nolibc.h
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(PROGS_CFLAGS) $(PROGS_NOLIBC) -o $@ $<

$(PROGS_DIR)/vdso: tests/progs/vdso.c tests/progs/nolibc.h
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(PROGS_CFLAGS) $(PROGS_NOLIBC) -o $@ $<

$(PROGS_DIR)/dyn: tests/progs/dyn.c
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(PROGS_CFLAGS) -Wl,-z,lazy -o $@ $<

# The C++ program needs a C++ compiler with libstdc++; without one it is not built
# and its case skips.
PROGS_CXX := $(firstword $(shell command -v $(if $(findstring clang,$(CC)),clang++ g++,g++ clang++) \
	2>/dev/null))
$(PROGS_DIR)/cxx_throw: tests/progs/cxx_throw.cc tests/progs/rules.mk
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(PROGS_CXX) $(PROGS_CFLAGS) -static-libstdc++ -static-libgcc -Wl,-z,lazy -o $@ $<

TEST_PROGS := $(PROGS_DIR)/static_calls $(PROGS_DIR)/threads $(PROGS_DIR)/dyn $(PROGS_DIR)/vdso \
	$(if $(PROGS_CXX),$(PROGS_DIR)/cxx_throw)
TEST_BINS += $(TEST_PROGS)

# The pretend kernel of the k/uk scope tests (never executed).
$(PROGS_DIR)/kimage: tests/progs/kimage.S
	@mkdir -p $(@D)
	$(call msg,AS,$@.o)
	$(Q)$(CC) -c -o $@.o $<
	$(call msg,CCLD,$@)
	$(Q)$(CC) -nostdlib -static -no-pie -Wl,-Ttext=0xffffffff81000000 -Wl,-e,entry_SYSCALL_64 \
		-Wl,--section-start=.notes=0xffffffff81001000 -Wl,--build-id=none -o $@ $@.o

TEST_BINS += $(PROGS_DIR)/kimage

# An executable with OCaml exception notes for the golden tests (never executed).
$(PROGS_DIR)/ocaml_eh: tests/progs/ocaml_eh.S
	@mkdir -p $(@D)
	$(CC) -nostdlib -static -no-pie -Wl,--build-id=none -o $@ $<

TEST_BINS += $(PROGS_DIR)/ocaml_eh
