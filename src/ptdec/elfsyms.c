// SPDX-License-Identifier: GPL-2.0
/*
 * ELF symbol tables for ptdec (ptdec/elfsyms.h), following what perf's
 * util/symbol-elf.c keeps: FUNC/IFUNC and OBJECT symbols with a name and a
 * section, NOTYPE labels in text sections; at equal starts the best one
 * (non-zero size, not weak, global, fewer leading underscores, longer name);
 * a zero size extends to the next symbol (the last one to the next page);
 * PLT entries from .rela.plt. Every offset read from a file is checked.
 */
#include "ptdec/elfsyms.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/bytes.h"
#include "util/err.h"
#include "util/file.h"
#include "util/vec.h"

#define EHDR	      64
#define PHDR	      56
#define SHDR	      64
#define SYMSZ	      24
#define RELASZ	      24
#define SHT_SYMTAB    2
#define SHT_RELA      4
#define SHT_NOBITS    8
#define SHT_DYNSYM    11
#define PT_LOAD	      1
#define PT_NOTE	      4
#define STT_OBJECT    1
#define STT_FUNC      2
#define STT_NOTYPE    0
#define STT_GNU_IFUNC 10
#define STB_GLOBAL    1
#define STB_WEAK      2
#define SHN_UNDEF     0
#define SHN_ABS	      0xfff1
#define MAX_FILE      (1ull << 32)

struct elf {
	const uint8_t *b;
	size_t len;
	uint64_t shoff, phoff;
	unsigned shnum, phnum, shstrndx;
};

static int inb(const struct elf *e, uint64_t off, uint64_t n)
{
	return off <= e->len && n <= e->len - off;
}

static int elf_open(struct elf *e, const uint8_t *b, size_t len)
{
	memset(e, 0, sizeof(*e));
	if (len < EHDR || memcmp(b, "\177ELF", 4) || b[4] != 2 || b[5] != 1)
		return -SNAP_EFORMAT;
	e->b = b;
	e->len = len;
	e->phoff = snap_get64(b + 32);
	e->shoff = snap_get64(b + 40);
	e->phnum = snap_get16(b + 56);
	e->shnum = snap_get16(b + 60);
	e->shstrndx = snap_get16(b + 62);
	if (e->phnum &&
	    (snap_get16(b + 54) != PHDR || !inb(e, e->phoff, (uint64_t)e->phnum * PHDR)))
		e->phnum = 0;
	if (e->shnum &&
	    (snap_get16(b + 58) != SHDR || !inb(e, e->shoff, (uint64_t)e->shnum * SHDR)))
		e->shnum = 0;
	return 0;
}

static const uint8_t *sh(const struct elf *e, unsigned i)
{
	return e->b + e->shoff + (uint64_t)i * SHDR;
}

/* Section name of section i, or "". */
static const char *sh_name(const struct elf *e, unsigned i)
{
	const uint8_t *ss;
	uint64_t off, size, n;

	if (e->shstrndx >= e->shnum || i >= e->shnum)
		return "";
	ss = sh(e, e->shstrndx);
	off = snap_get64(ss + 24);
	size = snap_get64(ss + 32);
	n = snap_get32(sh(e, i));
	if (!inb(e, off, size) || n >= size || !memchr(e->b + off + n, 0, size - n))
		return "";
	return (const char *)e->b + off + n;
}

static int find_section(const struct elf *e, const char *name)
{
	for (unsigned i = 1; i < e->shnum; i++)
		if (!strcmp(sh_name(e, i), name))
			return (int)i;
	return -1;
}

static int find_type(const struct elf *e, uint32_t type)
{
	for (unsigned i = 1; i < e->shnum; i++)
		if (snap_get32(sh(e, i) + 4) == type)
			return (int)i;
	return -1;
}

