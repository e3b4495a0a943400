// SPDX-License-Identifier: GPL-2.0
/*
 * The decoder driver: thread table, base time, scope enforcement, TSX
 * buffering, -filter's regions and event routing; track names, chain cuts,
 * off-CPU and the marks are in their own files (dthread.h). See decoder.h.
 */
#include "stack/decoder.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model/names.h"
#include "stack/dthread.h"
#include "stack/scope.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/log.h"
#include "util/vec.h"

#define WARN_DECODE_ERRORS 5 /* then only at info level */

static int init_names(struct snap_decoder *dec)
{
	struct snap_strtab *st = dec->st;
	int err;

	if ((err = snap_strtab_intern_id(st, "CPU", &dec->n_cpu)) < 0 ||
	    (err = snap_strtab_intern_id(st, "freq (MHz)", &dec->n_freq)) < 0 ||
	    (err = snap_strtab_intern_id(st, "addr", &dec->n_addr)) < 0 ||
	    (err = snap_strtab_intern_id(st, "count", &dec->n_count)) < 0 ||
	    (err = snap_strtab_intern_id(st, "tid", &dec->n_tid)) < 0 ||
	    (err = snap_strtab_intern_id(st, "ip", &dec->n_ip)) < 0 ||
	    (err = snap_strtab_intern_id(st, "timestamp", &dec->n_ts)) < 0 ||
	    (err = snap_strtab_intern_id(st, "timestamp_passed", &dec->n_ts_passed)) < 0 ||
	    (err = snap_strtab_intern_id(st, "arg", &dec->n_arg)) < 0 ||
	    (err = snap_strtab_intern_id(st, "Snapshot symbol hits", &dec->n_hits)) < 0 ||
	    (err = snap_strtab_intern_id(st, SNAP_NAME_SAMPLING, &dec->n_sampling)) < 0 ||
	    (err = snap_strtab_intern_id(st, SNAP_ARG_PERIOD, &dec->n_period)) < 0 ||
	    (err = snap_strtab_intern_id(st, SNAP_NAME_OFFCPU, &dec->n_offcpu)) < 0 ||
	    (err = snap_strtab_intern_id(st, SNAP_DECODER_PREEMPTED, &dec->n_preempted)) < 0 ||
	    (err = snap_strtab_intern_id(st, SNAP_DECODER_OFF_INFERRED, &dec->n_off_inferred)) <
		    0 ||
	    (err = snap_strtab_intern_id(st, SNAP_DECODER_UNSAMPLED, &dec->n_unsampled)) < 0 ||
	    (err = snap_strtab_intern_id(st, "cpu-clock", &dec->n_cpu_clock)) < 0 ||
	    (err = snap_strtab_intern_id(st, "task-clock", &dec->n_task_clock)) < 0)
		return err;
	return 0;
}

int snap_decoder_init(struct snap_decoder *dec, struct snap_timeline *tl, struct snap_strtab *st,
		      const struct snap_decoder_opts *opts)
{
	static const struct snap_decoder_opts defaults;
	const struct snap_decoder_opts *o = opts ? opts : &defaults;
	size_t i;
	int err;

	memset(dec, 0, sizeof(*dec));
	dec->tl = tl;
	dec->st = st;
	if (o->filter) {
		/* magic-trace starts "in the region": the first event that is not in
		 * a START..STOP range ends it (nothing was written yet) */
		dec->filter = o->filter;
		snap_gate_tl_init(&dec->gate, tl, 1);
		dec->tl = tl = &dec->gate.base;
	}
	dec->strict = o->strict_scope;
	dec->no_tx = o->no_tx;
	snap_u64map_init(&dec->tmap);
	snap_u64map_init(&dec->pidnames);
	snap_u64map_init(&dec->pidcomm);
	snap_u64map_init(&dec->births);
	snap_u64map_init(&dec->pre_in);
	if (o->has_base_time) {
		dec->have_base = 1;
		dec->base = o->base_time;
	}
	if ((err = snap_cstack_ctx_init(&dec->ctx, tl, st, o->scope, o->max_depth)) < 0 ||
	    (err = init_names(dec)) < 0 || (err = snap_marks_init_hits(dec, o)) < 0)
		return err;
	dec->ctx.eh = o->ocaml_eh;
	dec->ctx.debug_names = o->debug_names;
	dec->ctx.srcloc = o->srcloc;
	dec->error_source = o->error_source ? o->error_source : "perf";
	for (i = 0; i < o->nnames; i++) {
		uint32_t id;

		if (!o->names[i].name || !o->names[i].name[0])
			continue;
		if ((err = snap_strtab_intern_id(st, o->names[i].name, &id)) < 0)
			return err;
		if (snap_u64map_put(&dec->pidnames, (uint32_t)o->names[i].pid, id) < 0)
			return -ENOMEM;
	}
	return 0;
}

