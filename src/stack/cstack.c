// SPDX-License-Identifier: GPL-2.0
/*
 * Call-stack reconstruction for one thread (behaviour.md §4). See cstack.h
 * for the contract; the comments here say where we follow magic-trace and
 * where we deliberately differ (REC).
 */
#include "stack/cstack.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/vec.h"

enum {
	OP_CALL = 1, /* begin a frame */
	OP_RET,	     /* end the top frame */
	OP_RETUNK,   /* return with an empty stack: "[unknown]" span [t, t2] */
};

int snap_cstack_ctx_init(struct snap_cstack_ctx *ctx, struct snap_timeline *tl,
			 struct snap_strtab *st, enum snap_scope scope, uint32_t max_depth)
{
	struct snap_cstack_names *n = &ctx->n;
	int err;

	memset(ctx, 0, sizeof(*ctx));
	ctx->tl = tl;
	ctx->st = st;
	ctx->scope = scope;
	ctx->max_depth = max_depth ? max_depth : SNAP_CSTACK_DEFAULT_MAX_DEPTH;
	ctx->max_defer = SNAP_CSTACK_MAX_DEFER;
	snap_u64map_init(&ctx->errnames);
	if ((err = snap_strtab_intern_id(st, "[untraced]", &n->untraced)) < 0 ||
	    (err = snap_strtab_intern_id(st, "[syscall]", &n->syscall)) < 0 ||
	    (err = snap_strtab_intern_id(st, "[returned]", &n->returned)) < 0 ||
	    (err = snap_strtab_intern_id(st, "[unknown]", &n->unknown)) < 0 ||
	    (err = snap_strtab_intern_id(st, "address", &n->address)) < 0 ||
	    (err = snap_strtab_intern_id(st, "symbol", &n->symbol)) < 0 ||
	    (err = snap_strtab_intern_id(st, "inferred_start_time", &n->inferred)) < 0 ||
	    (err = snap_strtab_intern_id(st, "true", &n->true_)) < 0)
		return err;
	return 0;
}

void snap_cstack_ctx_fini(struct snap_cstack_ctx *ctx)
{
	snap_u64map_fini(&ctx->errnames);
	memset(ctx, 0, sizeof(*ctx));
}

static struct snap_cstack_stk *cur(struct snap_cstack *cs)
{
	return &cs->stk[cs->nstk - 1];
}

/* Starts a new segment of the current stack at t (new stack, decode error). */
static void cut(struct snap_cstack *cs, uint64_t t)
{
	cur(cs)->create_time = t;
	cur(cs)->cut_seq = ++cs->seq;
	cur(cs)->unk = 0;
	if (t > cs->cut_time)
		cs->cut_time = t;
}

static int stk_open(struct snap_cstack *cs)
{
	if (snap_vec_reserve(&cs->stk, &cs->capstk, cs->nstk + 1, sizeof(*cs->stk)) < 0)
		return -ENOMEM;
	if (cs->nstk == cs->nstk_init) {
		memset(&cs->stk[cs->nstk], 0, sizeof(*cs->stk));
		cs->nstk_init++;
	}
	cs->stk[cs->nstk].n = 0;
	cs->stk[cs->nstk].overflow = 0;
	cs->stk[cs->nstk].unk = 0;
	cs->nstk++;
	return 0;
}

int snap_cstack_init(struct snap_cstack *cs, struct snap_cstack_ctx *ctx, int32_t pid, int32_t tid,
		     uint64_t t)
{
	memset(cs, 0, sizeof(*cs));
	cs->ctx = ctx;
	cs->pid = pid;
	cs->tid = tid;
	if (stk_open(cs) < 0)
		return -ENOMEM;
	cut(cs, t);
	cs->ldet_seq = cur(cs)->cut_seq;
	cs->last_decode_error_time = t;
	cs->last_event_time = t;
	cs->pending_time = t;
	return 0;
}

void snap_cstack_fini(struct snap_cstack *cs)
{
	size_t i;

	for (i = 0; i < cs->nstk_init; i++)
		snap_free(cs->stk[i].f);
	snap_free(cs->stk);
	snap_free(cs->pend);
	snap_free(cs->defer);
	memset(cs, 0, sizeof(*cs));
}