static int add_name(struct snap_elfsyms *s, const char *n, size_t len, uint32_t *off)
{
	int err;

	if (s->nameslen + len + 1 > UINT32_MAX)
		return -ENOMEM;
	err = snap_vec_reserve(&s->names, &s->namescap, s->nameslen + len + 1, 1);
	if (err)
		return err;
	memcpy(s->names + s->nameslen, n, len);
	s->names[s->nameslen + len] = 0;
	*off = (uint32_t)s->nameslen;
	s->nameslen += len + 1;
	return 0;
}

/*
 * perf's demangling (util/symbol-elf.c demangle_sym, libiberty without
 * DMGL_PARAMS unless perf -v): "_Z5outeri" -> "outer", a "@..." version or
 * "@plt" suffix kept as it is. Returns a malloc'ed name or NULL to keep n.
 */
static char *demangle(const char *n, size_t len)
{
	const char *at = memchr(n, '@', len);
	size_t plen = at ? (size_t)(at - n) : len, dlen;
	char *pre, *dem, *out = NULL;

	if (len < 3 || n[0] != '_' || n[1] != 'Z')
		return NULL;
	pre = snap_strndup(n, plen);
	if (!pre)
		return NULL;
	dem = cplus_demangle(pre, DMGL_NO_OPTS);
	snap_free(pre);
	if (!dem)
		return NULL;
	dlen = strlen(dem);
	out = snap_malloc(dlen + (len - plen) + 1);
	if (out) {
		memcpy(out, dem, dlen);
		memcpy(out + dlen, n + plen, len - plen);
		out[dlen + (len - plen)] = 0;
	}
	free(dem);
	return out;
}

static int add_sym(struct snap_elfsyms *s, size_t *cap, uint64_t start, uint64_t size, uint8_t bind,
		   const char *n, size_t len)
{
	struct snap_elfsym_ent *x;
	char *dem = demangle(n, len);
	int err = snap_vec_reserve(&s->syms, cap, s->nsyms + 1, sizeof(*s->syms));

	if (dem) {
		n = dem;
		len = strlen(dem);
	}
	if (err) {
		snap_free(dem);
		return err;
	}
	x = &s->syms[s->nsyms];
	x->start = start;
	x->end = start + size < start ? UINT64_MAX : start + size;
	x->bind = bind;
	err = add_name(s, n, len, &x->name);
	snap_free(dem);
	if (err < 0)
		return err;
	s->nsyms++;
	return 0;
}

/* Adds the symbols of symbol table section si whose strings are in its sh_link. */
static int read_symtab(struct snap_elfsyms *s, size_t *cap, const struct elf *e, int si)
{
	const uint8_t *t = sh(e, (unsigned)si), *st;
	uint64_t off = snap_get64(t + 24), size = snap_get64(t + 32), soff, ssize;
	uint32_t link = snap_get32(t + 40);
	int err;

	if (!inb(e, off, size) || link >= e->shnum)
		return 0;
	st = sh(e, link);
	soff = snap_get64(st + 24);
	ssize = snap_get64(st + 32);
	if (!inb(e, soff, ssize))
		return 0;
	for (uint64_t i = SYMSZ; i + SYMSZ <= size; i += SYMSZ) { /* entry 0 is null */
		const uint8_t *p = e->b + off + i;
		uint32_t name = snap_get32(p);
		uint8_t info = p[4], type = info & 0xf, bind = info >> 4, vis = p[5] & 3;
		uint16_t shndx = snap_get16(p + 6);
		uint64_t value = snap_get64(p + 8), sz = snap_get64(p + 16);
		const char *n;
		size_t nlen;
		int keep;

		if (!name || name >= ssize || shndx == SHN_UNDEF)
			continue;
		n = (const char *)e->b + soff + name;
		nlen = strnlen(n, ssize - name);
		if (nlen == ssize - name || !nlen)
			continue;
		keep = (type == STT_FUNC || type == STT_GNU_IFUNC) && shndx != SHN_ABS;
		if (!keep && type == STT_NOTYPE && shndx != SHN_ABS && vis != 2 && vis != 1 &&
		    shndx < e->shnum && strstr(sh_name(e, shndx), "text"))
			keep = 1; /* a label in a text section */
		if (!keep)
			continue;
		if ((err = add_sym(s, cap, value, sz, bind, n, nlen)) < 0)
			return err;
	}
	return 0;
}

