// SPDX-License-Identifier: GPL-2.0
/*
 * The in-process Intel PT decoder (ptdec/ptdec.h, docs/ptdec.md).
 *
 * Pieces. Every AUXTRACE buffer is cut at PSBs into pieces of about
 * piece_bytes; a PSB+ is a full synchronisation point, so each piece decodes
 * on its own (decode.c: ptdec's fast walk, walk.c, or libipt's decoder,
 * libipt.c, for what the walk leaves to it; both drive machine.c's state
 * machine, piece.h). Workers take pieces in the
 * order of their first timestamp and write raw events (struct rawev) into the
 * piece, and give each branch its flags' event bytes, command and locations as
 * they hand the events on (pool.c); the thread calling next() walks each queue's
 * pieces in order, joins them and merges the queues by time, naming each
 * location the first time it reads it (docs/ptdec.md, "Joining").
 *
 * What perf reports, reproduced here:
 *  - a direct branch is reported only once a later packet made the decoder
 *    walk that far: at the end of a buffer (or before an error) the direct
 *    branches after the last trace-consuming instruction are dropped; at a
 *    piece boundary the walk continues to the IP of the next PSB's FUP, as
 *    perf's continuous decode does there;
 *  - "tr strt" (ip 0) at the first synchronisation and after every resync,
 *    but not at a PSB in the middle of a clean stream;
 *  - "tr end <kind>" (addr 0) where tracing is disabled, "tr end async" for an
 *    asynchronous disable;
 *  - errors with perf's messages ("Failed to get instruction", ...).
 */
#include "ptdec/ptdec.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptdec/ptdec_int.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/file.h"

/* perf's error messages (util/intel-pt-decoder/intel-pt-decoder.c), by ERR_*. */
static const char *const err_msgs[] = {
	"Failed to get instruction",
	"Trace doesn't match instruction",
	"Bad packet",
	"Overflow packet",
	"Lost trace data",
	"No more data",
	"Internal error",
	"Never-ending loop (refer perf config intel-pt.max-loops)",
};

const char *ptd_rawev_desc(const struct rawev *r, char *buf, size_t len)
{
	int n = 0;

	switch (r->kind) {
	case RAW_BRANCH:
		n = snprintf(buf, len, "branch 0x%llx -> 0x%llx flags %#x",
			     (unsigned long long)r->ip, (unsigned long long)r->addr, r->flags);
		break;
	case RAW_ERROR:
		n = snprintf(buf, len, "error at 0x%llx: %s", (unsigned long long)r->ip,
			     r->err < sizeof(err_msgs) / sizeof(err_msgs[0]) ? err_msgs[r->err]
									     : "?");
		break;
	case RAW_POWER:
		n = snprintf(buf, len, "cbr %llu", (unsigned long long)r->cbr);
		break;
	default:
		n = snprintf(buf, len, "kind %d", r->kind);
		break;
	}
	if (n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " t=%llu %d/%d%s%s", (unsigned long long)r->time,
			 r->pid, r->tid, r->est ? " estimated" : "",
			 r->implicit ? " implicit" : "");
	return buf;
}

/* ---- the reader ---- */

/* The next raw event of queue q, or NULL at its end. Joins pieces, and takes
 * each piece's events a segment at a time (pool.c). */