uint64_t snap_cstack_time(struct snap_cstack *cs, int has_time, uint64_t mapped)
{
	uint64_t t;

	if (has_time) {
		if (mapped < cs->last_event_time) {
			cs->ctx->stats.time_backwards++;
			mapped = cs->last_event_time;
		}
		cs->last_event_time = mapped;
	}
	t = cs->last_event_time;
	/* #155: nothing may share the timestamp of a decode error (or of the
	 * thread's creation), where inferred frames start. */
	if (t == cs->last_decode_error_time && t != 0)
		t++;
	if (t < cs->pending_time)
		t = cs->pending_time;
	cs->last_time = t;
	return t;
}

/* ---- writing ------------------------------------------------------------ */

static int write_op(struct snap_cstack *cs, const struct snap_cstack_op *op, uint64_t t)
{
	struct snap_cstack_ctx *ctx = cs->ctx;
	struct snap_timeline *tl = ctx->tl;
	struct snap_arg a[3];

	switch (op->type) {
	case OP_CALL:
		a[0].name = ctx->n.address;
		a[0].type = SNAP_ARG_PTR;
		a[0].v.u = op->ip;
		a[1].name = ctx->n.symbol;
		a[1].type = SNAP_ARG_STR;
		a[1].v.str = op->sym;
		a[2].name = ctx->n.inferred;
		a[2].type = SNAP_ARG_STR;
		a[2].v.str = ctx->n.true_;
		return tl->ops->begin(tl, cs->pid, cs->tid, t, op->sym, a, op->inferred ? 3 : 2);
	case OP_RET:
		return tl->ops->end(tl, cs->pid, cs->tid, t, op->sym);
	case OP_RETUNK:
	default:
		return tl->ops->complete(tl, cs->pid, cs->tid, op->t, op->t2, ctx->n.unknown, NULL,
					 0);
	}
}

static int defer(struct snap_cstack *cs, const struct snap_cstack_op *op)
{
	if (snap_vec_reserve(&cs->defer, &cs->capdefer, cs->ndefer + 1, sizeof(*op)) < 0)
		return -ENOMEM;
	cs->defer[cs->ndefer++] = *op;
	return 0;
}

/* emit(op, t) of §4.3. Inferred begins and [unknown] spans are deferred with
 * the current stack's cut sequence; other ops are written now unless a
 * deferred op may still have to precede them (t <= the latest cut time). */
static int emit(struct snap_cstack *cs, struct snap_cstack_op op, uint64_t t)
{
	if (cs->draining) {
		if (op.type == OP_RETUNK)
			op.t2 = t;
		return write_op(cs, &op, op.type == OP_RETUNK ? op.t : t);
	}
	if (op.type == OP_RETUNK || (op.type == OP_CALL && op.inferred)) {
		if (op.type == OP_RETUNK) {
			op.t2 = t; /* k2 was taken when the return happened */
		} else {
			op.t = t;
			op.k1 = cur(cs)->cut_seq;
			op.k2 = ~++cs->ninferred;
		}
		return defer(cs, &op);
	}
	op.t = t;
	if (!op.k1)
		op.k1 = ++cs->seq;
	op.k2 = 0;
	if (t <= cs->cut_time)
		return defer(cs, &op);
	return write_op(cs, &op, t);
}

/* flush(to) of §4.3: spreads the pending calls evenly over [pending_time, to). */
static int flush(struct snap_cstack *cs, uint64_t to)
{
	uint64_t total, off = 0, share;
	uint32_t n = cs->npend_calls, k = 0;
	size_t i;
	int err = 0, e;

	if (to < cs->pending_time)
		to = cs->pending_time;
	total = to - cs->pending_time;
	for (i = 0; i < cs->npend; i++) {
		uint64_t t = cs->pending_time + off;

		if (cs->pend[i].type == OP_CALL) {
			k++;
			share = (total - off) / (n - k + 1);
			off += share;
		}
		e = emit(cs, cs->pend[i], t);
		if (e < 0 && !err)
			err = e;
	}
	cs->npend = 0;
	cs->npend_calls = 0;
	cs->pending_time = to;
	return err;
}