/* "NAME@plt" for each .rela.plt entry, on the .plt.sec or .plt entries in order. */
static int read_plt(struct snap_elfsyms *s, size_t *cap, const struct elf *e)
{
	int rel = find_section(e, ".rela.plt"), plt = find_section(e, ".plt.sec");
	uint64_t addr, hdr = 0, ent = 16, roff, rsize, soff, ssize, doff, dsize;
	const uint8_t *ds, *ss;
	char buf[256];
	int err;

	if (plt < 0) {
		plt = find_section(e, ".plt");
		hdr = 16;
	}
	if (rel < 0 || plt < 0)
		return 0;
	addr = snap_get64(sh(e, (unsigned)plt) + 16) + hdr;
	roff = snap_get64(sh(e, (unsigned)rel) + 24);
	rsize = snap_get64(sh(e, (unsigned)rel) + 32);
	if (snap_get32(sh(e, (unsigned)rel) + 40) >= e->shnum || !inb(e, roff, rsize))
		return 0;
	ds = sh(e, snap_get32(sh(e, (unsigned)rel) + 40));
	doff = snap_get64(ds + 24);
	dsize = snap_get64(ds + 32);
	if (snap_get32(ds + 40) >= e->shnum || !inb(e, doff, dsize))
		return 0;
	ss = sh(e, snap_get32(ds + 40));
	soff = snap_get64(ss + 24);
	ssize = snap_get64(ss + 32);
	if (!inb(e, soff, ssize))
		return 0;
	/* Measured against perf 6.1: in an executable with an .init section (whose
	 * _init symbol precedes .plt) the first slot gets no symbol, so _init's
	 * extended range covers it; shared libraries keep every slot. */
	uint64_t first = find_section(e, ".init") >= 0 ? RELASZ : 0;

	if (first)
		addr += ent;
	for (uint64_t i = first; i + RELASZ <= rsize; i += RELASZ, addr += ent) {
		const uint8_t *p = e->b + roff + i;
		uint64_t info = snap_get64(p + 8), symi = info >> 32;
		const char *n = "";
		int len;

		if (symi && (symi + 1) * SYMSZ <= dsize) {
			uint32_t nm = snap_get32(e->b + doff + symi * SYMSZ);

			if (nm < ssize && memchr(e->b + soff + nm, 0, ssize - nm))
				n = (const char *)e->b + soff + nm;
		}
		/* perf 6.1 names an IRELATIVE slot (no symbol) just "@plt" */
		len = snprintf(buf, sizeof(buf), "%.200s@plt", n);
		if ((err = add_sym(s, cap, addr, ent, STB_GLOBAL, buf, (size_t)len)) < 0)
			return err;
	}
	return 0;
}

static void read_loads(struct snap_elfsyms *s, const struct elf *e)
{
	for (unsigned i = 0; i < e->phnum; i++) {
		const uint8_t *p = e->b + e->phoff + (uint64_t)i * PHDR;

		if (snap_get32(p) == PT_LOAD &&
		    s->nload < (int)(sizeof(s->load) / sizeof(s->load[0]))) {
			s->load[s->nload].off = snap_get64(p + 8);
			s->load[s->nload].vaddr = snap_get64(p + 16);
			s->load[s->nload].filesz = snap_get64(p + 32);
			s->nload++;
		}
		if (snap_get32(p) == PT_NOTE) {
			uint64_t off = snap_get64(p + 8), size = snap_get64(p + 32), q = 0;

			if (!inb(e, off, size))
				continue;
			while (q + 12 <= size) {
				const uint8_t *n = e->b + off + q;
				uint32_t nsz = snap_get32(n), dsz = snap_get32(n + 4),
					 type = snap_get32(n + 8);
				uint64_t an = ((uint64_t)nsz + 3) & ~3ull,
					 ad = ((uint64_t)dsz + 3) & ~3ull;

				if (12 + an + ad > size - q)
					break;
				if (type == 3 && nsz == 4 && !memcmp(n + 12, "GNU", 4) &&
				    dsz <= 20 && dsz) {
					memcpy(s->build_id, n + 12 + an, dsz);
					s->build_id_len = dsz;
				}
				q += 12 + an + ad;
			}
		}
	}
}

