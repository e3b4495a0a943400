// SPDX-License-Identifier: GPL-2.0
/* stack/sampdiff: stack samples -> begin/end slices, table-driven. */
#include <errno.h>

#include "alloc_sweep.h"
#include "cstack_threads.h"
#include "mock_timeline.h"
#include "snap_test.h"
#include "stack/cstack.h"
#include "stack/sampdiff.h"
#include "util/alloc.h"
#include "util/err.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define MAXTH 4

struct drv {
	struct snap_strtab st;
	struct mock_tl m;
	struct snap_cstack_ctx ctx;
	struct snap_cstack cs[MAXTH];
	struct snap_sampdiff_thread sdt[MAXTH];
	size_t n;
	struct snap_sampdiff_stats stats;
};

static int drv_init(struct drv *d, uint32_t depth)
{
	memset(d, 0, sizeof(*d));
	snap_strtab_init(&d->st);
	mock_init(&d->m, &d->st);
	return snap_cstack_ctx_init(&d->ctx, &d->m.base, &d->st, SNAP_SCOPE_BOTH, depth);
}

static void drv_fini(struct drv *d)
{
	for (size_t i = 0; i < d->n; i++)
		snap_cstack_fini(&d->cs[i]);
	for (size_t i = 0; i < MAXTH; i++)
		snap_sampdiff_thread_fini(&d->sdt[i]);
	snap_cstack_ctx_fini(&d->ctx);
	mock_fini(&d->m);
	snap_strtab_fini(&d->st);
}

/* frameless: the chain's leaf is marked frameless at its pc (model/event.h). */
static int drv_feed_fl(struct drv *d, const char *line, enum snap_scope keep, int frameless)
{
	struct test_ev te;
	struct snap_cstack *cs = NULL;
	uint64_t t;
	int err;

	if (test_ev_parse(&d->st, line, &te) < 0 || te.ev.kind != SNAP_EV_SAMPLE) {
		fprintf(stderr, "bad test line: %s\n", line);
		return -SNAP_EPARSE;
	}
	if (frameless && te.ev.nframes)
		te.frames[te.ev.nframes - 1].frameless = 1;
	err = cstack_threads_get(d->cs, &d->n, MAXTH, &d->ctx, &te.ev, &cs);
	if (err < 0)
		return err;
	t = snap_cstack_time(cs, te.ev.has_time, te.ev.time);
	return snap_sampdiff_apply(cs, &d->sdt[cs - d->cs], te.ev.frames, te.ev.nframes, keep, t,
				   &d->stats);
}

static int drv_feed(struct drv *d, const char *line, enum snap_scope keep)
{
	return drv_feed_fl(d, line, keep, 0);
}

static int drv_finish(struct drv *d)
{
	return cstack_threads_end(d->cs, d->n);
}

struct scase {
	const char *name;
	enum snap_scope keep;
	uint32_t depth;
	const char *in[12];
	const char *out;
	uint64_t dropped, zero, empty, capped;
	unsigned fl; /* bit i: the leaf of in[i] is frameless at its pc */
};

