// SPDX-License-Identifier: GPL-2.0
/*
 * The stack builder: thread table, base time, scope enforcement, TSX
 * buffering, -filter's regions and event routing; track names, chain cuts,
 * off-CPU and the marks are in their own files (bthread.h). See builder.h.
 */
#include "stack/builder.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "model/names.h"
#include "stack/bthread.h"
#include "stack/scope.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/log.h"
#include "util/vec.h"

#define WARN_DECODE_ERRORS 5 /* then only at info level */

static int init_names(struct snap_builder *bld)
{
	struct snap_strtab *st = bld->st;
	int err;

	if ((err = snap_strtab_intern_id(st, "CPU", &bld->n_cpu)) < 0 ||
	    (err = snap_strtab_intern_id(st, "freq (MHz)", &bld->n_freq)) < 0 ||
	    (err = snap_strtab_intern_id(st, "addr", &bld->n_addr)) < 0 ||
	    (err = snap_strtab_intern_id(st, "count", &bld->n_count)) < 0 ||
	    (err = snap_strtab_intern_id(st, "tid", &bld->n_tid)) < 0 ||
	    (err = snap_strtab_intern_id(st, "ip", &bld->n_ip)) < 0 ||
	    (err = snap_strtab_intern_id(st, "timestamp", &bld->n_ts)) < 0 ||
	    (err = snap_strtab_intern_id(st, "timestamp_passed", &bld->n_ts_passed)) < 0 ||
	    (err = snap_strtab_intern_id(st, "arg", &bld->n_arg)) < 0 ||
	    (err = snap_strtab_intern_id(st, "Snapshot symbol hits", &bld->n_hits)) < 0 ||
	    (err = snap_strtab_intern_id(st, SNAP_NAME_SAMPLING, &bld->n_sampling)) < 0 ||
	    (err = snap_strtab_intern_id(st, SNAP_ARG_PERIOD, &bld->n_period)) < 0 ||
	    (err = snap_strtab_intern_id(st, SNAP_NAME_OFFCPU, &bld->n_offcpu)) < 0 ||
	    (err = snap_strtab_intern_id(st, SNAP_BUILDER_PREEMPTED, &bld->n_preempted)) < 0 ||
	    (err = snap_strtab_intern_id(st, SNAP_BUILDER_OFF_INFERRED, &bld->n_off_inferred)) <
		    0 ||
	    (err = snap_strtab_intern_id(st, SNAP_BUILDER_UNSAMPLED, &bld->n_unsampled)) < 0 ||
	    (err = snap_strtab_intern_id(st, "cpu-clock", &bld->n_cpu_clock)) < 0 ||
	    (err = snap_strtab_intern_id(st, "task-clock", &bld->n_task_clock)) < 0)
		return err;
	return 0;
}

int snap_builder_init(struct snap_builder *bld, struct snap_timeline *tl, struct snap_strtab *st,
		      const struct snap_builder_opts *opts)
{
	static const struct snap_builder_opts defaults;
	const struct snap_builder_opts *o = opts ? opts : &defaults;
	size_t i;
	int err;

	memset(bld, 0, sizeof(*bld));
	bld->tl = tl;
	bld->st = st;
	if (o->filter) {
		/* magic-trace starts "in the region": the first event that is not in
		 * a START..STOP range ends it (nothing was written yet) */
		bld->filter = o->filter;
		snap_gate_tl_init(&bld->gate, tl, 1);
		bld->tl = tl = &bld->gate.base;
	}
	bld->strict = o->strict_scope;
	bld->no_tx = o->no_tx;
	snap_u64map_init(&bld->tmap);
	snap_u64map_init(&bld->pidnames);
	snap_u64map_init(&bld->pidcomm);
	snap_u64map_init(&bld->births);
	snap_u64map_init(&bld->pre_in);
	if (o->has_base_time) {
		bld->have_base = 1;
		bld->base = o->base_time;
	}
	if ((err = snap_cstack_ctx_init(&bld->ctx, tl, st, o->scope, o->max_depth)) < 0 ||
	    (err = init_names(bld)) < 0 || (err = snap_marks_init_hits(bld, o)) < 0)
		return err;
	bld->ctx.eh = o->ocaml_eh;
	bld->ctx.debug_names = o->debug_names;
	bld->ctx.args_once = !o->per_call_args;
	bld->ctx.srcloc = o->srcloc;
	bld->error_source = o->error_source ? o->error_source : "perf";
	bld->first_snapshot = 1;
	for (i = 0; i < o->nnames; i++) {
		uint32_t id;
		uint64_t key = snap_bld_tkey(o->names[i].pid, o->names[i].pid);

		if (o->names[i].born &&
		    snap_u64map_put(&bld->births, key, SNAP_BLD_BORN_AT_START) < 0)
			return -ENOMEM;
		if (!o->names[i].name || !o->names[i].name[0])
			continue;
		if ((err = snap_strtab_intern_id(st, o->names[i].name, &id)) < 0)
			return err;
		if (snap_u64map_put(&bld->pidnames, (uint32_t)o->names[i].pid, id) < 0)
			return -ENOMEM;
	}
	return 0;
}