static int prefix_us(const char *n)
{
	int k = 0;

	while (n[k] == '_')
		k++;
	return k;
}

/* 1 if a is the better of two symbols at the same start (perf's choose_best_symbol). */
static int better(const struct snap_elfsyms *s, const struct snap_elfsym_ent *a,
		  const struct snap_elfsym_ent *b)
{
	uint64_t la = a->end - a->start, lb = b->end - b->start;
	const char *na = s->names + a->name, *nb = s->names + b->name;
	int wa = a->bind == STB_WEAK, wb = b->bind == STB_WEAK;
	int ga = a->bind == STB_GLOBAL, gb = b->bind == STB_GLOBAL;
	size_t sa, sb;

	if (!lb && la)
		return 1;
	if (!la && lb)
		return 0;
	if (wb && !wa)
		return 1;
	if (wa && !wb)
		return 0;
	if (ga && !gb)
		return 1;
	if (gb && !ga)
		return 0;
	if (prefix_us(nb) > prefix_us(na))
		return 1;
	if (prefix_us(na) > prefix_us(nb))
		return 0;
	sa = strlen(na);
	sb = strlen(nb);
	return sa >= sb;
}

static int cmp_start(const void *x, const void *y)
{
	const struct snap_elfsym_ent *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	/* Equal starts keep file order (qsort is not stable: order by name offset). */
	return a->name < b->name ? -1 : a->name > b->name;
}

/* Sorts the symbols by start and keeps the best of each start (perf's
 * symbols__fixup_duplicate). Returns the count left (s->nsyms > 0). */
static size_t sort_dedup(struct snap_elfsyms *s)
{
	size_t n = 0;

	qsort(s->syms, s->nsyms, sizeof(*s->syms), cmp_start);
	for (size_t i = 0; i < s->nsyms; i++) {
		if (n && s->syms[n - 1].start == s->syms[i].start) {
			if (!better(s, &s->syms[n - 1], &s->syms[i]))
				s->syms[n - 1] = s->syms[i];
			continue;
		}
		s->syms[n++] = s->syms[i];
	}
	s->nsyms = n;
	return n;
}

static void finish_syms(struct snap_elfsyms *s)
{
	size_t n;

	if (!s->nsyms)
		return;
	n = sort_dedup(s);
	for (size_t i = 0; i + 1 < n; i++)
		if (s->syms[i].end == s->syms[i].start)
			s->syms[i].end = s->syms[i + 1].start;
	if (s->syms[n - 1].end == s->syms[n - 1].start)
		s->syms[n - 1].end = ((s->syms[n - 1].start + 4095) & ~4095ull) + 4096;
}

static int map_file(const char *path, const uint8_t **buf, size_t *len)
{
	const void *m = NULL;
	int err = snap_file_map_range(path, EHDR, MAX_FILE, 1, &m, len);

	*buf = m;
	return err == 1 ? -SNAP_EFORMAT : err;
}

