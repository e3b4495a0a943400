# SPDX-License-Identifier: GPL-2.0
# Parser benchmark tools (not run by make check; built with the test binaries):
#   $(B)/tests/bench/gen_branches [-e] N [SEED] > branches.txt
#   $(B)/tests/bench/bench_perfscript branches.txt [REPEAT]
$(B)/tests/bench/gen_branches: tests/bench/gen_branches.c
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS_SAN) -o $@ $<

$(B)/tests/bench/bench_perfscript: tests/bench/bench_perfscript.c $(LIB)
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS_SAN) -o $@ $< $(LIB) $(LDLIBS_SNAP)

TEST_BINS += $(B)/tests/bench/gen_branches $(B)/tests/bench/bench_perfscript

# The in-process PT decoder's benchmark (tests/bench/ptdec.sh) repeats a ptsynth trace.
$(B)/tests/bench/ptrepeat: tests/bench/ptrepeat.c
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS_SAN) -o $@ $<

TEST_BINS += $(B)/tests/bench/ptrepeat

$(B)/tests/bench/bench_ptdec: tests/bench/bench_ptdec.c $(LIB)
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS_SAN) -o $@ $< $(LIB) $(LDLIBS_SNAP) $(LDLIBS_PTDEC)

TEST_BINS += $(B)/tests/bench/bench_ptdec
