/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test helpers for the stack/ layer:
 *  - a recording timeline: every op becomes one text line, e.g.
 *      T pid=1 tid=2 proc=[pid=1] thread=[pid=1] [tid=2]
 *      B 100 tid=2 main address=0x401000 symbol=main
 *      E 150 tid=2 main
 *      X 150..150 tid=2 [decode error: Overflow packet]
 *      C 10 tid=2 CPU freq (MHz)=3000
 *    plus a checker that, per track, after a stable sort by timestamp (what
 *    Perfetto does), every E closes the innermost open B of the same name;
 *  - a one-line event syntax for tables of input events:
 *      TIME PID/TID [comm=NAME] WHAT...       TIME is ns or "-" (no time)
 *      WHAT = [strt|end] [KIND] [(x)] SRC SRCSYM DST DSTSYM   (a branch)
 *             KIND: a snap_br_kind_name(): call return jmp int "hw int" iret syscall
 *                   sysret "tx abrt" async vmentry vmexit
 *           | error IP MESSAGE...
 *           | sample EVENT IP SYM IP SYM ...     (outermost first)
 *           | power MHZ IP SYM
 *           | extra EVENT IP SYM PERIOD
 *           | switch out|preempt|in           (PERF_RECORD_SWITCH)
 *           | switch chain IP SYM ...          (a sched:sched_switch sample)
 *           | task fork|exit                   (PERF_RECORD_FORK/EXIT of PID/TID)
 *    A sample's EVENT may carry its period: cpu-clock@250000 (else 1).
 *    Addresses are hex without 0x; a symbol "-" means none.
 */
#ifndef SNAP_MOCK_TIMELINE_H
#define SNAP_MOCK_TIMELINE_H

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/event.h"
#include "model/timeline.h"
#include "util/strtab.h"

struct mock_rec {
	int32_t pid, tid;
	uint64_t ts;
	uint32_t name;
	size_t seq;
	char type;
};

struct mock_tl {
	struct snap_timeline base; /* first member */
	struct snap_strtab *st;
	char *text; /* all lines, '\n'-terminated */
	size_t len, cap;
	struct mock_rec *recs;
	size_t nrecs, caprecs;
	int64_t *tracks; /* announced (pid << 32 | tid) */
	size_t ntracks, captracks;
	int unannounced; /* events on tracks never announced */
	long fail_after; /* ops left before every op fails with -EIO; < 0 = never */
	int finished;
};

static inline void mock_append(struct mock_tl *m, const char *s)
{
	size_t l = strlen(s);

	if (m->len + l + 2 > m->cap) {
		size_t nc = (m->cap ? m->cap * 2 : 4096) + l;
		char *n = realloc(m->text, nc);

		if (!n)
			abort();
		m->text = n;
		m->cap = nc;
	}
	memcpy(m->text + m->len, s, l);
	m->len += l;
	m->text[m->len++] = '\n';
	m->text[m->len] = '\0';
}

static inline int64_t mock_key(int32_t pid, int32_t tid)
{
	return (int64_t)(((uint64_t)(uint32_t)pid << 32) | (uint32_t)tid);
}

static inline int mock_op_start(struct mock_tl *m, int32_t pid, int32_t tid, int needs_track)
{
	size_t i;

	if (m->fail_after == 0)
		return -EIO;
	if (m->fail_after > 0)
		m->fail_after--;
	if (!needs_track)
		return 0;
	for (i = 0; i < m->ntracks; i++)
		if (m->tracks[i] == mock_key(pid, tid))
			return 0;
	m->unannounced++;
	return 0;
}

static inline void mock_rec_add(struct mock_tl *m, char type, int32_t pid, int32_t tid, uint64_t ts,
				uint32_t name)
{
	if (m->nrecs == m->caprecs) {
		m->caprecs = m->caprecs ? m->caprecs * 2 : 64;
		m->recs = realloc(m->recs, m->caprecs * sizeof(*m->recs));
		if (!m->recs)
			abort();
	}
	m->recs[m->nrecs].type = type;
	m->recs[m->nrecs].pid = pid;
	m->recs[m->nrecs].tid = tid;
	m->recs[m->nrecs].ts = ts;
	m->recs[m->nrecs].name = name;
	m->recs[m->nrecs].seq = m->nrecs;
	m->nrecs++;
}