static int pend_reserve(struct snap_cstack *cs)
{
	if (snap_vec_reserve(&cs->pend, &cs->cappend, cs->npend + 1, sizeof(*cs->pend)) < 0)
		return -ENOMEM;
	return 0;
}

/* add(op, t); the caller has called pend_reserve (so this cannot fail to
 * queue the op; it returns a write error of the flush, if any). */
static int add(struct snap_cstack *cs, const struct snap_cstack_op *op, uint64_t t)
{
	int err = 0;

	if (t != cs->pending_time || cs->npend >= SNAP_CSTACK_MAX_PENDING)
		err = flush(cs, t);
	cs->pend[cs->npend] = *op;
	if (!op->k1)
		cs->pend[cs->npend].k1 = ++cs->seq;
	cs->npend++;
	if (op->type == OP_CALL)
		cs->npend_calls++;
	return err;
}

/* ---- primitive operations (§4.5) ------------------------------------------ */

static uint32_t symof(const struct snap_cstack *cs, uint32_t sym)
{
	return sym ? sym : cs->ctx->n.unknown;
}

/* Makes room for one frame; returns 1 if the depth cap says drop it. */
static int frame_reserve(struct snap_cstack *cs)
{
	struct snap_cstack_stk *s = cur(cs);

	if (s->overflow || cs->total + s->unk >= cs->ctx->max_depth) {
		cs->ctx->stats.depth_capped++;
		return 1;
	}
	if (snap_vec_reserve(&s->f, &s->cap, s->n + 1, sizeof(*s->f)) < 0)
		return -ENOMEM;
	return 0;
}

static void frame_push(struct snap_cstack *cs, uint64_t ip, uint32_t sym)
{
	struct snap_cstack_stk *s = cur(cs);

	s->f[s->n].ip = ip;
	s->f[s->n].sym = sym;
	s->f[s->n].anchored = 0;
	s->n++;
	cs->total++;
}

static int call(struct snap_cstack *cs, uint64_t ip, uint32_t sym, uint64_t t)
{
	struct snap_cstack_op op = {.type = OP_CALL, .ip = ip, .sym = symof(cs, sym)};
	int err = frame_reserve(cs);

	if (err) {
		if (err > 0)
			cur(cs)->overflow++;
		return err < 0 ? err : 0;
	}
	if (pend_reserve(cs) < 0)
		return -ENOMEM;
	err = add(cs, &op, t);
	frame_push(cs, op.ip, op.sym);
	/* starts with the segment: once closed, it encloses what came before */
	cur(cs)->f[cur(cs)->n - 1].anchored = t <= cur(cs)->create_time;
	return err;
}

static int ret_plain(struct snap_cstack *cs, uint64_t t)
{
	struct snap_cstack_stk *s = cur(cs);
	struct snap_cstack_op op = {0};
	int err;

	if (s->overflow) {
		s->overflow--;
		return 0;
	}
	if (pend_reserve(cs) < 0)
		return -ENOMEM;
	if (s->n) {
		op.type = OP_RET;
		op.sym = s->f[s->n - 1].sym;
		err = add(cs, &op, t);
		s->unk += s->f[s->n - 1].anchored;
		s->n--;
		cs->total--;
		return err;
	}
	cs->ctx->stats.unmatched_returns++;
	if (cs->total + s->unk >= cs->ctx->max_depth) {
		cs->ctx->stats.inferred_capped++; /* would nest deeper than the cap */
		return 0;
	}
	s->unk++;
	op.type = OP_RETUNK;
	op.t = s->create_time;
	op.k1 = s->cut_seq; /* it belongs to this stack, wherever we are when it is emitted */
	/* Ordered by discovery with the inferred callers found after it (they are
	 * outer, so they come first), not by when the pending batch is flushed. */
	op.k2 = ~++cs->ninferred;
	return add(cs, &op, t);
}