void snap_builder_fini(struct snap_builder *bld)
{
	size_t i;

	for (i = 0; i < bld->nth; i++) {
		snap_cstack_fini(&bld->th[i]->cs);
		snap_sampdiff_thread_fini(&bld->th[i]->sd);
		snap_free(bld->th[i]->extra);
		snap_free(bld->th[i]);
	}
	snap_free(bld->th);
	snap_u64map_fini(&bld->tmap);
	snap_u64map_fini(&bld->pidnames);
	snap_u64map_fini(&bld->pidcomm);
	snap_u64map_fini(&bld->births);
	snap_u64map_fini(&bld->pre_in);
	snap_cstack_ctx_fini(&bld->ctx);
	snap_free(bld->hits);
	snap_free(bld->hit_names);
	snap_free(bld->tx);
	memset(bld, 0, sizeof(*bld));
}

/* ---- time ------------------------------------------------------------------ */

static void set_base(struct snap_builder *bld, const struct snap_event *ev)
{
	/* A switch record (--switch-events) comes from perf's normal ring, written
	 * as the run goes, ahead of the older samples of the overwrite ring that
	 * perf writes at the end (attach): it does not date the trace's start, or
	 * those samples would all "go backwards" to it. */
	if (bld->have_base || !ev->has_time || (ev->kind == SNAP_EV_SWITCH && !ev->nframes))
		return;
	bld->base = ev->time;
	if (bld->have_hit_min && bld->hit_min < bld->base)
		bld->base = bld->hit_min;
	bld->have_base = 1;
}

/* ---- threads and tracks ---------------------------------------------------- */

/* A new thread's first frames (docs/sampling.md "Threads born and exiting"):
 * they were running before the data began (marked inferred_start_time) unless
 * the thread was born in the recording: its fork or exec record came after
 * the data of this snapshot began, or at most two sample periods before (a
 * program's exec comes just before its first sample), or the recording began
 * at its first instruction (opts.names' born: first snapshot only). (A
 * switch-in recorded before its first sample is where its stack begins:
 * thread_new.) */
static int thread_birth(struct snap_builder *bld, struct snap_bthread *th,
			const struct snap_event *ev, uint64_t key)
{
	uint64_t v, p = ev->kind == SNAP_EV_SAMPLE && snap_bld_clock_event(bld, ev->event)
				? ev->period
				: 0;

	th->cs.start_cut = 1;
	if (snap_u64map_get(&bld->births, key, &v) && v) {
		if (v == SNAP_BLD_BORN_AT_START ? bld->first_snapshot
						: v - 1 + 2 * p >= bld->stack_t0) {
			th->cs.start_cut = 0;
			bld->stats.births++;
		}
		if (snap_u64map_put(&bld->births, key, 0) < 0)
			return -ENOMEM;
	}
	if (snap_u64map_get(&bld->pre_in, key, &v) && v &&
	    snap_u64map_put(&bld->pre_in, key, 0) < 0)
		return -ENOMEM; /* used by thread_new */
	return 0;
}

static int thread_new(struct snap_builder *bld, const struct snap_event *ev, uint64_t key,
		      struct snap_bthread **out)
{
	struct snap_bthread *th;
	uint64_t cmd, t0, v;
	uint32_t tname;
	int err;

	if (snap_vec_reserve(&bld->th, &bld->capth, bld->nth + 1, sizeof(*bld->th)) < 0)
		return -ENOMEM;
	th = snap_calloc(1, sizeof(*th));
	if (!th)
		return -ENOMEM;
	th->pid = ev->pid;
	th->tid = ev->tid;
	/* a switch-in before its first sample: the thread's stack starts there */
	t0 = ev->has_time ? snap_bld_trace_time(bld, ev->time) : 0;
	if (ev->kind == SNAP_EV_SAMPLE && ev->has_time && snap_u64map_get(&bld->pre_in, key, &v) &&
	    v && v - 1 <= t0) {
		t0 = v - 1;
		th->pend_in = 1;
		th->t_in = t0;
	}
	err = snap_cstack_init(&th->cs, &bld->ctx, ev->pid, ev->tid, t0);
	if (err < 0)
		goto fail;
	if ((err = snap_tracks_proc_name(bld, ev->pid, ev->tid, ev->comm, &th->proc_name, &cmd)) <
	    0)
		goto fail;
	if ((err = snap_tracks_thread_name(bld, ev->pid, ev->tid, ev->comm, cmd, &tname)) < 0)
		goto fail;
	th->comm = ev->comm;
	th->tname = tname;
	if ((err = thread_birth(bld, th, ev, key)) < 0)
		goto fail;
	if (snap_u64map_put(&bld->tmap, key, bld->nth) < 0) {
		err = -ENOMEM;
		goto fail;
	}
	bld->th[bld->nth++] = th;
	*out = th;
	return bld->tl->ops->thread(bld->tl, ev->pid, ev->tid, th->proc_name, tname);
fail:
	snap_cstack_fini(&th->cs);
	snap_free(th);
	return err;
}

