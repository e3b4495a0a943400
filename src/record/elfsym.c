// SPDX-License-Identifier: GPL-2.0
#include "record/elfsym.h"

#include <errno.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/err.h"
#include "util/vec.h"

#define rd16 snap_elf_rd16
#define rd32 snap_elf_rd32
#define rd64 snap_elf_rd64

#define EHDR_SIZE sizeof(Elf64_Ehdr)
#define PHDR_SIZE sizeof(Elf64_Phdr)
#define SHDR_SIZE sizeof(Elf64_Shdr)
#define SYM_SIZE  sizeof(Elf64_Sym)
#define NHDR_SIZE sizeof(Elf64_Nhdr)

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
	if (!b || len < EHDR_SIZE || memcmp(b, ELFMAG, SELFMAG) || b[EI_CLASS] != ELFCLASS64 ||
	    b[EI_DATA] != ELFDATA2LSB)
		return -SNAP_EFORMAT;
	e->buf = b;
	e->len = len;
	e->type = rd16(b + SNAP_EHDR(e_type));
	e->phoff = rd64(b + SNAP_EHDR(e_phoff));
	e->shoff = rd64(b + SNAP_EHDR(e_shoff));
	e->phnum = rd16(b + SNAP_EHDR(e_phnum));
	e->shnum = rd16(b + SNAP_EHDR(e_shnum));
	if (e->phnum && (rd16(b + SNAP_EHDR(e_phentsize)) != PHDR_SIZE ||
			 !in_bounds(e, e->phoff, e->phnum, PHDR_SIZE)))
		return -SNAP_EFORMAT;
	if (e->shnum && (rd16(b + SNAP_EHDR(e_shentsize)) != SHDR_SIZE ||
			 !in_bounds(e, e->shoff, e->shnum, SHDR_SIZE)))
		return -SNAP_EFORMAT;
	for (unsigned i = 0; i < e->shnum; i++) {
		uint32_t type = rd32(shdr(e, i) + SNAP_SHDR(sh_type));

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
	*off = rd64(s + SNAP_SHDR(sh_offset));
	size = rd64(s + SNAP_SHDR(sh_size));
	link = rd32(s + SNAP_SHDR(sh_link));
	*count = size / SYM_SIZE;
	if (!in_bounds(e, *off, *count, SYM_SIZE) || link >= e->shnum)
		return -1;
	*stroff = rd64(shdr(e, link) + SNAP_SHDR(sh_offset));
	*strsize = rd64(shdr(e, link) + SNAP_SHDR(sh_size));
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
		name = rd32(p + SNAP_SYM(st_name));
		sym->type = ELF64_ST_TYPE(p[SNAP_SYM(st_info)]);
		sym->bind = ELF64_ST_BIND(p[SNAP_SYM(st_info)]);
		sym->shndx = rd16(p + SNAP_SYM(st_shndx));
		sym->value = rd64(p + SNAP_SYM(st_value));
		sym->size = rd64(p + SNAP_SYM(st_size));
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
		if (snap_elfsym_is_func(sym) && sym->value && !strcmp(sym->name, name))
			return 1;
	}
	return 0;
}

char *snap_elf_demangle(const char *name, int params)
{
	const char *at = strchr(name, '@');
	size_t plen = at ? (size_t)(at - name) : strlen(name), dlen, slen;
	char *pre, *dem, *out;

	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R') || plen < 3)
		return NULL;
	pre = snap_strndup(name, plen);
	if (!pre)
		return NULL;
	dem = cplus_demangle(pre, params ? DMGL_PARAMS | DMGL_ANSI : DMGL_NO_OPTS);
	snap_free(pre);
	if (!dem)
		return NULL;
	dlen = strlen(dem);
	slen = strlen(name + plen);
	out = snap_malloc(dlen + slen + 1);
	if (out) {
		memcpy(out, dem, dlen);
		memcpy(out + dlen, name + plen, slen + 1);
	}
	free(dem);
	return out;
}

