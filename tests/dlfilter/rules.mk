# SPDX-License-Identifier: GPL-2.0
# The dlfilter suite: a stream dumper linked with libsnap, and the test target.
TEST_BINS += $(B)/tests/dlfilter/dlrec_dump

$(B)/tests/dlfilter/dlrec_dump: tests/dlfilter/dlrec_dump.c $(LIB)
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS_SAN) -o $@ $< $(LIB) $(LDLIBS_SNAP)

# The plugin also depends on the wire format it writes.
snaptrace-dlfilter.so: src/model/dlrec.h

TEST_BINS += $(B)/tests/dlfilter/evcmp
$(B)/tests/dlfilter/evcmp: tests/dlfilter/evcmp.c $(LIB)
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS_SAN) -o $@ $< $(LIB) $(LDLIBS_SNAP)
