# SPDX-License-Identifier: GPL-2.0
# test_elfsym embeds a generated ELF image.
$(B)/tests/unit/test_elfsym: tests/unit/elf_small.inc