static int thread_get(struct snap_builder *bld, const struct snap_event *ev,
		      struct snap_bthread **out)
{
	uint64_t key = snap_bld_tkey(ev->pid, ev->tid), idx;
	int err;

	if (bld->last && bld->last_key == key) {
		*out = bld->last;
		return 0;
	}
	if (snap_u64map_get(&bld->tmap, key, &idx))
		*out = bld->th[idx];
	else if ((err = thread_new(bld, ev, key, out)) < 0)
		return err;
	bld->last = *out;
	bld->last_key = key;
	return 0;
}

/* thread_get, then follows a comm change. */
static int thread_of(struct snap_builder *bld, const struct snap_event *ev,
		     struct snap_bthread **out)
{
	int err = thread_get(bld, ev, out);

	if (err < 0 || !ev->comm || ev->comm == (*out)->comm)
		return err;
	return snap_tracks_rename(bld, *out, ev->comm);
}

/* ---- scope ----------------------------------------------------------------- */

char *snap_builder_desc(const struct snap_builder *bld, const struct snap_event *ev, char *buf,
			size_t size)
{
	const struct snap_loc *frame = NULL;

	if (ev->kind == SNAP_EV_SAMPLE)
		frame = snap_scope_sample_violation(bld->ctx.scope, ev);
	return snap_event_desc(bld->st, ev, frame, buf, size);
}

static void note_violation(struct snap_builder *bld, const struct snap_event *ev)
{
	if (!bld->stats.violations++)
		snap_builder_desc(bld, ev, bld->stats.first_violation,
				  sizeof(bld->stats.first_violation));
}

/* ---- applying events ------------------------------------------------------- */

static int restart_all(struct snap_builder *bld, uint64_t t)
{
	int err = 0, e;
	size_t i;

	for (i = 0; i < bld->nth; i++) {
		bld->th[i]->offcpu = OFFCPU_NO; /* the restart closes every frame */
		bld->th[i]->pend_in = bld->th[i]->out_pend = bld->th[i]->blk_leaf = 0;
		bld->th[i]->last_was_sample = 0;
		bld->th[i]->cs.start_cut = 1; /* the next frames were running before */
		e = snap_cstack_restart(&bld->th[i]->cs, t);
		if (e < 0 && !err)
			err = e;
	}
	return err;
}

static int apply_error(struct snap_builder *bld, struct snap_bthread *th,
		       const struct snap_event *ev, uint64_t t)
{
	int lvl = bld->ctx.stats.decode_errors < WARN_DECODE_ERRORS ? SNAP_LOG_WARN : SNAP_LOG_INFO;

	if (ev->src.ip)
		snap_log(lvl, "%s reported a decode error: %s (ip 0x%" PRIx64 ", tid %" PRId32 ")",
			 bld->error_source, snap_strtab_get(bld->st, ev->msg), ev->src.ip, ev->tid);
	else
		snap_log(lvl, "%s reported a decode error: %s (tid %" PRId32 ")", bld->error_source,
			 snap_strtab_get(bld->st, ev->msg), ev->tid);
	return snap_cstack_error(&th->cs, ev->msg, t);
}

static int apply_extra(struct snap_builder *bld, struct snap_bthread *th,
		       const struct snap_event *ev, uint64_t t)
{
	struct snap_arg a[3];
	int32_t tid;
	int err = snap_tracks_extra(bld, th, ev->event, &tid);

	if (err < 0)
		return err;
	a[0] = snap_arg_str(bld->ctx.n.symbol, ev->src.sym ? ev->src.sym : bld->ctx.n.unknown);
	a[1] = snap_arg_ptr(bld->n_addr, ev->src.ip);
	a[2] = snap_arg_int(bld->n_count, (int64_t)ev->period);
	return bld->tl->ops->complete(bld->tl, th->pid, tid, t, t,
				      ev->event ? ev->event : bld->ctx.n.unknown, a, 3);
}

