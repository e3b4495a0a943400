// SPDX-License-Identifier: GPL-2.0
#include "util/u64map.h"

#include <errno.h>
#include <string.h>

#include "util/alloc.h"

void snap_u64map_init(struct snap_u64map *m)
{
	memset(m, 0, sizeof(*m));
}

void snap_u64map_fini(struct snap_u64map *m)
{
	snap_free(m->keys);
	snap_free(m->vals);
	snap_free(m->used);
	memset(m, 0, sizeof(*m));
}

static int u64map_grow(struct snap_u64map *m)
{
	struct snap_u64map n;

	n.nslots = m->nslots ? m->nslots * 2 : 16;
	n.count = 0;
	n.keys = snap_calloc(n.nslots, sizeof(*n.keys));
	n.vals = snap_calloc(n.nslots, sizeof(*n.vals));
	n.used = snap_calloc(n.nslots, 1);
	if (!n.keys || !n.vals || !n.used) {
		snap_u64map_fini(&n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->nslots; i++) {
		if (m->used[i]) {
			size_t j = snap_u64map_find(&n, m->keys[i]);

			n.used[j] = 1;
			n.keys[j] = m->keys[i];
			n.vals[j] = m->vals[i];
			n.count++;
		}
	}
	snap_u64map_fini(m);
	*m = n;
	return 0;
}

int snap_u64map_put(struct snap_u64map *m, uint64_t key, uint64_t val)
{
	size_t i;

	if ((m->count + 1) * 4 > m->nslots * 3) {
		int err = u64map_grow(m);

		if (err < 0)
			return err;
	}
	i = snap_u64map_find(m, key);
	if (!m->used[i]) {
		m->used[i] = 1;
		m->keys[i] = key;
		m->count++;
	}
	m->vals[i] = val;
	return 0;
}
