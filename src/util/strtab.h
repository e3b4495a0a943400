/* SPDX-License-Identifier: GPL-2.0 */
/*
 * String interning: bytes -> uint32_t id. Ids start at 1 and are dense
 * (1, 2, 3, ... in first-seen order); 0 means "no string". Interned bytes
 * never move, so snap_strtab_get() pointers stay valid until fini.
 *
 * Threads (the decode's pipeline, docs/design.md "The consumer thread"): a
 * table is used by one thread unless snap_strtab_share(st, 1) was called
 * before a second thread got it. A shared table may then be used by any
 * number of threads at once: intern, intern_cstr, intern_id and find take the
 * table's mutex; get and len take no lock (the entries of an id never move and
 * are published before the id: any id a thread holds, from its own intern or
 * handed over by another thread, reads back its string). share(st, 0) once the
 * other threads are gone (joined) puts the lock away again.
 */
#ifndef SNAP_UTIL_STRTAB_H
#define SNAP_UTIL_STRTAB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* An id's string, length and hash. */
struct snap_strtab_ent {
	const char *str; /* NUL-terminated */
	uint32_t len;
	uint32_t hash;
};

/* Segment k holds the 64 << k ids from (64 << k) - 63 on: 26 of them reach
 * past UINT32_MAX / 2 ids, and none ever moves (get needs no lock). */
#define SNAP_STRTAB_SEGS 26

struct snap_strtab {
	uint32_t *slots; /* open addressing: 0 = empty, else id */
	size_t nslots;	 /* power of two */
	/* the entries: id i is seg[k][i + 63 - (64 << k)], k = log2(i + 63) - 6 */
	struct snap_strtab_ent *_Atomic seg[SNAP_STRTAB_SEGS];
	_Atomic uint32_t count; /* number of strings; ids 1..count */
	char *chunk;		/* current arena chunk */
	size_t chunk_used, chunk_cap;
	char **chunks; /* all chunks, for fini */
	size_t nchunks;
	int shared;	    /* snap_strtab_share: intern and find lock mu */
	pthread_mutex_t mu; /* of slots, chunks and the writes of seg and count */
};

/* init: an empty table; fini frees every string and leaves st zeroed. */
void snap_strtab_init(struct snap_strtab *st);
void snap_strtab_fini(struct snap_strtab *st);
/* on: st may be used by several threads from now on (see above); 0: by one
 * again. Called while one thread alone uses st (before the others start, after
 * they are joined). */
void snap_strtab_share(struct snap_strtab *st, int on);
/* Returns the id (>= 1) of (s, len), adding it if new, or -ENOMEM.
 * Strings longer than UINT32_MAX / 2 give -E2BIG. */
int64_t snap_strtab_intern(struct snap_strtab *st, const char *s, size_t len);
/* Like intern for a NUL-terminated string. */
int64_t snap_strtab_intern_cstr(struct snap_strtab *st, const char *s);
/* Interns the NUL-terminated s and stores its id in *id (0 on error).
 * Returns 0 or -ENOMEM / -E2BIG. */
int snap_strtab_intern_id(struct snap_strtab *st, const char *s, uint32_t *id);
/* Returns the id of (s, len) or 0 if not interned. */
uint32_t snap_strtab_find(const struct snap_strtab *st, const char *s, size_t len);
/* Returns the NUL-terminated string of id (borrowed), or "" for 0 / unknown ids. */
const char *snap_strtab_get(const struct snap_strtab *st, uint32_t id);
/* Returns the length of id's string (0 for 0 / unknown ids). */
uint32_t snap_strtab_len(const struct snap_strtab *st, uint32_t id);

#endif
