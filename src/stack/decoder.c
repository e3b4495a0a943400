// SPDX-License-Identifier: GPL-2.0
/*
 * The decoder driver: thread table, base time, track names, scope
 * enforcement, TSX buffering and event routing. See decoder.h.
 */
#include "stack/decoder.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model/names.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/log.h"
#include "util/vec.h"

#define WARN_DECODE_ERRORS 5 /* then only at info level */

struct snap_dthread_extra {
	uint32_t event;
	int32_t tid;
};

struct snap_dthread {
	struct snap_cstack cs;
	struct snap_sampdiff_thread sd;
	int32_t pid, tid;
	uint32_t proc_name;
	uint32_t comm;	  /* the comm its track name was made from (0 = none yet) */
	uint32_t tname;	  /* its track name */
	uint8_t off;	  /* OFF_*: on the CPU, or off it with or without the slice */
	uint32_t off_sym; /* the off-CPU slice's name while off == OFF_SLICE */
	/* docs/sampling.md "Off-CPU time": switched in at t_in, no sample since */
	uint8_t pend_in;
	/* the open frames are a blocking chain: its innermost frame is where it
	 * blocked, which no later sample showed running */
	uint8_t blk_leaf;
	/* a sched_switch chain was applied at out_t: the off-CPU slice waits for
	 * the switch record right after it (preempted or not) */
	uint8_t out_pend;
	uint8_t last_was_sample; /* the thread's last event was a sample */
	uint8_t exited;		 /* an exit record ended it (until a sample shows it again) */
	uint64_t t_in, out_t;
	/* the thread's latest time before the event being applied: times of the
	 * model that lie in the past (a switch-in, half a period after a sample)
	 * never go before it, so the track's ops stay in time order */
	uint64_t floor;
	uint64_t last_period; /* the last sample's period in ns (clock events), else 0 */
	struct snap_dthread_extra *extra;
	size_t nextra, capextra;
	/* stack samples seen, for the sampling marker (write_sampling) */
	uint64_t nsamples, first_sample, last_sample, period_sum;
	uint32_t sample_event;
};

enum { OFF_NO = 0, OFF_SLICE, OFF_CAPPED };

static int clock_event(const struct snap_decoder *dec, uint32_t event);

static uint64_t tkey(int32_t pid, int32_t tid)
{
	return ((uint64_t)(uint32_t)pid << 32) | (uint32_t)tid;
}

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

static int init_hits(struct snap_decoder *dec, const struct snap_decoder_opts *o)
{
	char buf[512];
	size_t i;
	int err;

	if (!o->nhits)
		return 0;
	dec->hits = snap_reallocarray(NULL, o->nhits, sizeof(*dec->hits));
	dec->hit_names = snap_reallocarray(NULL, o->nhits, sizeof(*dec->hit_names));
	if (!dec->hits || !dec->hit_names)
		return -ENOMEM;
	for (i = 0; i < o->nhits; i++) {
		dec->hits[i] = o->hits[i];
		dec->hits[i].symbol = NULL; /* borrowed during init only */
		snprintf(buf, sizeof(buf), "hit %.500s", o->hits[i].symbol);
		if ((err = snap_strtab_intern_id(dec->st, buf, &dec->hit_names[i])) < 0)
			return err;
		dec->nhits++;
		if (!dec->have_hit_min || o->hits[i].time < dec->hit_min)
			dec->hit_min = o->hits[i].time;
		dec->have_hit_min = 1;
	}
	return 0;
}

/* ---- the filter's gate ----------------------------------------------------- */

static struct snap_gate *gate_of(struct snap_timeline *tl)
{
	return (struct snap_gate *)tl;
}

static int gate_thread(struct snap_timeline *tl, int32_t pid, int32_t tid, uint32_t proc,
		       uint32_t name)
{
	struct snap_timeline *o = gate_of(tl)->out;

	return o->ops->thread(o, pid, tid, proc, name);
}

static int gate_begin(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
		      uint32_t name, const struct snap_arg *args, size_t nargs)
{
	struct snap_timeline *o = gate_of(tl)->out;

	return gate_of(tl)->open ? o->ops->begin(o, pid, tid, ts, name, args, nargs) : 0;
}

static int gate_end(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts, uint32_t name)
{
	struct snap_timeline *o = gate_of(tl)->out;

	return gate_of(tl)->open ? o->ops->end(o, pid, tid, ts, name) : 0;
}

static int gate_end_args(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
			 uint32_t name, const struct snap_arg *args, size_t nargs)
{
	struct snap_timeline *o = gate_of(tl)->out;

	return gate_of(tl)->open ? snap_timeline_end_args(o, pid, tid, ts, name, args, nargs) : 0;
}

static int gate_complete(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
			 uint64_t end_ts, uint32_t name, const struct snap_arg *args, size_t nargs)
{
	struct snap_timeline *o = gate_of(tl)->out;

	return gate_of(tl)->open ? o->ops->complete(o, pid, tid, ts, end_ts, name, args, nargs) : 0;
}

static int gate_counter(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
			uint32_t name, const struct snap_arg *args, size_t nargs)
{
	struct snap_timeline *o = gate_of(tl)->out;

	return gate_of(tl)->open ? o->ops->counter(o, pid, tid, ts, name, args, nargs) : 0;
}

static int gate_finish(struct snap_timeline *tl)
{
	struct snap_timeline *o = gate_of(tl)->out;

	return o->ops->finish(o);
}

static const struct snap_timeline_ops gate_ops = {
	.thread = gate_thread,
	.begin = gate_begin,
	.end = gate_end,
	.end_args = gate_end_args,
	.complete = gate_complete,
	.counter = gate_counter,
	.finish = gate_finish,
};

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
		dec->gate.base.ops = &gate_ops;
		dec->gate.out = tl;
		dec->gate.open = 1;
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
	    (err = init_names(dec)) < 0 || (err = init_hits(dec, o)) < 0)
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