/* Source positions of the functions ev may open (looked up once each). */
static int note_locs(struct snap_builder *bld, const struct snap_event *ev)
{
	int err;

	if (ev->kind == SNAP_EV_BRANCH)
		return snap_cstack_note_loc(&bld->ctx, &ev->dst);
	/* samples and switch tracepoints with their call chains (off-CPU stacks) */
	if ((ev->kind == SNAP_EV_SAMPLE || ev->kind == SNAP_EV_SWITCH) && ev->frames)
		for (uint32_t i = 0; i < ev->nframes; i++)
			if ((err = snap_cstack_note_loc(&bld->ctx, &ev->frames[i])) < 0)
				return err;
	return 0;
}

/* -filter: leaves or enters the START..STOP region before ev is applied. */
static int filter_region(struct snap_builder *bld, const struct snap_event *ev)
{
	int w = snap_filter_step(bld->filter, ev), err = 0, e;
	size_t i;

	/* an off-CPU slice still waiting for its switch record opens first, so
	 * that it is closed or re-opened with the other frames */
	for (i = 0; i < bld->nth && w != bld->gate.open; i++)
		if (bld->th[i]->out_pend &&
		    (e = snap_offcpu_open(bld, bld->th[i], 0, 1, bld->th[i]->out_t)) < 0)
			return e;

	if (!w && bld->gate.open) {
		/* leaving: everything open is closed where each thread was last seen;
		 * a STOP sample's thread ran what it had open until that sample */
		for (i = 0; i < bld->nth; i++) {
			struct snap_cstack *cs = &bld->th[i]->cs;
			uint64_t t = cs->last_event_time;

			if (ev->kind == SNAP_EV_SAMPLE && ev->has_time && cs->pid == ev->pid &&
			    cs->tid == ev->tid && snap_bld_trace_time(bld, ev->time) > t)
				t = snap_bld_trace_time(bld, ev->time);
			e = snap_cstack_end_thread(cs, t);
			if (e < 0 && !err)
				err = e;
		}
		bld->gate.open = 0;
	} else if (w && !bld->gate.open && ev->has_time) {
		/* entering: what happened outside stays unwritten; the frames open
		 * now are re-opened at t (inferred: their real start is not shown) */
		uint64_t t = snap_bld_trace_time(bld, ev->time);

		for (i = 0; i < bld->nth; i++) {
			e = snap_cstack_flush_to(&bld->th[i]->cs, t);
			snap_cstack_discard_deferred(&bld->th[i]->cs);
			if (e < 0 && !err)
				err = e;
		}
		bld->gate.open = 1;
		for (i = 0; i < bld->nth; i++) {
			e = snap_cstack_reopen(&bld->th[i]->cs, t);
			if (e < 0 && !err)
				err = e;
		}
	}
	return err;
}