void snap_decoder_fini(struct snap_decoder *dec)
{
	size_t i;

	for (i = 0; i < dec->nth; i++) {
		snap_cstack_fini(&dec->th[i]->cs);
		snap_sampdiff_thread_fini(&dec->th[i]->sd);
		snap_free(dec->th[i]->extra);
		snap_free(dec->th[i]);
	}
	snap_free(dec->th);
	snap_u64map_fini(&dec->tmap);
	snap_u64map_fini(&dec->pidnames);
	snap_u64map_fini(&dec->pidcomm);
	snap_u64map_fini(&dec->births);
	snap_u64map_fini(&dec->pre_in);
	snap_cstack_ctx_fini(&dec->ctx);
	snap_free(dec->hits);
	snap_free(dec->hit_names);
	snap_free(dec->tx);
	memset(dec, 0, sizeof(*dec));
}

/* ---- time ------------------------------------------------------------------ */

static void set_base(struct snap_decoder *dec, const struct snap_event *ev)
{
	/* A switch record (--switch-events) comes from perf's normal ring, written
	 * as the run goes, ahead of the older samples of the overwrite ring that
	 * perf writes at the end (attach): it does not date the trace's start, or
	 * those samples would all "go backwards" to it. */
	if (dec->have_base || !ev->has_time || (ev->kind == SNAP_EV_SWITCH && !ev->nframes))
		return;
	dec->base = ev->time;
	if (dec->have_hit_min && dec->hit_min < dec->base)
		dec->base = dec->hit_min;
	dec->have_base = 1;
}

/* ---- threads and tracks ---------------------------------------------------- */

/* A new thread's first frames (docs/sampling.md "Threads born and exiting"):
 * they were running before the data began (marked inferred_start_time) unless
 * the thread was born in the recording: its fork or exec record came after
 * the data of this snapshot began, or at most two sample periods before (a
 * program's exec comes just before its first sample). (A switch-in recorded
 * before its first sample is where its stack begins: thread_new.) */
static int thread_birth(struct snap_decoder *dec, struct snap_dthread *th,
			const struct snap_event *ev, uint64_t key)
{
	uint64_t v, p = ev->kind == SNAP_EV_SAMPLE && snap_dec_clock_event(dec, ev->event)
				? ev->period
				: 0;

	th->cs.start_cut = 1;
	if (snap_u64map_get(&dec->births, key, &v) && v) {
		if (v - 1 + 2 * p >= dec->stack_t0) {
			th->cs.start_cut = 0;
			dec->stats.births++;
		}
		if (snap_u64map_put(&dec->births, key, 0) < 0)
			return -ENOMEM;
	}
	if (snap_u64map_get(&dec->pre_in, key, &v) && v &&
	    snap_u64map_put(&dec->pre_in, key, 0) < 0)
		return -ENOMEM; /* used by thread_new */
	return 0;
}

static int thread_new(struct snap_decoder *dec, const struct snap_event *ev, uint64_t key,
		      struct snap_dthread **out)
{
	struct snap_dthread *th;
	uint64_t cmd, t0, v;
	uint32_t tname;
	int err;

