// SPDX-License-Identifier: GPL-2.0
/* Source positions for slices. See srcinfo.h. */
#include "record/srcinfo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "record/dwline.h"
#include "record/elfsym.h"
#include "util/alloc.h"
#include "util/file.h"
#include "util/vec.h"

struct fsym {
	const char *name; /* in the mapped file, or dem */
	char *dem;	  /* owned: the demangled name perf shows, or NULL */
	uint64_t value;	  /* 0: several functions show this name (overloads) */
};

struct snap_srcfile {
	const void *buf;
	size_t len;
	struct snap_dwline *dw;
	struct fsym *syms; /* FUNC symbols sorted by name */
	size_t nsyms;
};

static int fsym_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fsym *)a)->name, ((const struct fsym *)b)->name);
}

static void file_free(struct snap_srcfile *f)
{
	if (!f)
		return;
	snap_dwline_close(f->dw);
	snap_file_unmap(f->buf, f->len);
	for (size_t i = 0; i < f->nsyms; i++)
		free(f->syms[i].dem);
	snap_free(f->syms);
	snap_free(f);
}

/* Opens path if it has line information and function symbols; NULL if not. */
static struct snap_srcfile *file_open(const char *path)
{
	struct snap_srcfile *f = snap_calloc(1, sizeof(*f));
	struct snap_elf e;
	struct snap_elfsym sym;
	size_t cap = 0;
	uint64_t cur = 0;

	if (!f)
		return NULL;
	f->nsyms = 0;
	if (snap_dwline_open(path, &f->dw) < 0 || snap_file_map(path, &f->buf, &f->len) < 0 ||
	    snap_elf_open(&e, f->buf, f->len, 0) < 0)
		goto fail;
	while (snap_elfsym_next(&e, &cur, &sym) == 1) {
		char *dem;

		if (!snap_elfsym_is_func(&sym) || !sym.value || !sym.name[0])
			continue;
		if (snap_vec_reserve(&f->syms, &cap, f->nsyms + 2, sizeof(*f->syms)) < 0)
			goto fail;
		f->syms[f->nsyms++] = (struct fsym){sym.name, NULL, sym.value};
		/* the trace names C++ and Rust functions as perf shows them */
		dem = snap_elfsym_demangle(sym.name, 0);
		if (dem)
			f->syms[f->nsyms++] = (struct fsym){dem, dem, sym.value};
	}
	if (!f->nsyms)
		goto fail;
	qsort(f->syms, f->nsyms, sizeof(*f->syms), fsym_cmp);
	/* a name shown for functions at several addresses gives no position */
	for (size_t i = 0, j; i < f->nsyms; i = j) {
		int same = 1;

		for (j = i + 1; j < f->nsyms && !strcmp(f->syms[i].name, f->syms[j].name); j++)
			same &= f->syms[j].value == f->syms[i].value;
		for (size_t k = i; !same && k < j; k++)
			f->syms[k].value = 0;
	}
	return f;
fail:
	file_free(f);
	return NULL;
}

static int lookup(void *ctx, const struct snap_loc *loc, uint32_t *file, int32_t *line,
		  int32_t *col)
{
	struct snap_srcinfo *si = ctx;
	struct snap_srcfile *f;
	struct fsym key, *hit;
	const char *path, *src;
	uint64_t v;
	int l, c;
	int64_t id;

	if (!loc->dso || !loc->sym)
		return 0;
	if (!snap_u64map_get(&si->dsos, loc->dso, &v)) {
		path = snap_strtab_get(si->st, loc->dso);
		f = path[0] == '/' ? file_open(path) : NULL;
		v = 0;
		if (f) {
			if (snap_vec_reserve(&si->files, &si->cap, si->nfiles + 1,
					     sizeof(*si->files)) < 0) {
				file_free(f);
				return -ENOMEM;
			}
			si->files[si->nfiles++] = f;
			v = si->nfiles;
		}
		if (snap_u64map_put(&si->dsos, loc->dso, v) < 0)
			return -ENOMEM;
	}
	if (!v)
		return 0;
	f = si->files[v - 1];
	key.name = snap_strtab_get(si->st, loc->sym);
	hit = bsearch(&key, f->syms, f->nsyms, sizeof(*f->syms), fsym_cmp);
	/* bsearch may land on any of equal names: all are 0 when they differ */
	if (!hit || !hit->value || snap_dwline_addr(f->dw, hit->value, &src, &l, &c) < 0) {
		si->missing++;
		return 0;
	}
	id = snap_strtab_intern_cstr(si->st, src);
	if (id < 0)
		return (int)id;
	*file = (uint32_t)id;
	*line = l;
	*col = c;
	si->found++;
	return 1;
}

void snap_srcinfo_init(struct snap_srcinfo *si, struct snap_strtab *st)
{
	memset(si, 0, sizeof(*si));
	si->st = st;
	si->iface.lookup = lookup;
	si->iface.ctx = si;
	snap_u64map_init(&si->dsos);
}

void snap_srcinfo_fini(struct snap_srcinfo *si)
{
	for (size_t i = 0; i < si->nfiles; i++)
		file_free(si->files[i]);
	snap_free(si->files);
	snap_u64map_fini(&si->dsos);
	memset(si, 0, sizeof(*si));
}
