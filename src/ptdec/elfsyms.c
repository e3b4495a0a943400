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
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/bytes.h"
#include "util/elf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/vec.h"

#define SYMSZ	 sizeof(Elf64_Sym)
#define RELASZ	 sizeof(Elf64_Rela)
#define MAX_FILE (1ull << 32)

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
	struct snap_elfsyms_ent *x;
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
static int read_symtab(struct snap_elfsyms *s, size_t *cap, const struct snap_elf *e, int si)
{
	struct snap_elf_symtab t;
	int err;

	if (snap_elf_symtab(e, si, &t) < 0)
		return 0;
	for (uint64_t i = 1; i < t.count; i++) { /* entry 0 is null */
		struct snap_elf_rawsym r;
		const char *n;
		int keep;

		snap_elf_sym_at(&t, i, &r);
		if (!r.name || r.shndx == SHN_UNDEF ||
		    !(n = snap_elf_str(t.str, t.strsize, r.name)) || !n[0])
			continue;
		keep = (r.type == STT_FUNC || r.type == STT_GNU_IFUNC) && r.shndx != SHN_ABS;
		if (!keep && r.type == STT_NOTYPE && r.shndx != SHN_ABS && r.vis != STV_HIDDEN &&
		    r.vis != STV_INTERNAL && r.shndx < e->shnum &&
		    strstr(snap_elf_sec_name(e, r.shndx), "text"))
			keep = 1; /* a label in a text section */
		if (!keep)
			continue;
		if ((err = add_sym(s, cap, r.value, r.size, r.bind, n, strlen(n))) < 0)
			return err;
	}
	return 0;
}

/* "NAME@plt" for each .rela.plt entry, on the .plt.sec or .plt entries in order. */
static int read_plt(struct snap_elfsyms *s, size_t *cap, const struct snap_elf *e)
{
	int rel = snap_elf_sec_by_name(e, ".rela.plt"), plt = snap_elf_sec_by_name(e, ".plt.sec");
	uint64_t addr, hdr = 0, ent = 16, rsize;
	struct snap_elf_symtab t;
	const uint8_t *r;
	char buf[256];
	int err;

	if (plt < 0) {
		plt = snap_elf_sec_by_name(e, ".plt");
		hdr = 16;
	}
	if (rel < 0 || plt < 0)
		return 0;
	addr = snap_get64(snap_elf_shdr(e, (unsigned)plt) + SNAP_SHDR(sh_addr)) + hdr;
	r = snap_elf_sec_bytes(e, (unsigned)rel, &rsize);
	if (!r || snap_elf_symtab(
			  e, (int)snap_get32(snap_elf_shdr(e, (unsigned)rel) + SNAP_SHDR(sh_link)),
			  &t) < 0)
		return 0;
	/* Measured against perf 6.1: in an executable with an .init section (whose
	 * _init symbol precedes .plt) the first slot gets no symbol, so _init's
	 * extended range covers it; shared libraries keep every slot. */
	uint64_t first = snap_elf_sec_by_name(e, ".init") >= 0 ? RELASZ : 0;

	if (first)
		addr += ent;
	for (uint64_t i = first; i + RELASZ <= rsize; i += RELASZ, addr += ent) {
		uint64_t symi = snap_get64(r + i + SNAP_RELA(r_info)) >> 32;
		struct snap_elf_rawsym sym;
		const char *n = NULL;
		int len;

		if (symi && symi < t.count) {
			snap_elf_sym_at(&t, symi, &sym);
			n = snap_elf_str(t.str, t.strsize, sym.name);
		}
		/* perf 6.1 names an IRELATIVE slot (no symbol) just "@plt" */
		len = snprintf(buf, sizeof(buf), "%.200s@plt", n ? n : "");
		if ((err = add_sym(s, cap, addr, ent, STB_GLOBAL, buf, (size_t)len)) < 0)
			return err;
	}
	return 0;
}

/* The executable and other PT_LOAD segments, and the GNU build id (the last
 * one of the PT_NOTE segments). */
static void read_loads(struct snap_elfsyms *s, const struct snap_elf *e)
{
	for (size_t i = 0; i < e->nload && s->nload < (int)(sizeof(s->load) / sizeof(s->load[0]));
	     i++)
		s->load[s->nload++] = e->load[i];
	for (unsigned i = 0; i < e->phnum; i++) {
		const uint8_t *p = snap_elf_phdr(e, i);
		uint64_t off = snap_get64(p + SNAP_PHDR(p_offset)), q = 0,
			 size = snap_get64(p + SNAP_PHDR(p_filesz));
		struct snap_elf_note n;

		if (snap_get32(p + SNAP_PHDR(p_type)) != PT_NOTE ||
		    !snap_elf_in_bounds(e, off, size, 1))
			continue;
		while (snap_elf_note_next(e->buf + off, size, 4, &q, &n))
			snap_elf_note_build_id(&n, s->build_id, &s->build_id_len);
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
static int better(const struct snap_elfsyms *s, const struct snap_elfsyms_ent *a,
		  const struct snap_elfsyms_ent *b)
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
	const struct snap_elfsyms_ent *a = x, *b = y;

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
	int err = snap_file_map_range(path, sizeof(Elf64_Ehdr), MAX_FILE, 1, &m, len);

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
	struct snap_elf e;

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
	if (snap_elf_open(&e, b, len, SNAP_ELF_LAX) == 0 &&
	    (si = snap_elf_sec_by_type(&e, SHT_SYMTAB)) >= 0) {
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
	struct snap_elf e;
	size_t cap = 0;
	int err, si;

	memset(s, 0, sizeof(*s));
	if ((err = snap_elf_open(&e, buf, len, SNAP_ELF_LAX)) < 0)
		return err;
	s->ok = 1;
	read_loads(s, &e);
	err = load_debug(s, &cap, debug_dir);
	if (err == 0) {
		si = snap_elf_sec_by_type(&e, SHT_SYMTAB);
		if (si < 0)
			si = snap_elf_sec_by_type(&e, SHT_DYNSYM);
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

int snap_elfsyms_symbol_value(const char *path, const char *name, uint64_t *val)
{
	struct snap_elf_symtab t;
	size_t len, nl = strlen(name);
	const uint8_t *b;
	struct snap_elf e;
	int err = -ENOENT;

	if (map_file(path, &b, &len) < 0)
		return -ENOENT;
	if (snap_elf_open(&e, b, len, SNAP_ELF_LAX) == 0 &&
	    snap_elf_symtab(&e, snap_elf_sec_by_type(&e, SHT_SYMTAB), &t) == 0) {
		for (uint64_t i = 1; i < t.count; i++) {
			struct snap_elf_rawsym r;

			snap_elf_sym_at(&t, i, &r);
			if (r.name < t.strsize && t.strsize - r.name > nl &&
			    !memcmp(t.str + r.name, name, nl + 1)) {
				*val = r.value;
				err = 0;
				break;
			}
		}
	}
	snap_file_unmap(b, len);
	return err;
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

const struct snap_elfsyms_ent *snap_elfsyms_find(const struct snap_elfsyms *s, uint64_t vaddr)
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
	return snap_loadseg_off2vaddr(s->load, (size_t)s->nload, off, vaddr);
}