	if (snap_vec_reserve(&dec->th, &dec->capth, dec->nth + 1, sizeof(*dec->th)) < 0)
		return -ENOMEM;
	th = snap_calloc(1, sizeof(*th));
	if (!th)
		return -ENOMEM;
	th->pid = ev->pid;
	th->tid = ev->tid;
	/* a switch-in before its first sample: the thread's stack starts there */
	t0 = ev->has_time ? snap_dec_trace_time(dec, ev->time) : 0;
	if (ev->kind == SNAP_EV_SAMPLE && ev->has_time && snap_u64map_get(&dec->pre_in, key, &v) &&
	    v && v - 1 <= t0) {
		t0 = v - 1;
		th->pend_in = 1;
		th->t_in = t0;
	}
	err = snap_cstack_init(&th->cs, &dec->ctx, ev->pid, ev->tid, t0);
	if (err < 0)
		goto fail;
	if ((err = snap_tracks_proc_name(dec, ev->pid, ev->tid, ev->comm, &th->proc_name, &cmd)) <
	    0)
		goto fail;
	if ((err = snap_tracks_thread_name(dec, ev->pid, ev->tid, ev->comm, cmd, &tname)) < 0)
		goto fail;
	th->comm = ev->comm;
	th->tname = tname;
	if ((err = thread_birth(dec, th, ev, key)) < 0)
		goto fail;
	if (snap_u64map_put(&dec->tmap, key, dec->nth) < 0) {
		err = -ENOMEM;
		goto fail;
	}
	dec->th[dec->nth++] = th;
	*out = th;
	return dec->tl->ops->thread(dec->tl, ev->pid, ev->tid, th->proc_name, tname);
fail:
	snap_cstack_fini(&th->cs);
	snap_free(th);
	return err;
}

static int thread_get(struct snap_decoder *dec, const struct snap_event *ev,
		      struct snap_dthread **out)
{
	uint64_t key = snap_dec_tkey(ev->pid, ev->tid), idx;
	int err;

	if (dec->last && dec->last_key == key) {
		*out = dec->last;
		return 0;
	}
	if (snap_u64map_get(&dec->tmap, key, &idx))
		*out = dec->th[idx];
	else if ((err = thread_new(dec, ev, key, out)) < 0)
		return err;
	dec->last = *out;
	dec->last_key = key;
	return 0;
}

/* thread_get, then follows a comm change. */
static int thread_of(struct snap_decoder *dec, const struct snap_event *ev,
		     struct snap_dthread **out)
{
	int err = thread_get(dec, ev, out);

	if (err < 0 || !ev->comm || ev->comm == (*out)->comm)
		return err;
	return snap_tracks_rename(dec, *out, ev->comm);
}

/* ---- scope ----------------------------------------------------------------- */

char *snap_decoder_desc(const struct snap_decoder *dec, const struct snap_event *ev, char *buf,
			size_t size)
{
	const struct snap_loc *frame = NULL;

	if (ev->kind == SNAP_EV_SAMPLE)
		frame = snap_scope_sample_violation(dec->ctx.scope, ev);
	return snap_event_desc(dec->st, ev, frame, buf, size);
}

static void note_violation(struct snap_decoder *dec, const struct snap_event *ev)
{
	if (!dec->stats.violations++)
		snap_decoder_desc(dec, ev, dec->stats.first_violation,
				  sizeof(dec->stats.first_violation));
}

/* ---- applying events ------------------------------------------------------- */

static int restart_all(struct snap_decoder *dec, uint64_t t)
{
	int err = 0, e;
	size_t i;

	for (i = 0; i < dec->nth; i++) {
		dec->th[i]->offcpu = OFFCPU_NO; /* the restart closes every frame */
		dec->th[i]->pend_in = dec->th[i]->out_pend = dec->th[i]->blk_leaf = 0;
		dec->th[i]->last_was_sample = 0;
		dec->th[i]->cs.start_cut = 1; /* the next frames were running before */
		e = snap_cstack_restart(&dec->th[i]->cs, t);
		if (e < 0 && !err)
			err = e;
	}
	return err;
}

