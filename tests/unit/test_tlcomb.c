// SPDX-License-Identifier: GPL-2.0
/* model/tlcomb: the tee and the gate, over recording timelines. */
#include <errno.h>

#include "mock_timeline.h"
#include "model/tlcomb.h"
#include "snap_test.h"

static const char ops_text[] = "T pid=1 tid=2 proc=p thread=t\n"
			       "B 10 tid=2 f\n"
			       "E 20 tid=2 f\n"
			       "X 30..40 tid=2 f\n"
			       "C 50 tid=2 f\n"
			       "B 60 tid=2 f\n"
			       "E 70 tid=2 f inferred_end_time=1\n";

/* One of each op on track (1, 2), names interned in st. Returns the first error. */
static int all_ops(struct snap_timeline *tl, struct snap_strtab *st)
{
	uint32_t p, t, f, k;
	struct snap_arg a;
	int err = 0, e;

	if (snap_strtab_intern_id(st, "p", &p) < 0 || snap_strtab_intern_id(st, "t", &t) < 0 ||
	    snap_strtab_intern_id(st, "f", &f) < 0 ||
	    snap_strtab_intern_id(st, "inferred_end_time", &k) < 0)
		return -ENOMEM;
	a.name = k;
	a.type = SNAP_ARG_INT;
	a.v.i = 1;
	if ((e = tl->ops->thread(tl, 1, 2, p, t)) < 0 && !err)
		err = e;
	if ((e = tl->ops->begin(tl, 1, 2, 10, f, NULL, 0)) < 0 && !err)
		err = e;
	if ((e = tl->ops->end(tl, 1, 2, 20, f)) < 0 && !err)
		err = e;
	if ((e = tl->ops->complete(tl, 1, 2, 30, 40, f, NULL, 0)) < 0 && !err)
		err = e;
	if ((e = tl->ops->counter(tl, 1, 2, 50, f, NULL, 0)) < 0 && !err)
		err = e;
	if ((e = tl->ops->begin(tl, 1, 2, 60, f, NULL, 0)) < 0 && !err)
		err = e;
	if ((e = snap_timeline_end_args(tl, 1, 2, 70, f, &a, 1)) < 0 && !err)
		err = e;
	return err;
}

/* Two recording timelines behind a tee; a shows end_args, b when b_end_args. */
struct tee_fx {
	struct snap_strtab st;
	struct mock_tl a, b;
	struct snap_tee_tl t;
};

static void tee_fx_init(struct tee_fx *x, int b_end_args)
{
	snap_strtab_init(&x->st);
	mock_init(&x->a, &x->st);
	mock_init(&x->b, &x->st);
	mock_show_end_args(&x->a);
	if (b_end_args)
		mock_show_end_args(&x->b);
	snap_tee_tl_init(&x->t, &x->a.base, &x->b.base);
}

static void tee_fx_fini(struct tee_fx *x)
{
	mock_fini(&x->a);
	mock_fini(&x->b);
	snap_strtab_fini(&x->st);
}

/* The tee gives both timelines every op, in order, end_args included where
 * the timeline has it; finish reaches both. */
static void tee_both(void)
{
	struct tee_fx x;

	tee_fx_init(&x, 1);
	CHECK_INT_EQ(0, all_ops(&x.t.base, &x.st));
	CHECK_INT_EQ(0, x.t.base.ops->finish(&x.t.base));
	CHECK_STR_EQ(ops_text, x.a.text);
	CHECK_STR_EQ(ops_text, x.b.text);
	CHECK_INT_EQ(1, x.a.finished);
	CHECK_INT_EQ(1, x.b.finished);
	tee_fx_fini(&x);
}

/* An error of either side is returned, and the other side still gets the op. */
static void tee_error(void)
{
	struct tee_fx x;

	tee_fx_init(&x, 0);
	x.a.fail_after = 2;
	CHECK_INT_EQ(-EIO, all_ops(&x.t.base, &x.st));
	CHECK(strstr(x.b.text, "E 70 tid=2 f\n") != NULL); /* b has no end_args: args dropped */
	CHECK(strstr(x.a.text, "X 30") == NULL);
	tee_fx_fini(&x);
}

/* A closed gate drops every op but thread (returning 0); an open one passes all. */
static void gate(void)
{
	struct snap_strtab st;
	struct mock_tl m;
	struct snap_gate_tl g;

	snap_strtab_init(&st);
	mock_init(&m, &st);
	mock_show_end_args(&m);
	snap_gate_tl_init(&g, &m.base, 0);
	CHECK_INT_EQ(0, all_ops(&g.base, &st));
	CHECK_STR_EQ("T pid=1 tid=2 proc=p thread=t\n", m.text);
	CHECK_INT_EQ(0, g.base.ops->finish(&g.base));
	CHECK_INT_EQ(1, m.finished);
	mock_fini(&m);
	mock_init(&m, &st);
	mock_show_end_args(&m);
	snap_gate_tl_init(&g, &m.base, 1);
	CHECK_INT_EQ(0, all_ops(&g.base, &st));
	CHECK_STR_EQ(ops_text, m.text);
	g.open = 0;
	CHECK_INT_EQ(0, g.base.ops->begin(&g.base, 1, 2, 80, 1, NULL, 0));
	CHECK(strstr(m.text, "B 80") == NULL);
	mock_fini(&m);
	snap_strtab_fini(&st);
}

int main(void)
{
	RUN(tee_both);
	RUN(tee_error);
	RUN(gate);
	return snap_test_done();
}
