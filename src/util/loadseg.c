// SPDX-License-Identifier: GPL-2.0
#include "util/loadseg.h"

#include <errno.h>

/* The segment holding x in its file (to_off = 0) or address (1) range. */
static const struct snap_loadseg *find(const struct snap_loadseg *s, size_t n, uint64_t x,
				       int by_vaddr)
{
	const struct snap_loadseg *any = NULL;

	for (size_t i = 0; i < n; i++) {
		uint64_t base = by_vaddr ? s[i].vaddr : s[i].off;

		if (x < base || x - base >= s[i].filesz)
			continue;
		if (s[i].flags & 1)
			return &s[i];
		if (!any)
			any = &s[i];
	}
	return any;
}

int snap_loadseg_off2vaddr(const struct snap_loadseg *s, size_t n, uint64_t off, uint64_t *vaddr)
{
	const struct snap_loadseg *g = find(s, n, off, 0);

	if (!g || g->vaddr > UINT64_MAX - (off - g->off))
		return -ENOENT;
	*vaddr = g->vaddr + (off - g->off);
	return 0;
}

int snap_loadseg_vaddr2off(const struct snap_loadseg *s, size_t n, uint64_t vaddr, uint64_t *off)
{
	const struct snap_loadseg *g = find(s, n, vaddr, 1);

	if (!g || g->off > UINT64_MAX - (vaddr - g->vaddr))
		return -ENOENT;
	*off = g->off + (vaddr - g->vaddr);
	return 0;
}
