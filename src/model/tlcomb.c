// SPDX-License-Identifier: GPL-2.0
/* Timeline combinators: the tee and the gate. See tlcomb.h. */
#include "model/tlcomb.h"

#include <stddef.h>

/* ---- tee ---- */

static struct snap_tee_tl *tee(struct snap_timeline *tl)
{
	return (struct snap_tee_tl *)((char *)tl - offsetof(struct snap_tee_tl, base));
}

static int first_err(int a, int b)
{
	return a < 0 ? a : b;
}

static int t_thread(struct snap_timeline *tl, int32_t pid, int32_t tid, uint32_t proc_name,
		    uint32_t thread_name)
{
	struct snap_tee_tl *t = tee(tl);
	int a = t->a->ops->thread(t->a, pid, tid, proc_name, thread_name);

	return first_err(a, t->b->ops->thread(t->b, pid, tid, proc_name, thread_name));
}

static int t_begin(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts, uint32_t name,
		   const struct snap_arg *args, size_t nargs)
{
	struct snap_tee_tl *t = tee(tl);
	int a = t->a->ops->begin(t->a, pid, tid, ts, name, args, nargs);

	return first_err(a, t->b->ops->begin(t->b, pid, tid, ts, name, args, nargs));
}

static int t_end(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts, uint32_t name)
{
	struct snap_tee_tl *t = tee(tl);
	int a = t->a->ops->end(t->a, pid, tid, ts, name);

	return first_err(a, t->b->ops->end(t->b, pid, tid, ts, name));
}

static int t_end_args(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
		      uint32_t name, const struct snap_arg *args, size_t nargs)
{
	struct snap_tee_tl *t = tee(tl);
	int a = snap_timeline_end_args(t->a, pid, tid, ts, name, args, nargs);

	return first_err(a, snap_timeline_end_args(t->b, pid, tid, ts, name, args, nargs));
}

static int t_complete(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
		      uint64_t end_ts, uint32_t name, const struct snap_arg *args, size_t nargs)
{
	struct snap_tee_tl *t = tee(tl);
	int a = t->a->ops->complete(t->a, pid, tid, ts, end_ts, name, args, nargs);

	return first_err(a, t->b->ops->complete(t->b, pid, tid, ts, end_ts, name, args, nargs));
}

static int t_counter(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts, uint32_t name,
		     const struct snap_arg *args, size_t nargs)
{
	struct snap_tee_tl *t = tee(tl);
	int a = t->a->ops->counter(t->a, pid, tid, ts, name, args, nargs);

	return first_err(a, t->b->ops->counter(t->b, pid, tid, ts, name, args, nargs));
}

static int t_finish(struct snap_timeline *tl)
{
	struct snap_tee_tl *t = tee(tl);
	int a = t->a->ops->finish(t->a);

	return first_err(a, t->b->ops->finish(t->b));
}

static const struct snap_timeline_ops tee_tl_ops = {
	.thread = t_thread,
	.begin = t_begin,
	.end = t_end,
	.end_args = t_end_args,
	.complete = t_complete,
	.counter = t_counter,
	.finish = t_finish,
};

void snap_tee_tl_init(struct snap_tee_tl *t, struct snap_timeline *a, struct snap_timeline *b)
{
	t->base.ops = &tee_tl_ops;
	t->a = a;
	t->b = b;
}

/* ---- gate ---- */

static struct snap_gate_tl *gate_of(struct snap_timeline *tl)
{
	return (struct snap_gate_tl *)tl;
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

void snap_gate_tl_init(struct snap_gate_tl *g, struct snap_timeline *out, int open)
{
	g->base.ops = &gate_ops;
	g->out = out;
	g->open = open;
}