static int apply_error(struct snap_decoder *dec, struct snap_dthread *th,
		       const struct snap_event *ev, uint64_t t)
{
	int lvl = dec->ctx.stats.decode_errors < WARN_DECODE_ERRORS ? SNAP_LOG_WARN : SNAP_LOG_INFO;

	if (ev->src.ip)
		snap_log(lvl, "%s reported a decode error: %s (ip 0x%" PRIx64 ", tid %" PRId32 ")",
			 dec->error_source, snap_strtab_get(dec->st, ev->msg), ev->src.ip, ev->tid);
	else
		snap_log(lvl, "%s reported a decode error: %s (tid %" PRId32 ")", dec->error_source,
			 snap_strtab_get(dec->st, ev->msg), ev->tid);
	return snap_cstack_error(&th->cs, ev->msg, t);
}

static int apply_extra(struct snap_decoder *dec, struct snap_dthread *th,
		       const struct snap_event *ev, uint64_t t)
{
	struct snap_arg a[3];
	int32_t tid;
	int err = snap_tracks_extra(dec, th, ev->event, &tid);

	if (err < 0)
		return err;
	a[0].name = dec->ctx.n.symbol;
	a[0].type = SNAP_ARG_STR;
	a[0].v.str = ev->src.sym ? ev->src.sym : dec->ctx.n.unknown;
	a[1].name = dec->n_addr;
	a[1].type = SNAP_ARG_PTR;
	a[1].v.u = ev->src.ip;
	a[2].name = dec->n_count;
	a[2].type = SNAP_ARG_INT;
	a[2].v.i = (int64_t)ev->period;
	return dec->tl->ops->complete(dec->tl, th->pid, tid, t, t,
				      ev->event ? ev->event : dec->ctx.n.unknown, a, 3);
}

/* Source positions of the functions ev may open (looked up once each). */
static int note_locs(struct snap_decoder *dec, const struct snap_event *ev)
{
	int err;

	if (ev->kind == SNAP_EV_BRANCH)
		return snap_cstack_note_loc(&dec->ctx, &ev->dst);
	/* samples and switch tracepoints with their call chains (off-CPU stacks) */
	if ((ev->kind == SNAP_EV_SAMPLE || ev->kind == SNAP_EV_SWITCH) && ev->frames)
		for (uint32_t i = 0; i < ev->nframes; i++)
			if ((err = snap_cstack_note_loc(&dec->ctx, &ev->frames[i])) < 0)
				return err;
	return 0;
}

/* -filter: leaves or enters the START..STOP region before ev is applied. */
static int filter_region(struct snap_decoder *dec, const struct snap_event *ev)
{
	int w = snap_filter_step(dec->filter, ev), err = 0, e;
	size_t i;

	/* an off-CPU slice still waiting for its switch record opens first, so
	 * that it is closed or re-opened with the other frames */
	for (i = 0; i < dec->nth && w != dec->gate.open; i++)
		if (dec->th[i]->out_pend &&
		    (e = snap_offcpu_open(dec, dec->th[i], 0, 1, dec->th[i]->out_t)) < 0)
			return e;

	if (!w && dec->gate.open) {
		/* leaving: everything open is closed where each thread was last seen;
		 * a STOP sample's thread ran what it had open until that sample */
		for (i = 0; i < dec->nth; i++) {
			struct snap_cstack *cs = &dec->th[i]->cs;
			uint64_t t = cs->last_event_time;

			if (ev->kind == SNAP_EV_SAMPLE && ev->has_time && cs->pid == ev->pid &&
			    cs->tid == ev->tid && snap_dec_trace_time(dec, ev->time) > t)
				t = snap_dec_trace_time(dec, ev->time);
			e = snap_cstack_end_thread(cs, t);
			if (e < 0 && !err)
				err = e;
		}
		dec->gate.open = 0;
	} else if (w && !dec->gate.open && ev->has_time) {
		/* entering: what happened outside stays unwritten; the frames open
		 * now are re-opened at t (inferred: their real start is not shown) */
		uint64_t t = snap_dec_trace_time(dec, ev->time);

		for (i = 0; i < dec->nth; i++) {
			e = snap_cstack_flush_to(&dec->th[i]->cs, t);
			snap_cstack_discard_deferred(&dec->th[i]->cs);
			if (e < 0 && !err)
				err = e;
		}
		dec->gate.open = 1;
		for (i = 0; i < dec->nth; i++) {
			e = snap_cstack_reopen(&dec->th[i]->cs, t);
			if (e < 0 && !err)
				err = e;
		}
	}
	return err;
}

