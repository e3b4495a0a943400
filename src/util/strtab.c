// SPDX-License-Identifier: GPL-2.0
#include "util/strtab.h"

#include <errno.h>
#include <string.h>

#include "util/alloc.h"

#define STRTAB_CHUNK (64 * 1024)
#define STRTAB_MAX   (UINT32_MAX / 2) /* ids */

static uint32_t strtab_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

/* Which segment holds id (>= 1), and where in it (strtab.h). */
static inline unsigned strtab_seg(uint32_t id, uint32_t *off)
{
	uint32_t j = id + 63;
	unsigned lg = 31u - (unsigned)__builtin_clz(j);

	*off = j - (1u << lg);
	return lg - 6;
}

/* id's entry; id in 1..count as read by the caller (acquire). */
static inline struct snap_strtab_ent *strtab_ent(const struct snap_strtab *st, uint32_t id)
{
	uint32_t off;
	unsigned k = strtab_seg(id, &off);

	return atomic_load_explicit(&st->seg[k], memory_order_relaxed) + off;
}

void snap_strtab_init(struct snap_strtab *st)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_init(&st->mu, NULL);
}

void snap_strtab_fini(struct snap_strtab *st)
{
	for (size_t i = 0; i < st->nchunks; i++)
		snap_free(st->chunks[i]);
	snap_free(st->chunks);
	snap_free(st->slots);
	for (unsigned k = 0; k < SNAP_STRTAB_SEGS; k++)
		snap_free(st->seg[k]);
	pthread_mutex_destroy(&st->mu);
	memset(st, 0, sizeof(*st));
}

void snap_strtab_share(struct snap_strtab *st, int on)
{
	st->shared = on;
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
	uint32_t n = atomic_load_explicit(&st->count, memory_order_relaxed);

	if (!slots)
		return -ENOMEM;
	for (uint32_t id = 1; id <= n; id++)
		strtab_slot_put(slots, nslots, strtab_ent(st, id)->hash, id);
	snap_free(st->slots);
	st->slots = slots;
	st->nslots = nslots;
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
		const struct snap_strtab_ent *e = strtab_ent(st, id);

		if (e->hash == h && e->len == len && !memcmp(e->str, s, len))
			return id;
	}
	return 0;
}

static void strtab_lock(const struct snap_strtab *st)
{
	if (st->shared)
		pthread_mutex_lock((pthread_mutex_t *)&st->mu); /* the lock is not the table */
}

static void strtab_unlock(const struct snap_strtab *st)
{
	if (st->shared)
		pthread_mutex_unlock((pthread_mutex_t *)&st->mu);
}

uint32_t snap_strtab_find(const struct snap_strtab *st, const char *s, size_t len)
{
	uint32_t h = strtab_hash(s, len), id;

	strtab_lock(st);
	id = strtab_lookup(st, s, len, h);
	strtab_unlock(st);
	return id;
}

/* intern's body, under the lock. */
static int64_t strtab_add(struct snap_strtab *st, const char *s, size_t len, uint32_t h)
{
	uint32_t id = strtab_lookup(st, s, len, h), n, off;
	struct snap_strtab_ent *e;
	const char *copy;
	unsigned k;
	int err;

	if (id)
		return id;
	if (len > UINT32_MAX / 2)
		return -E2BIG;
	n = atomic_load_explicit(&st->count, memory_order_relaxed);
	if (n + 1 > STRTAB_MAX)
		return -ENOMEM;
	if ((size_t)(n + 1) * 2 > st->nslots) {
		err = strtab_rehash(st, st->nslots ? st->nslots * 2 : 128);
		if (err < 0)
			return err;
	}
	k = strtab_seg(n + 1, &off);
	if (!off && !st->seg[k]) { /* the first id of segment k */
		e = snap_calloc((size_t)64 << k, sizeof(*e));
		if (!e)
			return -ENOMEM;
		atomic_store_explicit(&st->seg[k], e, memory_order_relaxed);
	}
	copy = strtab_store(st, s, len);
	if (!copy)
		return -ENOMEM;
	id = n + 1;
	e = strtab_ent(st, id);
	e->str = copy;
	e->len = (uint32_t)len;
	e->hash = h;
	strtab_slot_put(st->slots, st->nslots, h, id);
	/* publishes the entry (and its segment) to get() in other threads */
	atomic_store_explicit(&st->count, id, memory_order_release);
	return id;
}

int64_t snap_strtab_intern(struct snap_strtab *st, const char *s, size_t len)
{
	uint32_t h = strtab_hash(s, len);
	int64_t r;

	strtab_lock(st);
	r = strtab_add(st, s, len, h);
	strtab_unlock(st);
	return r;
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
	if (!id || id > atomic_load_explicit(&st->count, memory_order_acquire))
		return "";
	return strtab_ent(st, id)->str;
}

uint32_t snap_strtab_len(const struct snap_strtab *st, uint32_t id)
{
	if (!id || id > atomic_load_explicit(&st->count, memory_order_acquire))
		return 0;
	return strtab_ent(st, id)->len;
}
