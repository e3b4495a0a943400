/* SPDX-License-Identifier: GPL-2.0 */
/*
 * String interning: bytes -> uint32_t id. Ids start at 1 and are dense
 * (1, 2, 3, ... in first-seen order); 0 means "no string". Interned bytes
 * never move, so snap_strtab_get() pointers stay valid until fini.
 */
#ifndef SNAP_UTIL_STRTAB_H
#define SNAP_UTIL_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct snap_strtab {
	uint32_t *slots;  /* open addressing: 0 = empty, else id */
	size_t nslots;	  /* power of two */
	const char **str; /* str[id], NUL-terminated */
	uint32_t *len;	  /* len[id] */
	uint32_t *hash;	  /* hash[id] */
	uint32_t count;	  /* number of strings; ids 1..count */
	uint32_t cap;	  /* capacity of str/len/hash */
	char *chunk;	  /* current arena chunk */
	size_t chunk_used, chunk_cap;
	char **chunks; /* all chunks, for fini */
	size_t nchunks;
};

/* init: an empty table; fini frees every string and leaves st zeroed. */
void snap_strtab_init(struct snap_strtab *st);
void snap_strtab_fini(struct snap_strtab *st);
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
