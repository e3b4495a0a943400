// SPDX-License-Identifier: GPL-2.0
/* DWARF line tables through elfutils libdw. See dwline.h. */
#include "record/dwline.h"

#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/err.h"
#include "util/file.h"
#include "util/vec.h"

/* One address range of a compilation unit (DW_AT_low_pc/high_pc or
 * DW_AT_ranges), for address lookups that need no .debug_aranges. */
struct cu_range {
	uint64_t start, end; /* [start, end) */
	Dwarf_Off cu;	     /* offset of the CU's DIE */
};

struct snap_dwline {
	int fd;
	Elf *elf; /* (a file another user can change: read, not mapped) */
	Dwarf *dw;
	struct cu_range *ranges; /* sorted by start; built at the first address lookup */
	size_t nranges, rcap;
	int ranges_built;
};

int snap_dwline_open(const char *path, struct snap_dwline **out)
{
	struct snap_dwline *d;
	Dwarf_Off off = 0, next;
	size_t hsize;
	/* regular files only, never opening anything else: the path comes from the
	 * trace (a FIFO named like a DSO hung the decode; docs/guarantees.md) */
	int fd = snap_open_regular(path), have = 0;
	struct stat st;

	*out = NULL;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -SNAP_ENOTREG;
	}
	d = snap_calloc(1, sizeof(*d));
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	d->fd = fd;
	/* A file another user can shorten is read (ELF_C_READ), not mapped: a
	 * mapping read past its new end is a SIGBUS (util/file.h). */
	if (snap_others_can_change(&st)) {
		elf_version(EV_CURRENT);
		d->elf = elf_begin(fd, ELF_C_READ, NULL);
		d->dw = d->elf ? dwarf_begin_elf(d->elf, DWARF_C_READ, NULL) : NULL;
	} else {
		d->dw = dwarf_begin(fd, DWARF_C_READ);
	}
	if (d->dw) {
		/* any compilation unit with a line table? */
		while (!have && dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
			Dwarf_Die cu;
			Dwarf_Lines *lines;
			size_t n;

			if (dwarf_offdie(d->dw, off + hsize, &cu) &&
			    dwarf_getsrclines(&cu, &lines, &n) == 0 && n)
				have = 1;
			off = next;
		}
	}
	if (!have) {
		snap_dwline_close(d);
		return -SNAP_EFORMAT;
	}
	*out = d;
	return 0;
}

void snap_dwline_close(struct snap_dwline *d)
{
	if (!d)
		return;
	if (d->dw)
		dwarf_end(d->dw);
	if (d->elf)
		elf_end(d->elf);
	close(d->fd);
	snap_free(d->ranges);
	snap_free(d);
}

/* 1 if name is file, or ends with "/" + file. */
static int file_matches(const char *name, const char *file)
{
	size_t n = strlen(name), f = strlen(file);

	if (!strcmp(name, file))
		return 1;
	return f < n && name[n - f - 1] == '/' && !strcmp(name + n - f, file);
}

/* Calls fn for every statement row of every CU; stops when fn returns != 0. */
static int each_row(struct snap_dwline *d, int (*fn)(void *ctx, Dwarf_Line *l), void *ctx)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	int r = 0;

	while (!r && dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t n;

		if (dwarf_offdie(d->dw, off + hsize, &cu) &&
		    dwarf_getsrclines(&cu, &lines, &n) == 0) {
			for (size_t i = 0; i < n && !r; i++) {
				Dwarf_Line *l = dwarf_onesrcline(lines, i);
				bool stmt = false, end = false;

				if (!l || dwarf_linebeginstatement(l, &stmt) || !stmt ||
				    dwarf_lineendsequence(l, &end) || end)
					continue;
				r = fn(ctx, l);
			}
		}
		off = next;
	}
	return r;
}

struct find_ctx {
	const char *file;
	int line, col;
	const char *first_name; /* the first file name that matched */
	int nfiles;
	int best_col, ncols;
	uint64_t best_addr;
	int found;
	int cols[64];
};

static int find_row(void *p, Dwarf_Line *l)
{
	struct find_ctx *c = p;
	const char *name = dwarf_linesrc(l, NULL, NULL);
	int line = 0, col = 0;
	Dwarf_Addr addr;
	int seen = 0;

	if (!name || !file_matches(name, c->file) || dwarf_lineno(l, &line) || line != c->line)
		return 0;
	dwarf_linecol(l, &col);
	if (dwarf_lineaddr(l, &addr))
		return 0;
	if (!c->first_name) {
		c->first_name = name;
		c->nfiles = 1;
	} else if (strcmp(c->first_name, name)) {
		c->nfiles++; /* counts rows of other files; only "more than one" matters */
	}
	for (int i = 0; i < c->ncols && i < 64; i++)
		seen |= c->cols[i] == col;
	if (!seen && c->ncols < 64)
		c->cols[c->ncols++] = col;
	if (c->col && col != c->col)
		return 0;
	if (!c->found || col < c->best_col || (col == c->best_col && addr < c->best_addr)) {
		c->best_col = col;
		c->best_addr = addr;
		c->found = 1;
	}
	return 0;
}

int snap_dwline_find(struct snap_dwline *d, const char *file, int line, int col, uint64_t *addr,
		     int *ncols)
{
	struct find_ctx c;

	memset(&c, 0, sizeof(c));
	c.file = file;
	c.line = line;
	c.col = col;
	each_row(d, find_row, &c);
	*ncols = c.ncols;
	if (c.nfiles > 1) {
		*ncols = c.nfiles;
		return -EEXIST;
	}
	if (!c.found)
		return -ENOENT;
	*addr = c.best_addr;
	return 0;
}

