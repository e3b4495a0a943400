// SPDX-License-Identifier: GPL-2.0
#include "util/strtab.h"

#include <errno.h>
#include <string.h>

#include "util/alloc.h"

#define STRTAB_CHUNK (64 * 1024)

static uint32_t strtab_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

void snap_strtab_init(struct snap_strtab *st)
{
	memset(st, 0, sizeof(*st));
}

void snap_strtab_fini(struct snap_strtab *st)
{
	for (size_t i = 0; i < st->nchunks; i++)
		snap_free(st->chunks[i]);
	snap_free(st->chunks);
	snap_free(st->slots);
	snap_free(st->str);
	snap_free(st->len);
	snap_free(st->hash);
	memset(st, 0, sizeof(*st));
}

/* Puts id (hash h) in the first free slot of its probe sequence. */
static void strtab_slot_put(uint32_t *slots, size_t nslots, uint32_t h, uint32_t id)
{
	size_t i = h & (nslots - 1);

	while (slots[i])
		i = (i + 1) & (nslots - 1);
	slots[i] = id;
}

static int strtab_rehash(struct snap_strtab *st, size_t nslots)
{
	uint32_t *slots = snap_calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (uint32_t id = 1; id <= st->count; id++)
		strtab_slot_put(slots, nslots, st->hash[id], id);
	snap_free(st->slots);
	st->slots = slots;
	st->nslots = nslots;
	return 0;
}

static int strtab_grow_ids(struct snap_strtab *st)
{
	uint32_t cap = st->cap ? st->cap * 2 : 64;
	const char **str;
	uint32_t *len, *hash;

	if (cap < st->cap || cap > UINT32_MAX / 2)
		return -ENOMEM;
	str = snap_reallocarray(st->str, cap + 1, sizeof(*str));
	if (!str)
		return -ENOMEM;
	st->str = str;
	len = snap_reallocarray(st->len, cap + 1, sizeof(*len));
	if (!len)
		return -ENOMEM;
	st->len = len;
	hash = snap_reallocarray(st->hash, cap + 1, sizeof(*hash));
	if (!hash)
		return -ENOMEM;
	st->hash = hash;
	st->cap = cap;
	return 0;
}

static char *strtab_store(struct snap_strtab *st, const char *s, size_t len)
{
	char *dst;

	if (!st->chunk || st->chunk_cap - st->chunk_used < len + 1) {
		size_t cap = len + 1 > STRTAB_CHUNK ? len + 1 : STRTAB_CHUNK;
		char **chunks = snap_reallocarray(st->chunks, st->nchunks + 1, sizeof(*chunks));
		char *chunk;

		if (!chunks)
			return NULL;
		st->chunks = chunks;
		chunk = snap_malloc(cap);
		if (!chunk)
			return NULL;
		st->chunks[st->nchunks++] = chunk;
		st->chunk = chunk;
		st->chunk_used = 0;
		st->chunk_cap = cap;
	}
	dst = st->chunk + st->chunk_used;
	memcpy(dst, s, len);
	dst[len] = '\0';
	st->chunk_used += len + 1;
	return dst;
}

/* The id of (s, len), whose hash is h, or 0. */
static uint32_t strtab_lookup(const struct snap_strtab *st, const char *s, size_t len, uint32_t h)
{
	if (!st->nslots)
		return 0;
	for (size_t i = h & (st->nslots - 1); st->slots[i]; i = (i + 1) & (st->nslots - 1)) {
		uint32_t id = st->slots[i];

		if (st->hash[id] == h && st->len[id] == len && !memcmp(st->str[id], s, len))
			return id;
	}
	return 0;
}

uint32_t snap_strtab_find(const struct snap_strtab *st, const char *s, size_t len)
{
	return strtab_lookup(st, s, len, strtab_hash(s, len));
}

int64_t snap_strtab_intern(struct snap_strtab *st, const char *s, size_t len)
{
	uint32_t h = strtab_hash(s, len), id = strtab_lookup(st, s, len, h);
	const char *copy;
	int err;

	if (id)
		return id;
	if (len > UINT32_MAX / 2)
		return -E2BIG;
	if ((st->count + 1) * 2 > st->nslots) {
		err = strtab_rehash(st, st->nslots ? st->nslots * 2 : 128);
		if (err < 0)
			return err;
	}
	if (st->count + 1 > st->cap) {
		err = strtab_grow_ids(st);
		if (err < 0)
			return err;
	}
	copy = strtab_store(st, s, len);
	if (!copy)
		return -ENOMEM;
	id = ++st->count;
	st->str[id] = copy;
	st->len[id] = (uint32_t)len;
	st->hash[id] = h;
	strtab_slot_put(st->slots, st->nslots, h, id);
	return id;
}

int64_t snap_strtab_intern_cstr(struct snap_strtab *st, const char *s)
{
	return snap_strtab_intern(st, s, strlen(s));
}

int snap_strtab_intern_id(struct snap_strtab *st, const char *s, uint32_t *id)
{
	int64_t r = snap_strtab_intern_cstr(st, s);

	*id = r < 0 ? 0 : (uint32_t)r;
	return r < 0 ? (int)r : 0;
}

const char *snap_strtab_get(const struct snap_strtab *st, uint32_t id)
{
	if (!id || id > st->count)
		return "";
	return st->str[id];
}

uint32_t snap_strtab_len(const struct snap_strtab *st, uint32_t id)
{
	if (!id || id > st->count)
		return 0;
	return st->len[id];
}