static const struct rawev *queue_peek(struct snap_ptdec *d, struct queue *q)
{
	for (;;) {
		struct piece *pc;
		struct rawev *r;

		if (q->cur == q->npieces)
			return NULL;
		pc = &d->pieces[q->pieces[q->cur]];
		if (!q->rok) {
			ptd_next_segment(d, q->pieces[q->cur], &q->rev, &q->rn, &q->rcap,
					 &q->rlast);
			q->rok = 1;
			/* (the reader decoded it: pool.c; or the producers left every
			 * branch to it: prep_events) */
			q->raw = (q->rlast && pc->raw) || d->debug;
			q->pos = 0;
		}
		if (q->pos < q->rn) {
			r = &q->rev[q->pos];
			/* A continuation piece's first "tr strt" is no restart when the
			 * previous piece of the stream ended cleanly. */
			if (r->implicit && !pc->run_start && q->prev_err_open &&
			    r->kind == RAW_BRANCH) {
				/* perf resynced at this FUP after the last piece's error
				 * (from nowhere: its ip is 0) */
				r->time = pc->strt_time;
				q->prev_err_open = 0;
			} else if (r->implicit && !pc->run_start) {
				q->pos++;
				continue;
			}
			if (r->kind == RAW_POWER) {
				if ((int64_t)r->cbr == q->last_cbr) {
					q->pos++;
					continue;
				}
			}
			/* perf's queue time (intel_pt_run_decoder): an error or an
			 * estimated branch sets it, anything else only moves it forward. */
			if (!d->timeless) {
				if (r->kind == RAW_ERROR || r->est || r->time > q->ts)
					q->ts = r->time;
				r->time = q->ts;
			}
			return r;
		}
		q->rok = 0;
		if (!q->rlast) { /* the piece's next segment */
			ptd_release_segment(d, q->rev, q->rcap);
			q->rev = NULL;
			continue;
		}
		q->rev = NULL;
		q->prev_clean = pc->end_clean;
		q->prev_err_open = pc->err_open;
		d->st.insns += pc->insns;
		d->st.walked += (uint64_t)pc->walked;
		ptd_release_piece(d, pc);
		q->cur++;
		q->pos = 0;
	}
}

/* The head of queue q (looked at again only after it was consumed). Most
 * events are a branch inside a segment that is neither a piece's first sync
 * nor timeless: queue_peek's rules for it are in line here. */
static inline const struct rawev *queue_head(struct snap_ptdec *d, struct queue *q)
{
	if (q->head_ok)
		return q->head;
	if (q->rok && q->pos < q->rn) {
		struct rawev *r = &q->rev[q->pos];

		if (!r->implicit && r->kind == RAW_BRANCH && !d->timeless) {
			if (r->est || r->time > q->ts) /* as queue_peek */
				q->ts = r->time;
			r->time = q->ts;
			q->head = r;
			q->head_ok = 1;
			return r;
		}
	}
	q->head = queue_peek(d, q);
	q->head_ok = 1;
	return q->head;
}

/* Whether event a of queue qa goes before event b of queue qb: by time, then
 * the lowest queue first. */
static int before(const struct rawev *a, size_t qa, const struct rawev *b, size_t qb)
{
	return a->time < b->time || (a->time == b->time && qa < qb);
}

/*
 * The queue whose head goes first. Only the queue consumed last has a new
 * head, so it is compared with the best of the others' (the rival, found by
 * the last full look at every queue); a full look only when it loses.
 */
static struct queue *merge_next(struct snap_ptdec *d)
{
	const struct rawev *best = NULL, *rival = NULL;
	size_t bi = 0, ri = 0;

	if (d->lead != NO_IDX) {
		const struct rawev *r = queue_head(d, &d->queues[d->lead]);

		if (r && (!d->rival || before(r, d->lead, d->rival, d->rival_q)))
			return &d->queues[d->lead];
	}
	for (size_t i = 0; i < d->nqueues; i++) {
		const struct rawev *r = queue_head(d, &d->queues[i]);

		if (!r)
			continue;
		if (!best || before(r, i, best, bi)) {
			rival = best;
			ri = bi;
			best = r;
			bi = i;
		} else if (!rival || before(r, i, rival, ri)) {
			rival = r;
			ri = i;
		}
	}
	d->lead = best ? bi : NO_IDX;
	d->rival = rival;
	d->rival_q = ri;
	return best ? &d->queues[bi] : NULL;
}

/* A cbr or an error (best, just taken from queue bq) into ev (stale: zeroed
 * first). 0, or -ENOMEM. */
static int other_event(struct snap_ptdec *d, struct queue *bq, const struct rawev *best,
		       struct snap_event *ev)
{
	int64_t id;

