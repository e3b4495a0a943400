// SPDX-License-Identifier: GPL-2.0
/* The range filter. See filter.h. */
#include "stack/filter.h"

#include <errno.h>
#include <string.h>

#include "util/alloc.h"
#include "util/vec.h"

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	return p;
}

/* One atom at *pp into a new string; advances *pp. Returns 0, -EINVAL, -ENOMEM. */
static int atom(const char **pp, char **out)
{
	const char *p = skip_ws(*pp);
	size_t n = 0, cap = strlen(p) + 1;
	char *s = snap_malloc(cap);

	if (!s)
		return -ENOMEM;
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++) {
			if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
				p++;
			s[n++] = *p;
		}
		if (*p != '"')
			goto bad;
		p++;
	} else {
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '(' && *p != ')' &&
		       *p != '"')
			s[n++] = *p++;
	}
	s[n] = '\0';
	if (!n)
		goto bad;
	if (!strncmp(s, "symbol:", 7)) {
		if (!s[7])
			goto bad;
		memmove(s, s + 7, n - 6);
	}
	*pp = p;
	*out = s;
	return 0;
bad:
	snap_free(s);
	return -EINVAL;
}

int snap_filter_parse_arg(const char *arg, char **start, char **stop)
{
	const char *p = skip_ws(arg);
	int err;

	*start = *stop = NULL;
	if (*p++ != '(')
		return -EINVAL;
	if ((err = atom(&p, start)) < 0 || (err = atom(&p, stop)) < 0)
		goto fail;
	p = skip_ws(p);
	if (*p++ != ')' || *skip_ws(p)) {
		err = -EINVAL;
		goto fail;
	}
	return 0;
fail:
	snap_free(*start);
	snap_free(*stop);
	*start = *stop = NULL;
	return err;
}

void snap_filter_init(struct snap_filter *f, uint32_t start, uint32_t stop)
{
	memset(f, 0, sizeof(*f));
	f->start = start;
	f->stop = stop;
	snap_u64map_init(&f->onstack);
}

void snap_filter_fini(struct snap_filter *f)
{
	snap_free(f->hits);
	snap_u64map_fini(&f->onstack);
	memset(f, 0, sizeof(*f));
}

/* Pass 1, a stack sample: 1 (a new call of START), 2 (of STOP) or 0
 * (filter.h); remembers what its stack held for the thread's next sample. */
static int sample_hit(struct snap_filter *f, const struct snap_event *ev, int *err)
{
	uint64_t key = ((uint64_t)(uint32_t)ev->pid << 32) | (uint32_t)ev->tid, was = 0;
	int now = 0, inner = 0;

	*err = 0;
	for (uint32_t i = ev->nframes; i-- > 0;) {
		uint32_t s = ev->frames[i].sym;
		int m = !s ? 0 : s == f->start ? 1 : s == f->stop ? 2 : 0;

		if (m && !(now & m) && !inner)
			inner = m; /* the innermost of each */
		now |= m;
	}
	if (snap_u64map_get(&f->onstack, key, &was))
		was--;
	if ((uint64_t)now != was && snap_u64map_put(&f->onstack, key, (uint64_t)now + 1) < 0)
		*err = -ENOMEM;
	now &= ~(int)was; /* only what is new */
	if (!now)
		return 0;
	return now == 3 ? inner : now;
}

/* Returns 1 (START), 2 (STOP) or 0 with the symbol that matched in *sym. */
static int match(const struct snap_filter *f, const struct snap_event *ev, uint32_t *sym)
{
	*sym = 0;
	if (!ev->has_time)
		return 0;
	if (ev->kind == SNAP_EV_BRANCH && ev->br_kind == SNAP_BR_CALL && ev->dst.sym) {
		*sym = ev->dst.sym;
		return ev->dst.sym == f->start ? 1 : ev->dst.sym == f->stop ? 2 : 0;
	}
	return 0;
}

/* A stack sample, or the chain a thread blocked in (a sched:sched_switch
 * sample): a function that only waits is on no sample's stack, only there. */
static int stack_event(const struct snap_event *ev)
{
	return ev->kind == SNAP_EV_SAMPLE ||
	       (ev->kind == SNAP_EV_SWITCH && ev->sw_out && ev->frames && ev->nframes);
}

int snap_filter_scan(struct snap_filter *f, const struct snap_event *ev)
{
	uint32_t sym = 0;
	int m, err = 0;

	if (stack_event(ev))
		m = ev->has_time && ev->frames ? sample_hit(f, ev, &err) : 0;
	else
		m = match(f, ev, &sym);
	if (err < 0)
		return err;
	if (!m)
		return 0;
	if (snap_vec_reserve(&f->hits, &f->cap, f->nhits + 1, sizeof(*f->hits)) < 0)
		return -ENOMEM;
	f->hits[f->nhits].time = ev->time;
	f->hits[f->nhits].sym = sym;
	f->hits[f->nhits].tid = stack_event(ev) ? ev->tid : 0;
	f->hits[f->nhits].stop = m == 2;
	f->nhits++;
	return 0;
}

size_t snap_filter_pair(struct snap_filter *f)
{
	size_t i = 0, k = 0;

	while (i < f->nhits) {
		const struct snap_filter_hit *a = &f->hits[i];

		if (i + 1 == f->nhits)
			break; /* trailing, unpaired */
		if (!f->hits[i + 1].stop) {
			i++; /* followed by a START: dropped */
			continue;
		}
		if (a->stop) {
			i += 2; /* STOP STOP: both dropped */
			continue;
		}
		f->hits[k++] = f->hits[i];
		f->hits[k++] = f->hits[i + 1];
		i += 2;
	}
	f->nhits = k;
	f->next = 0;
	f->open = 0;
	f->paired = 1;
	return k / 2;
}

int snap_filter_step(struct snap_filter *f, const struct snap_event *ev)
{
	if (f->next < f->nhits && ev->has_time && ev->time == f->hits[f->next].time) {
		uint32_t sym;

		if (stack_event(ev) ? !f->hits[f->next].sym && ev->tid == f->hits[f->next].tid
				    : match(f, ev, &sym) && sym == f->hits[f->next].sym) {
			f->open = !f->open;
			f->next++;
		}
	}
	return f->open;
}