static int apply(struct snap_builder *bld, const struct snap_event *ev)
{
	struct snap_bthread *th;
	struct snap_arg a;
	uint64_t t;
	int err;

	if (ev->kind == SNAP_EV_SWITCH) {
		uint64_t idx;

		bld->saw_switch = 1; /* the trace records switches: no idle-gap inference */

		/* Only sampled threads have an off-CPU state; a switch of a thread
		 * not seen yet has nothing to end (a tracepoint sample, with its
		 * chain, still starts one). */
		if (bld->saw_branch ||
		    (!ev->nframes &&
		     !snap_u64map_get(&bld->tmap, snap_bld_tkey(ev->pid, ev->tid), &idx))) {
			bld->stats.switches_ignored++;
			/* a thread not seen yet: its first sample's stack begins at
			 * its latest switch-in (thread_birth) */
			if (!bld->saw_branch && ev->has_time &&
			    snap_u64map_put(
				    &bld->pre_in, snap_bld_tkey(ev->pid, ev->tid),
				    ev->sw_out ? 0 : snap_bld_trace_time(bld, ev->time) + 1) < 0)
				return -ENOMEM;
			return 0;
		}
	}
	if (!bld->stack_started && ev->has_time &&
	    (ev->kind == SNAP_EV_BRANCH || ev->kind == SNAP_EV_SAMPLE ||
	     (ev->kind == SNAP_EV_SWITCH && ev->nframes))) {
		bld->stack_started = 1;
		bld->stack_t0 = ev->time;
		if (bld->nth && (err = restart_all(bld, snap_bld_trace_time(bld, ev->time))) < 0)
			return err;
	}
	if (bld->filter && (err = filter_region(bld, ev)) < 0)
		return err;
	bld->stats.filtered_out += bld->filter && !bld->gate.open;
	if ((err = thread_of(bld, ev, &th)) < 0)
		return err;
	th->floor = th->cs.last_time > th->cs.last_event_time ? th->cs.last_time
							      : th->cs.last_event_time;
	t = snap_cstack_time(&th->cs, ev->has_time,
			     ev->has_time ? snap_bld_trace_time(bld, ev->time) : 0);
	if (bld->ctx.srcloc && (err = note_locs(bld, ev)) < 0)
		return err;
	/* a sched_switch chain not followed by its switch record: it blocked */
	if (th->out_pend && !(ev->kind == SNAP_EV_SWITCH && ev->sw_out && !ev->nframes) &&
	    (err = snap_offcpu_open(bld, th, 0, 1, th->out_t)) < 0)
		return err;
	switch (ev->kind) {
	case SNAP_EV_BRANCH:
		bld->saw_branch = 1;
		th->last_was_sample = 0;
		if (th->offcpu != OFFCPU_NO && (err = snap_offcpu_on_cpu(th, t)) < 0)
			return err; /* a branch: it runs (switches end here, see above) */
		return snap_cstack_branch(&th->cs, ev, t);
	case SNAP_EV_ERROR:
		th->last_was_sample = 0;
		return apply_error(bld, th, ev, t);
	case SNAP_EV_SAMPLE:
		return snap_offcpu_sample(bld, th, ev, t);
	case SNAP_EV_SWITCH:
		return snap_offcpu_switch(bld, th, ev, t);
	case SNAP_EV_POWER:
		a = snap_arg_int(bld->n_freq, ev->freq_mhz);
		return bld->tl->ops->counter(bld->tl, th->pid, th->tid, t, bld->n_cpu, &a, 1);
	case SNAP_EV_EXTRA:
		return apply_extra(bld, th, ev, t);
	default:
		bld->ctx.stats.unexpected++;
		return 0;
	}
}

static int tx_replay(struct snap_builder *bld)
{
	size_t i, n = bld->ntx;
	int err = 0;

	bld->ntx = 0;
	for (i = 0; i < n && err >= 0; i++)
		err = apply(bld, &bld->tx[i]);
	return err;
}

static void tx_drop(struct snap_builder *bld, int warn)
{
	if (!bld->ntx)
		return;
	if (warn)
		snap_warn("decode error inside a TSX transaction: dropping %zu transaction events",
			  bld->ntx);
	bld->stats.tx_dropped += bld->ntx;
	bld->ntx = 0;
}

/* docs/behaviour.md §4.9: (x) events wait until the transaction commits (the next event outside
 * a transaction) or aborts (tx abrt: they never happened). Returns 1 if ev
 * was buffered. */
static int tx_filter(struct snap_builder *bld, const struct snap_event *ev, int *err)
{
	*err = 0;
	if (ev->kind == SNAP_EV_ERROR) {
		tx_drop(bld, 1);
		return 0;
	}
	if (ev->kind == SNAP_EV_BRANCH && ev->br_kind == SNAP_BR_TXABORT) {
		tx_drop(bld, 0);
		return 0;
	}
	if (ev->kind == SNAP_EV_BRANCH && ev->in_tx) {
		if (bld->ntx >= SNAP_BUILDER_MAX_TX && (*err = tx_replay(bld)) < 0)
			return 1;
		if (snap_vec_reserve(&bld->tx, &bld->captx, bld->ntx + 1, sizeof(*bld->tx)) < 0) {
			*err = -ENOMEM;
			return 1;
		}
		bld->tx[bld->ntx] = *ev;
		bld->tx[bld->ntx].frames = NULL;
		bld->tx[bld->ntx].nframes = 0;
		bld->ntx++;
		return 1;
	}
	if (bld->ntx)
		*err = tx_replay(bld);
	return 0;
}

/* A thread born (fork, exec) or exiting (docs/sampling.md "Threads born and
 * exiting"). A birth of a thread not seen yet is remembered for its first
 * sample (thread_birth); an exit ends the thread's frames at its last sample
 * plus at most half a period, or at the exit record if earlier, as real
 * ends (not cut). */