	memset(ev, 0, sizeof(*ev));
	ev->pid = best->pid;
	ev->tid = best->tid;
	ev->time = best->time;
	ev->has_time = 1; /* timeless: numbered by the caller (source/source.h) */
	ev->comm = ptd_comm_at(d, &d->cmemo, best->tid, best->time);
	if (best->kind == RAW_POWER) {
		bq->last_cbr = (int64_t)best->cbr;
		ev->kind = SNAP_EV_POWER;
		ev->freq_mhz = (uint32_t)((best->cbr * d->cbr2khz + 500) / 1000);
		return 0;
	}
	if ((id = snap_strtab_intern_cstr(d->names, err_msgs[best->err])) < 0)
		return (int)id;
	ev->kind = SNAP_EV_ERROR;
	ev->msg = (uint32_t)id;
	ev->src.ip = best->ip;
	d->st.errors++;
	return 0;
}

/* *ev may be stale (a batch's slot: source/batch.h), so a branch sets every
 * field. A new field of struct snap_event must be set here too. */
_Static_assert(sizeof(struct snap_event) == 136, "snap_ptdec_fill sets every field of a branch");

/* pid and tid, side by side in a raw event and in an event */
#define EV_PIDTID_AT offsetof(struct snap_event, pid)
_Static_assert(offsetof(struct snap_event, tid) == EV_PIDTID_AT + 4 &&
		       offsetof(struct rawev, tid) == offsetof(struct rawev, pid) + 4,
	       "pid and tid copied at once");

/* The event's bytes from msg to its end: zero in a branch. */
#define EV_TAIL_AT offsetof(struct snap_event, msg)
_Static_assert(offsetof(struct snap_event, src) + 2 * sizeof(struct snap_loc) == EV_TAIL_AT,
	       "a branch's tail follows dst");

/* The branch r (prepared) at time t into ev (stale: every field is set): its
 * flags and locations are the producer's (prep_events, pool.c), the locations'
 * names interned here on first use, its command the one at t (memo m: its
 * queue's). 0, or -ENOMEM. */
__attribute__((always_inline)) static inline int branch_event(struct snap_ptdec *d,
							      const struct rawev *r, uint64_t t,
							      struct snap_event *ev,
							      struct cmemo *m)
{
	struct lent *s = r->sl, *e = r->dl;
	uint64_t pidtid;
	uint32_t comm;
	uint8_t fl[8] = {0};

	/* the source first: names are interned in the order of the events (a
	 * location its producer ran out of memory for is never named) */
	if (!(s->named & e->named) &&
	    (s == &d->loom || e == &d->loom || ptd_name_loc(d, s) < 0 || ptd_name_loc(d, e) < 0))
		return -ENOMEM;
	comm = ptd_comm_at(d, m, r->tid, t);
	/* everything read before the event's stores (its byte fields alias all) */
	memcpy(&pidtid, &r->pid, 8);
	memcpy(fl, r->evfl, sizeof(r->evfl));
	ev->kind = SNAP_EV_BRANCH;
	memcpy((char *)ev + EV_PIDTID_AT, &pidtid, 8);
	ev->comm = comm;
	ev->time = t;
	memcpy((char *)ev + PTD_EV_FLAGS_AT, fl, 8); /* has_time and the flags, then zeros */
	ev->src = s->loc;
	ev->dst = e->loc;
	/* msg, freq_mhz, event, period, frames, nframes and the padding */
	memset((char *)ev + EV_TAIL_AT, 0, sizeof(*ev) - EV_TAIL_AT);
	return 0;
}

/* lead_run's loop over r[0..e) into *evp on, up to last (*ts: the queue's
 * time), for a piece the reader decoded (raw: prepared here) or not; one copy
 * of each, so that the common one tests nothing of it. Returns where it
 * stopped; *err: branch_event's error (its event consumed). */
__attribute__((always_inline)) static inline struct rawev *
lead_loop(struct snap_ptdec *d, struct rawev *r, const struct rawev *e, struct snap_event **evp,
	  uint64_t *tsp, uint64_t last, const int raw, struct cmemo *m, int *err)
{
	struct snap_event *ev = *evp;
	uint64_t ts = *tsp;

	for (; r < e; r++, ev++) {
		uint64_t t = r->time;

		if (r->implicit || r->kind != RAW_BRANCH)
			break;
		/* perf's queue time, as queue_peek */
		t = r->est || t > ts ? t : ts;
		if (t > last)
			break;
		ts = t;
		if (raw)
			ptd_prep_branch(d->rctx, r);
		if ((*err = branch_event(d, r, t, ev, m)) < 0) {
			r++;
			break;
		}
	}
	*evp = ev;
	*tsp = ts;
	return r;
}