static const struct scase cases[] = {
	/* A frame-pointer chain whose leaf is frameless at its pc lacks the leaf's
	 * caller (a libc wrapper's caller: main). main goes on, nanosleep opens
	 * inside it and continues there; work is a new call after it. */
	{"frameless_leaf_caller_goes_on",
	 SNAP_SCOPE_BOTH,
	 0,
	 {"10 1/1 sample cpu-clock 400000 start+0x0 401000 main+0x0 402000 work+0x0",
	  "20 1/1 sample cpu-clock 400000 start+0x0 7000 nanosleep+0x0",
	  "30 1/1 sample cpu-clock 400000 start+0x0 7010 nanosleep+0x10",
	  "40 1/1 sample cpu-clock 400000 start+0x0 401000 main+0x0 402040 work+0x40"},
	 "B 11 tid=1 start address=0x400000 symbol=start\n"
	 "B 11 tid=1 main address=0x401000 symbol=main\n"
	 "B 11 tid=1 work address=0x402000 symbol=work\n"
	 "E 20 tid=1 work\n"
	 "B 20 tid=1 nanosleep address=0x7000 symbol=nanosleep\n"
	 "E 40 tid=1 nanosleep\n"
	 "B 40 tid=1 work address=0x402040 symbol=work\n"
	 "E 40 tid=1 work\n"
	 "E 40 tid=1 main\n"
	 "E 40 tid=1 start\n",
	 .fl = 0x6},
	/* The same chains without the mark (a leaf with its frame set up, dwarf
	 * chains, a file not known): main ends at the short chain, as before. */
	{"framed_leaf_ends_caller",
	 SNAP_SCOPE_BOTH,
	 0,
	 {"10 1/1 sample cpu-clock 400000 start+0x0 401000 main+0x0 402000 work+0x0",
	  "20 1/1 sample cpu-clock 400000 start+0x0 7000 nanosleep+0x0",
	  "30 1/1 sample cpu-clock 400000 start+0x0 7010 nanosleep+0x10",
	  "40 1/1 sample cpu-clock 400000 start+0x0 401000 main+0x0 402040 work+0x40"},
	 "B 11 tid=1 start address=0x400000 symbol=start\n"
	 "B 11 tid=1 main address=0x401000 symbol=main\n"
	 "B 11 tid=1 work address=0x402000 symbol=work\n"
	 "E 20 tid=1 work\n"
	 "E 20 tid=1 main\n"
	 "B 20 tid=1 nanosleep address=0x7000 symbol=nanosleep\n"
	 "E 40 tid=1 nanosleep\n"
	 "B 40 tid=1 main address=0x401000 symbol=main\n"
	 "B 40 tid=1 work address=0x402040 symbol=work\n"
	 "E 40 tid=1 work\n"
	 "E 40 tid=1 main\n"
	 "E 40 tid=1 start\n"},
	/* Frameless, but the frame outside it calls from another address than
	 * when it called main: no proof, main ends. A first chain: nothing open. */
	{"frameless_leaf_other_call_site",
	 SNAP_SCOPE_BOTH,
	 0,
	 {"10 1/1 sample cpu-clock 400000 start+0x0 7000 nanosleep+0x0",
	  "20 1/1 sample cpu-clock 400000 start+0x0 401000 main+0x0 402000 work+0x0",
	  "30 1/1 sample cpu-clock 400010 start+0x10 7000 nanosleep+0x0"},
	 "B 11 tid=1 start address=0x400000 symbol=start\n"
	 "B 11 tid=1 nanosleep address=0x7000 symbol=nanosleep\n"
	 "E 20 tid=1 nanosleep\n"
	 "B 20 tid=1 main address=0x401000 symbol=main\n"
	 "B 20 tid=1 work address=0x402000 symbol=work\n"
	 "E 30 tid=1 work\n"
	 "E 30 tid=1 main\n"
	 "B 30 tid=1 nanosleep address=0x7000 symbol=nanosleep\n"
	 "E 30 tid=1 nanosleep\n"
	 "E 30 tid=1 start\n",
	 .fl = 0x5},
	/* The frame kept by a frameless leaf's chain (main) has no known call site
	 * after it: a later frameless chain through main's old call site (work's
	 * frame lost under a frameless gettime) does not keep nanosleep, which the
	 * chain without main opened inside it. */
	{"frameless_leaf_kept_frame_site_unknown",
	 SNAP_SCOPE_BOTH,
	 0,
	 {"10 1/1 sample cpu-clock 400000 start+0x0 401000 main+0x0 402000 work+0x0",
	  "20 1/1 sample cpu-clock 400000 start+0x0 7000 nanosleep+0x0",
	  "30 1/1 sample cpu-clock 400000 start+0x0 401000 main+0x0 5000 gettime+0x0"},
	 "B 11 tid=1 start address=0x400000 symbol=start\n"
	 "B 11 tid=1 main address=0x401000 symbol=main\n"
	 "B 11 tid=1 work address=0x402000 symbol=work\n"
	 "E 20 tid=1 work\n"
	 "B 20 tid=1 nanosleep address=0x7000 symbol=nanosleep\n"
	 "E 30 tid=1 nanosleep\n"
	 "B 30 tid=1 gettime address=0x5000 symbol=gettime\n"
	 "E 30 tid=1 gettime\n"
	 "E 30 tid=1 main\n"
	 "E 30 tid=1 start\n",
	 .fl = 0x6},
	/* The open callee was the last chain's leaf (main interrupted in its own
	 * code): it goes on, the frameless leaf opens inside it. */
	{"frameless_leaf_inside_last_leaf",
	 SNAP_SCOPE_BOTH,
	 0,
	 {"10 1/1 sample cpu-clock 400000 start+0x0 401000 main+0x0",
	  "20 1/1 sample cpu-clock 400000 start+0x0 7000 nanosleep+0x0",
	  "30 1/1 sample cpu-clock 400000 start+0x0 401020 main+0x20"},
	 "B 11 tid=1 start address=0x400000 symbol=start\n"
	 "B 11 tid=1 main address=0x401000 symbol=main\n"
	 "B 20 tid=1 nanosleep address=0x7000 symbol=nanosleep\n"
	 "E 30 tid=1 nanosleep\n"
	 "E 30 tid=1 main\n"
	 "E 30 tid=1 start\n",
	 .fl = 0x2},
	{"common_prefix_kept_leaf_changes",
	 SNAP_SCOPE_BOTH,
	 0,
	 {"10 1/1 sample cpu-clock 400000 main 401000 a 402000 leaf",
	  "20 1/1 sample cpu-clock 400000 main 401000 a 402010 leaf",
	  "30 1/1 sample cpu-clock 400000 main 403000 b"},
	 "B 11 tid=1 main address=0x400000 symbol=main\n"
	 "B 11 tid=1 a address=0x401000 symbol=a\n"
	 "B 11 tid=1 leaf address=0x402000 symbol=leaf\n"
	 "E 20 tid=1 leaf\n"
	 "B 20 tid=1 leaf address=0x402010 symbol=leaf\n"
	 "E 30 tid=1 leaf\n"
	 "E 30 tid=1 a\n"
	 "B 30 tid=1 b address=0x403000 symbol=b\n"
	 "E 30 tid=1 b\n"
	 "E 30 tid=1 main\n"},
	/* Same DSO-relative address in two DSOs: a different frame. */
	{"same_address_other_symbol",
	 SNAP_SCOPE_BOTH,
	 0,
	 {"10 1/1 sample cpu-clock 400000 main 1000 liba_f",
	  "20 1/1 sample cpu-clock 400000 main 1000 libb_g"},
	 "B 11 tid=1 main address=0x400000 symbol=main\n"
	 "B 11 tid=1 liba_f address=0x1000 symbol=liba_f\n"
	 "E 20 tid=1 liba_f\n"
	 "B 20 tid=1 libb_g address=0x1000 symbol=libb_g\n"
	 "E 20 tid=1 libb_g\n"
	 "E 20 tid=1 main\n"},
	/* Same symbol, new return address: the caller changed too. */
	{"same_symbol_other_address",
	 SNAP_SCOPE_BOTH,
	 0,
	 {"10 1/1 sample cpu-clock 400000 main 401000 a 402000 leaf",
	  "20 1/1 sample cpu-clock 400000 main 401004 a 402000 leaf"},
	 "B 11 tid=1 main address=0x400000 symbol=main\n"
	 "B 11 tid=1 a address=0x401000 symbol=a\n"
	 "B 11 tid=1 leaf address=0x402000 symbol=leaf\n"
	 "E 20 tid=1 leaf\n"
	 "E 20 tid=1 a\n"
	 "B 20 tid=1 a address=0x401004 symbol=a\n"
	 "B 20 tid=1 leaf address=0x402000 symbol=leaf\n"
	 "E 20 tid=1 leaf\n"
	 "E 20 tid=1 a\n"
	 "E 20 tid=1 main\n"},
	/* One call, one slice: the leaf's pc moves inside one call (compared by
	 * symbol start, ip - off); a leaf that becomes a caller continues. */
	{"leaf_moves_inside_one_call",
	 SNAP_SCOPE_BOTH,
	 0,
	 {"10 1/1 sample cpu-clock 400010 main+0x10 402000 leaf+0x0",
	  "20 1/1 sample cpu-clock 400010 main+0x10 402010 leaf+0x10",
	  "30 1/1 sample cpu-clock 400010 main+0x10 402004 leaf+0x4 403000 inner+0x0",
	  "40 1/1 sample cpu-clock 400010 main+0x10 402008 leaf+0x8"},
	 "B 11 tid=1 main address=0x400010 symbol=main\n"
	 "B 11 tid=1 leaf address=0x402000 symbol=leaf\n"
	 "B 30 tid=1 inner address=0x403000 symbol=inner\n"
	 "E 40 tid=1 inner\n"
	 "E 40 tid=1 leaf\n"
	 "E 40 tid=1 main\n"},
	/* The caller's call site moved (a+0x0 -> a+0x4): a goes on (main still
	 * calls it from the same place), its callee is a new call. */
	{"callee_of_another_call_site_is_new",
	 SNAP_SCOPE_BOTH,
	 0,
	 {"10 1/1 sample cpu-clock 400000 main+0x0 401000 a+0x0 402000 leaf+0x0",
	  "20 1/1 sample cpu-clock 400000 main+0x0 401004 a+0x4 402000 leaf+0x0",
	  "30 1/1 sample cpu-clock 400004 main+0x4 401004 a+0x4 402000 leaf+0x0"},
	 "B 11 tid=1 main address=0x400000 symbol=main\n"
	 "B 11 tid=1 a address=0x401000 symbol=a\n"
	 "B 11 tid=1 leaf address=0x402000 symbol=leaf\n"
	 "E 20 tid=1 leaf\n"
	 "B 20 tid=1 leaf address=0x402000 symbol=leaf\n"
	 "E 30 tid=1 leaf\n"
	 "E 30 tid=1 a\n"
	 "B 30 tid=1 a address=0x401004 symbol=a\n"
	 "B 30 tid=1 leaf address=0x402000 symbol=leaf\n"
	 "E 30 tid=1 leaf\n"
	 "E 30 tid=1 a\n"
	 "E 30 tid=1 main\n"},
	{"empty_chain_closes_all",
	 SNAP_SCOPE_BOTH,
	 0,
	 {"10 1/1 sample cpu-clock 400000 main 401000 a", "20 1/1 sample cpu-clock",
	  "30 1/1 sample cpu-clock 400000 main"},
	 "B 11 tid=1 main address=0x400000 symbol=main\n"
	 "B 11 tid=1 a address=0x401000 symbol=a\n"
	 "E 20 tid=1 a\n"
	 "E 20 tid=1 main\n"
	 "B 30 tid=1 main address=0x400000 symbol=main\n"
	 "E 30 tid=1 main\n",
	 0,
	 0,
	 1},
	{"zero_addresses_skipped",
	 SNAP_SCOPE_BOTH,
	 0,
	 {"10 1/1 sample cpu-clock 400000 main 0 - 401000 a", "20 1/1 sample cpu-clock 0 - 0 -"},
	 "B 11 tid=1 main address=0x400000 symbol=main\n"
	 "B 11 tid=1 a address=0x401000 symbol=a\n"
	 "E 20 tid=1 a\n"
	 "E 20 tid=1 main\n",
	 0,
	 3,
	 1},
	/* Unknown frames keep the parser's name; a missing symbol is [unknown]. */
	{"unknown_frames",
	 SNAP_SCOPE_BOTH,
	 0,
	 {"10 1/1 sample cpu-clock 400000 main 7f0000001234 [unknown@0x1234(libx.so)] 7f0000005678 "
	  "-"},
	 "B 11 tid=1 main address=0x400000 symbol=main\n"
	 "B 11 tid=1 [unknown@0x1234(libx.so)] address=0x7f0000001234 "
	 "symbol=[unknown@0x1234(libx.so)]\n"
	 "B 11 tid=1 [unknown] address=0x7f0000005678 symbol=[unknown]\n"
	 "E 11 tid=1 [unknown]\n"
	 "E 11 tid=1 [unknown@0x1234(libx.so)]\n"
	 "E 11 tid=1 main\n"},
	{"user_keep_drops_kernel_frames",
	 SNAP_SCOPE_USER,
	 0,
	 {"10 1/1 sample cpu-clock 400000 main 401000 a ffffffff81000000 k_entry ffffffff81001000 "
	  "k_leaf"},
	 "B 11 tid=1 main address=0x400000 symbol=main\n"
	 "B 11 tid=1 a address=0x401000 symbol=a\n"
	 "E 11 tid=1 a\n"
	 "E 11 tid=1 main\n",
	 2},
	{"kernel_keep_drops_user_frames",
	 SNAP_SCOPE_KERNEL,
	 0,
	 {"10 1/1 sample cpu-clock 400000 main ffffffff81000000 k_entry"},
	 "B 11 tid=1 k_entry address=0xffffffff81000000 symbol=k_entry\n"
	 "E 11 tid=1 k_entry\n",
	 1},
	{"thread_appearing_mid_trace",
	 SNAP_SCOPE_BOTH,
	 0,
	 {"10 1/1 sample cpu-clock 400000 main", "50 1/2 sample cpu-clock 500000 worker",
	  "60 1/1 sample cpu-clock 400000 main 401000 a", "70 1/2 sample cpu-clock"},
	 "B 11 tid=1 main address=0x400000 symbol=main\n"
	 "B 51 tid=2 worker address=0x500000 symbol=worker\n"
	 "B 60 tid=1 a address=0x401000 symbol=a\n"
	 "E 70 tid=2 worker\n"
	 "E 60 tid=1 a\n"
	 "E 60 tid=1 main\n",
	 0,
	 0,
	 1},
	/* At time 0 the begins are deferred to the end (outermost first). */
	{"samples_at_time_zero",
	 SNAP_SCOPE_BOTH,
	 0,
	 {"0 1/1 sample cpu-clock 400000 main 401000 a", "5 1/1 sample cpu-clock 400000 main"},
	 "E 5 tid=1 a\n"
	 "B 0 tid=1 main address=0x400000 symbol=main\n"
	 "B 0 tid=1 a address=0x401000 symbol=a\n"
	 "E 5 tid=1 main\n"},
	{"depth_cap",
	 SNAP_SCOPE_BOTH,
	 2,
	 {"10 1/1 sample cpu-clock 400000 main 401000 a 402000 b 403000 c"},
	 "B 11 tid=1 main address=0x400000 symbol=main\n"
	 "B 11 tid=1 a address=0x401000 symbol=a\n"
	 "E 11 tid=1 a\n"
	 "E 11 tid=1 main\n",
	 0,
	 0,
	 0,
	 2},
};

