// SPDX-License-Identifier: GPL-2.0
#include "record/elfsym.h"

#include <errno.h>
#include <string.h>

#include "util/err.h"

#define EHDR_SIZE  64
#define PHDR_SIZE  56
#define SHDR_SIZE  64
#define SYM_SIZE   24
#define SHT_SYMTAB 2
#define SHT_DYNSYM 11
#define PT_LOAD	   1

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* 1 when [off, off + n*size) lies inside the buffer, without overflow. */
static int in_bounds(const struct snap_elf *e, uint64_t off, uint64_t n, uint64_t size)
{
	uint64_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes))
		return 0;
	return off <= e->len && bytes <= e->len - off;
}

static const uint8_t *shdr(const struct snap_elf *e, unsigned i)
{
	return e->buf + e->shoff + (uint64_t)i * SHDR_SIZE;
}

int snap_elf_open(struct snap_elf *e, const void *buf, size_t len)
{
	const uint8_t *b = buf;

	memset(e, 0, sizeof(*e));
	e->symtab = e->dynsym = -1;
	if (!b || len < EHDR_SIZE || memcmp(b, "\177ELF", 4) || b[4] != 2 /* ELFCLASS64 */ ||
	    b[5] != 1 /* little endian */)
		return -SNAP_EFORMAT;
	e->buf = b;
	e->len = len;
	e->type = rd16(b + 16);
	e->phoff = rd64(b + 32);
	e->shoff = rd64(b + 40);
	e->phnum = rd16(b + 56);
	e->shnum = rd16(b + 60);
	if (e->phnum && (rd16(b + 54) != PHDR_SIZE || !in_bounds(e, e->phoff, e->phnum, PHDR_SIZE)))
		return -SNAP_EFORMAT;
	if (e->shnum && (rd16(b + 58) != SHDR_SIZE || !in_bounds(e, e->shoff, e->shnum, SHDR_SIZE)))
		return -SNAP_EFORMAT;
	for (unsigned i = 0; i < e->shnum; i++) {
		uint32_t type = rd32(shdr(e, i) + 4);

		if (type == SHT_SYMTAB && e->symtab < 0)
			e->symtab = (int)i;
		else if (type == SHT_DYNSYM && e->dynsym < 0)
			e->dynsym = (int)i;
	}
	return 0;
}

int snap_elf_has_symbols(const struct snap_elf *e)
{
	return e->symtab >= 0 || e->dynsym >= 0;
}

/* Fills the symbol table geometry of section idx; returns 0 or -1. */
static int symsec(const struct snap_elf *e, int idx, uint64_t *off, uint64_t *count,
		  uint64_t *stroff, uint64_t *strsize)
{
	const uint8_t *s;
	uint32_t link;
	uint64_t size;

	if (idx < 0 || idx >= e->shnum)
		return -1;
	s = shdr(e, (unsigned)idx);
	*off = rd64(s + 24);
	size = rd64(s + 32);
	link = rd32(s + 40);
	*count = size / SYM_SIZE;
	if (!in_bounds(e, *off, *count, SYM_SIZE) || link >= e->shnum)
		return -1;
	*stroff = rd64(shdr(e, link) + 24);
	*strsize = rd64(shdr(e, link) + 32);
	if (!in_bounds(e, *stroff, *strsize, 1))
		return -1;
	return 0;
}

int snap_elf_sym_next(const struct snap_elf *e, uint64_t *cursor, struct snap_elfsym *sym)
{
	/* cursor: bit 63 selects the table (0 symtab, 1 dynsym), the rest the index */
	for (;;) {
		int which = (int)(*cursor >> 63);
		uint64_t i = *cursor & ~(1ull << 63), off, count, stroff, strsize;
		const uint8_t *p;
		uint32_t name;

		if (symsec(e, which ? e->dynsym : e->symtab, &off, &count, &stroff, &strsize) < 0 ||
		    i >= count) {
			if (which)
				return 0;
			*cursor = 1ull << 63;
			continue;
		}
		*cursor += 1;
		p = e->buf + off + i * SYM_SIZE;
		name = rd32(p);
		sym->type = p[4] & 0xf;
		sym->bind = p[4] >> 4;
		sym->shndx = rd16(p + 6);
		sym->value = rd64(p + 8);
		sym->size = rd64(p + 16);
		if (!sym->shndx || name == 0 || name >= strsize ||
		    !memchr(e->buf + stroff + name, '\0', strsize - name))
			continue;
		sym->name = (const char *)e->buf + stroff + name;
		return 1;
	}
}

int snap_elf_find_func(const struct snap_elf *e, const char *name, struct snap_elfsym *sym)
{
	uint64_t cur = 0;

	while (snap_elf_sym_next(e, &cur, sym) == 1) {
		if ((sym->type == 2 /* STT_FUNC */ || sym->type == 10 /* STT_GNU_IFUNC */) &&
		    sym->value && !strcmp(sym->name, name))
			return 1;
	}
	return 0;
}

int snap_elf_vaddr_to_offset(const struct snap_elf *e, uint64_t vaddr, uint64_t *off)
{
	for (unsigned i = 0; i < e->phnum; i++) {
		const uint8_t *p = e->buf + e->phoff + (uint64_t)i * PHDR_SIZE;
		uint64_t pv = rd64(p + 16), pfs = rd64(p + 32), po = rd64(p + 8);

		if (rd32(p) != PT_LOAD || vaddr < pv || vaddr - pv >= pfs)
			continue;
		if (__builtin_add_overflow(po, vaddr - pv, off))
			continue;
		return 0;
	}
	return -ENOENT;
}