/* 1 if dem is name, or (suffix) ends with "::" + name. */
static int dem_matches(const char *dem, const char *name, size_t nlen, int suffix)
{
	size_t dl = strlen(dem);

	if (!suffix)
		return !strcmp(dem, name);
	return dl > nlen + 2 && !strcmp(dem + dl - nlen, name) && dem[dl - nlen - 1] == ':' &&
	       dem[dl - nlen - 2] == ':';
}

/*
 * The last identifier of a demangled name ("count_words" of
 * "app::detail::count_words(char const*)", "spin" of "ns::spin<long>"): a
 * mangled name that matches contains it. Empty when there is none to look
 * for (operators, lambdas).
 */
static void last_ident(const char *name, char *buf, size_t len)
{
	const char *p = name, *start = name, *end;
	int depth = 0;

	/* the last "::" outside <...> and (...) */
	for (; *p; p++) {
		if (*p == '<' || *p == '(')
			depth++;
		else if ((*p == '>' || *p == ')') && depth)
			depth--;
		else if (!depth && p[0] == ':' && p[1] == ':')
			start = p + 2;
	}
	end = start + strcspn(start, "<( ");
	buf[0] = '\0';
	if (end == start || (size_t)(end - start) >= len || !strncmp(start, "operator", 8))
		return;
	for (p = start; p < end; p++)
		if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9')))
			return;
	memcpy(buf, start, (size_t)(end - start));
	buf[end - start] = '\0';
}

int snap_elf_find_func_demangled(const struct snap_elf *e, const char *name, int suffix,
				 struct snap_elfsym *sym)
{
	struct snap_elfsym s;
	uint64_t cur = 0;
	size_t nlen = strlen(name);
	char ident[256];
	int found = 0;

	if (!nlen)
		return 0;
	last_ident(name, ident, sizeof(ident));
	if (!ident[0] && !strstr(name, "::"))
		return 0; /* no demangled name looks like that ("main.c:12", "0x1234") */
	while (snap_elf_sym_next(e, &cur, &s) == 1) {
		int hit = 0;

		if (!snap_elfsym_is_func(&s) || !s.value || (ident[0] && !strstr(s.name, ident)))
			continue;
		for (int params = 0; params < 2 && !hit; params++) {
			char *dem = snap_elf_demangle(s.name, params);

			if (!dem)
				break; /* not mangled */
			hit = dem_matches(dem, name, nlen, suffix);
			free(dem);
		}
		if (!hit)
			continue;
		if (found && s.value != sym->value)
			return -EEXIST;
		*sym = s;
		found = 1;
	}
	return found;
}

int snap_elf_vaddr_to_offset(const struct snap_elf *e, uint64_t vaddr, uint64_t *off)
{
	for (unsigned i = 0; i < e->phnum; i++) {
		const uint8_t *p = e->buf + e->phoff + (uint64_t)i * PHDR_SIZE;
		uint64_t pv = rd64(p + SNAP_PHDR(p_vaddr)), pfs = rd64(p + SNAP_PHDR(p_filesz)),
			 po = rd64(p + SNAP_PHDR(p_offset));

		if (rd32(p + SNAP_PHDR(p_type)) != PT_LOAD || vaddr < pv || vaddr - pv >= pfs)
			continue;
		if (__builtin_add_overflow(po, vaddr - pv, off))
			continue;
		return 0;
	}
	return -ENOENT;
}

/* ---- OCaml exception notes ---- */

const uint8_t *snap_elf_shdr(const struct snap_elf *e, unsigned i)
{
	return i < e->shnum ? shdr(e, i) : NULL;
}

const char *snap_elf_sec_name(const struct snap_elf *e, unsigned i)
{
	uint16_t shstrndx = rd16(e->buf + SNAP_EHDR(e_shstrndx));
	uint64_t off, size;
	uint32_t name;

	if (shstrndx >= e->shnum || i >= e->shnum)
		return "";
	off = rd64(shdr(e, shstrndx) + SNAP_SHDR(sh_offset));
	size = rd64(shdr(e, shstrndx) + SNAP_SHDR(sh_size));
	name = rd32(shdr(e, i) + SNAP_SHDR(sh_name));
	if (!in_bounds(e, off, size, 1) || name >= size ||
	    !memchr(e->buf + off + name, '\0', size - name))
		return "";
	return (const char *)e->buf + off + name;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t sort_unique(uint64_t *v, size_t n)
{
	size_t k = 0;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), u64_cmp);
	for (size_t i = 1; i < n; i++)
		if (v[i] != v[k])
			v[++k] = v[i];
	return k + 1;
}