static uint64_t mapped(struct snap_decoder *dec, uint64_t perf_time)
{
	if (perf_time < dec->base) {
		dec->stats.time_backwards++;
		return 0;
	}
	return perf_time - dec->base;
}

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

static void fmt_id(char *buf, size_t size, int32_t id)
{
	if (id == 0 || id == -1)
		snprintf(buf, size, "?");
	else
		snprintf(buf, size, "%" PRId32, id);
}

static int thread_track_name(struct snap_decoder *dec, int32_t pid, int32_t tid, uint32_t comm,
			     uint64_t cmd, uint32_t *id);
static int proc_name(struct snap_decoder *dec, int32_t pid, int32_t tid, uint32_t comm,
		     uint32_t *id, uint64_t *cmd);

/* The process's first comm (see pid_cmd), 0 if none yet. */
static uint32_t pid_first_comm(const struct snap_decoder *dec, int32_t pid)
{
	uint64_t v = 0;

	snap_u64map_get(&dec->pidcomm, (uint32_t)pid, &v);
	return (uint32_t)v;
}

/* The process's first comm changed (see pid_cmd): the threads of pid seen so
 * far are named again from it. */
static int pid_renamed(struct snap_decoder *dec, int32_t pid)
{
	uint64_t cmd;
	uint32_t proc, tname;
	int err;

	for (size_t i = 0; i < dec->nth; i++) {
		struct snap_dthread *th = dec->th[i];

		if (th->pid != pid)
			continue;
		if ((err = proc_name(dec, pid, th->tid, 0, &proc, &cmd)) < 0 ||
		    (err = thread_track_name(dec, pid, th->tid, th->comm, cmd, &tname)) < 0)
			return err;
		if (proc == th->proc_name && tname == th->tname)
			continue;
		th->proc_name = proc;
		th->tname = tname;
		dec->stats.renames++;
		if ((err = dec->tl->ops->thread(dec->tl, pid, th->tid, proc, tname)) < 0)
			return err;
	}
	return 0;
}

/*
 * The command of a process: the opts name, else its first comm, else 0. The
 * first comm is the main thread's (tid == pid) first one: a thread a program
 * named (pthread_setname_np) may be seen before its main thread, and its comm
 * must not pass for the process's. Until the main thread is seen, the first
 * comm of any thread stands in for it (remembered with bit 32 clear); when
 * the main thread's differs, the threads seen so far are named again.
 */
static int pid_cmd(struct snap_decoder *dec, int32_t pid, int32_t tid, uint32_t comm, uint64_t *cmd)
{
	uint64_t first = 0, main = (uint64_t)(tid == pid) << 32;
	int known = snap_u64map_get(&dec->pidcomm, (uint32_t)pid, &first);

	*cmd = 0;
	if (comm && (!known || (main && !(first >> 32)))) {
		int changed = known && (uint32_t)first != comm;

		if (snap_u64map_put(&dec->pidcomm, (uint32_t)pid, comm | main) < 0)
			return -ENOMEM;
		first = comm;
		if (changed) {
			int err = pid_renamed(dec, pid);

			if (err < 0)
				return err;
		}
	}
	if (!snap_u64map_get(&dec->pidnames, (uint32_t)pid, cmd))
		*cmd = (uint32_t)first;
	return 0;
}

/* "NAME [pid=P] [tid=T]" for a thread whose comm is comm (0 = unknown): NAME
 * is the comm, except that a thread still called by its process's first comm
 * (or by none) is named like its process (the opts name: a full command line
 * says more than a 15-byte comm). */
static int thread_track_name(struct snap_decoder *dec, int32_t pid, int32_t tid, uint32_t comm,
			     uint64_t cmd, uint32_t *id)
{
	char buf[512], pbuf[16], tbuf[16];
	uint64_t named;
	uint32_t first = pid_first_comm(dec, pid);

	if (comm && (comm != first || !snap_u64map_get(&dec->pidnames, (uint32_t)pid, &named)))
		cmd = comm;
	fmt_id(pbuf, sizeof(pbuf), pid);
	fmt_id(tbuf, sizeof(tbuf), tid);
	if (cmd)
		snprintf(buf, sizeof(buf), "%.300s [pid=%s] [tid=%s]",
			 snap_strtab_get(dec->st, (uint32_t)cmd), pbuf, tbuf);
	else
		snprintf(buf, sizeof(buf), "[pid=%s] [tid=%s]", pbuf, tbuf);
	return snap_strtab_intern_id(dec->st, buf, id);
}

/* The thread's comm changed (pthread_setname_np, prctl, exec): its track is
 * named again (FXT lets a thread's kernel object record be written again). */
static int thread_rename(struct snap_decoder *dec, struct snap_dthread *th, uint32_t comm)
{
	uint64_t cmd;
	uint32_t tname;
	int err;

	th->comm = comm;
	if ((err = pid_cmd(dec, th->pid, th->tid, comm, &cmd)) < 0 ||
	    (err = thread_track_name(dec, th->pid, th->tid, comm, cmd, &tname)) < 0)
		return err;
	if (tname == th->tname)
		return 0;
	th->tname = tname;
	dec->stats.renames++;
	return dec->tl->ops->thread(dec->tl, th->pid, th->tid, th->proc_name, tname);
}

/* "CMD [pid=P]" for pid (comm: of the event that needs it, may be 0); *cmd
 * receives CMD (0 if none). */