static int apply_task(struct snap_builder *bld, const struct snap_event *ev)
{
	uint64_t key = snap_bld_tkey(ev->pid, ev->tid), idx, t;
	struct snap_bthread *th;
	int err;

	if (!ev->has_time || !ev->time || bld->saw_branch)
		return 0; /* synthesized for threads that existed before (time 0) */
	if (!snap_u64map_get(&bld->tmap, key, &idx)) {
		if (ev->task_exit)
			return snap_u64map_put(&bld->births, key, 0) < 0 ? -ENOMEM : 0;
		if (snap_u64map_get(&bld->births, key, &t) && t == SNAP_BLD_BORN_AT_START)
			return 0; /* an exec before its first sample: still born at the start */
		return snap_u64map_put(&bld->births, key, ev->time + 1) < 0 ? -ENOMEM : 0;
	}
	if (!ev->task_exit || !bld->have_base)
		return 0; /* an exec of a thread seen before: it goes on */
	th = bld->th[idx];
	/* not snap_cstack_time: the frames may end before this record */
	t = snap_bld_trace_time(bld, ev->time);
	if (t < th->cs.last_time)
		t = th->cs.last_time;
	th->floor = th->cs.last_time;
	if (th->out_pend && (err = snap_offcpu_open(bld, th, 0, 1, th->out_t)) < 0)
		return err;
	if ((err = snap_offcpu_on_cpu(th, t)) < 0)
		return err;
	/* switched in and no sample before the exit: what ran is unknown, and
	 * the open frames returned on the way out */
	if (th->pend_in && (err = snap_offcpu_unsampled(bld, th, ev, 0, t)) < 0)
		return err;
	bld->stats.exits++;
	th->cs.ends_known = 1;
	err = snap_cstack_end_thread(&th->cs, snap_offcpu_last_end(th, t));
	th->cs.ends_known = 0;
	th->pend_in = th->blk_leaf = th->last_was_sample = 0;
	th->exited = 1;
	th->cs.start_cut = 0; /* the same tid again: a new thread (born) */
	snap_sampdiff_thread_fini(&th->sd);
	return err;
}

/* The general path of snap_builder_feed, of every event but the commonest
 * (feed_slow's). */
static int feed_other(struct snap_builder *bld, const struct snap_event *ev)
{
	int err;

	if (ev->kind == SNAP_EV_TASK)
		return apply_task(bld, ev); /* never the trace's base time */
	if ((ev->kind == SNAP_EV_SAMPLE || ev->kind == SNAP_EV_SWITCH) && ev->frames &&
	    ev->nframes) {
		uint32_t k =
			snap_chain_cut(bld, ev->frames, ev->nframes, ev->kind == SNAP_EV_SAMPLE);

		if (ev->kind == SNAP_EV_SAMPLE)
			snap_chain_count(bld, ev->frames + k, ev->nframes - k);
		if (k) {
			bld->cut = *ev;
			bld->cut.frames += k;
			bld->cut.nframes -= k;
			ev = &bld->cut;
		}
	}
	set_base(bld, ev);
	if (snap_scope_violates(bld->ctx.scope, ev)) {
		note_violation(bld, ev);
		if (bld->strict)
			return -SNAP_ESCOPE;
		if (ev->kind != SNAP_EV_SAMPLE)
			return 0; /* dropped; samples keep their in-scope frames */
	}
	if (!bld->no_tx) {
		if (tx_filter(bld, ev, &err))
			return err;
		if (err < 0)
			return err;
	}
	return apply(bld, ev);
}

/* The rest of the common branch's path (snap_builder_feed) when the source
 * position of its target's function is still to be looked up. */
__attribute__((noinline)) static int feed_branch_loc(struct snap_builder *bld,
						     struct snap_bthread *th,
						     const struct snap_event *ev, uint64_t t)
{
	int err = snap_cstack_lookup_loc(&bld->ctx, &ev->dst);

	if (err < 0)
		return err;
	bld->saw_branch = 1;
	th->last_was_sample = 0;
	return snap_cstack_branch(&th->cs, ev, t);
}

/* Is ev, a branch, in scope by snap_scope_violates's inline test alone?
 * (The events that test does not settle take the general path.) */
static inline int branch_in_scope(enum snap_scope scope, const struct snap_event *ev)
{
	if (scope == SNAP_SCOPE_BOTH)
		return 1;
	return scope == SNAP_SCOPE_USER &&
	       (ev->br_kind == SNAP_BR_CALL || ev->br_kind == SNAP_BR_RETURN ||
		ev->br_kind == SNAP_BR_JUMP) &&
	       !snap_loc_is_kernel(&ev->src) && !snap_loc_is_kernel(&ev->dst);
}

/* The 8 bytes of an event's pid and tid (side by side: model/event.h) read as one
 * word, for the key (pid, tid) of snap_bld_tkey. */
_Static_assert(offsetof(struct snap_event, tid) == offsetof(struct snap_event, pid) + 4,
	       "pid and tid read at once");
static inline uint64_t ev_pidtid_word(uint64_t key)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return key << 32 | key >> 32; /* pid in the low half */
#else
	return key;
#endif
}

/* Whether event e leaves the lean path (snap_builder_feed, snap_builder_feed_n),
 * given the lean thread's key (ev_pidtid_word) and command, the scope and
 * whether transactions are kept (tx): all but a branch in scope on that
 * thread, its command unchanged, not in a transaction. */
