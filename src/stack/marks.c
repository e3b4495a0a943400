// SPDX-License-Identifier: GPL-2.0
/*
 * The trigger-hit tracks and the sampling marker, written by finish. See bthread.h.
 */
#include <errno.h>
#include <stdio.h>

#include "stack/bthread.h"
#include "util/alloc.h"

int snap_marks_init_hits(struct snap_builder *bld, const struct snap_builder_opts *o)
{
	char buf[512];
	size_t i;
	int err;

	if (!o->nhits)
		return 0;
	bld->hits = snap_reallocarray(NULL, o->nhits, sizeof(*bld->hits));
	bld->hit_names = snap_reallocarray(NULL, o->nhits, sizeof(*bld->hit_names));
	if (!bld->hits || !bld->hit_names)
		return -ENOMEM;
	for (i = 0; i < o->nhits; i++) {
		bld->hits[i] = o->hits[i];
		bld->hits[i].symbol = NULL; /* borrowed during init only */
		snprintf(buf, sizeof(buf), "hit %.500s", o->hits[i].symbol);
		if ((err = snap_strtab_intern_id(bld->st, buf, &bld->hit_names[i])) < 0)
			return err;
		bld->nhits++;
		if (!bld->have_hit_min || o->hits[i].time < bld->hit_min)
			bld->hit_min = o->hits[i].time;
		bld->have_hit_min = 1;
	}
	return 0;
}

int snap_marks_hits(struct snap_builder *bld)
{
	struct snap_u64map tracks; /* pid -> tid of its hit track */
	size_t i, j;
	int err = 0, e;

	if (!bld->have_base) {
		bld->base = bld->hit_min;
		bld->have_base = 1;
	}
	snap_u64map_init(&tracks);
	for (i = 0; i < bld->nhits; i++) {
		const struct snap_hit *h = &bld->hits[i];
		struct snap_arg a[5];
		uint64_t t, t0, v;
		size_t na = 0;
		int32_t tid;

		if (snap_u64map_get(&tracks, (uint32_t)h->pid, &v)) {
			tid = (int32_t)v;
		} else {
			uint32_t proc = 0;
			uint64_t cmd;

			for (j = 0; j < bld->nth && !proc; j++)
				if (bld->th[j]->pid == h->pid)
					proc = bld->th[j]->proc_name;
			if (!proc &&
			    (e = snap_tracks_proc_name(bld, h->pid, h->pid, 0, &proc, &cmd)) < 0) {
				err = e;
				break;
			}
			e = snap_tracks_synth(bld, h->pid, proc, bld->n_hits, &tid);
			if (e < 0 && !err)
				err = e;
			if (snap_u64map_put(&tracks, (uint32_t)h->pid, (uint32_t)tid) < 0) {
				err = -ENOMEM;
				break;
			}
		}
		t = t0 = snap_bld_trace_time(bld, h->time);
		/* magic-trace's args: [timestamp_passed, arg,] timestamp, tid, ip; a
		 * stop indicator's slice starts at the time it was passed */
		if (h->has_arg) {
			a[na++] = snap_arg_int(bld->n_ts_passed, (int64_t)h->passed_time);
			a[na++] = snap_arg_int(bld->n_arg, h->arg);
			if (h->passed_time > bld->base && h->passed_time < h->time)
				t0 = snap_bld_trace_time(bld, h->passed_time);
		}
		a[na++] = snap_arg_int(bld->n_ts, (int64_t)h->time);
		a[na++] = snap_arg_int(bld->n_tid, h->tid);
		a[na++] = snap_arg_ptr(bld->n_ip, h->ip);
		e = bld->tl->ops->complete(bld->tl, h->pid, tid, t0, t, bld->hit_names[i], a, na);
		if (e < 0 && !err)
			err = e;
	}
	snap_u64map_fini(&tracks);
	return err;
}

/* Marks each thread built from stack samples with one counter
 * "snaptrace.sampling" {period_ns, inferred_end_time: 1} at its first sample (docs/report.md): the
 * sample period in ns (perf's period for the clock events, else the mean
 * time between the thread's samples; 0 if unknown). */
int snap_marks_sampling(struct snap_builder *bld)
{
	int err = 0;

	for (size_t i = 0; i < bld->nth && err >= 0; i++) {
		struct snap_bthread *th = bld->th[i];
		struct snap_arg a[2];
		uint64_t period;

		if (!th->nsamples)
			continue;
		if (snap_bld_clock_event(bld, th->sample_event))
			period = th->period_sum / th->nsamples;
		else if (th->nsamples > 1)
			period = (th->last_sample - th->first_sample) / (th->nsamples - 1);
		else
			period = 0;
		a[0] = snap_arg_int(bld->n_period, (int64_t)period);
		/* this trace flags the ends it cut (docs/report.md), even when no
		 * thread had one to flag (every thread exited) */
		a[1] = snap_arg_int(bld->ctx.n.inferred_end, 1);
		err = bld->tl->ops->counter(bld->tl, th->pid, th->tid, th->first_sample,
					    bld->n_sampling, a, 2);
	}
	return err;
}
