// SPDX-License-Identifier: GPL-2.0
#include "record/elfsym.h"

#include <errno.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/bytes.h"
#include "util/err.h"
#include "util/vec.h"

int snap_elfsym_next(const struct snap_elf *e, uint64_t *cursor, struct snap_elfsym *sym)
{
	/* cursor: bit 63 selects the table (0 symtab, 1 dynsym), the rest the index */
	for (;;) {
		int which = (int)(*cursor >> 63);
		uint64_t i = *cursor & ~(1ull << 63);
		struct snap_elf_symtab t;
		struct snap_elf_rawsym r;

		if (snap_elf_symtab(e, which ? e->dynsym : e->symtab, &t) < 0 || i >= t.count) {
			if (which)
				return 0;
			*cursor = 1ull << 63;
			continue;
		}
		*cursor += 1;
		snap_elf_sym_at(&t, i, &r);
		sym->type = r.type;
		sym->bind = r.bind;
		sym->shndx = r.shndx;
		sym->value = r.value;
		sym->size = r.size;
		if (!sym->shndx || r.name == 0 ||
		    !(sym->name = snap_elf_str(t.str, t.strsize, r.name)))
			continue;
		return 1;
	}
}

int snap_elfsym_find_func(const struct snap_elf *e, const char *name, struct snap_elfsym *sym)
{
	uint64_t cur = 0;

	while (snap_elfsym_next(e, &cur, sym) == 1) {
		if (snap_elfsym_is_func(sym) && sym->value && !strcmp(sym->name, name))
			return 1;
	}
	return 0;
}

char *snap_elfsym_demangle(const char *name, int params)
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

int snap_elfsym_find_demangled(const struct snap_elf *e, const char *name, int suffix,
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
	while (snap_elfsym_next(e, &cur, &s) == 1) {
		int hit = 0;

		if (!snap_elfsym_is_func(&s) || !s.value || (ident[0] && !strstr(s.name, ident)))
			continue;
		for (int params = 0; params < 2 && !hit; params++) {
			char *dem = snap_elfsym_demangle(s.name, params);

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

/* ---- OCaml exception notes ---- */

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
		uint64_t a = snap_get64(d + pos);

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

/* Adds the OCaml notes of section i (a SHT_NOTE called .note.ocaml_eh) to tv.
 * Returns 1 if it had one, 0, -ENOMEM. */
static int traps_section(const struct snap_elf *e, unsigned i, int have_base, uint64_t base_addr,
			 struct trapvec tv[3])
{
	const uint8_t *sh = snap_elf_shdr(e, i), *p;
	uint64_t size, align = snap_get64(sh + SNAP_SHDR(sh_addralign)), pos = 0;
	struct snap_elf_note n;
	int found = 0, err = 0;

	if (snap_get32(sh + SNAP_SHDR(sh_type)) != SHT_NOTE ||
	    strcmp(snap_elf_sec_name(e, i), ".note.ocaml_eh") ||
	    !(p = snap_elf_sec_bytes(e, i, &size)))
		return 0;
	align = align == 8 ? 8 : 4;
	while (!err && snap_elf_note_next(p, size, align, &pos, &n)) {
		uint64_t delta = 0;

		if (!snap_elf_note_is(&n, "OCaml", 1))
			continue;
		if (n.descsz >= 8 && have_base)
			delta = base_addr - snap_get64(n.desc);
		err = traps_desc(n.desc, n.descsz, delta, tv);
		found = 1;
	}
	return err < 0 ? err : found;
}

int snap_ocaml_traps_read(const struct snap_elf *e, struct snap_ocaml_eh *out)
{
	struct trapvec tv[3];
	uint64_t base_addr = 0;
	int have_base = 0, found = 0, err = 0, base = snap_elf_sec_by_name(e, ".stapsdt.base");

	memset(out, 0, sizeof(*out));
	memset(tv, 0, sizeof(tv));
	if (base >= 0) {
		base_addr = snap_get64(snap_elf_shdr(e, (unsigned)base) + SNAP_SHDR(sh_addr));
		have_base = 1;
	}
	for (unsigned i = 0; i < e->shnum && err >= 0; i++)
		if ((err = traps_section(e, i, have_base, base_addr, tv)) > 0)
			found = 1;
	if (err < 0) {
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

void snap_ocaml_traps_free(struct snap_ocaml_eh *t)
{
	snap_free((uint64_t *)t->enter);
	snap_free((uint64_t *)t->push);
	snap_free((uint64_t *)t->pop);
	memset(t, 0, sizeof(*t));
}