static void table(void)
{
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct scase *c = &cases[k];
		struct drv d;
		char out[8192], why[256];
		int err;

		err = drv_init(&d, c->depth);
		for (size_t i = 0; i < 12 && c->in[i] && err >= 0; i++)
			err = drv_feed_fl(&d, c->in[i], c->keep, (c->fl >> i) & 1);
		if (err >= 0)
			err = drv_finish(&d);
		CHECK_INT_EQ(0, err);
		mock_lines(&d.m, NULL, out, sizeof(out));
		if (strcmp(c->out, out))
			fprintf(stderr, "case %s:\n--- expected\n%s--- got\n%s", c->name, c->out,
				out);
		CHECK_STR_EQ(c->out, out);
		if (!mock_balanced(&d.m, 1, why, sizeof(why)))
			fprintf(stderr, "case %s: %s\n", c->name, why);
		CHECK(mock_balanced(&d.m, 1, why, sizeof(why)));
		CHECK_U64_EQ(c->dropped, d.stats.dropped_frames);
		CHECK_U64_EQ(c->zero, d.stats.zero_frames);
		CHECK_U64_EQ(c->empty, d.stats.empty);
		CHECK_U64_EQ(c->capped, d.ctx.stats.depth_capped);
		drv_fini(&d);
	}
}