struct trapvec {
	uint64_t *v;
	size_t n, cap;
};

/* One note's description: base, then three 0-terminated lists. */
static int traps_desc(const uint8_t *d, uint64_t len, uint64_t delta, struct trapvec tv[3])
{
	uint64_t pos = 8;
	int list = 0;

	if (len < 8)
		return 0;
	while (list < 3 && pos + 8 <= len) {
		uint64_t a = rd64(d + pos);

		pos += 8;
		if (!a) {
			list++;
			continue;
		}
		if (snap_vec_reserve(&tv[list].v, &tv[list].cap, tv[list].n + 1, sizeof(uint64_t)) <
		    0)
			return -ENOMEM;
		tv[list].v[tv[list].n++] = a + delta;
	}
	return 0;
}

int snap_elf_ocaml_traps(const struct snap_elf *e, struct snap_elf_traps *out)
{
	struct trapvec tv[3];
	uint64_t base_addr = 0;
	int have_base = 0, found = 0, err = 0;

	memset(out, 0, sizeof(*out));
	memset(tv, 0, sizeof(tv));
	if (e->shnum && rd16(e->buf + SNAP_EHDR(e_shstrndx)) < e->shnum) {
		for (unsigned i = 0; i < e->shnum; i++)
			if (!strcmp(snap_elf_sec_name(e, i), ".stapsdt.base")) {
				base_addr = rd64(shdr(e, i) + SNAP_SHDR(sh_addr));
				have_base = 1;
				break;
			}
	}
	for (unsigned i = 0; i < e->shnum && !err; i++) {
		const uint8_t *sh = shdr(e, i);
		uint64_t off = rd64(sh + SNAP_SHDR(sh_offset)),
			 size = rd64(sh + SNAP_SHDR(sh_size));
		uint64_t align = rd64(sh + SNAP_SHDR(sh_addralign)), pos = 0;

		if (rd32(sh + SNAP_SHDR(sh_type)) != SHT_NOTE ||
		    strcmp(snap_elf_sec_name(e, i), ".note.ocaml_eh") ||
		    !in_bounds(e, off, size, 1))
			continue;
		align = align == 8 ? 8 : 4;
		while (!err && size - pos >= NHDR_SIZE) {
			const uint8_t *n = e->buf + off + pos;
			uint64_t namesz = rd32(n + SNAP_NHDR(n_namesz));
			uint64_t descsz = rd32(n + SNAP_NHDR(n_descsz)),
				 type = rd32(n + SNAP_NHDR(n_type));
			uint64_t nameal = (namesz + align - 1) & ~(align - 1);
			uint64_t descal = (descsz + align - 1) & ~(align - 1);

			if (nameal > size - pos - NHDR_SIZE ||
			    descal > size - pos - NHDR_SIZE - nameal)
				break;
			if (type == 1 && namesz == 6 && !memcmp(n + NHDR_SIZE, "OCaml", 6)) {
				const uint8_t *d = n + NHDR_SIZE + nameal;
				uint64_t delta = 0;

				if (descsz >= 8 && have_base)
					delta = base_addr - rd64(d);
				err = traps_desc(d, descsz, delta, tv);
				found = 1;
			}
			pos += NHDR_SIZE + nameal + descal;
		}
	}
	if (err) {
		for (int k = 0; k < 3; k++)
			snap_free(tv[k].v);
		return err;
	}
	out->enter = tv[0].v;
	out->nenter = sort_unique(tv[0].v, tv[0].n);
	out->push = tv[1].v;
	out->npush = sort_unique(tv[1].v, tv[1].n);
	out->pop = tv[2].v;
	out->npop = sort_unique(tv[2].v, tv[2].n);
	return found;
}

void snap_elf_traps_free(struct snap_elf_traps *t)
{
	snap_free(t->enter);
	snap_free(t->push);
	snap_free(t->pop);
	memset(t, 0, sizeof(*t));
}
