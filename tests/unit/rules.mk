# SPDX-License-Identifier: GPL-2.0
# test_elfsym embeds a generated ELF image.
$(B)/tests/unit/test_elfsym: tests/unit/elf_small.inc
# test_dlfilter includes the perf plugin's source (the .so stays built without libsnap).
$(B)/tests/unit/test_dlfilter: src/plugin/dlfilter.c
# test_decodemsg tests cli/decodemsg.c (cli/ is not in libsnap).
$(B)/tests/unit/test_decodemsg: tests/unit/test_decodemsg.c $(B)/src/cli/decodemsg.o $(LIB)
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS_SAN) -Itests/unit -o $@ $< $(B)/src/cli/decodemsg.o $(LIB) \
		$(LDLIBS_SNAP) $(LDLIBS_PTDEC)