/*
 * The events of queue q, d->lead, from its next one on into evs[*i..n), while
 * they are plain branches (not a piece's first sync) that go before the head
 * of its rival: merge_next's and queue_head's common case, with the queue's
 * state in locals (an event's byte fields alias everything). Not timeless.
 * With one: its head alone, a branch, as queue_peek made it. Moves *i; 0, or
 * -ENOMEM (the event it failed on is consumed).
 */
static int lead_run(struct snap_ptdec *d, struct queue *q, struct snap_event *evs, size_t *i,
		    size_t n, int one)
{
	struct rawev *r = q->rev + q->pos, *e = q->rev + q->rn;
	/* the last time that goes before the rival's head: at equal times the
	 * lower queue goes first (the rival's head at 0 goes first: none goes) */
	uint64_t ts = q->ts, last = d->rival ? d->rival->time : UINT64_MAX;
	int lose_eq = d->rival && d->rival_q < d->lead;
	struct snap_event *ev = evs + *i, *ev0 = ev;
	int err = 0, raw = q->raw;

	if (raw && ptd_wctx_lcache(d->rctx) < 0)
		return -ENOMEM; /* (pool.c allocates it before the reader decodes a piece) */
	if (one) {
		if (r < e) {
			if (raw)
				ptd_prep_branch(d->rctx, r);
			if ((err = branch_event(d, r, r->time, ev, &q->cmemo)) >= 0)
				ev++;
			r++;
		}
	} else {
		struct cmemo m = q->cmemo; /* (in a local: the events' stores alias all) */

		if ((size_t)(e - r) > n - *i) /* no more than the room left */
			e = r + (n - *i);
		if (lose_eq && !last)
			e = r;
		last -= (uint64_t)lose_eq;
		/* the reader decoded the piece: its branches prepared here, in one pass */
		if (raw)
			r = lead_loop(d, r, e, &ev, &ts, last, 1, &m, &err);
		else
			r = lead_loop(d, r, e, &ev, &ts, last, 0, &m, &err);
		q->cmemo = m;
	}
	d->st.branches += (size_t)(ev - ev0);
	*i += (size_t)(ev - ev0);
	q->pos = (size_t)(r - q->rev);
	q->ts = ts;
	return err;
}

int snap_ptdec_fill(struct snap_ptdec *d, struct snap_event *evs, size_t n)
{
	size_t i = 0;
	int err = d->fill_err;

	if (err < 0) {
		d->fill_err = 0;
		return err;
	}
	if (n > INT_MAX)
		n = INT_MAX;
	while (i < n) {
		struct queue *bq = merge_next(d);
		const struct rawev *best = bq ? bq->head : NULL;

		if (!best)
			break;
		bq->head_ok = 0;
		if (best->kind == RAW_BRANCH && !best->implicit && !d->timeless && !d->debug) {
			/* (queue_head's time rule gives best the same time again, and
			 * it won the merge: lead_run takes it) */
			size_t i0 = i;

			if ((err = lead_run(d, bq, evs, &i, n, 0)) < 0)
				break;
			if (i > i0)
				continue;
		}
		if (d->debug) {
			char buf[160];

			fprintf(stderr, "ptdec: q%zu %s\n", (size_t)(bq - d->queues),
				ptd_rawev_desc(best, buf, sizeof(buf)));
		}
		if (best->kind == RAW_BRANCH) {
			if ((err = lead_run(d, bq, evs, &i, n, 1)) < 0)
				break;
			continue;
		}
		bq->pos++;
		if ((err = other_event(d, bq, best, &evs[i])) < 0)
			break;
		i++;
	}
	if (err < 0 && i) /* the events before it first; the error next time */
		d->fill_err = err;
	return i ? (int)i : err;
}