static inline int lean_leaves(const struct snap_event *e, uint64_t key, uint32_t comm,
			      enum snap_scope scope, int tx)
{
	uint64_t pidtid;

	memcpy(&pidtid, &e->pid, sizeof(pidtid));
	return e->kind != SNAP_EV_BRANCH || pidtid != key || (e->comm && e->comm != comm) ||
	       (e->in_tx && tx) || !branch_in_scope(scope, e);
}

/* bld->lean: the last event's thread if the lean path's tests of the
 * builder's and the thread's state hold (a base time and a stack start set,
 * no -filter, no transaction pending or transactions ignored, the thread on
 * the CPU with no off-CPU slice waiting), else NULL. Only the general path
 * (feed_slow) and snap_builder_new_snapshot / _finish change that state (the
 * lean path changes none of it: it touches the thread's stack alone), so
 * it is set after each of them, and the lean path tests only the event. */
static struct snap_bthread *lean_thread(const struct snap_builder *bld)
{
	struct snap_bthread *th = bld->last;

	if (!th || bld->finished || !bld->have_base || !bld->stack_started || bld->filter ||
	    (!bld->no_tx && bld->ntx) || th->out_pend || th->offcpu != OFFCPU_NO)
		return NULL;
	return th;
}

/* snap_builder_feed of an event that does not take the lean path. Not
 * inline, so that the lean path keeps no stack frame. */
__attribute__((noinline)) static int feed_slow(struct snap_builder *bld,
					       const struct snap_event *ev)
{
	int err;

	if (bld->finished)
		return -EINVAL;
	bld->stats.events++;
	err = feed_other(bld, ev);
	bld->lean = lean_thread(bld);
	return err;
}

int snap_builder_feed(struct snap_builder *bld, const struct snap_event *ev)
{
	struct snap_bthread *th = bld->lean;
	uint64_t t;

	/* The commonest event of a PT trace, a branch in scope on the last
	 * event's thread, with nothing pending around it (bld->lean: no base
	 * time or stack start to set, no -filter, no transaction, the thread
	 * on the CPU with no off-CPU slice waiting; the event: its comm
	 * unchanged, not in a transaction), takes only the steps of feed_other
	 * and apply that do something for it, in their order, with no call but
	 * the last (so no stack frame either). */
	if (!th ||
	    lean_leaves(ev, ev_pidtid_word(bld->last_key), th->comm, bld->ctx.scope, !bld->no_tx))
		return feed_slow(bld, ev);
	bld->stats.events++;
	/* (th->floor is not read on this path: bthread.h) */
	t = snap_cstack_time(&th->cs, ev->has_time,
			     ev->has_time ? snap_bld_trace_time(bld, ev->time) : 0);
	if (!snap_cstack_loc_noted(&bld->ctx, &ev->dst))
		return feed_branch_loc(bld, th, ev, t);
	bld->saw_branch = 1;
	th->last_was_sample = 0;
	return snap_cstack_branch(&th->cs, ev, t);
}

/* The count of one event (snap_feed_count). */
static inline void count_one(struct snap_feed_count *c, const struct snap_event *ev)
{
	if (ev->kind == SNAP_EV_SAMPLE)
		c->samples++;
	else if (ev->kind == SNAP_EV_BRANCH)
		c->branches++;
	else
		return;
	if (ev->has_time) {
		if (!c->first_time || ev->time < c->first_time)
			c->first_time = ev->time;
		if (ev->time > c->last_time)
			c->last_time = ev->time;
	}
}

void snap_feed_count_add(struct snap_feed_count *c, const struct snap_event *ev, size_t n)
{
	for (size_t i = 0; i < n; i++)
		count_one(c, &ev[i]);
}

/*
 * snap_builder_feed of ev[0..n) in order, stopping at the first error (*at: the
 * event it failed on, or n). The lean path's state (bld->lean: its thread, that
 * thread's key and comm, the scope, the transaction switch) changes only on the
 * general path (feed_slow), so a run of branches that take it tests each event
 * against that state held in locals; the first event that leaves it goes
 * through snap_builder_feed, which sets the state again for the next run.
 */
int snap_builder_feed_n(struct snap_builder *bld, const struct snap_event *ev, size_t n, size_t *at,
			struct snap_feed_count *cnt)
{
	struct snap_feed_count none = {0}, c = cnt ? *cnt : none;
	size_t i = 0;
	int err = 0;