/* The .symtab of the debug file for the build id, if there is one. */
static int load_debug(struct snap_elfsyms *s, size_t *cap, const char *dir)
{
	char path[4096];
	int n, err = 0, si;
	const uint8_t *b;
	size_t len;
	struct elf e;

	if (!dir || s->build_id_len < 2)
		return 0;
	n = snprintf(path, sizeof(path), "%s/.build-id/%02x/", dir, s->build_id[0]);
	for (size_t i = 1; i < s->build_id_len && n > 0 && n < (int)sizeof(path) - 8; i++)
		n += snprintf(path + n, sizeof(path) - (size_t)n, "%02x", s->build_id[i]);
	if (n <= 0 || n >= (int)sizeof(path) - 8)
		return 0;
	strcpy(path + n, ".debug");
	if (map_file(path, &b, &len) < 0)
		return 0;
	if (elf_open(&e, b, len) == 0 && (si = find_type(&e, SHT_SYMTAB)) >= 0 &&
	    snap_get32(sh(&e, (unsigned)si) + 4) != SHT_NOBITS) {
		err = read_symtab(s, cap, &e, si);
		if (err >= 0)
			err = 1;
	}
	snap_file_unmap(b, len);
	return err;
}

int snap_elfsyms_load_mem(struct snap_elfsyms *s, const uint8_t *buf, size_t len,
			  const char *debug_dir)
{
	struct elf e;
	size_t cap = 0;
	int err, si;

	memset(s, 0, sizeof(*s));
	if ((err = elf_open(&e, buf, len)) < 0)
		return err;
	s->ok = 1;
	read_loads(s, &e);
	err = load_debug(s, &cap, debug_dir);
	if (err == 0) {
		si = find_type(&e, SHT_SYMTAB);
		if (si < 0)
			si = find_type(&e, SHT_DYNSYM);
		if (si >= 0)
			err = read_symtab(s, &cap, &e, si);
	}
	if (err >= 0)
		err = read_plt(s, &cap, &e);
	if (err >= 0)
		finish_syms(s);
	if (err < 0) {
		snap_elfsyms_fini(s);
		return err;
	}
	return 0;
}

/* ---- kallsyms ---- */