static int proc_name(struct snap_decoder *dec, int32_t pid, int32_t tid, uint32_t comm,
		     uint32_t *id, uint64_t *cmd)
{
	char buf[384], p[16];
	int err = pid_cmd(dec, pid, tid, comm, cmd);

	if (err < 0)
		return err;
	fmt_id(p, sizeof(p), pid);
	if (*cmd)
		snprintf(buf, sizeof(buf), "%.300s [pid=%s]",
			 snap_strtab_get(dec->st, (uint32_t)*cmd), p);
	else
		snprintf(buf, sizeof(buf), "[pid=%s]", p);
	return snap_strtab_intern_id(dec->st, buf, id);
}

/* A new thread's first frames (docs/sampling.md "Threads born and exiting"):
 * they were running before the data began (marked inferred_start_time) unless
 * the thread was born in the recording: its fork or exec record came after
 * the data of this snapshot began, or at most two sample periods before (a
 * program's exec comes just before its first sample). (A switch-in recorded
 * before its first sample is where its stack begins: thread_new.) */
static int thread_birth(struct snap_decoder *dec, struct snap_dthread *th,
			const struct snap_event *ev, uint64_t key)
{
	uint64_t v, p = ev->kind == SNAP_EV_SAMPLE && clock_event(dec, ev->event) ? ev->period : 0;

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
	t0 = ev->has_time ? mapped(dec, ev->time) : 0;
	if (ev->kind == SNAP_EV_SAMPLE && ev->has_time && snap_u64map_get(&dec->pre_in, key, &v) &&
	    v && v - 1 <= t0) {
		t0 = v - 1;
		th->pend_in = 1;
		th->t_in = t0;
	}
	err = snap_cstack_init(&th->cs, &dec->ctx, ev->pid, ev->tid, t0);
	if (err < 0)
		goto fail;
	if ((err = proc_name(dec, ev->pid, ev->tid, ev->comm, &th->proc_name, &cmd)) < 0)
		goto fail;
	if ((err = thread_track_name(dec, ev->pid, ev->tid, ev->comm, cmd, &tname)) < 0)
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
	uint64_t key = tkey(ev->pid, ev->tid), idx;
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
	return thread_rename(dec, *out, ev->comm);
}

/* A new synthetic track of pid named name (strtab id); *tid receives its tid. */
static int synth_track(struct snap_decoder *dec, int32_t pid, uint32_t proc, uint32_t name,
		       int32_t *tid)
{
	*tid = (int32_t)(SNAP_DECODER_SYNTH_TID | dec->next_synth++);
	return dec->tl->ops->thread(dec->tl, pid, *tid, proc, name);
}

static int extra_track(struct snap_decoder *dec, struct snap_dthread *th, uint32_t event,
		       int32_t *tid)
{
	char buf[384], tbuf[16];
	uint32_t name;
	size_t i;
	int err;

	for (i = 0; i < th->nextra; i++) {
		if (th->extra[i].event == event) {
			*tid = th->extra[i].tid;
			return 0;
		}
	}
	if (snap_vec_reserve(&th->extra, &th->capextra, th->nextra + 1, sizeof(*th->extra)) < 0)
		return -ENOMEM;
	fmt_id(tbuf, sizeof(tbuf), th->tid);
	snprintf(buf, sizeof(buf), "%.300s (tid %s)",
		 event ? snap_strtab_get(dec->st, event) : "event", tbuf);
	if ((err = snap_strtab_intern_id(dec->st, buf, &name)) < 0)
		return err;
	th->extra[th->nextra].event = event;
	err = synth_track(dec, th->pid, th->proc_name, name, &th->extra[th->nextra].tid);
	*tid = th->extra[th->nextra++].tid;
	return err;
}

/* ---- scope ----------------------------------------------------------------- */

static int is_user(const struct snap_loc *l)
{
	return l->ip && !snap_loc_is_kernel(l);
}

static int off_scope(enum snap_scope scope, const struct snap_loc *l)
{
	if (scope == SNAP_SCOPE_USER)
		return snap_loc_is_kernel(l);
	if (scope == SNAP_SCOPE_KERNEL)
		return is_user(l);
	return 0;
}

static int branch_violates(enum snap_scope scope, const struct snap_event *ev)
{
	if (scope == SNAP_SCOPE_USER) {
		if (snap_loc_is_kernel(&ev->src) || snap_loc_is_kernel(&ev->dst))
			return 1;
		switch (ev->br_kind) {
		case SNAP_BR_SYSCALL:
		case SNAP_BR_HWINT:
			return ev->br_state == SNAP_BR_NOSTATE;
		case SNAP_BR_SYSRET:
		case SNAP_BR_IRET:
			return ev->br_state != SNAP_BR_START;
		default:
			return 0;
		}
	}
	if (scope == SNAP_SCOPE_KERNEL)
		return ev->br_state == SNAP_BR_NOSTATE && (is_user(&ev->src) || is_user(&ev->dst));
	return 0;
}

/* Returns the offending sample frame, or NULL. */
static const struct snap_loc *sample_violation(enum snap_scope scope, const struct snap_event *ev)
{
	uint32_t i;

	if (scope == SNAP_SCOPE_BOTH || !ev->frames)
		return NULL;
	for (i = 0; i < ev->nframes; i++)
		if (off_scope(scope, &ev->frames[i]))
			return &ev->frames[i];
	return NULL;
}

char *snap_decoder_desc(const struct snap_decoder *dec, const struct snap_event *ev, char *buf,
			size_t size)
{
	const struct snap_loc *frame = NULL;

	if (ev->kind == SNAP_EV_SAMPLE)
		frame = sample_violation(dec->ctx.scope, ev);
	return snap_event_desc(dec->st, ev, frame, buf, size);
}

