/* SPDX-License-Identifier: GPL-2.0 */
/*
 * File offsets and ELF virtual addresses of one executable or library,
 * through its PT_LOAD program headers. perf calls a user-space address of a
 * call chain "mapped" (map__map_ip: ip - map start + map pgoff), which is the
 * file offset of the code for shared objects, PIE and non-PIE executables
 * alike; symbol tables and CFI use virtual addresses. The one converter
 * between the two (util/elf.h reads the segments). Pure.
 */
#ifndef SNAP_UTIL_LOADSEG_H
#define SNAP_UTIL_LOADSEG_H

#include <stddef.h>
#include <stdint.h>

/* One PT_LOAD segment: the file bytes [off, off + filesz) are mapped at
 * vaddr, in memsz bytes of memory. */
struct snap_loadseg {
	uint64_t off, vaddr, filesz;
	uint32_t flags; /* PF_X 1, PF_W 2, PF_R 4 */
	uint64_t memsz;
};

/*
 * The virtual address of file offset off: the first executable segment that
 * holds it, else the first segment that does. Returns 0 or -ENOENT (no
 * segment holds it, or the address would overflow).
 */
int snap_loadseg_off2vaddr(const struct snap_loadseg *s, size_t n, uint64_t off, uint64_t *vaddr);

/* The file offset of virtual address vaddr (same preference). 0 or -ENOENT. */
int snap_loadseg_vaddr2off(const struct snap_loadseg *s, size_t n, uint64_t vaddr, uint64_t *off);

#endif