/* "The pc's symbol must be the top of stack" (tail calls, PLT jumps, returns
 * into callers we never saw). */
static int check_current_symbol(struct snap_cstack *cs, const struct snap_loc *dst, uint64_t t)
{
	struct snap_cstack_stk *s = cur(cs);
	uint32_t sym = symof(cs, dst->sym);
	struct snap_cstack_op op = {.type = OP_CALL, .ip = dst->ip, .sym = sym, .inferred = 1};
	int err, e;

	if (s->overflow)
		return 0; /* the real top was dropped by the cap: nothing to compare */
	if (s->n) {
		if (s->f[s->n - 1].sym == sym)
			return 0;
		err = ret_plain(cs, t);
		e = call(cs, dst->ip, sym, t);
		return err < 0 ? err : e;
	}
	/* An inferred caller starts at create_time, like every earlier one of
	 * this segment and its [unknown] spans: they nest, so they count. */
	if (cs->total + s->unk >= cs->ctx->max_depth) {
		cs->ctx->stats.inferred_capped++;
		return 0;
	}
	err = frame_reserve(cs);
	if (err)
		return err < 0 ? err : 0;
	err = emit(cs, op, s->create_time);
	frame_push(cs, dst->ip, sym);
	s->f[s->n - 1].anchored = 1;
	return err;
}

static int clear_callstack(struct snap_cstack *cs, uint64_t t)
{
	int err;

	while (cur(cs)->n || cur(cs)->overflow)
		if ((err = ret_plain(cs, t)) < 0)
			return err;
	return 0;
}

static int new_callstack_for(struct snap_cstack *cs, const struct snap_loc *addr, uint64_t t)
{
	struct snap_cstack_stk *s = cur(cs);
	int err = 0;

	/* Pending ops happened before the new stack: they must not be spread
	 * past t (where the new stack's inferred frames may start). */
	err = flush(cs, t);
	/* Callers have emptied (or suspended) the stack; never leak frames. */
	for (size_t i = 0; i < s->n; i++)
		s->unk += s->f[i].anchored;
	cs->total -= s->n;
	s->n = 0;
	s->overflow = 0;
	/* REC: a nested stack never starts before it was pushed, whatever the
	 * address (magic-trace uses the last decode error time for user ones). */
	if (snap_loc_is_kernel(addr) || cs->nstk > 1) {
		cut(cs, t);
	} else {
		/* The stack has been running since the last decode error: its
		 * inferred frames enclose everything on the track since then. */
		s->create_time = cs->last_decode_error_time;
		s->cut_seq = cs->ldet_seq;
	}
	return err;
}

/* Suspends the current stack (it stays open on the track underneath). */
static int push_inactive(struct snap_cstack *cs, uint64_t t)
{
	if (cs->nstk >= SNAP_CSTACK_MAX_NEST) {
		cs->ctx->stats.depth_capped++;
		return clear_callstack(cs, t);
	}
	return stk_open(cs);
}

static int synth(struct snap_cstack *cs, uint32_t sym, uint64_t t)
{
	return call(cs, 0, sym, t);
}

static int op_cmp(const void *a, const void *b)
{
	const struct snap_cstack_op *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->k1 != y->k1)
		return x->k1 < y->k1 ? -1 : 1;
	return x->k2 < y->k2 ? -1 : x->k2 > y->k2;
}

/* Writes the deferred ops in (time, sequence) order, then closes all frames of
 * all stacks at t directly, innermost first. Never allocates. */
static int drain_and_close(struct snap_cstack *cs, uint64_t t)
{
	struct snap_timeline *tl = cs->ctx->tl;
	int err = 0, e;
	size_t i;

	cs->draining = 1;
	if (cs->ndefer)
		qsort(cs->defer, cs->ndefer, sizeof(*cs->defer), op_cmp);
	for (i = 0; i < cs->ndefer; i++) {
		e = write_op(cs, &cs->defer[i], cs->defer[i].t);
		if (e < 0 && !err)
			err = e;
	}
	cs->ndefer = 0;
	for (;;) {
		struct snap_cstack_stk *s = cur(cs);

		while (s->n) {
			s->n--;
			e = tl->ops->end(tl, cs->pid, cs->tid, t, s->f[s->n].sym);
			if (e < 0 && !err)
				err = e;
		}
		s->overflow = 0;
		if (cs->nstk == 1)
			break;
		cs->nstk--;
	}
	cs->total = 0;
	cs->draining = 0;
	return err;
}

