/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Open-addressing hash map from uint64_t keys to uint64_t values
 * (tid -> thread index, address -> symbol id, ...). Any key is allowed.
 */
#ifndef SNAP_UTIL_U64MAP_H
#define SNAP_UTIL_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct snap_u64map {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t nslots; /* power of two or 0 */
	size_t count;
};

/* init: an empty map; fini frees it and leaves m zeroed. */
void snap_u64map_init(struct snap_u64map *m);
void snap_u64map_fini(struct snap_u64map *m);
/* Sets key to val (insert or replace). Returns 0 or -ENOMEM. */
int snap_u64map_put(struct snap_u64map *m, uint64_t key, uint64_t val);
/* The slot of key in m (m->nslots > 0): key's, or the empty one where it would go. */
static inline size_t snap_u64map_find(const struct snap_u64map *m, uint64_t key)
{
	size_t mask = m->nslots - 1, i;
	uint64_t h = key;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	for (i = (size_t)h & mask; m->used[i] && m->keys[i] != key; i = (i + 1) & mask)
		;
	return i;
}

/* Returns 1 and sets *val if key is present, else 0. Inline: the stack builder looks a
 * symbol or a thread up per event (docs/ptdec.md "Limits and figures"). */
static inline int snap_u64map_get(const struct snap_u64map *m, uint64_t key, uint64_t *val)
{
	size_t i;

	if (!m->nslots)
		return 0;
	i = snap_u64map_find(m, key);
	if (!m->used[i])
		return 0;
	*val = m->vals[i];
	return 1;
}

#endif