/* Returns 1 if ev violates the scope (see decoder.h). */
static int violates(const struct snap_decoder *dec, const struct snap_event *ev)
{
	enum snap_scope s = dec->ctx.scope;

	if (s == SNAP_SCOPE_BOTH)
		return 0;
	switch (ev->kind) {
	case SNAP_EV_BRANCH:
		return branch_violates(s, ev);
	case SNAP_EV_SAMPLE:
		return sample_violation(s, ev) != NULL;
	case SNAP_EV_POWER:
	case SNAP_EV_EXTRA:
		return off_scope(s, &ev->src);
	default:
		return 0; /* SWITCH: out-of-scope frames of its chain are dropped quietly */
	}
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
		dec->th[i]->off = OFF_NO; /* the restart closes every frame */
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
	int err = extra_track(dec, th, ev->event, &tid);

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

static int open_off(struct snap_decoder *dec, struct snap_dthread *th, int preempt, int chain,
		    uint64_t t);

/* -filter: leaves or enters the START..STOP region before ev is applied. */
static int filter_region(struct snap_decoder *dec, const struct snap_event *ev)
{
	int w = snap_filter_step(dec->filter, ev), err = 0, e;
	size_t i;

	/* an off-CPU slice still waiting for its switch record opens first, so
	 * that it is closed or re-opened with the other frames */
	for (i = 0; i < dec->nth && w != dec->gate.open; i++)
		if (dec->th[i]->out_pend &&
		    (e = open_off(dec, dec->th[i], 0, 1, dec->th[i]->out_t)) < 0)
			return e;

	if (!w && dec->gate.open) {
		/* leaving: everything open is closed where each thread was last seen;
		 * a STOP sample's thread ran what it had open until that sample */
		for (i = 0; i < dec->nth; i++) {
			struct snap_cstack *cs = &dec->th[i]->cs;
			uint64_t t = cs->last_event_time;

			if (ev->kind == SNAP_EV_SAMPLE && ev->has_time && cs->pid == ev->pid &&
			    cs->tid == ev->tid && mapped(dec, ev->time) > t)
				t = mapped(dec, ev->time);
			e = snap_cstack_end_thread(cs, t);
			if (e < 0 && !err)
				err = e;
		}
		dec->gate.open = 0;
	} else if (w && !dec->gate.open && ev->has_time) {
		/* entering: what happened outside stays unwritten; the frames open
		 * now are re-opened at t (inferred: their real start is not shown) */
		uint64_t t = mapped(dec, ev->time);

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

static enum snap_sampdiff_keep sample_keep(const struct snap_decoder *dec)
{
	static const enum snap_sampdiff_keep keep[] = {
		[SNAP_SCOPE_USER] = SNAP_SAMPDIFF_USER,
		[SNAP_SCOPE_KERNEL] = SNAP_SAMPDIFF_KERNEL,
		[SNAP_SCOPE_BOTH] = SNAP_SAMPDIFF_ALL,
	};

	return keep[dec->ctx.scope <= SNAP_SCOPE_BOTH ? dec->ctx.scope : 0];
}

/* The thread is back on the CPU (or a sample shows it running): its
 * off-CPU slice ends at t (if it is still open: a snapshot boundary or the
 * end of a segment may have closed it). */
static int on_cpu(struct snap_dthread *th, uint64_t t)
{
	const struct snap_frame *f;
	size_t n;
	int err = 0;

	if (th->off == OFF_SLICE) {
		if ((err = snap_cstack_flush_to(&th->cs, t)) < 0)
			return err;
		f = snap_cstack_frames(&th->cs, &n);
		if (n && f[n - 1].sym == th->off_sym && !f[n - 1].ip)
			err = snap_cstack_pop_now(&th->cs, t);
	}
	th->off = OFF_NO;
	return err;
}

/* Ends the open frames beyond depth d at t. */
static int pop_to(struct snap_dthread *th, size_t d, uint64_t t)
{
	size_t n;
	int err;

	if ((err = snap_cstack_flush_to(&th->cs, t)) < 0)
		return err;
	snap_cstack_frames(&th->cs, &n);
	for (; n > d; n--)
		if ((err = snap_cstack_pop_now(&th->cs, t)) < 0)
			return err;
	if (th->sd.n > d)
		th->sd.n = d;
	return 0;
}

/* A slice named sym over [t0, t1] on top of the open frames (none when the
 * depth cap is reached). Returns 1 if written, 0 if capped, or an error. */
static int marker(struct snap_dthread *th, uint32_t sym, uint64_t t0, uint64_t t1)
{
	int err = snap_cstack_push_now(&th->cs, 0, sym, t0);

	if (err)
		return err < 0 ? err : 0;
	err = snap_cstack_pop_now(&th->cs, t1);
	return err < 0 ? err : 1;
}

/* Applies a chain (a sample's, or a sched_switch chain) at t, marking the
 * begins inferred_start_time while the thread's first frames are cut. */
static int apply_chain(struct snap_decoder *dec, struct snap_dthread *th,
		       const struct snap_event *ev, uint64_t t, struct snap_sampdiff_stats *st)
{
	int err = snap_sampdiff_apply(&th->cs, &th->sd, ev->frames, ev->frames ? ev->nframes : 0,
				      sample_keep(dec), t, st);

	th->cs.start_cut = 0;
	return err;
}

/* The off-CPU slice opens at t on top of the open frames: "[off-CPU: preempted]"
 * (still runnable) or "[off-CPU]" (blocked; chain: the open frames are the
 * chain it blocked in). */
static int open_off(struct snap_decoder *dec, struct snap_dthread *th, int preempt, int chain,
		    uint64_t t)
{
	uint32_t sym = preempt ? dec->n_preempted : dec->n_offcpu;
	int err;

	if (t < th->floor)
		t = th->floor;
	th->out_pend = 0;
	th->blk_leaf = (uint8_t)(chain && !preempt);
	if ((err = snap_cstack_flush_to(&th->cs, t)) < 0 ||
	    (err = snap_cstack_push_now(&th->cs, 0, sym, t)) < 0)
		return err;
	th->off = err ? OFF_CAPPED : OFF_SLICE;
	th->off_sym = sym;
	dec->stats.offcpu_slices += !err && !preempt;
	dec->stats.preempted_slices += !err && preempt;
	return 0;
}

/* The thread ran from its switch-in (th->t_in) to t, a switch-out, and no
 * sample showed what ran (docs/sampling.md): the open frames that the
 * switch-out chain (frames[0..n), none: nothing is known; keep_all: a
 * preemption without chain, where the open frames may go on) continues stay,
 * except the frame it blocked in before, which returned to run the burst as
 * far as anyone knows; the others end at t_in, and "[on-CPU: unsampled]"
 * covers [t_in, t] under the frames that stay. */
static int unsampled_burst(struct snap_decoder *dec, struct snap_dthread *th,
			   const struct snap_event *ev, int keep_all, uint64_t t)
{
	size_t depth, d = 0;
	int err;

	th->pend_in = 0;
	if (th->t_in < th->floor)
		th->t_in = th->floor;
	snap_cstack_frames(&th->cs, &depth);
	if (keep_all)
		d = depth;
	else if (ev->frames && ev->nframes)
		d = snap_sampdiff_common(&th->cs, &th->sd, ev->frames, ev->nframes,
					 sample_keep(dec));
	if (th->blk_leaf && d == depth && d)
		d--;
	th->blk_leaf = 0;
	if ((err = pop_to(th, d, th->t_in)) < 0)
		return err;
	if (t <= th->t_in)
		return 0;
	if ((err = marker(th, dec->n_unsampled, th->t_in, t)) < 0)
		return err;
	dec->stats.unsampled += (uint64_t)err;
	dec->stats.unsampled_ns += (t - th->t_in) * (uint64_t)err;
	return 0;
}

/* A context switch (docs/sampling.md "Off-CPU time"). Out: a sched:sched_switch
 * sample's chain is applied (the frames not in it end) and the off-CPU slice
 * waits for the switch record after it, which says whether the thread was
 * preempted; a switch record alone opens "[off-CPU: preempted]" on top of the
 * last sampled stack (stopped wherever it was), or, when it blocked somewhere
 * the last sample does not show, ends every frame and opens "[off-CPU]". A
 * burst since the last switch-in that no sample saw becomes
 * "[on-CPU: unsampled]" first. In: the off-CPU slice ends; the next sample
 * says what ran since (sample path in apply). */
static int apply_switch(struct snap_decoder *dec, struct snap_dthread *th,
			const struct snap_event *ev, uint64_t t)
{
	int err, was_off = th->off != OFF_NO;

	if (th->exited) {
		dec->stats.switches_ignored++; /* its last switch-out, after the exit */
		return 0;
	}
	th->last_was_sample = 0;
	if (!ev->sw_out) {
		dec->stats.switches_in += was_off;
		if (!was_off)
			return 0;
		if ((err = on_cpu(th, t)) < 0)
			return err;
		th->pend_in = 1;
		th->t_in = t;
		return 0;
	}
	if (!ev->nframes && th->out_pend) { /* the record after a sched_switch chain */
		dec->stats.preempted += ev->sw_preempt;
		return open_off(dec, th, ev->sw_preempt, 1, th->out_t);
	}
	if (!ev->nframes && was_off)
		return 0; /* already off the CPU */
	dec->stats.switches_out += !was_off;
	dec->stats.switch_chains += ev->nframes != 0;
	if (was_off) {
		/* a chain while off (a sched_switch chain without a switch-in record
		 * before it): the off-CPU slice ends here */
		if ((err = on_cpu(th, t)) < 0)
			return err;
	} else if (th->pend_in &&
		   (err = unsampled_burst(dec, th, ev, !ev->nframes && ev->sw_preempt, t)) < 0) {
		return err;
	}
	th->pend_in = 0;
	if (ev->nframes) {
		if ((err = apply_chain(dec, th, ev, t, NULL)) < 0)
			return err;
		th->out_pend = 1;
		th->out_t = t;
		return 0;
	}
	dec->stats.preempted += ev->sw_preempt;
	if (!ev->sw_preempt && (err = pop_to(th, 0, t)) < 0)
		return err;
	return open_off(dec, th, ev->sw_preempt, 0, t);
}

/* Is ev's event one whose period is ns of CPU time (cpu-clock, task-clock)? */
static int clock_event(const struct snap_decoder *dec, uint32_t event)
{
	return event && (event == dec->n_cpu_clock || event == dec->n_task_clock);
}

/* A plain `perf record -g` (no switch records in the trace): a gap of more
 * than SNAP_DECODER_GAP_PERIODS periods between two clock samples of a
 * thread is time off the CPU (docs/sampling.md "Idle gaps"). The previous
 * sample's frames that the new sample does not continue (and its leaf) end
 * half a period after it, "[off-CPU: inferred]" covers the rest but the half
 * period before the new sample, where the new sample applies. Returns the
 * time to apply the sample at. */
static int idle_gap(struct snap_decoder *dec, struct snap_dthread *th, const struct snap_event *ev,
		    uint64_t t, uint64_t *at)
{
	uint64_t p = ev->period, prev = th->last_sample, t0, t1;
	size_t depth, d;
	int err;

	*at = t;
	if (dec->saw_switch || !th->nsamples || !th->last_was_sample || !p ||
	    !clock_event(dec, ev->event) || t < prev || t - prev <= SNAP_DECODER_GAP_PERIODS * p)
		return 0;
	t0 = prev + p / 2 > th->floor ? prev + p / 2 : th->floor;
	t1 = t - p / 2 > t0 ? t - p / 2 : t0;
	snap_cstack_frames(&th->cs, &depth);
	d = snap_sampdiff_common(&th->cs, &th->sd, ev->frames, ev->frames ? ev->nframes : 0,
				 sample_keep(dec));
	if (d == depth && d)
		d--; /* the previous leaf was running, not waiting */
	if ((err = pop_to(th, d, t0)) < 0 || (err = marker(th, dec->n_off_inferred, t0, t1)) < 0)
		return err;
	dec->stats.gaps_inferred++;
	dec->stats.gap_ns += t1 - t0;
	*at = t1;
	return 0;
}

/* A stack sample at t (docs/sampling.md): after a switch-in, the time since
 * it goes to this sample's stack (perf credits a sample's period to its
 * stack), so the sample applies at the switch-in time. */
static int apply_sample(struct snap_decoder *dec, struct snap_dthread *th,
			const struct snap_event *ev, uint64_t t)
{
	uint64_t at = t;
	int err;

	if ((err = idle_gap(dec, th, ev, t, &at)) < 0)
		return err;
	if (th->off != OFF_NO) {
		if ((err = on_cpu(th, t)) < 0)
			return err; /* no switch-in recorded: off until this sample */
	} else if (th->pend_in && th->t_in <= t) {
		at = th->t_in > th->floor ? th->t_in : th->floor;
	}
	th->pend_in = 0;
	th->blk_leaf = 0;
	th->exited = 0;
	if (!th->nsamples++)
		th->first_sample = t;
	th->last_sample = t;
	th->last_was_sample = 1;
	th->period_sum += ev->period;
	th->sample_event = ev->event;
	th->last_period = clock_event(dec, ev->event) ? ev->period : 0;
	if ((err = apply_chain(dec, th, ev, at, &dec->sd)) < 0)
		return err;
	/* perf's estimator: the sample's period goes to its leaf (docs/sampling.md) */
	if (th->last_period)
		snap_cstack_credit(&th->cs, th->last_period);
	return 0;
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
		    (!ev->nframes && !snap_u64map_get(&dec->tmap, tkey(ev->pid, ev->tid), &idx))) {
			dec->stats.switches_ignored++;
			/* a thread not seen yet: its first sample's stack begins at
			 * its latest switch-in (thread_birth) */
			if (!dec->saw_branch && ev->has_time &&
			    snap_u64map_put(&dec->pre_in, tkey(ev->pid, ev->tid),
					    ev->sw_out ? 0 : mapped(dec, ev->time) + 1) < 0)
				return -ENOMEM;
			return 0;
		}
	}
	if (!dec->stack_started && ev->has_time &&
	    (ev->kind == SNAP_EV_BRANCH || ev->kind == SNAP_EV_SAMPLE ||
	     (ev->kind == SNAP_EV_SWITCH && ev->nframes))) {
		dec->stack_started = 1;
		dec->stack_t0 = ev->time;
		if (dec->nth && (err = restart_all(dec, mapped(dec, ev->time))) < 0)
			return err;
	}
	if (dec->filter && (err = filter_region(dec, ev)) < 0)
		return err;
	dec->stats.filtered_out += dec->filter && !dec->gate.open;
	if ((err = thread_of(dec, ev, &th)) < 0)
		return err;
	th->floor = th->cs.last_time > th->cs.last_event_time ? th->cs.last_time
							      : th->cs.last_event_time;
	t = snap_cstack_time(&th->cs, ev->has_time, ev->has_time ? mapped(dec, ev->time) : 0);
	if (dec->ctx.srcloc && (err = note_locs(dec, ev)) < 0)
		return err;
	/* a sched_switch chain not followed by its switch record: it blocked */
	if (th->out_pend && !(ev->kind == SNAP_EV_SWITCH && ev->sw_out && !ev->nframes) &&
	    (err = open_off(dec, th, 0, 1, th->out_t)) < 0)
		return err;
	switch (ev->kind) {
	case SNAP_EV_BRANCH:
		dec->saw_branch = 1;
		th->last_was_sample = 0;
		if (th->off != OFF_NO && (err = on_cpu(th, t)) < 0)
			return err; /* a branch: it runs (switches end here, see above) */
		return snap_cstack_branch(&th->cs, ev, t);
	case SNAP_EV_ERROR:
		th->last_was_sample = 0;
		return apply_error(dec, th, ev, t);
	case SNAP_EV_SAMPLE:
		return apply_sample(dec, th, ev, t);
	case SNAP_EV_SWITCH:
		return apply_switch(dec, th, ev, t);
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

/* Is the frame's name one of the "[unknown @ ...]" ones (or none)? */
static int unknown_frame(const struct snap_decoder *dec, const struct snap_loc *f)
{
	const char *s;

	if (!f->sym)
		return 1;
	s = snap_strtab_get(dec->st, f->sym);
	return snap_unknown_parse(s, strlen(s), NULL) != 0;
}

/*
 * Junk at the outer end of a call chain (docs/sampling.md). perf walks a
 * frame-pointer chain from the leaf outwards and takes whatever the saved
 * frame pointers point at; in code built without frame pointers that is
 * data, and the "return addresses" it reads are in no executable mapping
 * (perf names them "[unknown]" with no DSO: no symbol, no DSO), or even look
 * like kernel addresses. The real kernel part of a chain is always at its leaf end, so
 * once a user frame was seen, the first frame outwards that has no DSO or a
 * kernel address ends the chain: it and every frame outside it are cut
 * (counted). The leaf-most user frame is the sampled pc itself and stays.
 * A chain in which no frame has a DSO (perf printed none) is only cut at
 * kernel addresses. perf's end-of-chain marker (ip ffffffffffffffff, or 0,
 * at the outer end) is dropped without counting: the chain was not cut.
 * Only the cuts of sample chains are counted (count): the quality line
 * weighs them against the samples (sched_switch chains made it say 109 %).
 * Returns the index of the first frame kept (frames are outermost first).
 */
static uint32_t chain_cut(struct snap_decoder *dec, const struct snap_loc *fr, uint32_t n,
			  int count)
{
	uint32_t i = n, user = 0, dsos = 0, end = 0;

	while (end < n && (fr[end].ip == UINT64_MAX || !fr[end].ip))
		end++;
	for (uint32_t j = 0; j < n && !dsos; j++)
		dsos = fr[j].dso != 0; /* else perf printed no DSOs at all (-F without dso) */
	while (i > end) {
		const struct snap_loc *f = &fr[--i];

		if (!f->ip)
			continue;
		if (!user) {
			user = !snap_loc_is_kernel(f);
			continue;
		}
		if (snap_loc_is_kernel(f) || (dsos && !f->dso && unknown_frame(dec, f))) {
			if (count) {
				dec->stats.chains_cut++;
				dec->stats.frames_cut += i + 1 - end;
			}
			return i + 1;
		}
	}
	return end < n ? end : 0;
}

/* Counts the user frames of a sample and those without a symbol. */
static void count_frames(struct snap_decoder *dec, const struct snap_loc *fr, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (!fr[i].ip || snap_loc_is_kernel(&fr[i]))
			continue;
		dec->stats.user_frames++;
		dec->stats.unknown_frames += unknown_frame(dec, &fr[i]);
	}
}

/* Where a sampled thread's last frames end: half a period after its last
 * sample (docs/sampling.md), no later than limit (0: none) and no earlier
 * than its last event. */
static uint64_t last_end(const struct snap_dthread *th, uint64_t limit)
{
	uint64_t t = th->cs.last_event_time;

	if (th->last_was_sample && th->off == OFF_NO && th->last_period) {
		uint64_t e = th->last_sample + th->last_period / 2;

		if (limit && e > limit)
			e = limit;
		if (e > t)
			t = e;
	}
	if (limit && limit > t && !th->last_was_sample)
		t = limit;
	return t;
}

/* A thread born (fork, exec) or exiting (docs/sampling.md "Threads born and
 * exiting"). A birth of a thread not seen yet is remembered for its first
 * sample (thread_birth); an exit ends the thread's frames at its last sample
 * plus at most half a period, or at the exit record if earlier, as real
 * ends (not cut). */
static int apply_task(struct snap_decoder *dec, const struct snap_event *ev)
{
	uint64_t key = tkey(ev->pid, ev->tid), idx, t;
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
	t = mapped(dec, ev->time);
	if (t < th->cs.last_time)
		t = th->cs.last_time;
	th->floor = th->cs.last_time;
	if (th->out_pend && (err = open_off(dec, th, 0, 1, th->out_t)) < 0)
		return err;
	if ((err = on_cpu(th, t)) < 0)
		return err;
	/* switched in and no sample before the exit: what ran is unknown, and
	 * the open frames returned on the way out */
	if (th->pend_in && (err = unsampled_burst(dec, th, ev, 0, t)) < 0)
		return err;
	dec->stats.exits++;
	th->cs.ends_known = 1;
	err = snap_cstack_end_thread(&th->cs, last_end(th, t));
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
		uint32_t k = chain_cut(dec, ev->frames, ev->nframes, ev->kind == SNAP_EV_SAMPLE);

		if (ev->kind == SNAP_EV_SAMPLE)
			count_frames(dec, ev->frames + k, ev->nframes - k);
		if (k) {
			cut = *ev;
			cut.frames += k;
			cut.nframes -= k;
			ev = &cut;
		}
	}
	set_base(dec, ev);
	if (violates(dec, ev)) {
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

static int write_hits(struct snap_decoder *dec)
{
	struct snap_u64map tracks; /* pid -> tid of its hit track */
	size_t i, j;
	int err = 0, e;

	if (!dec->have_base) {
		dec->base = dec->hit_min;
		dec->have_base = 1;
	}
	snap_u64map_init(&tracks);
	for (i = 0; i < dec->nhits; i++) {
		const struct snap_hit *h = &dec->hits[i];
		struct snap_arg a[5];
		uint64_t t, t0, v;
		size_t na = 0;
		int32_t tid;

		if (snap_u64map_get(&tracks, (uint32_t)h->pid, &v)) {
			tid = (int32_t)v;
		} else {
			uint32_t proc = 0;
			uint64_t cmd;

			for (j = 0; j < dec->nth && !proc; j++)
				if (dec->th[j]->pid == h->pid)
					proc = dec->th[j]->proc_name;
			if (!proc && (e = proc_name(dec, h->pid, h->pid, 0, &proc, &cmd)) < 0) {
				err = e;
				break;
			}
			e = synth_track(dec, h->pid, proc, dec->n_hits, &tid);
			if (e < 0 && !err)
				err = e;
			if (snap_u64map_put(&tracks, (uint32_t)h->pid, (uint32_t)tid) < 0) {
				err = -ENOMEM;
				break;
			}
		}
		t = t0 = mapped(dec, h->time);
		/* magic-trace's args: [timestamp_passed, arg,] timestamp, tid, ip; a
		 * stop indicator's slice starts at the time it was passed */
		if (h->has_arg) {
			a[na].name = dec->n_ts_passed;
			a[na].type = SNAP_ARG_INT;
			a[na++].v.i = (int64_t)h->passed_time;
			a[na].name = dec->n_arg;
			a[na].type = SNAP_ARG_INT;
			a[na++].v.i = h->arg;
			if (h->passed_time > dec->base && h->passed_time < h->time)
				t0 = mapped(dec, h->passed_time);
		}
		a[na].name = dec->n_ts;
		a[na].type = SNAP_ARG_INT;
		a[na++].v.i = (int64_t)h->time;
		a[na].name = dec->n_tid;
		a[na].type = SNAP_ARG_INT;
		a[na++].v.i = h->tid;
		a[na].name = dec->n_ip;
		a[na].type = SNAP_ARG_PTR;
		a[na++].v.u = h->ip;
		e = dec->tl->ops->complete(dec->tl, h->pid, tid, t0, t, dec->hit_names[i], a, na);
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
static int write_sampling(struct snap_decoder *dec)
{
	int err = 0;

	for (size_t i = 0; i < dec->nth && err >= 0; i++) {
		struct snap_dthread *th = dec->th[i];
		struct snap_arg a[2];

		if (!th->nsamples)
			continue;
		a[0].name = dec->n_period;
		a[0].type = SNAP_ARG_INT;
		if (clock_event(dec, th->sample_event))
			a[0].v.i = (int64_t)(th->period_sum / th->nsamples);
		else if (th->nsamples > 1)
			a[0].v.i = (int64_t)((th->last_sample - th->first_sample) /
					     (th->nsamples - 1));
		else
			a[0].v.i = 0;
		/* this trace flags the ends it cut (docs/report.md), even when no
		 * thread had one to flag (every thread exited) */
		a[1].name = dec->ctx.n.inferred_end;
		a[1].type = SNAP_ARG_INT;
		a[1].v.i = 1;
		err = dec->tl->ops->counter(dec->tl, th->pid, th->tid, th->first_sample,
					    dec->n_sampling, a, 2);
	}
	return err;
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

		if (th->out_pend && (e = open_off(dec, th, 0, 1, th->out_t)) < 0 && !err)
			err = e;
		e = snap_cstack_end_thread(&th->cs, last_end(th, 0));
		if (e < 0 && !err)
			err = e;
	}
	dec->gate.open = 1; /* the hits and the sampling marker are always shown */
	e = write_sampling(dec);
	if (e < 0 && !err)
		err = e;
	e = write_hits(dec);
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

int snap_decoder_quality(const struct snap_decoder_stats *s, char *buf, size_t size)
{
	uint64_t unk = s->user_frames ? s->unknown_frames * 100 / s->user_frames : 0;
	uint64_t cut = s->samples ? s->chains_cut * 100 / s->samples : 0;
	char a[256] = "", b[192] = "";

	if (!size)
		return 0;
	buf[0] = 0;
	if (s->samples < SNAP_DECODER_QUALITY_MIN ||
	    (unk < SNAP_DECODER_QUALITY_PCT && cut < SNAP_DECODER_QUALITY_PCT))
		return 0;
	/* Cut chains mean frame pointers are missing (with dwarf: unwind tables,
	 * or a stack deeper than the copy); frames without a symbol mean symbols
	 * are missing (stripped code): each has its own fix. */
	if (cut >= SNAP_DECODER_QUALITY_PCT && s->dwarf)
		snprintf(a, sizeof(a),
			 "%" PRIu64 "%% of the call chains were cut at an address outside any "
			 "executable mapping (the dwarf unwinder lost its way: code without "
			 ".eh_frame, or a stack deeper than the copy; -callgraph-mode fp for code "
			 "built with frame pointers)",
			 cut);
	else if (cut >= SNAP_DECODER_QUALITY_PCT)
		snprintf(a, sizeof(a),
			 "%" PRIu64 "%% of the call chains were cut at an address outside any "
			 "executable mapping (code without frame pointers: record with "
			 "-callgraph-mode dwarf, or build with -fno-omit-frame-pointer)",
			 cut);
	if (unk >= SNAP_DECODER_QUALITY_PCT)
		snprintf(b, sizeof(b),
			 "%s%" PRIu64 "%% of the sampled user frames have no symbol (install the "
			 "debug symbol packages, e.g. PKG-dbgsym, or build with -g)",
			 a[0] ? "; " : "", unk);
	snprintf(buf, size, "stack quality: %s%s", a, b);
	return 1;
}

int snap_decoder_switch_line(const struct snap_decoder_stats *s, char *buf, size_t size)
{
	if (!size)
		return 0;
	buf[0] = 0;
	if (!s->switches_out && !s->switches_in && !s->switches_ignored)
		return 0;
	snprintf(buf, size,
		 "context switches: %" PRIu64 " out (%" PRIu64 " preempted), %" PRIu64
		 " back in, %" PRIu64 " sched_switch samples with the blocking call chain, %" PRIu64
		 " [off-CPU] slices, %" PRIu64 " [off-CPU: preempted] slices, %" PRIu64
		 " [on-CPU: unsampled] slices (%" PRIu64 " us); %" PRIu64
		 " switch records of untraced threads ignored",
		 s->switches_out, s->preempted, s->switches_in, s->switch_chains, s->offcpu_slices,
		 s->preempted_slices, s->unsampled, s->unsampled_ns / 1000u, s->switches_ignored);
	return 1;
}

int snap_decoder_gap_line(const struct snap_decoder_stats *s, char *buf, size_t size)
{
	if (!size)
		return 0;
	buf[0] = 0;
	if (!s->gaps_inferred)
		return 0;
	snprintf(buf, size,
		 "%" PRIu64 " gap%s of more than %d sample periods between samples (%" PRIu64
		 ".%03" PRIu64 " s in all) inferred as off-CPU ([off-CPU: inferred]): the "
		 "recording has no context-switch records; `snaptrace run` records switch events",
		 s->gaps_inferred, s->gaps_inferred == 1 ? "" : "s", SNAP_DECODER_GAP_PERIODS,
		 s->gap_ns / 1000000000u, s->gap_ns / 1000000u % 1000u);
	return 1;
}

int snap_decoder_chain_line(const struct snap_decoder_stats *s, char *buf, size_t size)
{
	if (!size)
		return 0;
	buf[0] = 0;
	if (!s->samples)
		return 0;
	snprintf(buf, size,
		 "call chains: %" PRIu64 " of %" PRIu64 " user frames without a symbol; %" PRIu64
		 " chains cut at an address outside any executable mapping (%" PRIu64
		 " frames removed)",
		 s->unknown_frames, s->user_frames, s->chains_cut, s->frames_cut);
	return 1;
}
