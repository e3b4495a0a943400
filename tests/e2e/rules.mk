# SPDX-License-Identifier: GPL-2.0
# Programs traced by tests/e2e/run.sh: -O0 with frame pointers so fp call
# graphs keep every caller (docs/design.md §1.8), never sanitized.
E2E_PROGS := $(patsubst tests/e2e/progs/%.c,$(B)/tests/e2e/%,$(wildcard tests/e2e/progs/*.c))
$(B)/tests/e2e/%: tests/e2e/progs/%.c
	@mkdir -p $(@D)
	$(CC) -O0 -g -fno-omit-frame-pointer -pthread -o $@ $< -ldl -lm
TEST_BINS += $(E2E_PROGS)
