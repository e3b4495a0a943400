# SPDX-License-Identifier: GPL-2.0
# test_elfsym embeds a generated ELF image.
$(B)/tests/unit/test_elfsym: tests/unit/elf_small.inc
# test_dlfilter includes the perf plugin's source (the .so stays built without libsnap).
$(B)/tests/unit/test_dlfilter: src/plugin/dlfilter.c
