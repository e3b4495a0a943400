# SPDX-License-Identifier: GPL-2.0
# fxtgen writes FXT test traces for tests/fxt/run.sh.
$(B)/tests/fxt/fxtgen: tests/fxt/fxtgen.c $(LIB)
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS_SAN) -o $@ $< $(LIB) $(LDLIBS_SNAP)
TEST_BINS += $(B)/tests/fxt/fxtgen