/* Random chains over a small alphabet: always balanced, depth bounded. */
static void random_chains_balanced(void)
{
	struct drv d;
	char line[1024], why[256];
	uint32_t seed = 12345;
	int err;

	err = drv_init(&d, 8);
	for (int s = 0; s < 2000 && err >= 0; s++) {
		int len =
			snprintf(line, sizeof(line), "%d 1/%d sample cpu-clock", s * 3, 1 + s % 3);
		int n;

		seed = seed * 1103515245u + 12345u;
		n = (int)(seed >> 16) % 12;
		for (int i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			unsigned v = (seed >> 16) % 4;
			len += snprintf(line + len, sizeof(line) - (size_t)len, " %x f%u",
					v ? 0x400000 + v * 0x10 : 0, v);
		}
		err = drv_feed(&d, line, SNAP_SCOPE_BOTH);
	}
	CHECK_INT_EQ(0, err);
	for (size_t i = 0; i < d.n; i++)
		CHECK(d.cs[i].total <= 8);
	CHECK_INT_EQ(0, drv_finish(&d));
	if (!mock_balanced(&d.m, 1, why, sizeof(why)))
		fprintf(stderr, "%s\n", why);
	CHECK(mock_balanced(&d.m, 1, why, sizeof(why)));
	drv_fini(&d);
}