int snap_ptdec_next(struct snap_ptdec *d, struct snap_event *ev)
{
	return snap_ptdec_fill(d, ev, 1);
}

/* ---- open / close ---- */

static int check_support(struct snap_ptdec *d, char *why, size_t whylen)
{
	const struct snap_pd *pd = &d->pd;

	for (size_t i = 0; i < pd->nrecs; i++) {
		uint16_t mode = pd->recs[i].misc & SNAP_PD_MISC_CPUMODE_MASK;

		if ((pd->recs[i].type == SNAP_PD_MMAP || pd->recs[i].type == SNAP_PD_MMAP2) &&
		    (mode == 4 || mode == 5)) /* PERF_RECORD_MISC_GUEST_KERNEL/_USER */
			return snap_pd_notsup(why, whylen,
					      "it has virtual machine guest mmaps (perf kvm)");
	}
	if (!pd->sample_id_all)
		return snap_pd_notsup(why, whylen,
				      "its sideband has no sample_id (times of mmaps and "
				      "switches unknown)");
	if (!pd->naux)
		return snap_pd_notsup(why, whylen, "it has no AUXTRACE data");
	return 0;
}

/* snap_ptdec_open_mem; owned: buf is the file's mapping, which d then owns
 * (unmapped by snap_ptdec_close, also when this fails). */
