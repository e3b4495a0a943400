// SPDX-License-Identifier: GPL-2.0
/*
 * Call-stack reconstruction for one thread (docs/behaviour.md §4). See cstack.h
 * for the contract; the comments here say where we follow magic-trace and
 * where we deliberately differ (docs/behaviour.md §8).
 */
#include "stack/cstack.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/names.h"
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
	snap_u64map_init(&ctx->debugnames);
	snap_u64map_init(&ctx->srcmap);
	if ((err = snap_strtab_intern_id(st, "[untraced]", &n->untraced)) < 0 ||
	    (err = snap_strtab_intern_id(st, "[syscall]", &n->syscall)) < 0 ||
	    (err = snap_strtab_intern_id(st, "[returned]", &n->returned)) < 0 ||
	    (err = snap_strtab_intern_id(st, SNAP_NAME_UNKNOWN, &n->unknown)) < 0 ||
	    (err = snap_strtab_intern_id(st, "address", &n->address)) < 0 ||
	    (err = snap_strtab_intern_id(st, "symbol", &n->symbol)) < 0 ||
	    (err = snap_strtab_intern_id(st, SNAP_ARG_INLINED, &n->inlined)) < 0 ||
	    (err = snap_strtab_intern_id(st, SNAP_ARG_INFERRED, &n->inferred)) < 0 ||
	    (err = snap_strtab_intern_id(st, "true", &n->true_)) < 0 ||
	    (err = snap_strtab_intern_id(st, SNAP_ARG_INFERRED_END, &n->inferred_end)) < 0 ||
	    (err = snap_strtab_intern_id(st, "line", &n->line)) < 0 ||
	    (err = snap_strtab_intern_id(st, "col", &n->col)) < 0 ||
	    (err = snap_strtab_intern_id(st, "file", &n->file)) < 0 ||
	    (err = snap_strtab_intern_id(st, "gogo", &n->gogo[0])) < 0 ||
	    (err = snap_strtab_intern_id(st, "runtime.gogo", &n->gogo[1])) < 0 ||
	    (err = snap_strtab_intern_id(st, "runtime.gogo.abi0", &n->gogo[2])) < 0 ||
	    (err = snap_strtab_intern_id(st, "runtime.mcall", &n->go_mark[0])) < 0 ||
	    (err = snap_strtab_intern_id(st, "runtime.morestack.abi0", &n->go_mark[1])) < 0 ||
	    (err = snap_strtab_intern_id(st, "runtime.morestack", &n->go_mark[2])) < 0 ||
	    (err = snap_strtab_intern_id(st, "caml_next_frame_descriptor", &ctx->caml_unwind[0])) <
		    0 ||
	    (err = snap_strtab_intern_id(st, "caml_stash_backtrace", &ctx->caml_unwind[1])) < 0 ||
	    (err = snap_strtab_intern_id(st, "caml_raise_exn", &ctx->caml_raise_exn)) < 0 ||
	    (err = snap_strtab_intern_id(st, "caml_raise_exception", &ctx->caml_raise_exception)) <
		    0 ||
	    (err = snap_strtab_intern_id(st, SNAP_ARG_SAMPLED, &n->sampled_ns)) < 0)
		return err;
	ctx->caml_lo = ctx->caml_hi = ctx->caml_raise_exn;
	for (int i = 0; i < 4; i++) {
		uint32_t id = i < 2    ? ctx->caml_unwind[i]
			      : i == 2 ? ctx->caml_raise_exn
				       : ctx->caml_raise_exception;

		ctx->caml_lo = id < ctx->caml_lo ? id : ctx->caml_lo;
		ctx->caml_hi = id > ctx->caml_hi ? id : ctx->caml_hi;
	}
	return 0;
}

void snap_cstack_ctx_fini(struct snap_cstack_ctx *ctx)
{
	snap_u64map_fini(&ctx->errnames);
	snap_u64map_fini(&ctx->debugnames);
	snap_u64map_fini(&ctx->srcmap);
	snap_free(ctx->srcpos);
	snap_free(ctx->noted);
	memset(ctx, 0, sizeof(*ctx));
}

static struct snap_cstack_stk *cur(struct snap_cstack *cs)
{
	return cs->top;
}

/* Drops the current stack: the one underneath is current again. */
static void stk_close(struct snap_cstack *cs)
{
	cs->nstk--;
	cs->top = &cs->stk[cs->nstk - 1];
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
	cs->top = &cs->stk[cs->nstk++];
	return 0;
}

int snap_cstack_init(struct snap_cstack *cs, struct snap_cstack_ctx *ctx, int32_t pid, int32_t tid,
		     uint64_t t)
{
	memset(cs, 0, sizeof(*cs));
	snap_u64map_init(&cs->described);
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
	snap_u64map_fini(&cs->described);
	memset(cs, 0, sizeof(*cs));
}

/* ---- writing ------------------------------------------------------------ */

