// SPDX-License-Identifier: GPL-2.0
/* JIT symbol maps (perf-PID.map). See perfmap.h. */
#include "parse/perfmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/vec.h"

void snap_perfmap_init(struct snap_perfmap *m)
{
	memset(m, 0, sizeof(*m));
}

void snap_perfmap_fini(struct snap_perfmap *m)
{
	snap_free(m->e);
	memset(m, 0, sizeof(*m));
}

/* Parses hex (optional 0x) at [*p, e) up to a blank. Returns 0 or -1. */
static int hex(const char **pp, const char *e, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int digits = 0;

	if (e - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < e && *p != ' ' && *p != '\t'; p++) {
		int d = *p >= '0' && *p <= '9'	 ? *p - '0'
			: *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
			: *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
						 : -1;

		if (d < 0 || digits >= 16)
			return -1;
		v = v << 4 | (uint64_t)d;
		digits++;
	}
	if (!digits)
		return -1;
	*pp = p;
	*out = v;
	return 0;
}

static const char *blanks(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

int snap_perfmap_add(struct snap_perfmap *m, const char *buf, size_t len, struct snap_strtab *st)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end, *q;
		struct snap_perfmap_entry ent;
		int64_t id;

		q = blanks(p, e);
		if (e > q && e[-1] == '\r')
			e--;
		if (q == e) {
			p = nl ? nl + 1 : end;
			continue;
		}
		if (hex(&q, e, &ent.start) < 0 || (q = blanks(q, e)) == e ||
		    hex(&q, e, &ent.size) < 0 || (q = blanks(q, e)) == e) {
			m->bad_lines++;
			p = nl ? nl + 1 : end;
			continue;
		}
		id = snap_strtab_intern(st, q, (size_t)(e - q));
		if (id < 0)
			return (int)id;
		ent.name = (uint32_t)id;
		if (snap_vec_reserve(&m->e, &m->cap, m->n + 1, sizeof(*m->e)) < 0)
			return -ENOMEM;
		m->e[m->n++] = ent;
		p = nl ? nl + 1 : end;
	}
	return 0;
}

/* An entry with its line number: equal starts keep their file order. */
struct keyed {
	struct snap_perfmap_entry e;
	size_t i;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->e.start != y->e.start)
		return x->e.start < y->e.start ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

int snap_perfmap_finish(struct snap_perfmap *m)
{
	struct keyed *kv;
	size_t k = 0;

	if (!m->n)
		return 0;
	kv = snap_reallocarray(NULL, m->n, sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		kv[i].e = m->e[i];
		kv[i].i = i;
	}
	qsort(kv, m->n, sizeof(*kv), cmp_keyed);
	for (size_t i = 0; i < m->n; i++) {
		if (k && m->e[k - 1].start == kv[i].e.start)
			m->e[k - 1] = kv[i].e; /* a later line with that start wins */
		else
			m->e[k++] = kv[i].e;
	}
	snap_free(kv);
	m->n = k;
	return 0;
}

const struct snap_perfmap_entry *snap_perfmap_find(const struct snap_perfmap *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->e[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	lo--;
	return addr - m->e[lo].start < m->e[lo].size ? &m->e[lo] : NULL;
}