static int apply(struct snap_decoder *dec, const struct snap_event *ev)
{
	struct snap_dthread *th;
	struct snap_arg a;
	uint64_t t;
	int err;

	if (ev->kind == SNAP_EV_SWITCH) {
		uint64_t idx;

		dec->saw_switch = 1; /* the trace records switches: no idle-gap inference */

		/* Only sampled threads have an off-CPU state; a switch of a thread
		 * not seen yet has nothing to end (a tracepoint sample, with its
		 * chain, still starts one). */
		if (dec->saw_branch ||
		    (!ev->nframes &&
		     !snap_u64map_get(&dec->tmap, snap_dec_tkey(ev->pid, ev->tid), &idx))) {
			dec->stats.switches_ignored++;
			/* a thread not seen yet: its first sample's stack begins at
			 * its latest switch-in (thread_birth) */
			if (!dec->saw_branch && ev->has_time &&
			    snap_u64map_put(
				    &dec->pre_in, snap_dec_tkey(ev->pid, ev->tid),
				    ev->sw_out ? 0 : snap_dec_trace_time(dec, ev->time) + 1) < 0)
				return -ENOMEM;
			return 0;
		}
	}
	if (!dec->stack_started && ev->has_time &&
	    (ev->kind == SNAP_EV_BRANCH || ev->kind == SNAP_EV_SAMPLE ||
	     (ev->kind == SNAP_EV_SWITCH && ev->nframes))) {
		dec->stack_started = 1;
		dec->stack_t0 = ev->time;
		if (dec->nth && (err = restart_all(dec, snap_dec_trace_time(dec, ev->time))) < 0)
			return err;
	}
	if (dec->filter && (err = filter_region(dec, ev)) < 0)
		return err;
	dec->stats.filtered_out += dec->filter && !dec->gate.open;
	if ((err = thread_of(dec, ev, &th)) < 0)
		return err;
	th->floor = th->cs.last_time > th->cs.last_event_time ? th->cs.last_time
							      : th->cs.last_event_time;
	t = snap_cstack_time(&th->cs, ev->has_time,
			     ev->has_time ? snap_dec_trace_time(dec, ev->time) : 0);
	if (dec->ctx.srcloc && (err = note_locs(dec, ev)) < 0)
		return err;
	/* a sched_switch chain not followed by its switch record: it blocked */
	if (th->out_pend && !(ev->kind == SNAP_EV_SWITCH && ev->sw_out && !ev->nframes) &&
	    (err = snap_offcpu_open(dec, th, 0, 1, th->out_t)) < 0)
		return err;
	switch (ev->kind) {
	case SNAP_EV_BRANCH:
		dec->saw_branch = 1;
		th->last_was_sample = 0;
		if (th->offcpu != OFFCPU_NO && (err = snap_offcpu_on_cpu(th, t)) < 0)
			return err; /* a branch: it runs (switches end here, see above) */
		return snap_cstack_branch(&th->cs, ev, t);
	case SNAP_EV_ERROR:
		th->last_was_sample = 0;
		return apply_error(dec, th, ev, t);
	case SNAP_EV_SAMPLE:
		return snap_offcpu_sample(dec, th, ev, t);
	case SNAP_EV_SWITCH:
		return snap_offcpu_switch(dec, th, ev, t);
	case SNAP_EV_POWER:
		a.name = dec->n_freq;
		a.type = SNAP_ARG_INT;
		a.v.i = ev->freq_mhz;
		return dec->tl->ops->counter(dec->tl, th->pid, th->tid, t, dec->n_cpu, &a, 1);
	case SNAP_EV_EXTRA:
		return apply_extra(dec, th, ev, t);
	default:
		dec->ctx.stats.unexpected++;
		return 0;
	}
}