/* MAGIC_TRACE_DEBUG's name of an inferred frame: "NAME [inferred start time]". */
static int debug_name(struct snap_cstack_ctx *ctx, uint32_t sym, uint32_t *out)
{
	uint64_t id;
	char buf[512];
	int64_t r;

	if (snap_u64map_get(&ctx->debugnames, sym, &id)) {
		*out = (uint32_t)id;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%.480s [inferred start time]", snap_strtab_get(ctx->st, sym));
	r = snap_strtab_intern_cstr(ctx->st, buf);
	if (r < 0)
		return (int)r;
	if (snap_u64map_put(&ctx->debugnames, sym, (uint64_t)r) < 0)
		return -ENOMEM;
	*out = (uint32_t)r;
	return 0;
}

int snap_cstack_lookup_loc(struct snap_cstack_ctx *ctx, const struct snap_loc *loc)
{
	size_t w = loc->sym / 64;
	struct snap_srcpos p;
	uint64_t v;
	int r;

	if (w >= ctx->nnoted) {
		if (snap_vec_reserve(&ctx->noted, &ctx->capnoted, w + 1, sizeof(*ctx->noted)) < 0)
			return -ENOMEM;
		memset(ctx->noted + ctx->nnoted, 0, (w + 1 - ctx->nnoted) * sizeof(*ctx->noted));
		ctx->nnoted = w + 1;
	}
	r = ctx->srcloc->lookup(ctx->srcloc->ctx, loc, &p.file, &p.line, &p.col);
	if (r < 0)
		return r;
	v = 0;
	if (r > 0) {
		if (snap_vec_reserve(&ctx->srcpos, &ctx->capsrcpos, ctx->nsrcpos + 1,
				     sizeof(*ctx->srcpos)) < 0)
			return -ENOMEM;
		ctx->srcpos[ctx->nsrcpos++] = p;
		v = ctx->nsrcpos;
	}
	if (snap_u64map_put(&ctx->srcmap, loc->sym, v) < 0)
		return -ENOMEM;
	ctx->noted[w] |= (uint64_t)1 << loc->sym % 64;
	return 0;
}

/* The end arg sampled_ns = ns (docs/sampling.md "Self time of a sampled trace"). */
static void sampled_arg(const struct snap_cstack_ctx *ctx, uint64_t ns, struct snap_arg *a)
{
	*a = snap_arg_int(ctx->n.sampled_ns, ns > INT64_MAX ? INT64_MAX : (int64_t)ns);
}

/* The args magic-trace gives every begin, in its order: address, [line, col,]
 * symbol, [file] (the source position where ctx->srcloc knows it), appended at
 * a[*na]. */
static void function_args(const struct snap_cstack_ctx *ctx, const struct snap_cstack_op *op,
			  struct snap_arg *a, size_t *na)
{
	uint64_t v = 0;

	a[(*na)++] = snap_arg_ptr(ctx->n.address, op->ip);
	if (ctx->srcloc && op->ip)
		snap_u64map_get(&ctx->srcmap, op->sym, &v);
	if (v) {
		const struct snap_srcpos *p = &ctx->srcpos[v - 1];

		a[(*na)++] = snap_arg_int(ctx->n.line, p->line);
		a[(*na)++] = snap_arg_int(ctx->n.col, p->col);
	}
	a[(*na)++] = snap_arg_str(ctx->n.symbol, op->sym);
	if (v)
		a[(*na)++] = snap_arg_str(ctx->n.file, ctx->srcpos[v - 1].file);
}

/* cs->described's entry sym -> ip into its cache. */
static inline void dcache_note(struct snap_cstack *cs, uint32_t sym, uint64_t ip)
{
	cs->dcache[sym % SNAP_CSTACK_DCACHE].key = (uint64_t)sym + 1;
	cs->dcache[sym % SNAP_CSTACK_DCACHE].ip = ip;
}

/* Whether the thread described sym at ip: cs->described's entry, from its
 * cache when there (entries are only ever added, and all dropped at once:
 * dcache_clear). */
static inline int described_at(struct snap_cstack *cs, uint32_t sym, uint64_t ip)
{
	uint64_t dip;

	if (cs->dcache[sym % SNAP_CSTACK_DCACHE].key == (uint64_t)sym + 1)
		return cs->dcache[sym % SNAP_CSTACK_DCACHE].ip == ip;
	if (!snap_u64map_get(&cs->described, sym, &dip))
		return 0;
	dcache_note(cs, sym, dip);
	return dip == ip;
}

/* Empties cs->described and its cache. */
static void dcache_clear(struct snap_cstack *cs)
{
	snap_u64map_fini(&cs->described);
	memset(cs->dcache, 0, sizeof(cs->dcache));
}

/* ctx->args_once (docs/behaviour.md §6.3 "Slices"): a begin of a function
 * the thread has described already gets only the args that differ from its
 * description: address when not the described one, symbol when the slice
 * is not named by it (MAGIC_TRACE_DEBUG). Returns 1 (those args appended at
 * a[*na]), 0 for the thread's first begin of the function (its address is
 * noted; the caller writes function_args) or -ENOMEM. */
static int described(struct snap_cstack *cs, const struct snap_cstack_op *op, uint32_t name,
		     struct snap_arg *a, size_t *na)
{
	uint64_t ip;

	if (!snap_u64map_get(&cs->described, op->sym, &ip)) {
		if (snap_u64map_put(&cs->described, op->sym, op->ip) < 0)
			return -ENOMEM;
		dcache_note(cs, op->sym, op->ip);
		return 0;
	}
	if (ip != op->ip)
		a[(*na)++] = snap_arg_ptr(cs->ctx->n.address, op->ip);
	if (name != op->sym)
		a[(*na)++] = snap_arg_str(cs->ctx->n.symbol, op->sym);
	return 1;
}

static int write_op_args(struct snap_cstack *cs, const struct snap_cstack_op *op, uint64_t t)
{
	struct snap_cstack_ctx *ctx = cs->ctx;
	struct snap_timeline *tl = ctx->tl;
	struct snap_arg a[7];
	uint32_t name = op->sym;
	size_t na = 0;
	int err;

	switch (op->type) {
	case OP_CALL:
		if (op->inferred && ctx->debug_names && (err = debug_name(ctx, op->sym, &name)) < 0)
			return err;
		err = ctx->args_once ? described(cs, op, name, a, &na) : 0;
		if (err < 0)
			return err;
		if (!err)
			function_args(ctx, op, a, &na);
		if (op->inferred || op->cut_start)
			a[na++] = snap_arg_str(ctx->n.inferred, ctx->n.true_);
		if (op->inlined)
			a[na++] = snap_arg_int(ctx->n.inlined, 1);
		return tl->ops->begin(tl, cs->pid, cs->tid, t, name, a, na);
	case OP_RET:
		if (op->inferred && ctx->debug_names && (err = debug_name(ctx, op->sym, &name)) < 0)
			return err;
		if (op->sampled) {
			sampled_arg(ctx, op->sampled, &a[0]);
			return snap_timeline_end_args(tl, cs->pid, cs->tid, t, name, a, 1);
		}
		return tl->ops->end(tl, cs->pid, cs->tid, t, name);
	case OP_RETUNK:
	default:
		return tl->ops->complete(tl, cs->pid, cs->tid, op->t, op->t2, ctx->n.unknown, NULL,
					 0);
	}
}

/* The args of a begin or end that has none (never read: nargs is 0). */
static const struct snap_arg no_args[1];

/* Writes op at t. Inline for the commonest ops, which carry no args: a
 * return, and (ctx->args_once) a call of a function the thread described
 * at the same address; write_op_args writes the rest, in the same way. */
static inline __attribute__((always_inline)) int
write_op(struct snap_cstack *cs, const struct snap_cstack_op *op, uint64_t t)
{
	const struct snap_cstack_ctx *ctx = cs->ctx;
	struct snap_timeline *tl = ctx->tl;

	if (op->type == OP_RET && !op->sampled && !(op->inferred && ctx->debug_names))
		return tl->ops->end(tl, cs->pid, cs->tid, t, op->sym);
	if (op->type == OP_CALL && ctx->args_once && !op->inferred && !op->cut_start &&
	    !op->inlined && described_at(cs, op->sym, op->ip))
		return tl->ops->begin(tl, cs->pid, cs->tid, t, op->sym, no_args, 0);
	return write_op_args(cs, op, t);
}

static int defer(struct snap_cstack *cs, const struct snap_cstack_op *op)
{
	if (snap_vec_reserve(&cs->defer, &cs->capdefer, cs->ndefer + 1, sizeof(*op)) < 0)
		return -ENOMEM;
	cs->defer[cs->ndefer++] = *op;
	return 0;
}

/* emit(op, t) of docs/behaviour.md §4.3, §4.4. Inferred begins and [unknown]
 * spans are deferred with the current stack's cut sequence; other ops are written now unless a
 * deferred op may still have to precede them (t <= the latest cut time). op is copied only
 * where it changes (deferred ops): the common op, written now, is not. */
static inline __attribute__((always_inline)) int emit(struct snap_cstack *cs,
						      const struct snap_cstack_op *op, uint64_t t)
{
	struct snap_cstack_op d;
	uint64_t k1;

	if (op->type == OP_RETUNK) {
		d = *op;
		d.t2 = t; /* k2 was taken when the return happened */
		if (cs->draining)
			return write_op(cs, &d, d.t);
		/* A zero-length [unknown] (a return past the bottom right where
		 * the stack started, as at the very start of a trace) is ordered
		 * as magic-trace orders it: by when its batch is written, so it
		 * comes before the callers inferred at the same timestamp. It
		 * cannot overlap them. A longer one stays inside its callers. */
		if (d.t == t)
			d.k2 = ~++cs->ninferred;
		return defer(cs, &d);
	}
	if (cs->draining)
		return write_op(cs, op, t);
	if (op->type == OP_CALL && op->inferred) {
		d = *op;
		d.t = t;
		d.k1 = cur(cs)->cut_seq;
		d.k2 = ~++cs->ninferred;
		return defer(cs, &d);
	}
	k1 = op->k1 ? op->k1 : ++cs->seq;
	if (t <= cs->cut_time) {
		d = *op;
		d.t = t;
		d.k1 = k1;
		d.k2 = 0;
		return defer(cs, &d);
	}
	return write_op(cs, op, t);
}

/* The four flag bytes of an op (type, inferred, inlined, cut_start) as one
 * word: OP_PLAIN(OP_RET) is a return of a frame not inferred, OP_PLAIN(OP_CALL)
 * a begin neither inferred, inlined nor cut. */
_Static_assert(offsetof(struct snap_cstack_op, cut_start) ==
		       offsetof(struct snap_cstack_op, type) + 3,
	       "an op's flag bytes side by side");
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define OP_PLAIN(type) ((uint32_t)(type))
#else
#define OP_PLAIN(type) ((uint32_t)(type) << 24)
#endif
static inline uint32_t op_word(const struct snap_cstack_op *op)
{
	uint32_t w;

	memcpy(&w, &op->type, sizeof(w));
	return w;
}

/* A plain return or begin (OP_PLAIN): emit would hand it to write_op as it is
 * when flush_direct holds (every queued op has its k1: add_commit). */
static inline int op_plain(const struct snap_cstack_op *op)
{
	uint32_t w = op_word(op);

	return w == OP_PLAIN(OP_RET) || w == OP_PLAIN(OP_CALL);
}

/* Whether flush may write plain ops at once: nothing can be deferred but
 * inferred begins and [unknown] spans (not draining, the batch after the
 * latest cut). */
static inline int flush_direct(const struct snap_cstack *cs)
{
	return !cs->draining && cs->pending_time > cs->cut_time;
}

/* flush(to) of docs/behaviour.md §4.3: spreads the pending calls evenly over
 * [pending_time, to). When nothing can be deferred but inferred begins and
 * [unknown] spans (flush_direct), a plain op (op_plain) is written at once by
 * write_op, as emit would write it, and anything else goes through emit. */
static int flush(struct snap_cstack *cs, uint64_t to)
{
	uint64_t total, off = 0, share;
	uint32_t n = cs->npend_calls, k = 0;
	/* (no queue yet: pend is NULL, and NULL + 0 is undefined) */
	struct snap_cstack_op *op = cs->pend, *end = op ? op + cs->npend : op;
	int err = 0, e;

	if (to < cs->pending_time)
		to = cs->pending_time;
	total = to - cs->pending_time;
	if (flush_direct(cs)) {
		uint64_t t0 = cs->pending_time;

		for (; op < end; op++) {
			uint64_t t = t0 + off;

			if (op->type == OP_CALL) {
				k++;
				share = k == n ? total - off : (total - off) / (n - k + 1);
				off += share;
			}
			e = op_plain(op) ? write_op(cs, op, t) : emit(cs, op, t);
			if (e < 0 && !err)
				err = e;
		}
	} else {
		for (; op < end; op++) {
			uint64_t t = cs->pending_time + off;

			if (op->type == OP_CALL) {
				k++;
				/* the last call takes the rest (no division: most batches hold one) */
				share = k == n ? total - off : (total - off) / (n - k + 1);
				off += share;
			}
			e = emit(cs, op, t);
			if (e < 0 && !err)
				err = e;
		}
	}
	cs->npend = 0;
	cs->npend_calls = 0;
	cs->pending_time = to;
	return err;
}

/* flush(to) of a batch of one op: a plain op at pending_time, when nothing
 * can be deferred (as flush's own tests), is written by write_op, the queue
 * emptied first (its slot is not reused before the next add_slot); anything
 * else: flush. */
static int flush_one(struct snap_cstack *cs, uint64_t to)
{
	const struct snap_cstack_op *op = cs->pend;
	uint64_t t = cs->pending_time;

	if (!flush_direct(cs) || !op_plain(op))
		return flush(cs, to);
	cs->npend = 0;
	cs->npend_calls = 0;
	cs->pending_time = to < t ? t : to;
	return write_op(cs, op, t);
}

/* A flush at a new time (add_slot): a batch of one op by flush_one. */
static inline int flush_batch(struct snap_cstack *cs, uint64_t t)
{
	return cs->npend == 1 ? flush_one(cs, t) : flush(cs, t);
}

/* pend_reserve and frame_reserve when the array is full. Not inline, so
 * that the branch functions do not carry the growth code. */
__attribute__((noinline)) static int grow(void *pptr, size_t *cap, size_t need, size_t elem)
{
	return snap_vec_reserve(pptr, cap, need, elem) < 0 ? -ENOMEM : 0;
}

static inline int pend_reserve(struct snap_cstack *cs)
{
	if (cs->npend + 1 <= cs->cappend)
		return 0;
	return grow(&cs->pend, &cs->cappend, cs->npend + 1, sizeof(*cs->pend));
}

/* add(op, t) of docs/behaviour.md §4.3, in two steps so that the op is
 * built in its queue slot, not copied there (every call and return comes
 * here): add_slot flushes the batch if t starts a new one and returns the
 * slot (the caller has called pend_reserve, so this cannot fail to queue the
 * op; *err gets a write error of the flush, if any); add_commit queues what
 * the caller wrote there. Inline. */
static inline struct snap_cstack_op *add_slot(struct snap_cstack *cs, uint64_t t, int *err)
{
	*err = 0;
	if (t != cs->pending_time || cs->npend >= SNAP_CSTACK_MAX_PENDING)
		*err = flush_batch(cs, t);
	return &cs->pend[cs->npend];
}

static inline void add_commit(struct snap_cstack *cs, struct snap_cstack_op *op)
{
	if (!op->k1)
		op->k1 = ++cs->seq;
	cs->npend++;
	if (op->type == OP_CALL)
		cs->npend_calls++;
}

/* ---- primitive operations (docs/behaviour.md §4.5) ------------------------------------------ */

static uint32_t symof(const struct snap_cstack *cs, uint32_t sym)
{
	return sym ? sym : cs->ctx->n.unknown;
}

/* Makes room for one frame; returns 1 if the depth cap says drop it. */
static inline int frame_reserve(struct snap_cstack *cs)
{
	struct snap_cstack_stk *s = cur(cs);

	if (s->overflow || cs->total + s->unk >= cs->ctx->max_depth) {
		cs->ctx->stats.depth_capped++;
		return 1;
	}
	if (s->n + 1 <= s->cap)
		return 0;
	return grow(&s->f, &s->cap, s->n + 1, sizeof(*s->f));
}

static void frame_push(struct snap_cstack *cs, uint64_t ip, uint32_t sym)
{
	struct snap_cstack_stk *s = cur(cs);

	s->f[s->n].ip = ip;
	s->f[s->n].sym = sym;
	s->f[s->n].dup = 0;
	s->f[s->n].inf = 0;
	s->f[s->n].anchored = 0;
	s->f[s->n].sampled = 0;
	s->n++;
	cs->total++;
}

/* call(): the frame and its begin queued at t. Always inline: call() is the
 * copy for every caller but the call branch, which has its own (call_branch). */
static inline __attribute__((always_inline)) int call_in(struct snap_cstack *cs, uint64_t ip,
							 uint32_t sym, uint64_t t)
{
	struct snap_cstack_stk *s;
	struct snap_cstack_op *op;
	int err = frame_reserve(cs);

	if (err) {
		if (err > 0)
			cur(cs)->overflow++;
		return err < 0 ? err : 0;
	}
	if (pend_reserve(cs) < 0)
		return -ENOMEM;
	sym = symof(cs, sym);
	op = add_slot(cs, t, &err);
	*op = (struct snap_cstack_op){.type = OP_CALL, .ip = ip, .sym = sym};
	add_commit(cs, op);
	frame_push(cs, ip, sym);
	/* starts with the segment: once closed, it encloses what came before */
	s = cur(cs);
	s->f[s->n - 1].anchored = t <= s->create_time;
	return err;
}

static int call(struct snap_cstack *cs, uint64_t ip, uint32_t sym, uint64_t t)
{
	return call_in(cs, ip, sym, t);
}

/* ret_plain(): pops the top frame and queues its end at t. Always inline:
 * ret_plain() is the copy for every caller but the return branch
 * (ret_branch). */
static inline __attribute__((always_inline)) int ret_plain_in(struct snap_cstack *cs, uint64_t t)
{
	struct snap_cstack_stk *s = cur(cs);
	struct snap_cstack_op *op;
	int err;

	if (s->overflow) {
		s->overflow--;
		return 0;
	}
	if (pend_reserve(cs) < 0)
		return -ENOMEM;
	if (s->n) {
		if (s->f[s->n - 1].dup) { /* an OCaml try-block copy: never written */
			s->n--;
			cs->total--;
			return 0;
		}
		op = add_slot(cs, t, &err);
		*op = (struct snap_cstack_op){.type = OP_RET,
					      .sym = s->f[s->n - 1].sym,
					      .inferred = s->f[s->n - 1].inf,
					      .sampled = s->f[s->n - 1].sampled};
		add_commit(cs, op);
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
	op = add_slot(cs, t, &err);
	*op = (struct snap_cstack_op){.type = OP_RETUNK};
	op->t = s->create_time;
	op->k1 = s->cut_seq; /* it belongs to this stack, wherever we are when it is emitted */
	/* Ordered by discovery with the inferred callers found after it (they are
	 * outer, so they come first), not by when the pending batch is flushed. */
	op->k2 = ~++cs->ninferred;
	add_commit(cs, op);
	return err;
}

static int ret_plain(struct snap_cstack *cs, uint64_t t)
{
	return ret_plain_in(cs, t);
}

static int is_one_of(uint32_t sym, const uint32_t ids[3])
{
	return sym == ids[0] || sym == ids[1] || sym == ids[2];
}

/*
 * Go's goroutine switch. The scheduler runs on the g0 stack: a goroutine that
 * blocks calls gopark -> mcall (switches to g0) -> park_m -> schedule ->
 * execute -> gogo, and gogo jumps into the next goroutine without returning.
 * When the top frame popped for such a jump is gogo, the scheduler frames
 * are popped too: everything up to and including the innermost runtime.mcall
 * (or runtime.morestack, the other way onto g0), and then its caller, which
 * the symbol check re-pushes if execution really continues there. Without
 * either frame on the stack the thread's stacks are ended at t (the jump
 * leaves code whose callers we cannot know). Returns 0 or a negative error.
 */
static int go_switch(struct snap_cstack *cs, uint64_t t)
{
	const struct snap_cstack_names *n = &cs->ctx->n;
	struct snap_cstack_stk *s = cur(cs);
	size_t i = s->n;
	int err;

	while (i && !is_one_of(s->f[i - 1].sym, n->go_mark))
		i--;
	if (!i)
		return snap_cstack_end_thread(cs, t);
	/* pop frames [i - 1, n) (the mark frame included), then its caller */
	while (s->n >= i)
		if ((err = ret_plain(cs, t)) < 0)
			return err;
	return s->n ? ret_plain(cs, t) : 0;
}

/* check_current_symbol when the top of the stack is not sym's (or there is none). */
static int symbol_changed(struct snap_cstack *cs, const struct snap_loc *dst, uint32_t sym,
			  uint64_t t)
{
	struct snap_cstack_stk *s = cur(cs);
	struct snap_cstack_op op;
	int err, e;

	if (s->n) {
		uint32_t popped = s->f[s->n - 1].sym;

		err = ret_plain(cs, t);
		if (err >= 0 && is_one_of(popped, cs->ctx->n.gogo))
			err = go_switch(cs, t);
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
	op = (struct snap_cstack_op){.type = OP_CALL, .ip = dst->ip, .sym = sym, .inferred = 1};
	err = emit(cs, &op, s->create_time);
	frame_push(cs, dst->ip, sym);
	s->f[s->n - 1].inf = 1;
	s->f[s->n - 1].anchored = 1;
	return err;
}

/* "The pc's symbol must be the top of stack" (tail calls, PLT jumps, returns
 * into callers we never saw). Inline: after most jumps and returns it is. */
static inline int check_current_symbol(struct snap_cstack *cs, const struct snap_loc *dst,
				       uint64_t t)
{
	const struct snap_cstack_stk *s = cur(cs);
	uint32_t sym = symof(cs, dst->sym);

	if (s->overflow)
		return 0; /* the real top was dropped by the cap: nothing to compare */
	if (s->n && s->f[s->n - 1].sym == sym)
		return 0;
	return symbol_changed(cs, dst, sym, t);
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
	/* docs/behaviour.md §8.6: a nested stack never starts before it was pushed, whatever the
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
	struct snap_arg a[2] = {{0}};
	uint32_t name;
	size_t na;
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
			if (s->f[s->n].dup)
				continue;
			name = s->f[s->n].sym;
			if (s->f[s->n].inf && cs->ctx->debug_names &&
			    (e = debug_name(cs->ctx, name, &name)) < 0) {
				err = err ? err : e;
				continue;
			}
			na = 0;
			if (!cs->ends_known)
				a[na++] = snap_arg_str(cs->ctx->n.inferred_end, cs->ctx->n.true_);
			if (s->f[s->n].sampled)
				sampled_arg(cs->ctx, s->f[s->n].sampled, &a[na++]);
			e = snap_timeline_end_args(tl, cs->pid, cs->tid, t, name, na ? a : NULL,
						   na);
			if (e < 0 && !err)
				err = e;
		}
		s->overflow = 0;
		if (cs->nstk == 1)
			break;
		stk_close(cs);
	}
	cs->total = 0;
	cs->draining = 0;
	return err;
}

int snap_cstack_end_thread(struct snap_cstack *cs, uint64_t t)
{
	int err, e;

	/* docs/behaviour.md §8.7: magic-trace flushes the last batch with zero shares and moves
	 * pending_time back; we flush up to t and keep every time monotonic. */
	if (t < cs->pending_time)
		t = cs->pending_time;
	/* an event moved by the +1 ns rule (docs/behaviour.md §4.2) may have opened a frame */
	if (t < cs->last_time)
		t = cs->last_time;
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
	cs->eh_last_ip = 0; /* the code after the gap is unknown */
	if (!snap_u64map_get(&ctx->errnames, msg, &id)) {
		char buf[512];
		int64_t r;

		snprintf(buf, sizeof(buf), SNAP_NAME_DECODE_ERROR ": %.480s]",
			 snap_strtab_get(ctx->st, msg));
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

/* ---- OCaml exceptions ---------------------------------------------------- */

/*
 * An OCaml exception jumps from the raise straight to the handler of the
 * innermost try block, skipping any number of frames with no return branch.
 * Two ways to keep the stack right, as magic-trace does:
 *
 * With the executable's exception notes (ctx->eh): the addresses of every
 * pushtrap (try block entered), poptrap (left normally) and entertrap (the
 * handler's entry). Between two branches the code runs straight from the last
 * target to the next source, so every push/poptrap address in that range
 * (in address order) was executed. A pushtrap starts a new stack holding a
 * silent copy of the current function (the old stack is kept underneath, like
 * a syscall's); a poptrap with only that copy left pops it and resumes the old
 * stack (any other depth means PT lost data: counted, ignored). A return or
 * jump landing on an entertrap closes everything the raise skipped: the whole
 * try-block stack, then resumes the old one, with no symbol check after it.
 *
 * Without notes, the runtime's functions tell: each caml_next_frame_descriptor
 * or caml_stash_backtrace seen returning is one more frame the raise unwinds;
 * returning from caml_raise_exn pops that many frames less one, from
 * caml_raise_exception that many plus two. (raise_notrace is not seen.)
 */

/* First index of v with v[i] >= a. */
static size_t eh_lower(const uint64_t *v, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int eh_has(const uint64_t *v, size_t n, uint64_t a)
{
	size_t i = eh_lower(v, n, a);

	return i < n && v[i] == a;
}

static int eh_pushtrap(struct snap_cstack *cs, uint64_t t)
{
	struct snap_cstack_stk *s = cur(cs);
	struct snap_frame top;
	int err;

	if (!s->n) {
		cs->ctx->stats.unexpected++; /* magic-trace: fatal */
		return 0;
	}
	top = s->f[s->n - 1];
	if (cs->nstk >= SNAP_CSTACK_MAX_NEST || cs->total >= cs->ctx->max_depth) {
		cs->ctx->stats.depth_capped++;
		return 0;
	}
	if ((err = flush(cs, t)) < 0 || (err = stk_open(cs)) < 0)
		return err;
	cut(cs, t);
	if ((err = frame_reserve(cs)) != 0)
		return err < 0 ? err : 0;
	frame_push(cs, top.ip, top.sym);
	cur(cs)->f[0].dup = 1;
	return 0;
}

/* Leaves the current (try-block) stack, which must be empty: resumes the one
 * underneath, or starts an empty one at t. */
static int eh_resume(struct snap_cstack *cs, uint64_t t)
{
	/* as for any new stack: nothing pending is spread past the switch */
	int err = flush(cs, t);

	if (cs->nstk > 1)
		stk_close(cs);
	else
		cut(cs, t);
	return err;
}

static int eh_poptrap(struct snap_cstack *cs, uint64_t t)
{
	struct snap_cstack_stk *s = cur(cs);

	if (s->n != 1 || s->overflow || !s->f[0].dup) {
		cs->ctx->stats.trap_mismatch++; /* not the try block's stack: PT lost data */
		return 0;
	}
	s->n = 0;
	cs->total--;
	return eh_resume(cs, t);
}

/* Runs the push/poptraps between the last branch target and this source. */
static int eh_track(struct snap_cstack *cs, const struct snap_event *ev, uint64_t t)
{
	const struct snap_ocaml_eh *eh = cs->ctx->eh;
	uint64_t from = cs->eh_last_ip, to = ev->src.ip;
	size_t i, j;
	int err = 0;

	cs->eh_last_ip = ev->dst.ip;
	/* straight-line code between two branches is short; a wider range is
	 * a trace gap or a jump between address spaces, not executed code */
	if (!from || !to || from > to || to - from > SNAP_CSTACK_EH_MAX_RANGE)
		return 0;
	i = eh_lower(eh->push, eh->npush, from);
	j = eh_lower(eh->pop, eh->npop, from);
	while (err >= 0) {
		int push_ok = i < eh->npush && eh->push[i] <= to;
		int pop_ok = j < eh->npop && eh->pop[j] <= to;

		if (!push_ok && !pop_ok)
			break;
		if (push_ok && (!pop_ok || eh->push[i] <= eh->pop[j])) {
			i++;
			err = eh_pushtrap(cs, t);
		} else {
			j++;
			err = eh_poptrap(cs, t);
		}
	}
	return err;
}

/* A return or jump to a handler: closes the try-block stack. Returns 1 if
 * dst is a handler (handled), 0 if not, <0 on error. */
static inline int eh_entertrap(struct snap_cstack *cs, const struct snap_loc *dst, uint64_t t)
{
	const struct snap_ocaml_eh *eh = cs->ctx->eh;
	int err;

	if (!eh || !eh_has(eh->enter, eh->nenter, dst->ip))
		return 0;
	if ((err = clear_callstack(cs, t)) < 0 || (err = eh_resume(cs, t)) < 0)
		return err;
	return 1;
}

/* The raise jumps past extra frames: pops them now (the raise function
 * first), then the return pops one more as usual. */
static int eh_raise(struct snap_cstack *cs, uint32_t extra, uint64_t t)
{
	int err;

	cs->eh_unwind = 0;
	while (extra-- && cur(cs)->n)
		if ((err = ret_plain(cs, t)) < 0)
			return err;
	return 0;
}

/* Without notes: the raise heuristic, before a return pops the top frame
 * (inline: every return comes here, and almost none is OCaml's raise). */
static inline int eh_heuristic(struct snap_cstack *cs, uint64_t t)
{
	const struct snap_cstack_ctx *ctx = cs->ctx;
	struct snap_cstack_stk *s = cur(cs);
	uint32_t top;

	if (ctx->eh || !s->n || s->overflow)
		return 0;
	top = s->f[s->n - 1].sym;
	if (top - ctx->caml_lo > ctx->caml_hi - ctx->caml_lo)
		return 0; /* none of the four (one test: they are interned together) */
	if (top == ctx->caml_unwind[0] || top == ctx->caml_unwind[1]) {
		cs->eh_unwind++;
		return 0;
	}
	if (top == ctx->caml_raise_exn)
		return eh_raise(cs, cs->eh_unwind ? cs->eh_unwind - 1 : 0, t);
	if (top == ctx->caml_raise_exception)
		return eh_raise(cs, cs->eh_unwind + 2, t);
	return 0;
}

/* ---- dispatch (docs/behaviour.md §4.6) ------------------------------------------------------ */

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
	if ((err = eh_heuristic(cs, t)) < 0)
		return err;
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
		/* magic-trace: fatal "BUG". Here (docs/behaviour.md §8.2): count, treat as a plain "tr end". */
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
		stk_close(cs);
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
			cs->ctx->stats
				.unexpected++; /* docs/behaviour.md §8.2: as a plain "tr strt" */
		return tr_start(cs, ev, t);
	}
	if (ev->br_state == SNAP_BR_END)
		return tr_end(cs, ev, t);
	switch (ev->br_kind) {
	case SNAP_BR_CALL:
		return call(cs, ev->dst.ip, ev->dst.sym, t);
	case SNAP_BR_RETURN:
		if ((err = eh_heuristic(cs, t)) < 0 || (err = ret_plain(cs, t)) < 0 ||
		    (err = eh_entertrap(cs, &ev->dst, t)) != 0)
			return err < 0 ? err : 0;
		return check_current_symbol(cs, &ev->dst, t);
	case SNAP_BR_JUMP:
	case SNAP_BR_INT:
		if ((err = eh_entertrap(cs, &ev->dst, t)) != 0)
			return err < 0 ? err : 0;
		return check_current_symbol(cs, &ev->dst, t);
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

/* The end of every branch (snap_cstack_branch): the segment is ended if too
 * many ops are deferred. Inline: each of the branch functions below ends
 * with it, so that snap_cstack_branch reaches them by a jump. */
static inline int branch_done(struct snap_cstack *cs, int err, uint64_t t)
{
	if (err >= 0 && cs->ndefer >= cs->ctx->max_defer)
		err = snap_cstack_trim(cs, t);
	return err;
}

/* A call branch (docs/behaviour.md §4.6), without OCaml's exception notes:
 * call_in and branch_done. */
__attribute__((noinline)) static int call_branch_slow(struct snap_cstack *cs,
						      const struct snap_event *ev, uint64_t t)
{
	return branch_done(cs, call_in(cs, ev->dst.ip, ev->dst.sym, t), t);
}

/* Whether the pending queue takes an op with no growth (pend_reserve) and no
 * flush for being full (add_slot), and branch_done has nothing to trim before
 * it (no op is deferred on the way unless the op's time flushes the batch). */
static inline int pend_room(const struct snap_cstack *cs)
{
	return cs->npend < cs->cappend && cs->npend < SNAP_CSTACK_MAX_PENDING &&
	       cs->ndefer < cs->ctx->max_defer;
}

/* call_in's steps after frame_reserve, pend_reserve and add_slot when none of
 * them had anything to do: the op and the frame. */
static inline __attribute__((always_inline)) void
call_put(struct snap_cstack *cs, struct snap_cstack_stk *s, const struct snap_event *ev, uint64_t t)
{
	uint32_t sym = symof(cs, ev->dst.sym);
	struct snap_cstack_op *op = &cs->pend[cs->npend++];
	struct snap_frame *f;

	*op = (struct snap_cstack_op){
		.type = OP_CALL, .ip = ev->dst.ip, .sym = sym, .k1 = ++cs->seq};
	cs->npend_calls++;
	f = &s->f[s->n++];
	f->ip = ev->dst.ip;
	f->sym = sym;
	f->dup = 0;
	f->inf = 0;
	f->sampled = 0;
	f->anchored = t <= s->create_time;
	cs->total++;
}

/* call_branch at a new time: add_slot's flush, then as call_in and
 * branch_done go on. */
__attribute__((noinline)) static int call_flush(struct snap_cstack *cs, const struct snap_event *ev,
						uint64_t t)
{
	int err = flush_batch(cs, t);

	call_put(cs, cur(cs), ev, t);
	return branch_done(cs, err, t);
}

/* A call branch: call_branch_slow, whose steps do only this when the op goes in
 * the queue's room and the frame fits under the cap in the room there is (a
 * leaf function, then, but for the flush at a new time: call_flush). */
__attribute__((noinline)) static int call_branch(struct snap_cstack *cs,
						 const struct snap_event *ev, uint64_t t)
{
	struct snap_cstack_stk *s = cur(cs);

	if (!pend_room(cs) || s->overflow || cs->total + s->unk >= cs->ctx->max_depth ||
	    s->n >= s->cap)
		return call_branch_slow(cs, ev, t);
	if (t != cs->pending_time)
		return call_flush(cs, ev, t);
	call_put(cs, s, ev, t);
	return 0;
}

/* A return branch, without OCaml's exception notes. */
__attribute__((noinline)) static int ret_branch_slow(struct snap_cstack *cs,
						     const struct snap_event *ev, uint64_t t)
{
	int err;

	if ((err = eh_heuristic(cs, t)) < 0 || (err = ret_plain_in(cs, t)) < 0)
		return err;
	return branch_done(cs, check_current_symbol(cs, &ev->dst, t), t);
}

/* The end of ret_branch when the return lands outside the new top frame's
 * function. */
__attribute__((noinline)) static int
ret_changed(struct snap_cstack *cs, const struct snap_event *ev, uint32_t sym, uint64_t t)
{
	return branch_done(cs, symbol_changed(cs, &ev->dst, sym, t), t);
}

/* ret_plain_in's steps after pend_reserve and add_slot when the top frame f
 * is a plain one: its end and its pop. */
static inline __attribute__((always_inline)) void
ret_put(struct snap_cstack *cs, struct snap_cstack_stk *s, const struct snap_frame *f)
{
	struct snap_cstack_op *op = &cs->pend[cs->npend++];

	*op = (struct snap_cstack_op){.type = OP_RET,
				      .sym = f->sym,
				      .inferred = f->inf,
				      .sampled = f->sampled,
				      .k1 = ++cs->seq};
	s->unk += f->anchored;
	s->n--;
	cs->total--;
}

/* ret_branch at a new time: add_slot's flush, then as ret_plain_in and
 * ret_branch_slow go on (after a flush error: that error, nothing more). */
__attribute__((noinline)) static int ret_flush(struct snap_cstack *cs, const struct snap_event *ev,
					       uint64_t t)
{
	struct snap_cstack_stk *s = cur(cs);
	int err = flush_batch(cs, t);

	ret_put(cs, s, &s->f[s->n - 1]);
	if (err < 0)
		return err;
	return branch_done(cs, check_current_symbol(cs, &ev->dst, t), t);
}

/* A return branch: ret_branch_slow, whose steps do only this when the op goes
 * in the queue's room and the top frame is a plain one (not dropped by the
 * cap, no OCaml try-block copy, none of the names eh_heuristic looks for); at a
 * new time, ret_flush. */
__attribute__((noinline)) static int ret_branch(struct snap_cstack *cs, const struct snap_event *ev,
						uint64_t t)
{
	const struct snap_cstack_ctx *ctx = cs->ctx;
	struct snap_cstack_stk *s = cur(cs);
	const struct snap_frame *f;
	uint32_t sym;

	if (!pend_room(cs) || s->overflow || !s->n)
		return ret_branch_slow(cs, ev, t);
	f = &s->f[s->n - 1];
	if (f->dup || f->sym - ctx->caml_lo <= ctx->caml_hi - ctx->caml_lo)
		return ret_branch_slow(cs, ev, t);
	if (t != cs->pending_time)
		return ret_flush(cs, ev, t);
	ret_put(cs, s, f);
	/* check_current_symbol */
	sym = symof(cs, ev->dst.sym);
	if (s->n && s->f[s->n - 1].sym == sym)
		return 0;
	return ret_changed(cs, ev, sym, t);
}

/* A jump (or a trap's return) to a function other than the top frame's, or
 * with too many ops deferred. */
__attribute__((noinline)) static int jump_branch(struct snap_cstack *cs,
						 const struct snap_event *ev, uint64_t t)
{
	return branch_done(cs, check_current_symbol(cs, &ev->dst, t), t);
}

/* Everything but the branches the three above take: OCaml's exception
 * notes, trace starts and ends, kernel entries and exits. */
__attribute__((noinline)) static int branch_slow(struct snap_cstack *cs,
						 const struct snap_event *ev, uint64_t t)
{
	int err = cs->ctx->eh ? eh_track(cs, ev, t) : 0;

	return branch_done(cs, err < 0 ? err : branch(cs, ev, t), t);
}

/* The commonest branches of user code, as branch() takes them: a call, a
 * return, a jump (docs/behaviour.md §4.6), without OCaml's exception notes
 * (whose test of every branch is eh_track), each in a function of its own
 * that ends with branch_done; a jump within the top frame's function, the
 * commonest, only tests that (check_current_symbol's first cases) and that
 * branch_done has nothing to do. So this keeps no stack frame. */
int snap_cstack_branch(struct snap_cstack *cs, const struct snap_event *ev, uint64_t t)
{
	const struct snap_cstack_stk *s;

	if (cs->ctx->eh || ev->br_state != SNAP_BR_NOSTATE)
		return branch_slow(cs, ev, t);
	switch (ev->br_kind) {
	case SNAP_BR_CALL:
		return call_branch(cs, ev, t);
	case SNAP_BR_RETURN:
		return ret_branch(cs, ev, t);
	case SNAP_BR_JUMP:
	case SNAP_BR_INT:
		s = cur(cs);
		if ((s->overflow || (s->n && s->f[s->n - 1].sym == symof(cs, ev->dst.sym))) &&
		    cs->ndefer < cs->ctx->max_defer)
			return 0;
		return jump_branch(cs, ev, t);
	default:
		return branch_slow(cs, ev, t);
	}
}

/* ---- sampdiff primitives ---------------------------------------------- */

int snap_cstack_flush_to(struct snap_cstack *cs, uint64_t t)
{
	return flush(cs, t);
}

void snap_cstack_discard_deferred(struct snap_cstack *cs)
{
	cs->ndefer = 0;
}

int snap_cstack_reopen(struct snap_cstack *cs, uint64_t t)
{
	int err = 0;

	if (t < cs->pending_time)
		t = cs->pending_time;
	dcache_clear(cs); /* empty again: its begins were dropped */
	/* Each stack is cut at t, then its frames are re-begun at t after the cut:
	 * callers inferred later for a stack sort before its frames (by the cut
	 * sequence) and after the frames of the stacks underneath it, so the
	 * track nests whatever is discovered next. */
	for (size_t i = 0; i < cs->nstk && err >= 0; i++) {
		struct snap_cstack_stk *s = &cs->stk[i];

		s->create_time = t;
		s->cut_seq = ++cs->seq;
		for (size_t j = 0; j < s->n && err >= 0; j++) {
			struct snap_cstack_op op = {.type = OP_CALL, .inferred = 1};

			if (s->f[j].dup)
				continue;
			op.ip = s->f[j].ip;
			op.sym = s->f[j].sym;
			op.t = t;
			op.k1 = ++cs->seq;
			s->f[j].inf = 1;
			s->f[j].sampled = 0; /* the slice written begins now */
			err = defer(cs, &op);
		}
	}
	if (t > cs->cut_time)
		cs->cut_time = t;
	cs->pending_time = t;
	if (cs->last_time < t)
		cs->last_time = t;
	return err;
}

int snap_cstack_push_now(struct snap_cstack *cs, uint64_t ip, uint32_t sym, uint64_t t,
			 int *dropped)
{
	struct snap_cstack_op op = {.type = OP_CALL, .ip = ip, .sym = symof(cs, sym)};
	int err = frame_reserve(cs);

	op.cut_start = (uint8_t)(cs->start_cut != 0);
	op.inlined = cs->inlined_push;
	if (dropped)
		*dropped = err == 1;
	if (err)
		return err < 0 ? err : 0;
	err = emit(cs, &op, t);
	frame_push(cs, op.ip, op.sym);
	return err;
}

int snap_cstack_push_inlined(struct snap_cstack *cs, uint64_t ip, uint32_t sym, uint64_t t,
			     int *dropped)
{
	int err;

	cs->inlined_push = 1;
	err = snap_cstack_push_now(cs, ip, sym, t, dropped);
	cs->inlined_push = 0;
	return err;
}

void snap_cstack_credit(struct snap_cstack *cs, uint64_t ns)
{
	struct snap_cstack_stk *s = cur(cs);

	if (s->n && !s->f[s->n - 1].dup)
		s->f[s->n - 1].sampled += ns;
}

int snap_cstack_pop_now(struct snap_cstack *cs, uint64_t t)
{
	struct snap_cstack_stk *s = cur(cs);
	struct snap_cstack_op op = {.type = OP_RET};

	if (!s->n)
		return 0;
	op.sym = s->f[s->n - 1].sym;
	op.inferred = s->f[s->n - 1].inf;
	op.sampled = s->f[s->n - 1].sampled;
	s->unk += s->f[s->n - 1].anchored;
	s->n--;
	cs->total--;
	if (s->f[s->n].dup)
		return 0; /* an OCaml try-block copy: never written */
	return emit(cs, &op, t);
}
