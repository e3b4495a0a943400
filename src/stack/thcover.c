// SPDX-License-Identifier: GPL-2.0
/* Per-thread coverage of a sampled recording. See thcover.h. */
#include "stack/thcover.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/vec.h"

void snap_thcover_init(struct snap_thcover *c)
{
	memset(c, 0, sizeof(*c));
	snap_u64map_init(&c->map);
}

void snap_thcover_fini(struct snap_thcover *c)
{
	snap_free(c->th);
	snap_u64map_fini(&c->map);
	memset(c, 0, sizeof(*c));
}

static struct snap_thcover_thread *thread_of(struct snap_thcover *c, const struct snap_event *ev)
{
	uint64_t key = (uint64_t)(uint32_t)ev->pid << 32 | (uint32_t)ev->tid, i;
	struct snap_thcover_thread *t;

	if (snap_u64map_get(&c->map, key, &i))
		return &c->th[i];
	if (snap_vec_reserve(&c->th, &c->cap, c->n + 1, sizeof(*c->th)) < 0 ||
	    snap_u64map_put(&c->map, key, c->n) < 0)
		return NULL;
	t = &c->th[c->n++];
	memset(t, 0, sizeof(*t));
	t->pid = ev->pid;
	t->tid = ev->tid;
	return t;
}

int snap_thcover_feed(struct snap_thcover *c, const struct snap_event *ev,
		      const struct snap_strtab *st)
{
	struct snap_thcover_thread *t;

	if (ev->kind == SNAP_EV_TASK && ev->task_exit && ev->has_time && ev->tid > 0) {
		uint64_t key = (uint64_t)(uint32_t)ev->pid << 32 | (uint32_t)ev->tid, i;

		/* an exiting thread gets no switch-out (perf closes its events first):
		 * its last switch-in ends at the exit, not at the end of the data */
		if (snap_u64map_get(&c->map, key, &i) && c->th[i].in_since) {
			t = &c->th[i];
			if (!t->samples && ev->time > t->in_since)
				t->oncpu_before += ev->time - t->in_since;
			t->in_since = 0;
		}
		return 0;
	}
	if ((ev->kind != SNAP_EV_SAMPLE && ev->kind != SNAP_EV_SWITCH) || !ev->has_time ||
	    ev->tid <= 0)
		return 0;
	if (!c->t0 || ev->time < c->t0)
		c->t0 = ev->time;
	if (ev->time > c->t_last)
		c->t_last = ev->time;
	t = thread_of(c, ev);
	if (!t)
		return -ENOMEM;
	if (ev->comm && st) {
		const char *name = snap_strtab_get(st, ev->comm);

		if (name)
			snprintf(t->name, sizeof(t->name), "%s", name);
	}
	if (ev->kind == SNAP_EV_SAMPLE) {
		if (!t->samples++) {
			t->first_sample = ev->time;
			/* (a first record that is a sample: it ran since before, unknown) */
			if (t->in_since && ev->time > t->in_since)
				t->oncpu_before += ev->time - t->in_since;
			t->in_since = 0;
		}
		return 0;
	}
	if (!t->samples) {
		if (!ev->sw_out) {
			if (!t->in_since)
				t->in_since = ev->time;
		} else if (t->in_since) {
			if (ev->time > t->in_since)
				t->oncpu_before += ev->time - t->in_since;
			t->in_since = 0;
		} else if (!t->switches && ev->time > c->t0) {
			/* its first record is a switch-out: it ran since the recording began */
			t->oncpu_before += ev->time - c->t0;
		}
	}
	t->switches = 1;
	return 0;
}

uint64_t snap_thcover_lost_ns(const struct snap_thcover *c, const struct snap_thcover_thread *t)
{
	uint64_t ns = t->oncpu_before;

	if (!t->samples && t->in_since && c->t_last > t->in_since)
		ns += c->t_last - t->in_since;
	return ns;
}

size_t snap_thcover_lost(const struct snap_thcover *c, uint64_t min_ns, size_t *idx, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n; i++) {
		uint64_t ns = snap_thcover_lost_ns(c, &c->th[i]);
		size_t k;

		if (ns < min_ns || !min_ns)
			continue;
		/* insertion into idx, longest first */
		k = n < max ? n : max;
		while (k > 0 && snap_thcover_lost_ns(c, &c->th[idx[k - 1]]) < ns) {
			if (k < max)
				idx[k] = idx[k - 1];
			k--;
		}
		if (k < max)
			idx[k] = i;
		n++;
	}
	return n;
}