	while (i < n) {
		struct snap_bthread *th = bld->lean;

		if (th) {
			/* last_key as the word pid and tid make in an event's memory */
			uint64_t key = ev_pidtid_word(bld->last_key);
			uint32_t comm = th->comm;
			enum snap_scope scope = bld->ctx.scope;
			int tx = !bld->no_tx;
			uint64_t base = bld->base, first = c.first_time, last = c.last_time;
			size_t i0 = i;

			for (; i < n; i++) {
				const struct snap_event *e = &ev[i];
				uint64_t t, et = e->time;

				/* snap_builder_feed's tests, the state in locals */
				if (lean_leaves(e, key, comm, scope, tx) ||
				    (e->has_time && et < base))
					break;
				if (e->has_time) { /* (count_one's) */
					first = !first || et < first ? et : first;
					last = et > last ? et : last;
				}
				t = snap_cstack_time(&th->cs, e->has_time,
						     e->has_time ? et - base : 0);
				if (!snap_cstack_loc_noted(&bld->ctx, &e->dst))
					err = feed_branch_loc(bld, th, e, t);
				else
					err = snap_cstack_branch(&th->cs, e, t);
				if (err < 0)
					break;
			}
			/* the events taken (the one that failed too), and what only
			 * the general path reads, once */
			bld->stats.events += i - i0 + (err < 0);
			c.branches += i - i0 + (err < 0);
			c.first_time = first;
			c.last_time = last;
			if (i > i0 || err < 0) {
				bld->saw_branch = 1;
				th->last_was_sample = 0;
			}
			if (err < 0 || i == n)
				break;
		}
		count_one(&c, &ev[i]);
		if ((err = snap_builder_feed(bld, &ev[i])) < 0)
			break;
		i++;
	}
	*at = i;
	if (cnt)
		*cnt = c;
	return err;
}

void snap_builder_new_snapshot(struct snap_builder *bld)
{
	bld->stack_started = 0;
	bld->first_snapshot = 0;
	bld->lean = NULL;
}

int snap_builder_finish(struct snap_builder *bld)
{
	int err = 0, e;
	size_t i;

	if (bld->finished)
		return 0;
	bld->finished = 1;
	bld->lean = NULL;
	if (bld->ntx)
		err = tx_replay(bld);
	for (i = 0; i < bld->nth; i++) {
		struct snap_bthread *th = bld->th[i];

		if (th->out_pend && (e = snap_offcpu_open(bld, th, 0, 1, th->out_t)) < 0 && !err)
			err = e;
		e = snap_cstack_end_thread(&th->cs, snap_offcpu_last_end(th, 0));
		if (e < 0 && !err)
			err = e;
	}
	bld->gate.open = 1; /* the hits and the sampling marker are always shown */
	e = snap_marks_sampling(bld);
	if (e < 0 && !err)
		err = e;
	e = snap_marks_hits(bld);
	return err < 0 ? err : e;
}

void snap_builder_stats(const struct snap_builder *bld, struct snap_builder_stats *out)
{
	const struct snap_cstack_stats *c = &bld->ctx.stats;

	*out = bld->stats;
	out->threads = bld->nth;
	out->decode_errors = c->decode_errors;
	out->unmatched_returns = c->unmatched_returns;
	out->depth_capped = c->depth_capped;
	out->inferred_capped = c->inferred_capped;
	out->time_backwards += c->time_backwards;
	out->unexpected = c->unexpected;
	out->trap_mismatch = c->trap_mismatch;
	out->trimmed = c->trimmed;
	out->samples = bld->sd.samples;
	out->sample_frames_dropped = bld->sd.dropped_frames;
	out->zero_frames = bld->sd.zero_frames;
}

unsigned snap_builder_quality(const struct snap_builder_stats *s, uint64_t *cut_pct,
			      uint64_t *nosym_pct)
{
	uint64_t unk = s->user_frames ? s->unknown_frames * 100 / s->user_frames : 0;
	uint64_t cut = s->samples ? s->chains_cut * 100 / s->samples : 0;
	unsigned q = 0;

	*cut_pct = cut;
	*nosym_pct = unk;
	if (s->samples < SNAP_BUILDER_QUALITY_MIN)
		return 0;
	if (cut >= SNAP_BUILDER_QUALITY_PCT)
		q |= SNAP_BUILDER_Q_CUT;
	if (unk >= SNAP_BUILDER_QUALITY_PCT)
		q |= SNAP_BUILDER_Q_NOSYM;
	if (s->dwarf && snap_builder_short_pct(s) >= SNAP_BUILDER_QUALITY_PCT)
		q |= SNAP_BUILDER_Q_SHORT;
	return q;
}

uint64_t snap_builder_short_pct(const struct snap_builder_stats *s)
{
	return s->samples ? s->chains_rootless * 100 / s->samples : 0;
}