static int open_buf(struct snap_ptdec **out, const void *buf, size_t len,
		    const struct snap_ptdec_opts *o, struct snap_strtab *names, char *why,
		    size_t whylen, int owned, int fd)
{
	struct snap_ptdec *d = snap_calloc(1, sizeof(*d));
	const char *env;
	int err;

	*out = NULL;
	if (!d) {
		if (owned)
			snap_file_unmap(buf, len);
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	d->fd = fd; /* (closed once the buffers are cut, or by snap_ptdec_close) */
	if (owned) {
		long ps = sysconf(_SC_PAGESIZE);

		d->map = buf;
		d->maplen = len;
		d->pagesz = ps > 0 ? (size_t)ps : 4096;
		ptd_slice_map(d); /* a read maps little of the file (pool.c) */
	}
	d->names = names;
	if (o)
		d->o = *o;
	env = getenv("SNAPTRACE_PTDEC_DEBUG");
	d->debug = !env ? 0 : !strcmp(env, "2") ? 2 : 1;
	d->use_blocks = !getenv("SNAPTRACE_PTDEC_INSN");
	if ((env = getenv("SNAPTRACE_PTDEC_WALK")) != NULL)
		d->walk = !strcmp(env, "check") ? 2 : strcmp(env, "0") != 0;
	else
		d->walk = 1;
	d->lead = NO_IDX;
	snprintf(d->debug_dir, sizeof(d->debug_dir), "%s",
		 d->o.debug_dir ? d->o.debug_dir : "/usr/lib/debug");
	/* perf 6.1 reads its build-id cache from $HOME/.debug ($PERF_BUILDID_DIR
	 * is only set for its helper scripts, never read) */
	if (d->o.buildid_dir)
		snprintf(d->buildid_dir, sizeof(d->buildid_dir), "%s", d->o.buildid_dir);
	else if (getenv("HOME") && getenv("HOME")[0] &&
		 (size_t)snprintf(d->buildid_dir, sizeof(d->buildid_dir), "%s/.debug",
				  getenv("HOME")) >= sizeof(d->buildid_dir))
		d->buildid_dir[0] = 0;
	if (d->o.kcore_dir)
		snprintf(d->kcore_dir, sizeof(d->kcore_dir), "%s", d->o.kcore_dir);
	snap_u64map_init(&d->tidpid);
	err = snap_pd_parse_map(&d->pd, buf, len, d->map ? d->pagesz : 0, why, whylen);
	if (err >= 0)
		err = check_support(d, why, whylen);
	if (err < 0)
		goto fail;
	d->timeless = !d->pd.priv[SNAP_PD_PT_TSC_BIT] ||
		      !(d->pd.pt_config & d->pd.priv[SNAP_PD_PT_TSC_BIT]);
	d->per_cpu = d->pd.priv[SNAP_PD_PT_PER_CPU_MMAPS] != 0;
	for (size_t i = 0; i < d->pd.naux && !d->per_cpu; i++)
		d->per_cpu = d->pd.aux[i].cpu >= 0 && d->pd.aux[i].tid < 0;
	d->snapshot = d->pd.priv[SNAP_PD_PT_SNAPSHOT_MODE] != 0;
	{
		/* perf's cbr2khz: TSC frequency / max non-turbo ratio / 1000. */
		const struct snap_pd_tc *tc = &d->pd.tc;
		uint64_t ns = 1000000000ull, tsc_freq = 0, ratio;

		if (tc->time_mult && tc->time_shift < 32)
			tsc_freq = ((ns / tc->time_mult) << tc->time_shift) +
				   ((ns % tc->time_mult) << tc->time_shift) / tc->time_mult;
		ratio = d->pd.priv[SNAP_PD_PT_MAX_NONTURBO_RATIO];
		if (!ratio)
			ratio = (tsc_freq + 50000000) / 100000000;
		d->cbr2khz = ratio ? tsc_freq / ratio / 1000 : 0;
		d->max_non_turbo = (unsigned)ratio;
	}
	{
		/* perf's clock (timing.c); CYC or MTC timing needs each piece's
		 * starting clock from the packets before it. */
		const uint64_t *pv = d->pd.priv, cfg = d->pd.pt_config;

		ptt_params_init(&d->tparams, cfg, pv[SNAP_PD_PT_MTC_FREQ_BITS],
				pv[SNAP_PD_PT_TSC_CTC_N], pv[SNAP_PD_PT_TSC_CTC_D],
				d->max_non_turbo);
		d->tscan = !d->timeless &&
			   ((pv[SNAP_PD_PT_CYC_BIT] && (cfg & pv[SNAP_PD_PT_CYC_BIT])) ||
			    (pv[SNAP_PD_PT_MTC_BIT] && (cfg & pv[SNAP_PD_PT_MTC_BIT])));
		if (pthread_mutex_init(&d->tmu, NULL) == 0)
			d->tmu_init = 1;
	}
	d->lnone.named = 1;
	d->st.lost = d->pd.lost;
	d->st.aux_truncated = d->pd.aux_truncated;
	d->st.aux_partial = d->pd.aux_partial;
	d->iscache = pt_iscache_alloc(NULL);
	d->acache = snap_calloc((size_t)1 << ACACHE_BITS, sizeof(*d->acache));
	d->abits = ACACHE_BITS;
	err = -ENOMEM;
	if (!d->iscache || !d->acache || pthread_mutex_init(&d->symu, NULL) != 0)
		goto fail;
	d->symu_init = 1;
	if ((err = ptd_read_sideband(d)) < 0) {
		if (err == -SNAP_ENOTSUP)
			snap_pd_notsup(why, whylen, d->notsup);
		goto fail;
	}
	/* perf's sync_switch (intel_pt_switch_ip): per-CPU kernel traces with
	 * context switches are switched where the trace reaches __switch_to. */
	if (d->per_cpu && !d->pd.exclude_kernel && !d->timeless &&
	    (d->pd.priv[SNAP_PD_PT_HAVE_SCHED_SWITCH] == 1 ||
	     d->pd.priv[SNAP_PD_PT_HAVE_SCHED_SWITCH] == 3) &&
	    ptd_kernel_switch_sym(d)) {
		err = snap_pd_notsup(why, whylen,
				     "it is a per-CPU trace of the kernel whose symbols have "
				     "__switch_to (perf switches tasks where the trace reaches it; "
				     "not reproduced)");
		goto fail;
	}
	err = ptd_split_buffers(d);
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	if (err < 0)
		goto fail;
	/* reading the sideband and cutting the buffers touched the whole file: its
	 * pages are read again as the pieces are decoded, and dropped after them
	 * (before the workers start: not the pages of their first pieces) */
	ptd_drop_bytes(d, buf, (const uint8_t *)buf + len, 1);
	if ((err = ptd_start_pool(d)) < 0)
		goto fail;
	*out = d;
	return 0;
fail:
	snap_ptdec_close(d);
	return err;
}

int snap_ptdec_open_mem(struct snap_ptdec **out, const void *buf, size_t len,
			const struct snap_ptdec_opts *o, struct snap_strtab *names, char *why,
			size_t whylen)
{
	return open_buf(out, buf, len, o, names, why, whylen, 0, -1);
}

int snap_ptdec_open(struct snap_ptdec **out, const char *path, const struct snap_ptdec_opts *o,
		    struct snap_strtab *names, char *why, size_t whylen)
{
	const void *m;
	size_t len;
	struct stat st;
	struct snap_ptdec_opts oo;
	char data[4200], kdir[4200];
	int err, fd = -1;

	*out = NULL;
	memset(&oo, 0, sizeof(oo));
	if (o)
		oo = *o;
	/* perf record --kcore writes a directory: DIR/data and DIR/kcore_dir/ */
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		int n = snprintf(data, sizeof(data), "%s/data", path);
		int k = snprintf(kdir, sizeof(kdir), "%s/kcore_dir", path);

		if (n < 0 || (size_t)n >= sizeof(data) || k < 0 || (size_t)k >= sizeof(kdir))
			return -ENAMETOOLONG;
		path = data;
		if (!oo.kcore_dir && stat(kdir, &st) == 0 && S_ISDIR(st.st_mode))
			oo.kcore_dir = kdir;
	}
	/* the descriptor kept: the cut at PSBs reads through it (split.c) */
	err = snap_file_map_keep(path, 1, UINT64_MAX, 0, &m, &len, &fd);
	if (err != 0)
		return err == 1 ? -SNAP_ETRUNC : err;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		fd = -1;
	}
	err = open_buf(out, m, len, &oo, names, why, whylen, 1, fd);
	if (err < 0)
		return err;
	(*out)->o.kcore_dir = NULL; /* kdir was copied; nothing keeps the pointer */
	return 0;
}