int snap_elfsyms_load_kallsyms_mem(struct snap_elfsyms *s, const char *buf, size_t len)
{
	size_t cap = 0, pos = 0, n = 0;
	int err = 0;

	memset(s, 0, sizeof(*s));
	s->ok = 1;
	while (pos < len && err >= 0) {
		const char *l = buf + pos, *e = memchr(l, '\n', len - pos), *name, *tab;
		size_t ll = e ? (size_t)(e - l) : len - pos, nl;
		uint64_t a = 0;
		size_t i = 0;
		char t;

		pos += ll + 1;
		while (i < ll && i < 16 && isxdigit((unsigned char)l[i])) {
			char c = l[i++];

			a = (a << 4) | (uint64_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
		}
		if (!i || i + 3 > ll || l[i] != ' ' || l[i + 2] != ' ')
			continue;
		t = l[i + 1];
		name = l + i + 3;
		nl = ll - i - 3;
		if (!nl || name[0] == '$')
			continue;
		t = (char)toupper((unsigned char)t);
		if (t != 'T' && t != 'W' && t != 'D' && t != 'B')
			continue;
		tab = memchr(name, '\t', nl);
		err = add_sym(s, &cap, a, 0,
			      l[i + 1] == 'W'			 ? STB_WEAK
			      : isupper((unsigned char)l[i + 1]) ? STB_GLOBAL
								 : 0,
			      name, tab ? (size_t)(tab - name) : nl);
		if (err >= 0 && tab && memchr(tab, '[', nl - (size_t)(tab - name)))
			s->syms[s->nsyms - 1].kmod = 1;
	}
	if (err < 0) {
		snap_elfsyms_fini(s);
		return err;
	}
	if (!s->nsyms)
		return 0;
	/* perf's symbols__fixup_duplicate, then fixup_end for kallsyms. */
	n = sort_dedup(s);
	for (size_t i = 0; i + 1 < n; i++)
		s->syms[i].end = s->syms[i].kmod != s->syms[i + 1].kmod
					 ? ((s->syms[i].start + 4096 + 4095) & ~4095ull)
					 : s->syms[i + 1].start;
	s->syms[n - 1].end = ((s->syms[n - 1].start + 4095) & ~4095ull) + 4096;
	return 0;
}

int snap_elfsyms_load_kallsyms(struct snap_elfsyms *s, const char *path)
{
	const void *m;
	size_t len;
	char *buf;
	int err;

	memset(s, 0, sizeof(*s));
	/* /proc/kallsyms has no size: read it; a copy is mapped. */
	err = snap_file_map_range(path, 1, MAX_FILE, 1, &m, &len);
	if (err == 0) {
		err = snap_elfsyms_load_kallsyms_mem(s, m, len);
		snap_file_unmap(m, len);
		return err;
	}
	{
		FILE *f = fopen(path, "re");
		size_t cap = 0, n = 0, got;

		if (!f)
			return -errno;
		buf = NULL;
		do {
			if ((err = snap_vec_reserve(&buf, &cap, n + 65536, 1)) < 0)
				break;
			got = fread(buf + n, 1, cap - n, f);
			n += got;
		} while (got && n < MAX_FILE);
		fclose(f);
		if (err >= 0)
			err = snap_elfsyms_load_kallsyms_mem(s, buf, n);
		snap_free(buf);
		return err;
	}
}

int snap_kallsyms_lookup(const char *path, const char *name, uint64_t *addr)
{
	FILE *f = fopen(path, "re");
	char line[1024];
	size_t nl = strlen(name);
	int err = -ENOENT;

	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' '), *n;

		if (!sp || !sp[1] || sp[2] != ' ')
			continue;
		n = sp + 3;
		if (!strncmp(n, name, nl) && (n[nl] == '\n' || n[nl] == '\t' || !n[nl])) {
			*addr = strtoull(line, NULL, 16);
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

int snap_elfsyms_lookup(const struct snap_elfsyms *s, const char *name, uint64_t *addr)
{
	for (size_t i = 0; i < s->nsyms; i++)
		if (!strcmp(s->names + s->syms[i].name, name)) {
			*addr = s->syms[i].start;
			return 0;
		}
	return -ENOENT;
}

int snap_elf_symbol_value(const char *path, const char *name, uint64_t *val)
{
	const uint8_t *b;
	size_t len, nl = strlen(name);
	struct elf e;
	int si, err = -ENOENT;

	if (map_file(path, &b, &len) < 0)
		return -ENOENT;
	if (elf_open(&e, b, len) == 0 && (si = find_type(&e, SHT_SYMTAB)) >= 0) {
		const uint8_t *t = sh(&e, (unsigned)si);
		uint64_t off = snap_get64(t + 24), size = snap_get64(t + 32);
		uint32_t link = snap_get32(t + 40);

		if (inb(&e, off, size) && link < e.shnum) {
			uint64_t soff = snap_get64(sh(&e, link) + 24),
				 ssize = snap_get64(sh(&e, link) + 32);

			for (uint64_t i = SYMSZ; inb(&e, soff, ssize) && i + SYMSZ <= size;
			     i += SYMSZ) {
				uint32_t n = snap_get32(b + off + i);

				if (n < ssize && ssize - n > nl &&
				    !memcmp(b + soff + n, name, nl + 1)) {
					*val = snap_get64(b + off + i + 8);
					err = 0;
					break;
				}
			}
		}
	}
	snap_file_unmap(b, len);
	return err;
}

/* ---- program headers ---- */

static int pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -SNAP_EFORMAT;
		got += (size_t)r;
	}
	return 0;
}