static inline void mock_fmt_args(struct mock_tl *m, char *buf, size_t size,
				 const struct snap_arg *a, size_t n)
{
	size_t i, l = strlen(buf);

	for (i = 0; i < n && l < size; i++) {
		const char *k = snap_strtab_get(m->st, a[i].name);

		if (a[i].type == SNAP_ARG_INT)
			snprintf(buf + l, size - l, " %s=%" PRId64, k, a[i].v.i);
		else if (a[i].type == SNAP_ARG_PTR)
			snprintf(buf + l, size - l, " %s=0x%" PRIx64, k, a[i].v.u);
		else
			snprintf(buf + l, size - l, " %s=%s", k,
				 snap_strtab_get(m->st, a[i].v.str));
		l = strlen(buf);
	}
}

static inline int mock_thread(struct snap_timeline *tl, int32_t pid, int32_t tid,
			      uint32_t proc_name, uint32_t thread_name)
{
	struct mock_tl *m = (struct mock_tl *)tl;
	char buf[1024];
	int err = mock_op_start(m, pid, tid, 0);

	if (err)
		return err;
	snprintf(buf, sizeof(buf), "T pid=%d tid=%d proc=%s thread=%s", pid, tid,
		 snap_strtab_get(m->st, proc_name), snap_strtab_get(m->st, thread_name));
	mock_append(m, buf);
	if (m->ntracks == m->captracks) {
		m->captracks = m->captracks ? m->captracks * 2 : 16;
		m->tracks = realloc(m->tracks, m->captracks * sizeof(*m->tracks));
		if (!m->tracks)
			abort();
	}
	m->tracks[m->ntracks++] = mock_key(pid, tid);
	return 0;
}

static inline int mock_begin(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
			     uint32_t name, const struct snap_arg *args, size_t nargs)
{
	struct mock_tl *m = (struct mock_tl *)tl;
	char buf[1024];
	int err = mock_op_start(m, pid, tid, 1);

	if (err)
		return err;
	snprintf(buf, sizeof(buf), "B %" PRIu64 " tid=%d %s", ts, tid,
		 snap_strtab_get(m->st, name));
	mock_fmt_args(m, buf, sizeof(buf), args, nargs);
	mock_append(m, buf);
	mock_rec_add(m, 'B', pid, tid, ts, name);
	return 0;
}

/* end_args (mock_show_end_args): "E TS tid=T NAME ARGS" */
static inline int mock_end_args(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
				uint32_t name, const struct snap_arg *args, size_t nargs)
{
	struct mock_tl *m = (struct mock_tl *)tl;
	char buf[1024];
	int err = mock_op_start(m, pid, tid, 1);

	if (err)
		return err;
	snprintf(buf, sizeof(buf), "E %" PRIu64 " tid=%d %s", ts, tid,
		 snap_strtab_get(m->st, name));
	mock_fmt_args(m, buf, sizeof(buf), args, nargs);
	mock_append(m, buf);
	mock_rec_add(m, 'E', pid, tid, ts, name);
	return 0;
}

static inline int mock_end(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
			   uint32_t name)
{
	return mock_end_args(tl, pid, tid, ts, name, NULL, 0);
}

static inline int mock_complete(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
				uint64_t end_ts, uint32_t name, const struct snap_arg *args,
				size_t nargs)
{
	struct mock_tl *m = (struct mock_tl *)tl;
	char buf[1024];
	int err = mock_op_start(m, pid, tid, 1);

	if (err)
		return err;
	snprintf(buf, sizeof(buf), "X %" PRIu64 "..%" PRIu64 " tid=%d %s", ts, end_ts, tid,
		 snap_strtab_get(m->st, name));
	mock_fmt_args(m, buf, sizeof(buf), args, nargs);
	mock_append(m, buf);
	return 0;
}

static inline int mock_counter(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
			       uint32_t name, const struct snap_arg *args, size_t nargs)
{
	struct mock_tl *m = (struct mock_tl *)tl;
	char buf[1024];
	int err = mock_op_start(m, pid, tid, 1);

	if (err)
		return err;
	snprintf(buf, sizeof(buf), "C %" PRIu64 " tid=%d %s", ts, tid,
		 snap_strtab_get(m->st, name));
	mock_fmt_args(m, buf, sizeof(buf), args, nargs);
	mock_append(m, buf);
	return 0;
}

static inline int mock_finish(struct snap_timeline *tl)
{
	((struct mock_tl *)tl)->finished = 1;
	return 0;
}

static const struct snap_timeline_ops mock_ops = {
	.thread = mock_thread,
	.begin = mock_begin,
	.end = mock_end,
	.complete = mock_complete,
	.counter = mock_counter,
	.finish = mock_finish,
};

/* The same with end_args: ends print their args (inferred_end_time). */
static const struct snap_timeline_ops mock_ops_end_args = {
	.thread = mock_thread,
	.begin = mock_begin,
	.end = mock_end,
	.end_args = mock_end_args,
	.complete = mock_complete,
	.counter = mock_counter,
	.finish = mock_finish,
};