int snap_ptdec_timeless(const struct snap_ptdec *d)
{
	return d->timeless;
}

void snap_ptdec_stats(const struct snap_ptdec *d, struct snap_ptdec_stats *s)
{
	*s = d->st;
}

void snap_ptdec_close(struct snap_ptdec *d)
{
	if (!d)
		return;
	ptd_stop_pool(d);
	if (d->fd >= 0)
		close(d->fd);
	if (d->tmu_init)
		pthread_mutex_destroy(&d->tmu);
	if (d->symu_init)
		pthread_mutex_destroy(&d->symu);
	while (d->lblocks) {
		struct lblock *b = d->lblocks;

		d->lblocks = b->next;
		snap_free(b);
	}
	snap_free(d->threads);
	for (size_t i = 0; i < d->npieces; i++) {
		snap_free(d->pieces[i].ev);
		snap_free(d->pieces[i].pub);
	}
	for (size_t i = 0; i < d->nqueues; i++) {
		if (d->queues[i].rok && !d->queues[i].rlast) /* a segment the reader holds */
			snap_free(d->queues[i].rev);
		snap_free(d->queues[i].pieces);
	}
	snap_free(d->queues);
	snap_free(d->pieces);
	snap_free(d->order);
	for (size_t i = 0; i < d->nprocs; i++) {
		pt_image_free(d->procs[i].img);
		snap_free(d->procs[i].mi);
	}
	snap_free(d->procs);
	if (d->kimg)
		pt_image_free(d->kimg);
	snap_free(d->kmms);
	for (size_t i = 0; i < d->ndsos; i++) {
		snap_free(d->dsos[i].path);
		snap_free(d->dsos[i].symfile);
		snap_free(d->dsos[i].ksyms);
		snap_elfsyms_fini(&d->dsos[i].syms);
	}
	snap_free(d->dsos);
	snap_free(d->maps);
	snap_free(d->sws);
	snap_free(d->comms);
	snap_free(d->acache);
	snap_u64map_fini(&d->tidpid);
	if (d->iscache)
		pt_iscache_free(d->iscache);
	snap_free(d->secs);
	snap_pd_fini(&d->pd);
	if (d->map)
		snap_file_unmap(d->map, d->maplen);
	snap_free(d);
}