struct list_ctx {
	char **v;
	size_t n, cap;
	int err;
};

static int list_row(void *p, Dwarf_Line *l)
{
	struct list_ctx *c = p;
	const char *name = dwarf_linesrc(l, NULL, NULL);
	int line = 0, col = 0;
	char *s;

	if (!name || dwarf_lineno(l, &line) || line <= 0)
		return 0;
	dwarf_linecol(l, &col);
	if (snap_vec_reserve(&c->v, &c->cap, c->n + 1, sizeof(*c->v)) < 0 ||
	    asprintf(&s, "%s:%d:%d", name, line, col) < 0) {
		c->err = -ENOMEM;
		return 1;
	}
	c->v[c->n++] = s;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

long snap_dwline_list(struct snap_dwline *d, char ***out)
{
	struct list_ctx c;
	size_t k = 0;

	memset(&c, 0, sizeof(c));
	each_row(d, list_row, &c);
	if (c.err) {
		for (size_t i = 0; i < c.n; i++)
			free(c.v[i]);
		snap_free(c.v);
		return c.err;
	}
	if (c.n)
		qsort(c.v, c.n, sizeof(*c.v), cmp_str);
	for (size_t i = 0; i < c.n; i++) {
		if (k && !strcmp(c.v[k - 1], c.v[i]))
			free(c.v[i]);
		else
			c.v[k++] = c.v[i];
	}
	*out = c.v;
	return (long)k;
}

static int cmp_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The address ranges of every CU, from its DIE (dwarf_ranges reads
 * DW_AT_low_pc/high_pc and DW_AT_ranges of DWARF 2 to 5): clang by default and
 * Go write no .debug_aranges, which dwarf_addrdie needs (docs/compat.md,
 * "Source positions"). */
static int build_ranges(struct snap_dwline *d)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Addr base, start, end;
		ptrdiff_t it = 0;

		if (dwarf_offdie(d->dw, off + hsize, &cu)) {
			while ((it = dwarf_ranges(&cu, it, &base, &start, &end)) > 0) {
				if (end <= start)
					continue;
				if (snap_vec_reserve(&d->ranges, &d->rcap, d->nranges + 1,
						     sizeof(*d->ranges)) < 0) {
					d->nranges = 0; /* unsorted: the next lookup builds again */
					return -ENOMEM;
				}
				d->ranges[d->nranges].start = start;
				d->ranges[d->nranges].end = end;
				d->ranges[d->nranges++].cu = off + hsize;
			}
		}
		off = next;
	}
	if (d->nranges)
		qsort(d->ranges, d->nranges, sizeof(*d->ranges), cmp_range);
	d->ranges_built = 1;
	return 0;
}

/* The CU whose ranges contain addr (ranges may nest or overlap when CUs
 * interleave: the closest start at or below addr that contains it wins). */
static int addr_cu(struct snap_dwline *d, uint64_t addr, Dwarf_Die *cu)
{
	size_t lo = 0, hi = d->nranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->ranges[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges[0..lo) start at or below addr: look back for one containing it */
	for (size_t i = lo; i-- > 0;)
		if (addr < d->ranges[i].end)
			return dwarf_offdie(d->dw, d->ranges[i].cu, cu) ? 0 : -ENOENT;
	return -ENOENT;
}

int snap_dwline_addr(struct snap_dwline *d, uint64_t addr, const char **file, int *line, int *col)
{
	Dwarf_Die cu;
	Dwarf_Line *l;

	if (!d->ranges_built && build_ranges(d) < 0)
		return -ENOMEM;
	if (addr_cu(d, addr, &cu) < 0 || !(l = dwarf_getsrc_die(&cu, addr)))
		return -ENOENT;
	*file = dwarf_linesrc(l, NULL, NULL);
	*line = 0;
	*col = 0;
	if (!*file || dwarf_lineno(l, line))
		return -ENOENT;
	dwarf_linecol(l, col);
	return 0;
}

int snap_dwline_parse_sel(const char *sel, char *buf, size_t len, int *line, int *col)
{
	const char *c1 = strrchr(sel, ':'), *c2;
	char *end;
	long a, b;

	if (!c1 || c1 == sel)
		return -1;
	b = strtol(c1 + 1, &end, 10);
	if (end == c1 + 1 || *end || b <= 0 || b > 0x7fffffff)
		return -1;
	/* FILE:LINE:COL when what precedes is FILE:NUMBER */
	for (c2 = c1 - 1; c2 > sel && *c2 != ':'; c2--)
		;
	if (*c2 == ':' && c2 > sel) {
		a = strtol(c2 + 1, &end, 10);
		if (end == c1 && end != c2 + 1 && a > 0 && a <= 0x7fffffff) {
			if ((size_t)(c2 - sel) >= len)
				return -1;
			memcpy(buf, sel, (size_t)(c2 - sel));
			buf[c2 - sel] = '\0';
			*line = (int)a;
			*col = (int)b;
			return 0;
		}
	}
	if ((size_t)(c1 - sel) >= len)
		return -1;
	memcpy(buf, sel, (size_t)(c1 - sel));
	buf[c1 - sel] = '\0';
	*line = (int)b;
	*col = 0;
	return 0;
}