int snap_cstack_end_thread(struct snap_cstack *cs, uint64_t t)
{
	int err, e;

	/* REC: magic-trace flushes the last batch with zero shares and moves
	 * pending_time back; we flush up to t and keep every time monotonic. */
	if (t < cs->pending_time)
		t = cs->pending_time;
	if (t < cs->last_time)
		t = cs->last_time; /* an event moved by #155 may have opened a frame */
	err = flush(cs, t);
	e = drain_and_close(cs, t);
	if (e < 0 && !err)
		err = e;
	cs->last_decode_error_time = t;
	cut(cs, t);
	cs->ldet_seq = cur(cs)->cut_seq;
	cs->pending_time = t;
	if (cs->last_event_time < t)
		cs->last_event_time = t;
	return err;
}

int snap_cstack_restart(struct snap_cstack *cs, uint64_t t)
{
	int err = snap_cstack_end_thread(cs, cs->last_event_time);

	if (t < cs->pending_time)
		t = cs->pending_time;
	cs->pending_time = cs->last_event_time = t;
	cut(cs, t);
	return err;
}

int snap_cstack_error(struct snap_cstack *cs, uint32_t msg, uint64_t t)
{
	struct snap_cstack_ctx *ctx = cs->ctx;
	struct snap_timeline *tl = ctx->tl;
	uint64_t id = 0;
	int err, e;

	ctx->stats.decode_errors++;
	if (!snap_u64map_get(&ctx->errnames, msg, &id)) {
		char buf[512];
		int64_t r;

		snprintf(buf, sizeof(buf), "[decode error: %.480s]", snap_strtab_get(ctx->st, msg));
		r = snap_strtab_intern_cstr(ctx->st, buf);
		if (r < 0)
			return (int)r;
		id = (uint64_t)r;
		if (snap_u64map_put(&ctx->errnames, msg, id) < 0)
			return -ENOMEM;
	}
	err = tl->ops->complete(tl, cs->pid, cs->tid, t, t, (uint32_t)id, NULL, 0);
	e = snap_cstack_end_thread(cs, t);
	return err < 0 ? err : e;
}

/* ---- dispatch (§4.6) ------------------------------------------------------ */

static int tr_start(struct snap_cstack *cs, const struct snap_event *ev, uint64_t t)
{
	int err;

	if (cs->ctx->scope == SNAP_SCOPE_KERNEL) {
		if ((err = clear_callstack(cs, t)) < 0)
			return err;
		return new_callstack_for(cs, &ev->dst, t);
	}
	if (!cur(cs)->n && !cur(cs)->overflow)
		return call(cs, ev->dst.ip, ev->dst.sym, t);
	/* Close the synthetic frame pushed at the matching "tr end". No symbol
	 * check: a restart in another function is not a tail call. */
	return ret_plain(cs, t);
}

static int tr_end(struct snap_cstack *cs, const struct snap_event *ev, uint64_t t)
{
	const struct snap_cstack_names *n = &cs->ctx->n;
	int err;

	switch (ev->br_kind) {
	case SNAP_BR_CALL:
		return call(cs, ev->dst.ip, ev->dst.sym, t);
	case SNAP_BR_SYSCALL:
		return synth(cs, n->syscall, t);
	case SNAP_BR_RETURN:
		return synth(cs, n->returned, t);
	case SNAP_BR_IRET:
	case SNAP_BR_SYSRET:
		if ((err = clear_callstack(cs, t)) < 0)
			return err;
		return synth(cs, n->untraced, t);
	case SNAP_BR_NONE:
	case SNAP_BR_ASYNC:
		return synth(cs, n->untraced, t);
	default:
		/* magic-trace: fatal "BUG". REC: count, treat as a plain "tr end". */
		cs->ctx->stats.unexpected++;
		return synth(cs, n->untraced, t);
	}
}

