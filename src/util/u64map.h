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
/* Returns 1 and sets *val if key is present, else 0. */
int snap_u64map_get(const struct snap_u64map *m, uint64_t key, uint64_t *val);

#endif