static int tx_replay(struct snap_decoder *dec)
{
	size_t i, n = dec->ntx;
	int err = 0;

	dec->ntx = 0;
	for (i = 0; i < n && err >= 0; i++)
		err = apply(dec, &dec->tx[i]);
	return err;
}

static void tx_drop(struct snap_decoder *dec, int warn)
{
	if (!dec->ntx)
		return;
	if (warn)
		snap_warn("decode error inside a TSX transaction: dropping %zu transaction events",
			  dec->ntx);
	dec->stats.tx_dropped += dec->ntx;
	dec->ntx = 0;
}

/* docs/behaviour.md §4.9: (x) events wait until the transaction commits (the next event outside
 * a transaction) or aborts (tx abrt: they never happened). Returns 1 if ev
 * was buffered. */
static int tx_filter(struct snap_decoder *dec, const struct snap_event *ev, int *err)
{
	*err = 0;
	if (ev->kind == SNAP_EV_ERROR) {
		tx_drop(dec, 1);
		return 0;
	}
	if (ev->kind == SNAP_EV_BRANCH && ev->br_kind == SNAP_BR_TXABORT) {
		tx_drop(dec, 0);
		return 0;
	}
	if (ev->kind == SNAP_EV_BRANCH && ev->in_tx) {
		if (dec->ntx >= SNAP_DECODER_MAX_TX && (*err = tx_replay(dec)) < 0)
			return 1;
		if (snap_vec_reserve(&dec->tx, &dec->captx, dec->ntx + 1, sizeof(*dec->tx)) < 0) {
			*err = -ENOMEM;
			return 1;
		}
		dec->tx[dec->ntx] = *ev;
		dec->tx[dec->ntx].frames = NULL;
		dec->tx[dec->ntx].nframes = 0;
		dec->ntx++;
		return 1;
	}
	if (dec->ntx)
		*err = tx_replay(dec);
	return 0;
}

/* A thread born (fork, exec) or exiting (docs/sampling.md "Threads born and
 * exiting"). A birth of a thread not seen yet is remembered for its first
 * sample (thread_birth); an exit ends the thread's frames at its last sample
 * plus at most half a period, or at the exit record if earlier, as real
 * ends (not cut). */
static int apply_task(struct snap_decoder *dec, const struct snap_event *ev)
{
	uint64_t key = snap_dec_tkey(ev->pid, ev->tid), idx, t;
	struct snap_dthread *th;
	int err;

	if (!ev->has_time || !ev->time || dec->saw_branch)
		return 0; /* synthesized for threads that existed before (time 0) */
	if (!snap_u64map_get(&dec->tmap, key, &idx)) {
		if (ev->task_exit)
			return snap_u64map_put(&dec->births, key, 0) < 0 ? -ENOMEM : 0;
		return snap_u64map_put(&dec->births, key, ev->time + 1) < 0 ? -ENOMEM : 0;
	}
	if (!ev->task_exit || !dec->have_base)
		return 0; /* an exec of a thread seen before: it goes on */
	th = dec->th[idx];
	/* not snap_cstack_time: the frames may end before this record */
	t = snap_dec_trace_time(dec, ev->time);
	if (t < th->cs.last_time)
		t = th->cs.last_time;
	th->floor = th->cs.last_time;
	if (th->out_pend && (err = snap_offcpu_open(dec, th, 0, 1, th->out_t)) < 0)
		return err;
	if ((err = snap_offcpu_on_cpu(th, t)) < 0)
		return err;
	/* switched in and no sample before the exit: what ran is unknown, and
	 * the open frames returned on the way out */
	if (th->pend_in && (err = snap_offcpu_unsampled(dec, th, ev, 0, t)) < 0)
		return err;
	dec->stats.exits++;
	th->cs.ends_known = 1;
	err = snap_cstack_end_thread(&th->cs, snap_offcpu_last_end(th, t));
	th->cs.ends_known = 0;
	th->pend_in = th->blk_leaf = th->last_was_sample = 0;
	th->exited = 1;
	th->cs.start_cut = 0; /* the same tid again: a new thread (born) */
	snap_sampdiff_thread_fini(&th->sd);
	return err;
}