static int kernel_entry(struct snap_cstack *cs, const struct snap_event *ev, uint64_t t)
{
	int err = push_inactive(cs, t);

	if (err < 0 || (err = new_callstack_for(cs, &ev->dst, t)) < 0)
		return err;
	return call(cs, ev->dst.ip, ev->dst.sym, t);
}

static int kernel_exit(struct snap_cstack *cs, const struct snap_event *ev, uint64_t t)
{
	int err = clear_callstack(cs, t);

	if (err < 0)
		return err;
	if (cs->nstk > 1) {
		cs->nstk--;
		return 0;
	}
	if ((err = new_callstack_for(cs, &ev->dst, t)) < 0)
		return err;
	return check_current_symbol(cs, &ev->dst, t);
}

static int branch(struct snap_cstack *cs, const struct snap_event *ev, uint64_t t)
{
	int err;

	if (ev->br_state == SNAP_BR_START) {
		if (ev->br_kind != SNAP_BR_NONE)
			cs->ctx->stats.unexpected++; /* REC: treat as a plain "tr strt" */
		return tr_start(cs, ev, t);
	}
	if (ev->br_state == SNAP_BR_END)
		return tr_end(cs, ev, t);
	switch (ev->br_kind) {
	case SNAP_BR_CALL:
		return call(cs, ev->dst.ip, ev->dst.sym, t);
	case SNAP_BR_RETURN:
		if ((err = ret_plain(cs, t)) < 0)
			return err;
		return check_current_symbol(cs, &ev->dst, t);
	case SNAP_BR_JUMP:
	case SNAP_BR_INT:
	case SNAP_BR_TXABORT:
		return check_current_symbol(cs, &ev->dst, t);
	case SNAP_BR_SYSCALL:
	case SNAP_BR_HWINT:
		return kernel_entry(cs, ev, t);
	case SNAP_BR_IRET:
	case SNAP_BR_SYSRET:
		return kernel_exit(cs, ev, t);
	case SNAP_BR_NONE:
		return 0;
	default:
		/* async without "tr end", vmentry/vmexit: magic-trace "BUG"; ignore. */
		cs->ctx->stats.unexpected++;
		return 0;
	}
}

/* Ends the segment if too many ops are deferred (see SNAP_CSTACK_MAX_DEFER). */
int snap_cstack_trim(struct snap_cstack *cs, uint64_t t)
{
	if (cs->ndefer < cs->ctx->max_defer)
		return 0;
	cs->ctx->stats.trimmed++;
	return snap_cstack_end_thread(cs, t);
}

int snap_cstack_branch(struct snap_cstack *cs, const struct snap_event *ev, uint64_t t)
{
	int err = branch(cs, ev, t);

	if (err >= 0 && cs->ndefer >= cs->ctx->max_defer)
		err = snap_cstack_trim(cs, t);
	return err;
}

/* ---- sampdiff primitives ---------------------------------------------- */

int snap_cstack_flush_to(struct snap_cstack *cs, uint64_t t)
{
	return flush(cs, t);
}

int snap_cstack_push_now(struct snap_cstack *cs, uint64_t ip, uint32_t sym, uint64_t t)
{
	struct snap_cstack_op op = {.type = OP_CALL, .ip = ip, .sym = symof(cs, sym)};
	int err = frame_reserve(cs);

	if (err)
		return err;
	err = emit(cs, op, t);
	frame_push(cs, op.ip, op.sym);
	return err;
}

int snap_cstack_pop_now(struct snap_cstack *cs, uint64_t t)
{
	struct snap_cstack_stk *s = cur(cs);
	struct snap_cstack_op op = {.type = OP_RET};

	if (!s->n)
		return 0;
	op.sym = s->f[s->n - 1].sym;
	s->unk += s->f[s->n - 1].anchored;
	s->n--;
	cs->total--;
	return emit(cs, op, t);
}