/* snap_sampdiff_common: how many open frames a chain continues (the rule of
 * sampdiff.h), without changing anything: same function and same call site. */
static void common_prefix(void)
{
	static const char *const probes[][3] = {
		{"2000 1/1 sample e 400000 main+0x0 401000 loop+0x0 402000 crunch+0x0", "3"},
		{"2000 1/1 sample e 400000 main+0x0 401000 loop+0x0 402080 crunch+0x80", "3"},
		{"2000 1/1 sample e 400000 main+0x0 401010 loop+0x10 7000 read+0x0", "2"},
		{"2000 1/1 sample e 400000 main+0x0 401040 loop+0x40 402000 crunch+0x0", "2"},
		{"2000 1/1 sample e 400800 other+0x0", "0"},
		{"2000 1/1 sample e 400000 main+0x0", "1"},
		/* leaves frameless at their pc: the chain lost their caller (loop) */
		{"2000 1/1 sample e 400000 main+0x0 7000 read+0x0", "1"},
		{"2000 1/1 sample e 400000 main+0x0 7000 read+0x0", "2", "fl"},
		{"2000 1/1 sample e 400000 main+0x0 402040 crunch+0x40", "1"},
		{"2000 1/1 sample e 400000 main+0x0 402040 crunch+0x40", "3", "fl"},
		{"2000 1/1 sample e 400040 main+0x40 402040 crunch+0x40", "1", "fl"},
	};
	struct drv d;
	struct test_ev te;
	char before[4096], after[4096];

	CHECK_INT_EQ(0, drv_init(&d, 0));
	CHECK_INT_EQ(0,
		     drv_feed(&d,
			      "1000 1/1 sample e 400000 main+0x0 401000 loop+0x0 402000 crunch+0x0",
			      SNAP_SCOPE_BOTH));
	mock_lines(&d.m, NULL, before, sizeof(before));
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		CHECK_INT_EQ(0, test_ev_parse(&d.st, probes[i][0], &te));
		te.frames[te.ev.nframes - 1].frameless = probes[i][2] != NULL;
		CHECK_U64_EQ((uint64_t)atoi(probes[i][1]),
			     snap_sampdiff_common(&d.cs[0], &d.sdt[0], te.ev.frames, te.ev.nframes,
						  SNAP_SCOPE_BOTH));
	}
	mock_lines(&d.m, NULL, after, sizeof(after));
	CHECK_STR_EQ(before, after);
	CHECK_U64_EQ(3, d.sdt[0].n);
	CHECK_INT_EQ(0, drv_finish(&d));
	drv_fini(&d);
}

static int alloc_run(const void *arg)
{
	const char *const *scen = arg;
	struct drv d;
	int err;

	err = drv_init(&d, 0);
	for (size_t i = 0; err >= 0 && scen[i]; i++)
		err = drv_feed(&d, scen[i], SNAP_SCOPE_BOTH);
	if (err >= 0)
		err = drv_finish(&d);
	drv_fini(&d);
	return err;
}

static void alloc_failures(void)
{
	static const char *const scen[] = {
		"10 1/1 sample cpu-clock 400000 main 401000 a 402000 b",
		"20 1/2 sample cpu-clock 400000 main 401000 a 402000 b",
		"30 1/1 sample cpu-clock 400000 main 403000 c",
		NULL,
	};

	alloc_sweep(alloc_run, scen, 200);
}

int main(void)
{
	RUN(table);
	RUN(random_chains_balanced);
	RUN(common_prefix);
	RUN(alloc_failures);
	return snap_test_done();
}