int snap_elf_segments(const char *path, struct snap_elfseg **segs, size_t *nsegs, int *etype,
		      uint8_t build_id[20], size_t *build_id_len)
{
	uint8_t eh[EHDR], *ph = NULL;
	uint64_t phoff;
	unsigned phnum;
	size_t cap = 0;
	int fd, err;

	*segs = NULL;
	*nsegs = 0;
	*build_id_len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	err = pread_all(fd, eh, sizeof(eh), 0);
	if (err < 0 || memcmp(eh, "\177ELF", 4) || eh[4] != 2 || eh[5] != 1 ||
	    snap_get16(eh + 54) != PHDR) {
		close(fd);
		return err < 0 ? err : -SNAP_EFORMAT;
	}
	*etype = snap_get16(eh + 16);
	phoff = snap_get64(eh + 32);
	phnum = snap_get16(eh + 56);
	if (phnum > SNAP_ELF_MAX_SEGS)
		phnum = SNAP_ELF_MAX_SEGS;
	ph = snap_malloc((size_t)phnum * PHDR + 1);
	if (!ph) {
		close(fd);
		return -ENOMEM;
	}
	err = pread_all(fd, ph, (size_t)phnum * PHDR, phoff);
	for (unsigned i = 0; i < phnum && err >= 0; i++) {
		const uint8_t *p = ph + (size_t)i * PHDR;
		uint32_t type = snap_get32(p);

		if (type == PT_LOAD) {
			struct snap_elfseg *g;

			if ((err = snap_vec_reserve(segs, &cap, *nsegs + 1, sizeof(**segs))) < 0)
				break;
			g = &(*segs)[(*nsegs)++];
			g->flags = snap_get32(p + 4);
			g->off = snap_get64(p + 8);
			g->vaddr = snap_get64(p + 16);
			g->filesz = snap_get64(p + 32);
			g->memsz = snap_get64(p + 40);
		} else if (type == PT_NOTE && !*build_id_len) {
			uint64_t off = snap_get64(p + 8), size = snap_get64(p + 32), q = 0;
			uint8_t nb[512];

			if (size > sizeof(nb))
				size = sizeof(nb);
			if (pread_all(fd, nb, (size_t)size, off) < 0)
				continue;
			while (q + 12 <= size) {
				const uint8_t *n = nb + q;
				uint32_t nsz = snap_get32(n), dsz = snap_get32(n + 4);
				uint64_t an = ((uint64_t)nsz + 3) & ~3ull,
					 ad = ((uint64_t)dsz + 3) & ~3ull;

				if (12 + an + ad > size - q)
					break;
				if (snap_get32(n + 8) == 3 && nsz == 4 &&
				    !memcmp(n + 12, "GNU", 4) && dsz && dsz <= 20) {
					memcpy(build_id, n + 12 + an, dsz);
					*build_id_len = dsz;
					break;
				}
				q += 12 + an + ad;
			}
		}
	}
	snap_free(ph);
	close(fd);
	if (err < 0) {
		snap_free(*segs);
		*segs = NULL;
		*nsegs = 0;
		if (err == -SNAP_EFORMAT)
			return err;
	}
	return err < 0 ? err : 0;
}

int snap_elfsyms_load(struct snap_elfsyms *s, const char *path, const char *debug_dir)
{
	const uint8_t *b;
	size_t len;
	int err;

	memset(s, 0, sizeof(*s));
	if ((err = map_file(path, &b, &len)) < 0)
		return err;
	err = snap_elfsyms_load_mem(s, b, len, debug_dir);
	snap_file_unmap(b, len);
	return err;
}

void snap_elfsyms_fini(struct snap_elfsyms *s)
{
	snap_free(s->syms);
	snap_free(s->names);
	memset(s, 0, sizeof(*s));
}

const struct snap_elfsym_ent *snap_elfsyms_find(const struct snap_elfsyms *s, uint64_t vaddr)
{
	size_t lo = 0, hi = s->nsyms;

	while (lo < hi) { /* last symbol with start <= vaddr */
		size_t mid = lo + (hi - lo) / 2;

		if (s->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || vaddr >= s->syms[lo - 1].end)
		return NULL;
	return &s->syms[lo - 1];
}

int snap_elfsyms_off2vaddr(const struct snap_elfsyms *s, uint64_t off, uint64_t *vaddr)
{
	for (int i = 0; i < s->nload; i++)
		if (off >= s->load[i].off && off - s->load[i].off < s->load[i].filesz) {
			*vaddr = s->load[i].vaddr + (off - s->load[i].off);
			return 0;
		}
	return -ENOENT;
}
