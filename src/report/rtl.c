// SPDX-License-Identifier: GPL-2.0
#include "report/rtl.h"

#include <stddef.h>
#include <string.h>

#include "model/names.h"

static struct snap_report_tl *rtl(struct snap_timeline *tl)
{
	return (struct snap_report_tl *)((char *)tl - offsetof(struct snap_report_tl, base));
}

static int r_thread(struct snap_timeline *tl, int32_t pid, int32_t tid, uint32_t proc_name,
		    uint32_t thread_name)
{
	(void)proc_name;
	return snap_report_thread_name(rtl(tl)->r, pid, tid, thread_name);
}

static int r_begin(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts, uint32_t name,
		   const struct snap_arg *args, size_t nargs)
{
	struct snap_report_tl *t = rtl(tl);
	uint32_t kind = SNAP_REPORT_BEGIN;

	for (size_t i = 0; i < nargs; i++)
		if (args[i].name == t->inferred)
			kind |= SNAP_REPORT_F_INFERRED;
		else if (args[i].name == t->inlined)
			kind |= SNAP_REPORT_F_INLINED;
	return snap_report_event(t->r, pid, tid, kind, ts, 0, name);
}

static int r_end(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts, uint32_t name)
{
	return snap_report_event(rtl(tl)->r, pid, tid, SNAP_REPORT_END, ts, 0, name);
}

static int r_end_args(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
		      uint32_t name, const struct snap_arg *args, size_t nargs)
{
	struct snap_report_tl *t = rtl(tl);
	uint32_t kind = SNAP_REPORT_END;
	uint64_t smp = 0;

	for (size_t i = 0; i < nargs; i++)
		if (args[i].name == t->inferred_end)
			kind |= SNAP_REPORT_F_CUT_END;
		else if (args[i].name == t->sampled && args[i].type == SNAP_ARG_INT &&
			 args[i].v.i > 0)
			smp = (uint64_t)args[i].v.i;
	if (smp)
		kind |= SNAP_REPORT_F_SAMPLED;
	return snap_report_event(t->r, pid, tid, kind, ts, smp, name);
}

static int r_complete(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
		      uint64_t end_ts, uint32_t name, const struct snap_arg *args, size_t nargs)
{
	uint32_t kind = SNAP_REPORT_COMPLETE;

	for (size_t i = 0; i < nargs; i++)
		if (args[i].name == rtl(tl)->inlined)
			kind |= SNAP_REPORT_F_INLINED;
	return snap_report_event(rtl(tl)->r, pid, tid, kind, ts, end_ts, name);
}

static int r_counter(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts, uint32_t name,
		     const struct snap_arg *args, size_t nargs)
{
	struct snap_report_tl *t = rtl(tl);

	(void)pid;
	(void)tid;
	(void)ts;
	if (name != t->sampling)
		return 0;
	for (size_t i = 0; i < nargs; i++)
		if (args[i].name == t->period_arg && args[i].type == SNAP_ARG_INT &&
		    args[i].v.i > 0)
			snap_report_sampled(t->r, (uint64_t)args[i].v.i);
		else if (args[i].name == t->inferred_end)
			t->r->end_marks = 1; /* the trace flags its cut ends */
	snap_report_sampled(t->r, 0);
	return 0;
}

static int r_finish(struct snap_timeline *tl)
{
	return rtl(tl)->r->err;
}

static const struct snap_timeline_ops report_tl_ops = {
	.thread = r_thread,
	.begin = r_begin,
	.end = r_end,
	.end_args = r_end_args,
	.complete = r_complete,
	.counter = r_counter,
	.finish = r_finish,
};

int snap_report_tl_init(struct snap_report_tl *t, struct snap_report *r)
{
	int err;

	memset(t, 0, sizeof(*t));
	t->base.ops = &report_tl_ops;
	t->r = r;
	if ((err = snap_strtab_intern_id(r->st, SNAP_ARG_INFERRED, &t->inferred)) < 0 ||
	    (err = snap_strtab_intern_id(r->st, SNAP_ARG_INFERRED_END, &t->inferred_end)) < 0 ||
	    (err = snap_strtab_intern_id(r->st, SNAP_NAME_SAMPLING, &t->sampling)) < 0 ||
	    (err = snap_strtab_intern_id(r->st, SNAP_ARG_PERIOD, &t->period_arg)) < 0 ||
	    (err = snap_strtab_intern_id(r->st, SNAP_ARG_INLINED, &t->inlined)) < 0 ||
	    (err = snap_strtab_intern_id(r->st, SNAP_ARG_SAMPLED, &t->sampled)) < 0)
		return err;
	return 0;
}