static inline void mock_show_end_args(struct mock_tl *m)
{
	m->base.ops = &mock_ops_end_args;
}

static inline void mock_init(struct mock_tl *m, struct snap_strtab *st)
{
	memset(m, 0, sizeof(*m));
	m->base.ops = &mock_ops;
	m->st = st;
	m->fail_after = -1;
	mock_append(m, "");
	m->len = 0;
	m->text[0] = '\0';
}

static inline void mock_fini(struct mock_tl *m)
{
	free(m->text);
	free(m->recs);
	free(m->tracks);
	memset(m, 0, sizeof(*m));
}

/* Lines starting with one of the characters of `types` (all if NULL), joined. */
static inline char *mock_lines(const struct mock_tl *m, const char *types, char *out, size_t size)
{
	const char *p = m->text;
	size_t l = 0;

	out[0] = '\0';
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = (size_t)(e - p) + 1;

		if ((!types || strchr(types, *p)) && l + n < size) {
			memcpy(out + l, p, n);
			l += n;
			out[l] = '\0';
		}
		p = e + 1;
	}
	return out;
}

static inline int mock_rec_cmp(const void *a, const void *b)
{
	const struct mock_rec *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Returns 1 if every track's B/E records, stably sorted by time, nest with
 * matching names and (if closed) none is left open; else 0 with why set. */
static inline int mock_balanced(const struct mock_tl *m, int closed, char *why, size_t size)
{
	struct mock_rec *r = malloc((m->nrecs + 1) * sizeof(*r));
	uint32_t *stack = malloc((m->nrecs + 1) * sizeof(*stack));
	size_t i, depth = 0;
	int ok = 1;

	if (!r || !stack)
		abort();
	snprintf(why, size, "ok");
	if (m->nrecs)
		memcpy(r, m->recs, m->nrecs * sizeof(*r));
	qsort(r, m->nrecs, sizeof(*r), mock_rec_cmp);
	for (i = 0; i < m->nrecs && ok; i++) {
		if (i && (r[i].pid != r[i - 1].pid || r[i].tid != r[i - 1].tid)) {
			if (closed && depth) {
				snprintf(why, size, "tid %d: %zu slices left open", r[i - 1].tid,
					 depth);
				ok = 0;
				break;
			}
			depth = 0;
		}
		if (r[i].type == 'B') {
			stack[depth++] = r[i].name;
		} else if (!depth || stack[depth - 1] != r[i].name) {
			snprintf(why, size, "tid %d: E %s at %" PRIu64 " does not close %s",
				 r[i].tid, snap_strtab_get(m->st, r[i].name), r[i].ts,
				 depth ? snap_strtab_get(m->st, stack[depth - 1]) : "nothing");
			ok = 0;
		} else {
			depth--;
		}
	}
	if (ok && closed && depth) {
		snprintf(why, size, "tid %d: %zu slices left open", r[m->nrecs - 1].tid, depth);
		ok = 0;
	}
	free(r);
	free(stack);
	return ok;
}

/* ---- event lines ---------------------------------------------------------- */

#define TEST_EV_MAX_FRAMES 64

struct test_ev {
	struct snap_event ev;
	struct snap_loc frames[TEST_EV_MAX_FRAMES];
};

static inline uint32_t test_intern(struct snap_strtab *st, const char *s)
{
	int64_t r;

	if (!strcmp(s, "-"))
		return 0;
	r = snap_strtab_intern_cstr(st, s);
	if (r < 0)
		abort();
	return (uint32_t)r;
}

static inline int test_loc(struct snap_strtab *st, char **save, struct snap_loc *l)
{
	char *ip = strtok_r(NULL, " ", save), *sym = strtok_r(NULL, " ", save);

	if (!ip || !sym)
		return -1;
	char *plus = strstr(sym, "+0x");

	memset(l, 0, sizeof(*l));
	l->ip = strtoull(ip, NULL, 16);
	if (plus && plus != sym) { /* "name+0xOFF": offset in the symbol */
		l->off = strtoull(plus + 3, NULL, 16);
		*plus = 0;
	}
	l->sym = test_intern(st, sym);
	return 0;
}

/* Parses one event line (see the top of this file); te->ev.frames points
 * into te. Returns 0 or -1 on a malformed line. */
static inline int test_ev_parse(struct snap_strtab *st, const char *line, struct test_ev *te)
{
	char buf[1024], *save = NULL, *w;
	struct snap_event *ev = &te->ev;
	int k;

	memset(te, 0, sizeof(*te));
	snprintf(buf, sizeof(buf), "%s", line);
	w = strtok_r(buf, " ", &save);
	if (!w)
		return -1;
	if (strcmp(w, "-")) {
		ev->has_time = 1;
		ev->time = strtoull(w, NULL, 10);
	}
	w = strtok_r(NULL, " ", &save);
	if (!w || sscanf(w, "%d/%d", &ev->pid, &ev->tid) != 2)
		return -1;
	w = strtok_r(NULL, " ", &save);
	if (w && !strncmp(w, "comm=", 5)) {
		ev->comm = test_intern(st, w + 5);
		w = strtok_r(NULL, " ", &save);
	}
	if (!w)
		return -1;
	if (!strcmp(w, "error")) {
		ev->kind = SNAP_EV_ERROR;
		w = strtok_r(NULL, " ", &save);
		if (!w)
			return -1;
		ev->src.ip = strtoull(w, NULL, 16);
		w = strtok_r(NULL, "", &save);
		ev->msg = test_intern(st, w ? w : "");
		return 0;
	}
	if (!strcmp(w, "sample")) {
		ev->kind = SNAP_EV_SAMPLE;
		w = strtok_r(NULL, " ", &save);
		if (!w)
			return -1;
		ev->period = 1;
		if (strchr(w, '@')) {
			ev->period = strtoull(strchr(w, '@') + 1, NULL, 10);
			*strchr(w, '@') = '\0';
		}
		ev->event = test_intern(st, w);
		while (ev->nframes < TEST_EV_MAX_FRAMES &&
		       test_loc(st, &save, &te->frames[ev->nframes]) == 0)
			ev->nframes++;
		ev->frames = te->frames;
		return 0;
	}
	if (!strcmp(w, "power")) {
		ev->kind = SNAP_EV_POWER;
		w = strtok_r(NULL, " ", &save);
		if (!w)
			return -1;
		ev->freq_mhz = (uint32_t)strtoul(w, NULL, 10);
		return test_loc(st, &save, &ev->src);
	}
	if (!strcmp(w, "switch")) {
		ev->kind = SNAP_EV_SWITCH;
		w = strtok_r(NULL, " ", &save);
		if (!w)
			return -1;
		ev->sw_out = strcmp(w, "in") != 0;
		ev->sw_preempt = !strcmp(w, "preempt");
		if (!strcmp(w, "chain")) {
			ev->event = test_intern(st, SNAP_SWITCH_EVENT);
			ev->period = 1;
			while (ev->nframes < TEST_EV_MAX_FRAMES &&
			       test_loc(st, &save, &te->frames[ev->nframes]) == 0)
				ev->nframes++;
			ev->frames = te->frames;
		}
		return 0;
	}
	if (!strcmp(w, "task")) {
		ev->kind = SNAP_EV_TASK;
		w = strtok_r(NULL, " ", &save);
		if (!w)
			return -1;
		ev->task_exit = !strcmp(w, "exit");
		return 0;
	}
	if (!strcmp(w, "extra")) {
		ev->kind = SNAP_EV_EXTRA;
		w = strtok_r(NULL, " ", &save);
		if (!w)
			return -1;
		ev->event = test_intern(st, w);
		if (test_loc(st, &save, &ev->src) < 0)
			return -1;
		w = strtok_r(NULL, " ", &save);
		ev->period = w ? strtoull(w, NULL, 10) : 1;
		return 0;
	}
	ev->kind = SNAP_EV_BRANCH;
	if (!strcmp(w, "strt") || !strcmp(w, "end")) {
		ev->br_state = w[0] == 's' ? SNAP_BR_START : SNAP_BR_END;
		w = strtok_r(NULL, " ", &save);
	}
	if (w && (!strcmp(w, "hw") || !strcmp(w, "tx"))) { /* two-word kinds: "hw int" */
		char *w2 = strtok_r(NULL, " ", &save);

		if (w2 && w2 == w + strlen(w) + 1)
			w[strlen(w)] = ' ';
	}
	k = w ? snap_br_kind_parse(w, strlen(w)) : -1;
	if (k > 0) {
		ev->br_kind = (uint8_t)k;
		w = strtok_r(NULL, " ", &save);
	}
	if (w && !strcmp(w, "(x)")) {
		ev->in_tx = 1;
		w = strtok_r(NULL, " ", &save);
	}
	if (!w)
		return -1;
	ev->src.ip = strtoull(w, NULL, 16);
	w = strtok_r(NULL, " ", &save);
	if (!w)
		return -1;
	ev->src.sym = test_intern(st, w);
	return test_loc(st, &save, &ev->dst);
}

#endif