int snap_decoder_feed(struct snap_decoder *dec, const struct snap_event *ev)
{
	struct snap_event cut;
	int err;

	if (dec->finished)
		return -EINVAL;
	dec->stats.events++;
	if (ev->kind == SNAP_EV_TASK)
		return apply_task(dec, ev); /* never the trace's base time */
	if ((ev->kind == SNAP_EV_SAMPLE || ev->kind == SNAP_EV_SWITCH) && ev->frames &&
	    ev->nframes) {
		uint32_t k =
			snap_chain_cut(dec, ev->frames, ev->nframes, ev->kind == SNAP_EV_SAMPLE);

		if (ev->kind == SNAP_EV_SAMPLE)
			snap_chain_count(dec, ev->frames + k, ev->nframes - k);
		if (k) {
			cut = *ev;
			cut.frames += k;
			cut.nframes -= k;
			ev = &cut;
		}
	}
	set_base(dec, ev);
	if (snap_scope_violates(dec->ctx.scope, ev)) {
		note_violation(dec, ev);
		if (dec->strict)
			return -SNAP_ESCOPE;
		if (ev->kind != SNAP_EV_SAMPLE)
			return 0; /* dropped; samples keep their in-scope frames */
	}
	if (!dec->no_tx) {
		if (tx_filter(dec, ev, &err))
			return err;
		if (err < 0)
			return err;
	}
	return apply(dec, ev);
}

void snap_decoder_new_snapshot(struct snap_decoder *dec)
{
	dec->stack_started = 0;
}

int snap_decoder_finish(struct snap_decoder *dec)
{
	int err = 0, e;
	size_t i;

	if (dec->finished)
		return 0;
	dec->finished = 1;
	if (dec->ntx)
		err = tx_replay(dec);
	for (i = 0; i < dec->nth; i++) {
		struct snap_dthread *th = dec->th[i];

		if (th->out_pend && (e = snap_offcpu_open(dec, th, 0, 1, th->out_t)) < 0 && !err)
			err = e;
		e = snap_cstack_end_thread(&th->cs, snap_offcpu_last_end(th, 0));
		if (e < 0 && !err)
			err = e;
	}
	dec->gate.open = 1; /* the hits and the sampling marker are always shown */
	e = snap_marks_sampling(dec);
	if (e < 0 && !err)
		err = e;
	e = snap_marks_hits(dec);
	return err < 0 ? err : e;
}

void snap_decoder_stats(const struct snap_decoder *dec, struct snap_decoder_stats *out)
{
	const struct snap_cstack_stats *c = &dec->ctx.stats;

	*out = dec->stats;
	out->threads = dec->nth;
	out->decode_errors = c->decode_errors;
	out->unmatched_returns = c->unmatched_returns;
	out->depth_capped = c->depth_capped;
	out->inferred_capped = c->inferred_capped;
	out->time_backwards += c->time_backwards;
	out->unexpected = c->unexpected;
	out->trap_mismatch = c->trap_mismatch;
	out->trimmed = c->trimmed;
	out->samples = dec->sd.samples;
	out->sample_frames_dropped = dec->sd.dropped_frames;
	out->zero_frames = dec->sd.zero_frames;
}

unsigned snap_decoder_quality(const struct snap_decoder_stats *s, uint64_t *cut_pct,
			      uint64_t *nosym_pct)
{
	uint64_t unk = s->user_frames ? s->unknown_frames * 100 / s->user_frames : 0;
	uint64_t cut = s->samples ? s->chains_cut * 100 / s->samples : 0;
	unsigned q = 0;

	*cut_pct = cut;
	*nosym_pct = unk;
	if (s->samples < SNAP_DECODER_QUALITY_MIN)
		return 0;
	if (cut >= SNAP_DECODER_QUALITY_PCT)
		q |= SNAP_DECODER_Q_CUT;
	if (unk >= SNAP_DECODER_QUALITY_PCT)
		q |= SNAP_DECODER_Q_NOSYM;
	return q;
}
