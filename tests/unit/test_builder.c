// SPDX-License-Identifier: GPL-2.0
/* stack/builder: threads, tracks, base time, scope, TSX, hits, extra events. */
#include <errno.h>
#include <time.h>

#include "alloc_sweep.h"
#include "mock_timeline.h"
#include "snap_test.h"
#include "stack/builder.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/log.h"

struct drv {
	struct snap_strtab st;
	struct mock_tl m;
	struct snap_builder bld;
	struct snap_builder_stats s;
};

static int drv_init(struct drv *d, const struct snap_builder_opts *o)
{
	memset(d, 0, sizeof(*d));
	snap_strtab_init(&d->st);
	mock_init(&d->m, &d->st);
	return snap_builder_init(&d->bld, &d->m.base, &d->st, o);
}

static void drv_fini(struct drv *d)
{
	snap_builder_fini(&d->bld);
	mock_fini(&d->m);
	snap_strtab_fini(&d->st);
}

static int drv_feed(struct drv *d, const char *line)
{
	struct test_ev te;

	if (test_ev_parse(&d->st, line, &te) < 0) {
		fprintf(stderr, "bad test line: %s\n", line);
		return -SNAP_EPARSE;
	}
	return snap_builder_feed(&d->bld, &te.ev);
}

/* drv_feed, with the frame named fl (if any) marked frameless at its pc, as the
 * sample source marks a frame-pointer chain's innermost user frame (parse/cfi.h). */
static int drv_feed_fl(struct drv *d, const char *line, const char *fl)
{
	struct test_ev te;

	if (test_ev_parse(&d->st, line, &te) < 0) {
		fprintf(stderr, "bad test line: %s\n", line);
		return -SNAP_EPARSE;
	}
	for (uint32_t i = 0; fl && i < te.ev.nframes; i++)
		if (te.frames[i].sym && !strcmp(snap_strtab_get(&d->st, te.frames[i].sym), fl))
			te.frames[i].frameless = 1;
	return snap_builder_feed(&d->bld, &te.ev);
}

/* Feeds lines (NULL-terminated), finishes; returns the first error. */
static int drv_run(struct drv *d, const char *const *lines)
{
	int err = 0;

	for (size_t i = 0; lines[i] && err >= 0; i++)
		err = drv_feed(d, lines[i]);
	if (err >= 0)
		err = snap_builder_finish(&d->bld);
	snap_builder_stats(&d->bld, &d->s);
	return err;
}

static void check_out(struct drv *d, const char *name, const char *exp)
{
	char out[16384], why[256];

	mock_lines(&d->m, NULL, out, sizeof(out));
	if (strcmp(exp, out))
		fprintf(stderr, "case %s:\n--- expected\n%s--- got\n%s", name, exp, out);
	CHECK_STR_EQ(exp, out);
	if (!mock_balanced(&d->m, 1, why, sizeof(why)))
		fprintf(stderr, "case %s: %s\n", name, why);
	CHECK(mock_balanced(&d->m, 1, why, sizeof(why)));
	CHECK_INT_EQ(0, d->m.unannounced);
}

static void naming_and_two_pids(void)
{
	static const struct snap_procname names[] = {{100, "myprog --flag", 0}};
	struct snap_builder_opts o = {.names = names, .nnames = 1};
	static const char *const in[] = {
		"1000 100/100 comm=myprog strt 0 - 400000 main",
		"1000 200/201 comm=other strt 0 - 500000 worker",
		"1010 100/100 call 400010 main 401000 foo",
		"1020 200/201 call 500010 worker 501000 bar",
		"1030 100/100 return 401010 foo 400014 main",
		"1040 200/201 return 501010 bar 500014 worker",
		NULL,
	};
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, &o));
	CHECK_INT_EQ(0, drv_run(&d, in));
	check_out(&d, __func__,
		  "T pid=100 tid=100 proc=myprog --flag [pid=100] thread=myprog --flag [pid=100] "
		  "[tid=100]\n"
		  "T pid=200 tid=201 proc=other [pid=200] thread=other [pid=200] [tid=201]\n"
		  "B 10 tid=100 foo address=0x401000 symbol=foo\n"
		  "B 20 tid=201 bar address=0x501000 symbol=bar\n"
		  "E 30 tid=100 foo\n"
		  "B 0 tid=100 main address=0x400000 symbol=main\n"
		  "E 30 tid=100 main\n"
		  "E 40 tid=201 bar\n"
		  "B 0 tid=201 worker address=0x500000 symbol=worker\n"
		  "E 40 tid=201 worker\n");
	CHECK_U64_EQ(6, d.s.events);
	CHECK_U64_EQ(2, d.s.threads);
	CHECK_INT_EQ(-EINVAL, drv_feed(&d, in[0]));   /* nothing after finish */
	CHECK_INT_EQ(0, snap_builder_finish(&d.bld)); /* finishing twice is harmless */
	drv_fini(&d);
}

static void unknown_ids_and_no_comm(void)
{
	static const char *const in[] = {
		"- 0/-1 error 0 Lost trace data",
		"2000 7/8 strt 0 - 400000 main",
		NULL,
	};
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, in));
	check_out(&d, __func__,
		  "T pid=0 tid=-1 proc=[pid=?] thread=[pid=?] [tid=?]\n"
		  "X 0..0 tid=-1 [decode error: Lost trace data]\n"
		  "T pid=7 tid=8 proc=[pid=7] thread=[pid=7] [tid=8]\n"
		  "B 0 tid=8 main address=0x400000 symbol=main\n"
		  "E 0 tid=8 main\n");
	CHECK_U64_EQ(1, d.s.decode_errors);
	drv_fini(&d);
}

/* A process keeps one name; threads keep their own comm. */
static void thread_names_per_pid(void)
{
	static const char *const in[] = {
		"100 5/5 comm=server strt 0 - 400000 main",
		"110 5/6 comm=worker-1 strt 0 - 400000 main",
		"120 5/7 strt 0 - 400000 main",
		"130 9/9 strt 0 - 400000 main",
		"140 9/10 comm=late strt 0 - 400000 main",
		NULL,
	};
	struct drv d;
	char out[4096];

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, in));
	mock_lines(&d.m, "T", out, sizeof(out));
	CHECK_STR_EQ("T pid=5 tid=5 proc=server [pid=5] thread=server [pid=5] [tid=5]\n"
		     "T pid=5 tid=6 proc=server [pid=5] thread=worker-1 [pid=5] [tid=6]\n"
		     "T pid=5 tid=7 proc=server [pid=5] thread=server [pid=5] [tid=7]\n"
		     "T pid=9 tid=9 proc=[pid=9] thread=[pid=9] [tid=9]\n"
		     "T pid=9 tid=10 proc=late [pid=9] thread=late [pid=9] [tid=10]\n",
		     out);
	drv_fini(&d);
}

/* End of trace closes threads in order of first appearance, not tid order. */
static void end_order_is_first_appearance(void)
{
	static const char *const in[] = {
		"100 1/7 strt 0 - 400000 a",	  "100 1/3 strt 0 - 400000 b",
		"100 1/5 strt 0 - 400000 c",	  "110 1/5 call 400010 c 401000 f",
		"120 1/3 call 400010 b 401000 f", NULL,
	};
	struct drv d;
	char out[4096];

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, in));
	mock_lines(&d.m, "E", out, sizeof(out));
	CHECK_STR_EQ("E 0 tid=7 a\n"
		     "E 20 tid=3 f\n"
		     "E 20 tid=3 b\n"
		     "E 10 tid=5 f\n"
		     "E 10 tid=5 c\n",
		     out);
	drv_fini(&d);
}

/* Threads created before the first branch (by extra events) restart at it:
 * their inferred frames start there, not at the extra event. */
static void first_branch_restarts_early_threads(void)
{
	static const char *const in[] = {
		"1000 1/1 extra branch-misses 400000 main 50",
		"1100 1/1 return 401000 foo 400100 main",
		NULL,
	};
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, in));
	check_out(&d, __func__,
		  "T pid=1 tid=1 proc=[pid=1] thread=[pid=1] [tid=1]\n"
		  "T pid=1 tid=1073741824 proc=[pid=1] thread=branch-misses (tid 1)\n"
		  "X 0..0 tid=1073741824 branch-misses symbol=main addr=0x400000 count=50\n"
		  "X 100..100 tid=1 [unknown]\n"
		  "B 100 tid=1 main address=0x400100 symbol=main inferred_start_time=true\n"
		  "E 100 tid=1 main\n");
	CHECK_U64_EQ(1, d.s.unmatched_returns);
	drv_fini(&d);
}

/* A snapshot boundary ends every thread at its last event and restarts it
 * at the next branch: frames found later start there, not in snapshot 1.
 * A return past the bottom right at the restart is a zero-length [unknown]
 * span written before the callers inferred at that time (magic-trace's order). */
static void snapshot_boundary_restarts(void)
{
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_feed(&d, "1000 1/1 strt 0 - 400000 main"));
	CHECK_INT_EQ(0, drv_feed(&d, "1010 1/1 call 400010 main 401000 foo"));
	snap_builder_new_snapshot(&d.bld);
	CHECK_INT_EQ(0, drv_feed(&d, "5000 1/1 return 402000 bar 401000 foo"));
	CHECK_INT_EQ(0, snap_builder_finish(&d.bld));
	check_out(&d, __func__,
		  "T pid=1 tid=1 proc=[pid=1] thread=[pid=1] [tid=1]\n"
		  "B 10 tid=1 foo address=0x401000 symbol=foo\n"
		  "B 0 tid=1 main address=0x400000 symbol=main\n"
		  "E 10 tid=1 foo\n"
		  "E 10 tid=1 main\n"
		  "X 4000..4000 tid=1 [unknown]\n"
		  "B 4000 tid=1 foo inferred_start_time=true\n"
		  "E 4000 tid=1 foo\n");
	drv_fini(&d);
}

static void power_and_extra_tracks(void)
{
	static const char *const in[] = {
		"1000 1/1 strt 0 - 400000 main",
		"1005 1/1 power 2400 400000 main",
		"1010 1/1 extra branch-misses 400010 main 50",
		"1020 1/1 extra cache-misses 400020 main 1",
		"1030 1/1 extra branch-misses 400030 - 50",
		NULL,
	};
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, in));
	check_out(&d, __func__,
		  "T pid=1 tid=1 proc=[pid=1] thread=[pid=1] [tid=1]\n"
		  "C 5 tid=1 CPU freq (MHz)=2400\n"
		  "T pid=1 tid=1073741824 proc=[pid=1] thread=branch-misses (tid 1)\n"
		  "X 10..10 tid=1073741824 branch-misses symbol=main addr=0x400010 count=50\n"
		  "T pid=1 tid=1073741825 proc=[pid=1] thread=cache-misses (tid 1)\n"
		  "X 20..20 tid=1073741825 cache-misses symbol=main addr=0x400020 count=1\n"
		  "X 30..30 tid=1073741824 branch-misses symbol=[unknown] addr=0x400030 count=50\n"
		  "B 0 tid=1 main address=0x400000 symbol=main\n"
		  "E 30 tid=1 main\n");
	drv_fini(&d);
}

static void hits_and_base_time(void)
{
	/* the second is a stop indicator's: its payload, and the slice starts at
	 * the time it passed */
	struct snap_hit hits[2] = {{.time = 900, .pid = 1, .tid = 1, .ip = 0x401000},
				   {.time = 1500,
				    .pid = 1,
				    .tid = 1,
				    .ip = 0x401000,
				    .has_arg = 1,
				    .arg = -42,
				    .passed_time = 1200}};
	struct snap_builder_opts o = {.hits = hits, .nhits = 2};
	static const char *const in[] = {"1000 1/1 strt 0 - 400000 main", NULL};
	struct drv d;

	memset(&d, 0, sizeof(d));
	snap_strtab_init(&d.st);
	hits[0].symbol = hits[1].symbol = "trigger_fn";
	mock_init(&d.m, &d.st);
	CHECK_INT_EQ(0, snap_builder_init(&d.bld, &d.m.base, &d.st, &o));
	CHECK_INT_EQ(0, drv_run(&d, in));
	check_out(&d, __func__,
		  "T pid=1 tid=1 proc=[pid=1] thread=[pid=1] [tid=1]\n"
		  "B 101 tid=1 main address=0x400000 symbol=main\n"
		  "E 101 tid=1 main\n"
		  "T pid=1 tid=1073741824 proc=[pid=1] thread=Snapshot symbol hits\n"
		  "X 0..0 tid=1073741824 hit trigger_fn timestamp=900 tid=1 ip=0x401000\n"
		  "X 300..600 tid=1073741824 hit trigger_fn timestamp_passed=1200 arg=-42 "
		  "timestamp=1500 tid=1 ip=0x401000\n");
	drv_fini(&d);
}

static void base_time_override(void)
{
	struct snap_builder_opts o = {.has_base_time = 1, .base_time = 500};
	static const char *const in[] = {"1000 1/1 strt 0 - 400000 main",
					 "1010 1/1 call 400010 main 401000 foo", NULL};
	struct drv d;
	char out[4096];

	CHECK_INT_EQ(0, drv_init(&d, &o));
	CHECK_INT_EQ(0, drv_run(&d, in));
	mock_lines(&d.m, "B", out, sizeof(out));
	CHECK_STR_EQ("B 501 tid=1 main address=0x400000 symbol=main\n"
		     "B 510 tid=1 foo address=0x401000 symbol=foo\n",
		     out);
	drv_fini(&d);
}

/* No event at all but hits: the base is the earliest hit. */
static void hits_only(void)
{
	struct snap_hit hit = {.time = 5000, .pid = 3, .tid = 4, .ip = 0x10};
	struct snap_builder_opts o = {.hits = &hit, .nhits = 1};
	struct drv d;
	static const char *const in[] = {NULL};

	memset(&d, 0, sizeof(d));
	snap_strtab_init(&d.st);
	hit.symbol = "f";
	mock_init(&d.m, &d.st);
	CHECK_INT_EQ(0, snap_builder_init(&d.bld, &d.m.base, &d.st, &o));
	CHECK_INT_EQ(0, drv_run(&d, in));
	check_out(&d, __func__,
		  "T pid=3 tid=1073741824 proc=[pid=3] thread=Snapshot symbol hits\n"
		  "X 0..0 tid=1073741824 hit f timestamp=5000 tid=4 ip=0x10\n");
	drv_fini(&d);
}

/* Every pid with hits gets one hit track, however many pids there are (there
 * was a fixed table of 64 beyond which each hit made a track of its own). */
static void hits_many_pids(void)
{
	enum { NPID = 70 };
	struct snap_hit hits[2 * NPID];
	struct snap_builder_opts o = {.hits = hits, .nhits = 2 * NPID};
	static const char *const in[] = {NULL};
	static char out[65536];
	size_t ntracks = 0, nhits = 0;
	struct drv d;

	memset(&d, 0, sizeof(d));
	snap_strtab_init(&d.st);
	for (int i = 0; i < 2 * NPID; i++) {
		hits[i] = (struct snap_hit){
			.time = 1000 + (uint64_t)i, .pid = 1 + i % NPID, .tid = 1, .ip = 0x10};
		hits[i].symbol = "f";
	}
	mock_init(&d.m, &d.st);
	CHECK_INT_EQ(0, snap_builder_init(&d.bld, &d.m.base, &d.st, &o));
	CHECK_INT_EQ(0, drv_run(&d, in));
	mock_lines(&d.m, NULL, out, sizeof(out));
	for (const char *l = out; *l; l = strchr(l, '\n') + 1) {
		ntracks += !strncmp(l, "T ", 2);
		nhits += !strncmp(l, "X ", 2);
	}
	CHECK_U64_EQ(NPID, ntracks);
	CHECK_U64_EQ(2 * NPID, nhits);
	CHECK_INT_EQ(0, d.m.unannounced);
	drv_fini(&d);
}

/* ---- scope ----------------------------------------------------------------- */

static const char *const user_scope_in[] = {
	"1000 1/1 strt 0 - 400000 main",
	"1010 1/1 call 400010 main ffffffff81000000 do_syscall_64",
	"1020 1/1 syscall 400020 main 401000 x",
	"1025 1/1 hw int 400020 main 401000 x",
	"1026 1/1 iret 400020 main 401000 x",
	"1027 1/1 end sysret 400020 main 0 -",
	"1030 1/1 call 400030 main 401000 foo",
	"1031 1/1 end syscall 401005 foo 0 -",
	"1032 1/1 strt 0 - 401007 foo",
	"1040 1/2 sample cpu-clock 400000 main ffffffff81000000 k_entry",
	"1050 1/2 extra branch-misses ffffffff81000010 k_entry 50",
	"1060 1/2 power 2000 ffffffff81000010 k_entry",
	"1070 1/2 error ffffffff81000010 Overflow packet",
	NULL,
};

static void scope_user(void)
{
	struct snap_builder_opts o = {.scope = SNAP_SCOPE_USER};
	struct drv d;
	char out[8192];

	CHECK_INT_EQ(0, drv_init(&d, &o));
	CHECK_INT_EQ(0, drv_run(&d, user_scope_in));
	CHECK_U64_EQ(8, d.s.violations);
	CHECK_STR_EQ("call 0x400010 main => 0xffffffff81000000 do_syscall_64 at 0.000001010 tid 1",
		     d.s.first_violation);
	mock_lines(&d.m, "BX", out, sizeof(out));
	/* No kernel frame, no extra/power event from the kernel; the user part
	 * of the sample stays; decode errors are not violations. */
	CHECK(!strstr(out, "ffffffff"));
	CHECK(!strstr(out, "k_entry"));
	CHECK(strstr(out, "B 41 tid=2 main") != NULL);
	CHECK(strstr(out, "B 30 tid=1 foo") != NULL);
	CHECK(strstr(out, "[syscall]") != NULL);
	CHECK(strstr(out, "[decode error: Overflow packet]") != NULL);
	CHECK_U64_EQ(1, d.s.sample_frames_dropped);
	drv_fini(&d);
}

static void scope_user_strict(void)
{
	struct snap_builder_opts o = {.scope = SNAP_SCOPE_USER, .strict_scope = 1};
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, &o));
	CHECK_INT_EQ(0, drv_feed(&d, user_scope_in[0]));
	CHECK_INT_EQ(-SNAP_ESCOPE, drv_feed(&d, user_scope_in[1]));
	CHECK_INT_EQ(-SNAP_ESCOPE, drv_feed(&d, user_scope_in[9]));
	CHECK_INT_EQ(0, snap_builder_finish(&d.bld));
	snap_builder_stats(&d.bld, &d.s);
	CHECK_U64_EQ(2, d.s.violations);
	CHECK_STR_EQ("call 0x400010 main => 0xffffffff81000000 do_syscall_64 at 0.000001010 tid 1",
		     d.s.first_violation);
	CHECK(!strstr(d.m.text, "ffffffff"));
	CHECK(!strstr(d.m.text, "tid=2")); /* the violating sample applied nothing */
	drv_fini(&d);
}

static void scope_kernel(void)
{
	struct snap_builder_opts o = {.scope = SNAP_SCOPE_KERNEL};
	static const char *const in[] = {
		"1000 1/1 strt 0 - ffffffff81000000 entry",
		"1010 1/1 call 400000 main 401000 foo",
		"1020 1/1 end sysret ffffffff81000100 entry 400000 main",
		"1030 1/1 strt 400000 main ffffffff81000000 entry",
		"1040 1/2 sample cpu-clock 400000 main ffffffff81000000 k_entry",
		NULL,
	};
	struct drv d;
	char out[8192];

	CHECK_INT_EQ(0, drv_init(&d, &o));
	CHECK_INT_EQ(0, drv_run(&d, in));
	CHECK_U64_EQ(2, d.s.violations);
	CHECK_STR_EQ("call 0x400000 main => 0x401000 foo at 0.000001010 tid 1",
		     d.s.first_violation);
	mock_lines(&d.m, "B", out, sizeof(out));
	CHECK(!strstr(out, " foo"));
	CHECK(!strstr(out, "tid=2 main"));
	CHECK(strstr(out, "B 41 tid=2 k_entry") != NULL);
	CHECK(strstr(out, "[untraced]") != NULL);
	drv_fini(&d);
}

static void scope_both_never_violates(void)
{
	struct snap_builder_opts o = {.scope = SNAP_SCOPE_BOTH};
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, &o));
	CHECK_INT_EQ(0, drv_run(&d, user_scope_in));
	CHECK_U64_EQ(0, d.s.violations);
	CHECK_STR_EQ("", d.s.first_violation);
	CHECK(strstr(d.m.text, "do_syscall_64") != NULL);
	drv_fini(&d);
}

/* ---- TSX ------------------------------------------------------------------- */

static void tsx_commit_abort_error(void)
{
	static const char *const commit[] = {
		"1000 1/1 strt 0 - 400000 main",
		"1010 1/1 call (x) 400010 main 401000 txfn",
		"1020 1/1 return (x) 401010 txfn 400014 main",
		"1030 1/1 call 400020 main 402000 after",
		NULL,
	};
	static const char *const abort_[] = {
		"1000 1/1 strt 0 - 400000 main",
		"1010 1/1 call (x) 400010 main 401000 txfn",
		"1015 1/1 tx abrt 401010 txfn 400050 main",
		NULL,
	};
	static const char *const error[] = {
		"1000 1/1 strt 0 - 400000 main",
		"1010 1/1 call (x) 400010 main 401000 txfn",
		"1020 1/1 error 0 Overflow packet",
		NULL,
	};
	struct drv d;
	char out[4096];
	int lvl = snap_log_level;

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, commit));
	mock_lines(&d.m, "BE", out, sizeof(out));
	CHECK_STR_EQ("B 10 tid=1 txfn address=0x401000 symbol=txfn\n"
		     "E 20 tid=1 txfn\n"
		     "B 30 tid=1 after address=0x402000 symbol=after\n"
		     "B 0 tid=1 main address=0x400000 symbol=main\n"
		     "E 30 tid=1 after\n"
		     "E 30 tid=1 main\n",
		     out);
	drv_fini(&d);

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, abort_));
	CHECK(!strstr(d.m.text, "txfn"));
	CHECK_U64_EQ(1, d.s.tx_dropped);
	drv_fini(&d);

	snap_log_level = SNAP_LOG_QUIET;
	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, error));
	CHECK(!strstr(d.m.text, "txfn"));
	CHECK_U64_EQ(1, d.s.tx_dropped);
	drv_fini(&d);

	/* With TX handling off, (x) events apply at once. */
	struct snap_builder_opts o = {.no_tx = 1};
	CHECK_INT_EQ(0, drv_init(&d, &o));
	CHECK_INT_EQ(0, drv_run(&d, abort_));
	CHECK(strstr(d.m.text, "B 10 tid=1 txfn") != NULL);
	drv_fini(&d);
	snap_log_level = lvl;
}

/* Events still buffered at the end are applied (nothing was aborted). */
static void tsx_pending_at_finish(void)
{
	static const char *const in[] = {
		"1000 1/1 strt 0 - 400000 main",
		"1010 1/1 call (x) 400010 main 401000 txfn",
		NULL,
	};
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, in));
	CHECK(strstr(d.m.text, "B 10 tid=1 txfn") != NULL);
	check_out(&d, __func__, d.m.text);
	drv_fini(&d);
}

static void desc_formats(void)
{
	struct drv d;
	struct test_ev te;
	char buf[256];

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, test_ev_parse(&d.st, "12345678901 2/42 end syscall 401000 foo 0 -", &te));
	CHECK_STR_EQ("tr end  syscall 0x401000 foo => 0x0  at 12.345678901 tid 42",
		     snap_builder_desc(&d.bld, &te.ev, buf, sizeof(buf)));
	CHECK_INT_EQ(0, test_ev_parse(&d.st, "- 2/42 strt 0 - 401000 foo", &te));
	CHECK_STR_EQ("tr strt 0x0  => 0x401000 foo at ? tid 42",
		     snap_builder_desc(&d.bld, &te.ev, buf, sizeof(buf)));
	CHECK_INT_EQ(0, test_ev_parse(&d.st, "5 2/42 sample cpu-clock 400000 main", &te));
	CHECK_STR_EQ("cpu-clock sample frame 0x400000 main at 0.000000005 tid 42",
		     snap_builder_desc(&d.bld, &te.ev, buf, sizeof(buf)));
	snap_builder_desc(&d.bld, &te.ev, buf, 8);
	CHECK_STR_EQ("cpu-clo", buf);
	CHECK_INT_EQ(0, test_ev_parse(&d.st, "5 2/42 tx abrt 401000 foo 402000 bar", &te));
	CHECK_STR_EQ("tx abrt 0x401000 foo => 0x402000 bar at 0.000000005 tid 42",
		     snap_builder_desc(&d.bld, &te.ev, buf, sizeof(buf)));
	/* One name per kind, parsed back to the same kind; vmexit included. */
	for (unsigned k = SNAP_BR_NONE; k <= SNAP_BR_VMEXIT; k++) {
		const char *name = snap_br_kind_name(k);

		CHECK_INT_EQ((int)k, snap_br_kind_parse(name, strlen(name)));
	}
	CHECK_STR_EQ("vmexit", snap_br_kind_name(SNAP_BR_VMEXIT));
	CHECK_STR_EQ("?", snap_br_kind_name(SNAP_BR_VMEXIT + 1));
	CHECK_INT_EQ(-1, snap_br_kind_parse("txabort", 7));
	CHECK_INT_EQ(0, test_ev_parse(&d.st, "5 2/42 switch preempt", &te));
	CHECK_STR_EQ("context switch out (preempted) at 0.000000005 tid 42",
		     snap_builder_desc(&d.bld, &te.ev, buf, sizeof(buf)));
	CHECK_INT_EQ(0, test_ev_parse(&d.st, "5 2/42 switch chain 400000 main", &te));
	CHECK_STR_EQ("context switch out with its call chain at 0.000000005 tid 42",
		     snap_builder_desc(&d.bld, &te.ev, buf, sizeof(buf)));
	drv_fini(&d);
}

/* Times before the base map to 0 and are counted. */
static void time_before_base(void)
{
	static const char *const in[] = {
		"1000 1/1 strt 0 - 400000 main",
		"900 1/2 strt 0 - 400000 main",
		NULL,
	};
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, in));
	CHECK(d.s.time_backwards >= 1);
	check_out(&d, __func__, d.m.text);
	drv_fini(&d);
}

static const char *const alloc_in[] = {
	"1000 1/1 comm=prog strt 0 - 400000 main",
	"1005 1/1 power 2400 400000 main",
	"1010 1/1 call 400010 main 401000 foo",
	"1010 2/3 extra branch-misses 400010 main 50",
	"1015 1/1 call (x) 401010 foo 402000 bar",
	"1020 1/1 return 402010 bar 401014 foo",
	"1025 2/3 sample cpu-clock 400000 main 401000 foo",
	"1030 1/1 error 0 Overflow packet",
	"1040 1/1 return 401020 foo 400014 main",
	NULL,
};

/* One run of alloc_sweep: a builder with these opts over these lines. */
struct alloc_case {
	const struct snap_builder_opts *o;
	const char *const *in;
};

static int alloc_run(const void *arg)
{
	const struct alloc_case *r = arg;
	struct drv d;
	int err;

	memset(&d, 0, sizeof(d));
	snap_strtab_init(&d.st);
	mock_init(&d.m, &d.st);
	err = snap_builder_init(&d.bld, &d.m.base, &d.st, r->o);
	if (err >= 0)
		err = drv_run(&d, r->in);
	drv_fini(&d);
	return err;
}

static void alloc_failures(void)
{
	static const struct snap_procname names[] = {{1, "prog -x", 0}};
	struct snap_hit hit = {.time = 990, .pid = 1, .tid = 1, .ip = 0x401000, .symbol = "f"};
	struct snap_builder_opts o = {.names = names, .nnames = 1, .hits = &hit, .nhits = 1};
	struct alloc_case r = {&o, alloc_in};

	alloc_sweep(alloc_run, &r, 400);
}

/* Off-CPU (docs/sampling.md): a blocking switch-out ends every frame and opens
 * [off-CPU] until the switch-in; a preempted one keeps the stack under it; a
 * sched_switch chain (kernel frames dropped quietly in a user-scope trace)
 * stays open under [off-CPU]; a sample without a switch-in ends it too. */
static void offcpu_switches(void)
{
	static const char *const in[] = {
		"1000 1/1 comm=p sample cpu-clock 400000 main 401000 spin_a 402000 spin",
		"1100 1/1 switch preempt",
		"1150 1/1 switch in",
		"1200 1/1 sample cpu-clock 400000 main 401000 spin_a 402010 spin",
		"1300 1/1 switch out",
		"1300 1/1 switch out", /* a second record of the same switch */
		"5000 1/1 switch in",
		"5100 1/1 sample cpu-clock 400000 main 401100 spin_b",
		"5200 1/1 switch chain 400010 main+0x10 401200 nap+0x4 7000 nanosleep+0x3 "
		"ffffffff81000000 __schedule",
		"9000 1/1 sample cpu-clock 400020 main+0x20 401300 spin_c",
		"9100 1/2 switch out", /* a thread never sampled: no track */
		NULL,
	};
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, in));
	check_out(&d, __func__,
		  "T pid=1 tid=1 proc=p [pid=1] thread=p [pid=1] [tid=1]\n"
		  "B 100 tid=1 [off-CPU: preempted] address=0x0 symbol=[off-CPU: preempted]\n"
		  "E 150 tid=1 [off-CPU: preempted]\n"
		  /* the sample after a switch-in applies at the switch-in */
		  "E 150 tid=1 spin\n"
		  "B 150 tid=1 spin address=0x402010 symbol=spin\n"
		  "E 300 tid=1 spin\n"
		  "E 300 tid=1 spin_a\n"
		  "E 300 tid=1 main\n"
		  "B 300 tid=1 [off-CPU] address=0x0 symbol=[off-CPU]\n"
		  "E 4000 tid=1 [off-CPU]\n"
		  "B 4000 tid=1 main address=0x400000 symbol=main\n"
		  "B 4000 tid=1 spin_b address=0x401100 symbol=spin_b\n"
		  "E 4200 tid=1 spin_b\n"
		  "B 4200 tid=1 nap address=0x401200 symbol=nap\n"
		  "B 4200 tid=1 nanosleep address=0x7000 symbol=nanosleep\n"
		  "B 4200 tid=1 [off-CPU]\n"
		  "E 8000 tid=1 [off-CPU]\n"
		  "E 8000 tid=1 nanosleep\n"
		  "E 8000 tid=1 nap\n"
		  "B 8000 tid=1 spin_c address=0x401300 symbol=spin_c\n"
		  /* frames opened at the first event's time are written last; they
		   * were running before the data began */
		  "B 0 tid=1 main inferred_start_time=true\n"
		  "B 0 tid=1 spin_a address=0x401000 symbol=spin_a inferred_start_time=true\n"
		  "B 0 tid=1 spin address=0x402000 inferred_start_time=true\n"
		  "E 8000 tid=1 spin_c\n"
		  "E 8000 tid=1 main\n"
		  "C 0 tid=1 snaptrace.sampling period_ns=1 inferred_end_time=1\n");
	CHECK_U64_EQ(0, d.s.violations);
	CHECK_U64_EQ(3, d.s.switches_out);
	CHECK_U64_EQ(1, d.s.preempted);
	CHECK_U64_EQ(2, d.s.switches_in);
	CHECK_U64_EQ(1, d.s.switch_chains);
	CHECK_U64_EQ(2, d.s.offcpu_slices);
	CHECK_U64_EQ(1, d.s.preempted_slices);
	CHECK_U64_EQ(1, d.s.switches_ignored);
	drv_fini(&d);
}

/* docs/sampling.md "Call counts where a frame-pointer chain loses a frame": a
 * loop in main calling work and sleeping; the sched_switch chains of the
 * sleeps lack main (nanosleep is frameless at its pc). Marked, main is one call
 * with the waits inside it; unmarked (dwarf chains, framed leaves), main ends
 * at every wait, as before. */
static void frameless_switch_chains(void)
{
	static const char *const in[] = {
		"1000 1/1 comm=p sample cpu-clock 400000 start 401000 main 402000 work",
		"1100 1/1 switch chain 400000 start 7000 nanosleep+0x3 ffffffff81000000 __schedule",
		"2000 1/1 switch in",
		"2100 1/1 sample cpu-clock 400000 start 401000 main 402010 work",
		"2200 1/1 switch chain 400000 start 7000 nanosleep+0x3 ffffffff81000000 __schedule",
		"3000 1/1 switch in",
		"3100 1/1 sample cpu-clock 400000 start 401000 main 402020 work",
		NULL,
	};
	static const char *const out[2] = {
		/* unmarked: main ends at each wait and begins again after it */
		"T pid=1 tid=1 proc=p [pid=1] thread=p [pid=1] [tid=1]\n"
		"E 100 tid=1 work\n"
		"E 100 tid=1 main\n"
		"B 100 tid=1 nanosleep address=0x7000 symbol=nanosleep\n"
		"B 100 tid=1 [off-CPU] address=0x0 symbol=[off-CPU]\n"
		"E 1000 tid=1 [off-CPU]\n"
		"E 1000 tid=1 nanosleep\n"
		"B 1000 tid=1 main address=0x401000 symbol=main\n"
		"B 1000 tid=1 work address=0x402010 symbol=work\n"
		"E 1200 tid=1 work\n"
		"E 1200 tid=1 main\n"
		"B 1200 tid=1 nanosleep\n"
		"B 1200 tid=1 [off-CPU]\n"
		"E 2000 tid=1 [off-CPU]\n"
		"E 2000 tid=1 nanosleep\n"
		"B 2000 tid=1 main\n"
		"B 2000 tid=1 work address=0x402020\n"
		"B 0 tid=1 start address=0x400000 symbol=start inferred_start_time=true\n"
		"B 0 tid=1 main inferred_start_time=true\n"
		"B 0 tid=1 work address=0x402000 inferred_start_time=true\n"
		"E 2100 tid=1 work\n"
		"E 2100 tid=1 main\n"
		"E 2100 tid=1 start\n"
		"C 0 tid=1 snaptrace.sampling period_ns=1 inferred_end_time=1\n",
		/* marked: one main, the waits inside it */
		"T pid=1 tid=1 proc=p [pid=1] thread=p [pid=1] [tid=1]\n"
		"E 100 tid=1 work\n"
		"B 100 tid=1 nanosleep address=0x7000 symbol=nanosleep\n"
		"B 100 tid=1 [off-CPU] address=0x0 symbol=[off-CPU]\n"
		"E 1000 tid=1 [off-CPU]\n"
		"E 1000 tid=1 nanosleep\n"
		"B 1000 tid=1 work address=0x402010 symbol=work\n"
		"E 1200 tid=1 work\n"
		"B 1200 tid=1 nanosleep\n"
		"B 1200 tid=1 [off-CPU]\n"
		"E 2000 tid=1 [off-CPU]\n"
		"E 2000 tid=1 nanosleep\n"
		"B 2000 tid=1 work address=0x402020\n"
		"B 0 tid=1 start address=0x400000 symbol=start inferred_start_time=true\n"
		"B 0 tid=1 main address=0x401000 symbol=main inferred_start_time=true\n"
		"B 0 tid=1 work address=0x402000 inferred_start_time=true\n"
		"E 2100 tid=1 work\n"
		"E 2100 tid=1 main\n"
		"E 2100 tid=1 start\n"
		"C 0 tid=1 snaptrace.sampling period_ns=1 inferred_end_time=1\n"};

	for (int marked = 0; marked < 2; marked++) {
		struct drv d;
		int err = 0;

		CHECK_INT_EQ(0, drv_init(&d, NULL));
		for (size_t i = 0; in[i] && err >= 0; i++)
			err = drv_feed_fl(&d, in[i], marked ? "nanosleep" : NULL);
		CHECK_INT_EQ(0, err);
		CHECK_INT_EQ(0, snap_builder_finish(&d.bld));
		snap_builder_stats(&d.bld, &d.s);
		check_out(&d, marked ? "frameless_marked" : "frameless_unmarked", out[marked]);
		CHECK_U64_EQ(2, d.s.offcpu_slices);
		drv_fini(&d);
	}
}

/* docs/sampling.md "Off-CPU time": a burst between a switch-in and the next
 * switch-out that no sample saw is [on-CPU: unsampled] under the frames
 * common to both chains but the one it blocked in; a sample after a
 * switch-in applies at the switch-in; a sched_switch chain followed by a
 * preempted switch record is [off-CPU: preempted]. */
static void wakeup_model(void)
{
	static const char *const in[] = {
		"1000 1/1 sample cpu-clock@250 400000 main 401000 loop+0x0 402000 crunch",
		"1100 1/1 switch chain 400000 main 401010 loop+0x10 7000 read",
		"1101 1/1 switch out",
		"2000 1/1 switch in",
		"2150 1/1 switch chain 400000 main 401010 loop+0x10 7000 read",
		"2151 1/1 switch out",
		"3000 1/1 switch in",
		"3100 1/1 sample cpu-clock@250 400000 main 401000 loop+0x0 402000 crunch",
		"3200 1/1 switch chain 400000 main 401000 loop+0x0 402000 crunch",
		"3201 1/1 switch preempt",
		"3500 1/1 switch in",
		"3600 1/1 sample cpu-clock@250 400000 main 401000 loop+0x0 402000 crunch",
		NULL,
	};
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	mock_show_end_args(&d.m);
	CHECK_INT_EQ(0, drv_run(&d, in));
	check_out(&d, __func__,
		  "T pid=1 tid=1 proc=[pid=1] thread=[pid=1] [tid=1]\n"
		  "E 100 tid=1 crunch sampled_ns=250\n"
		  "B 100 tid=1 read address=0x7000 symbol=read\n"
		  "B 100 tid=1 [off-CPU] address=0x0 symbol=[off-CPU]\n"
		  "E 1000 tid=1 [off-CPU]\n"
		  "E 1000 tid=1 read\n"
		  "B 1000 tid=1 [on-CPU: unsampled] address=0x0 symbol=[on-CPU: unsampled]\n"
		  "E 1150 tid=1 [on-CPU: unsampled]\n"
		  "B 1150 tid=1 read\n"
		  "B 1150 tid=1 [off-CPU]\n"
		  "E 2000 tid=1 [off-CPU]\n"
		  "E 2000 tid=1 read\n"
		  "B 2000 tid=1 crunch address=0x402000 symbol=crunch\n"
		  "B 2200 tid=1 [off-CPU: preempted] address=0x0 symbol=[off-CPU: preempted]\n"
		  "E 2500 tid=1 [off-CPU: preempted]\n"
		  "B 0 tid=1 main address=0x400000 symbol=main inferred_start_time=true\n"
		  "B 0 tid=1 loop address=0x401000 symbol=loop inferred_start_time=true\n"
		  "B 0 tid=1 crunch inferred_start_time=true\n"
		  "E 2725 tid=1 crunch inferred_end_time=true sampled_ns=500\n"
		  "E 2725 tid=1 loop inferred_end_time=true\n"
		  "E 2725 tid=1 main inferred_end_time=true\n"
		  "C 0 tid=1 snaptrace.sampling period_ns=250 inferred_end_time=1\n");
	CHECK_U64_EQ(3, d.s.switches_out);
	CHECK_U64_EQ(1, d.s.preempted);
	CHECK_U64_EQ(2, d.s.offcpu_slices);
	CHECK_U64_EQ(1, d.s.preempted_slices);
	CHECK_U64_EQ(1, d.s.unsampled);
	CHECK_U64_EQ(150, d.s.unsampled_ns);
	drv_fini(&d);
}

/* docs/sampling.md "Idle gaps": without switch records, a gap of more than
 * SNAP_BUILDER_GAP_PERIODS clock periods is [off-CPU: inferred]; not for
 * other events, not within the bound, not when the trace records switches. */
static void idle_gaps(void)
{
	static const char *const in[] = {
		"1000 1/1 sample cpu-clock@250 400000 main 401000 loop+0x0 402000 crunch",
		"1250 1/1 sample cpu-clock@250 400000 main 401000 loop+0x0 402000 crunch",
		"101250 1/1 sample cpu-clock@250 400000 main 401000 loop+0x0 402000 crunch",
		"102250 1/1 sample cpu-clock@250 400000 main 401000 loop+0x0 402000 crunch",
		"1000 1/2 sample cycles@250 400000 main 401000 loop+0x0",
		"9000 1/2 sample cycles@250 400000 main 401000 loop+0x0",
		NULL,
	};
	static const char *const sw[] = {
		"1000 1/1 sample cpu-clock@250 400000 main",
		"1100 1/3 switch in", /* any switch record: the trace records them */
		"9000 1/1 sample cpu-clock@250 400000 main",
		NULL,
	};
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, in));
	check_out(&d, __func__,
		  "T pid=1 tid=1 proc=[pid=1] thread=[pid=1] [tid=1]\n"
		  "E 375 tid=1 crunch\n"
		  "B 375 tid=1 [off-CPU: inferred] address=0x0 symbol=[off-CPU: inferred]\n"
		  "E 100125 tid=1 [off-CPU: inferred]\n"
		  "B 100125 tid=1 crunch address=0x402000 symbol=crunch\n"
		  "T pid=1 tid=2 proc=[pid=1] thread=[pid=1] [tid=2]\n"
		  "B 0 tid=1 main address=0x400000 symbol=main inferred_start_time=true\n"
		  "B 0 tid=1 loop address=0x401000 symbol=loop inferred_start_time=true\n"
		  "B 0 tid=1 crunch inferred_start_time=true\n"
		  "E 101375 tid=1 crunch\n"
		  "E 101375 tid=1 loop\n"
		  "E 101375 tid=1 main\n"
		  "B 0 tid=2 main address=0x400000 symbol=main inferred_start_time=true\n"
		  "B 0 tid=2 loop address=0x401000 symbol=loop inferred_start_time=true\n"
		  "E 8000 tid=2 loop\n"
		  "E 8000 tid=2 main\n"
		  "C 0 tid=1 snaptrace.sampling period_ns=250 inferred_end_time=1\n"
		  "C 0 tid=2 snaptrace.sampling period_ns=8000 inferred_end_time=1\n");
	CHECK_U64_EQ(1, d.s.gaps_inferred);
	CHECK_U64_EQ(100125 - 375, d.s.gap_ns);
	drv_fini(&d);
	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, sw));
	CHECK_U64_EQ(0, d.s.gaps_inferred);
	drv_fini(&d);
}

/* docs/sampling.md "Threads born and exiting". */
static void threads_born_and_exiting(void)
{
	static const char *const in[] = {
		"0 1/1 task fork", /* synthesized (time 0): not a birth */
		"1000 1/1 sample cpu-clock@250 400000 main",
		"1100 1/2 task fork",
		"1150 1/2 switch in",
		"1400 1/2 sample cpu-clock@250 500000 worker",
		"1650 1/2 sample cpu-clock@250 500000 worker",
		"1700 1/2 task exit",
		"1710 1/2 switch out", /* after its exit: nothing */
		"2000 1/3 task fork",
		"2100 1/3 sample cpu-clock@250 500000 worker",
		"2200 1/3 task exit", /* at the last sample + half a period */
		"2500 1/1 sample cpu-clock@250 400000 main",
		/* preempted in a futex wake, back in, exits before any sample: the
		 * time to the exit is [on-CPU: unsampled], not the wake's */
		"3000 1/4 task fork",
		"3100 1/4 sample cpu-clock@250 500000 worker 500100 lock_wake",
		"3200 1/4 switch chain 500000 worker 500100 lock_wake",
		"3201 1/4 switch preempt",
		"3300 1/4 switch in",
		"3500 1/4 task exit",
		NULL,
	};
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	mock_show_end_args(&d.m);
	CHECK_INT_EQ(0, drv_run(&d, in));
	check_out(&d, __func__,
		  "T pid=1 tid=1 proc=[pid=1] thread=[pid=1] [tid=1]\n"
		  "T pid=1 tid=2 proc=[pid=1] thread=[pid=1] [tid=2]\n"
		  "B 150 tid=2 worker address=0x500000 symbol=worker\n"
		  "E 700 tid=2 worker sampled_ns=500\n"
		  "T pid=1 tid=3 proc=[pid=1] thread=[pid=1] [tid=3]\n"
		  "B 1101 tid=3 worker address=0x500000 symbol=worker\n"
		  "E 1200 tid=3 worker sampled_ns=250\n"
		  "T pid=1 tid=4 proc=[pid=1] thread=[pid=1] [tid=4]\n"
		  "B 2101 tid=4 worker address=0x500000 symbol=worker\n"
		  "B 2101 tid=4 lock_wake address=0x500100 symbol=lock_wake\n"
		  "B 2200 tid=4 [off-CPU: preempted] address=0x0 symbol=[off-CPU: preempted]\n"
		  "E 2300 tid=4 [off-CPU: preempted]\n"
		  "E 2300 tid=4 lock_wake sampled_ns=250\n"
		  "E 2300 tid=4 worker\n"
		  "B 2300 tid=4 [on-CPU: unsampled] address=0x0 symbol=[on-CPU: unsampled]\n"
		  "E 2500 tid=4 [on-CPU: unsampled]\n"
		  "B 0 tid=1 main address=0x400000 symbol=main inferred_start_time=true\n"
		  "E 1625 tid=1 main inferred_end_time=true sampled_ns=500\n"
		  "C 0 tid=1 snaptrace.sampling period_ns=250 inferred_end_time=1\n"
		  "C 400 tid=2 snaptrace.sampling period_ns=250 inferred_end_time=1\n"
		  "C 1101 tid=3 snaptrace.sampling period_ns=250 inferred_end_time=1\n"
		  "C 2101 tid=4 snaptrace.sampling period_ns=250 inferred_end_time=1\n");
	CHECK_U64_EQ(3, d.s.births);
	CHECK_U64_EQ(3, d.s.exits);
	drv_fini(&d);
}

/* run's program recorded from its first instruction (snap_procname's born):
 * its main thread's first sample, already in main (a static binary), begins
 * main for real; without born, or after a snapshot boundary, it was running
 * before the data began, as before. Its other threads are born by their fork
 * records as for every process. */
static void born_at_start_run(int born, int boundary, const char *want)
{
	/* no command line known (name NULL): born alone puts it in names */
	const struct snap_procname names[] = {{1, NULL, born}};
	struct snap_builder_opts o = {.names = names, .nnames = 1};
	static const char *const in[] = {
		"0 1/1 task fork",    /* perf's synthesized record for -t PID */
		"1000 1/1 task exec", /* an exec before its first sample */
		"5000 1/1 sample cpu-clock@250 400000 main 401000 work",
		"5250 1/1 sample cpu-clock@250 400000 main",
		"5400 1/1 task exit",
		NULL,
	};
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, &o));
	mock_show_end_args(&d.m);
	if (boundary) {
		CHECK_INT_EQ(0, drv_feed(&d, "900 2/2 sample cpu-clock@250 400000 other"));
		snap_builder_new_snapshot(&d.bld);
	}
	CHECK_INT_EQ(0, drv_run(&d, in));
	check_out(&d, __func__, want);
	CHECK_U64_EQ(born && !boundary ? 1 : 0, d.s.births);
	drv_fini(&d);
}

static void born_at_start(void)
{
	born_at_start_run(1, 0,
			  "T pid=1 tid=1 proc=[pid=1] thread=[pid=1] [tid=1]\n"
			  "E 250 tid=1 work sampled_ns=250\n"
			  "B 0 tid=1 main address=0x400000 symbol=main\n"
			  "B 0 tid=1 work address=0x401000 symbol=work\n"
			  "E 375 tid=1 main sampled_ns=250\n"
			  "C 0 tid=1 snaptrace.sampling period_ns=250 inferred_end_time=1\n");
	born_at_start_run(0, 0,
			  "T pid=1 tid=1 proc=[pid=1] thread=[pid=1] [tid=1]\n"
			  "E 250 tid=1 work sampled_ns=250\n"
			  "B 0 tid=1 main address=0x400000 symbol=main inferred_start_time=true\n"
			  "B 0 tid=1 work address=0x401000 symbol=work inferred_start_time=true\n"
			  "E 375 tid=1 main sampled_ns=250\n"
			  "C 0 tid=1 snaptrace.sampling period_ns=250 inferred_end_time=1\n");
	/* first seen after a snapshot boundary: the data of this snapshot began
	 * after the program started */
	born_at_start_run(
		1, 1,
		"T pid=2 tid=2 proc=[pid=2] thread=[pid=2] [tid=2]\n"
		"B 0 tid=2 other address=0x400000 symbol=other inferred_start_time=true\n"
		"E 0 tid=2 other inferred_end_time=true sampled_ns=250\n"
		"T pid=1 tid=1 proc=[pid=1] thread=[pid=1] [tid=1]\n"
		"B 4101 tid=1 main address=0x400000 symbol=main inferred_start_time=true\n"
		"B 4101 tid=1 work address=0x401000 symbol=work inferred_start_time=true\n"
		"E 4350 tid=1 work sampled_ns=250\n"
		"E 4475 tid=1 main sampled_ns=250\n"
		"C 0 tid=2 snaptrace.sampling period_ns=250 inferred_end_time=1\n"
		"C 4101 tid=1 snaptrace.sampling period_ns=250 inferred_end_time=1\n");
}

/* A snapshot boundary while a thread is off the CPU closes its [off-CPU]
 * slice with everything else; the next sample must not close a real frame. */
static void offcpu_across_snapshot(void)
{
	static const char *const in1[] = {
		"1000 1/1 sample cpu-clock 400000 main 401000 a",
		"1100 1/1 switch preempt",
		NULL,
	};
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	for (size_t i = 0; in1[i]; i++)
		CHECK_INT_EQ(0, drv_feed(&d, in1[i]));
	snap_builder_new_snapshot(&d.bld);
	CHECK_INT_EQ(0, drv_feed(&d, "5000 1/1 sample cpu-clock 400000 main 401000 a"));
	CHECK_INT_EQ(0, drv_feed(&d, "6000 1/1 switch in"));
	CHECK_INT_EQ(0, drv_feed(&d, "7000 1/1 sample cpu-clock 400000 main 401000 a"));
	CHECK_INT_EQ(0, snap_builder_finish(&d.bld));
	check_out(&d, __func__,
		  "T pid=1 tid=1 proc=[pid=1] thread=[pid=1] [tid=1]\n"
		  "B 100 tid=1 [off-CPU: preempted] address=0x0 symbol=[off-CPU: preempted]\n"
		  "B 0 tid=1 main address=0x400000 symbol=main inferred_start_time=true\n"
		  "B 0 tid=1 a address=0x401000 symbol=a inferred_start_time=true\n"
		  "E 100 tid=1 [off-CPU: preempted]\n"
		  "E 100 tid=1 a\n"
		  "E 100 tid=1 main\n"
		  /* running before the new snapshot's data began */
		  "B 4000 tid=1 main inferred_start_time=true\n"
		  "B 4000 tid=1 a inferred_start_time=true\n"
		  "E 6000 tid=1 a\n"
		  "E 6000 tid=1 main\n"
		  "C 0 tid=1 snaptrace.sampling period_ns=1 inferred_end_time=1\n");
	drv_fini(&d);
}

/* Switch records mean nothing in a PT trace (its branches say it all). */
static void switches_ignored_with_branches(void)
{
	static const char *const in[] = {
		"1000 1/1 strt 0 - 400000 main",
		"1010 1/1 switch out",
		"1020 1/1 switch in",
		NULL,
	};
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, in));
	CHECK_U64_EQ(2, d.s.switches_ignored);
	CHECK_U64_EQ(0, d.s.offcpu_slices);
	drv_fini(&d);
}

/* Tracks follow comm changes; with an opts name, a thread still called by its
 * process's first comm takes the opts name, any other comm is its own. */
static void comm_changes(void)
{
	static const struct snap_procname names[] = {{5, "./prog --flag", 0}};
	struct snap_builder_opts o = {.names = names, .nnames = 1};
	static const char *const in[] = {
		"100 5/5 comm=prog sample cpu-clock 400000 main",
		"110 5/6 comm=prog sample cpu-clock 500000 worker",
		"120 5/6 comm=myworker sample cpu-clock 500000 worker",
		"130 5/7 comm=other sample cpu-clock 500000 worker",
		"140 5/6 sample cpu-clock 500000 worker", /* no comm: no change */
		"150 5/5 comm=sh sample cpu-clock 600000 main",
		NULL,
	};
	struct drv d;
	char out[4096];

	CHECK_INT_EQ(0, drv_init(&d, &o));
	CHECK_INT_EQ(0, drv_run(&d, in));
	mock_lines(&d.m, "T", out, sizeof(out));
	CHECK_STR_EQ("T pid=5 tid=5 proc=./prog --flag [pid=5] thread=./prog --flag [pid=5] "
		     "[tid=5]\n"
		     "T pid=5 tid=6 proc=./prog --flag [pid=5] thread=./prog --flag [pid=5] "
		     "[tid=6]\n"
		     "T pid=5 tid=6 proc=./prog --flag [pid=5] thread=myworker [pid=5] [tid=6]\n"
		     "T pid=5 tid=7 proc=./prog --flag [pid=5] thread=other [pid=5] [tid=7]\n"
		     "T pid=5 tid=5 proc=./prog --flag [pid=5] thread=sh [pid=5] [tid=5]\n",
		     out);
	CHECK_U64_EQ(2, d.s.renames);
	drv_fini(&d);
}

/* The common branch's path of snap_builder_feed (docs/design.md "The common
 * branch takes a lean path") is only for a branch that needs nothing else:
 * a branch on the last event's thread still renames its track when its comm
 * changed, ends the thread's off-CPU slice, and opens the off-CPU slice a
 * sched_switch chain left waiting, as the general path does. */
static void common_branch_path(void)
{
	static const char *const renamed[] = {
		"100 1/1 comm=a strt 0 - 400000 main",
		"110 1/1 comm=a call 400010 main 401000 f",
		"120 1/1 comm=b return 401010 f 400014 main",
		NULL,
	};
	static const char *const offcpu[] = {
		"1000 1/1 comm=p sample cpu-clock 400000 main 401000 spin",
		"1100 1/1 switch out",
		"1200 1/1 call 400010 main 402000 g",
		NULL,
	};
	static const char *const chain[] = {
		"1000 1/1 comm=p sample cpu-clock 400000 main 401000 nap",
		"1100 1/1 switch chain 400010 main+0x10 401200 nap+0x4 ffffffff81000000 __schedule",
		"1200 1/1 call 401210 nap 402000 g",
		NULL,
	};
	struct drv d;
	char out[4096];

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, renamed));
	mock_lines(&d.m, "T", out, sizeof(out));
	CHECK_STR_EQ("T pid=1 tid=1 proc=a [pid=1] thread=a [pid=1] [tid=1]\n"
		     "T pid=1 tid=1 proc=a [pid=1] thread=b [pid=1] [tid=1]\n",
		     out);
	CHECK_U64_EQ(1, d.s.renames);
	drv_fini(&d);

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, offcpu));
	/* the branch ends [off-CPU] where it runs again, then calls */
	check_out(&d, "offcpu",
		  "T pid=1 tid=1 proc=p [pid=1] thread=p [pid=1] [tid=1]\n"
		  "E 100 tid=1 spin\n"
		  "E 100 tid=1 main\n"
		  "B 100 tid=1 [off-CPU] address=0x0 symbol=[off-CPU]\n"
		  "E 200 tid=1 [off-CPU]\n"
		  "B 200 tid=1 g address=0x402000 symbol=g\n"
		  "B 0 tid=1 main address=0x400000 symbol=main inferred_start_time=true\n"
		  "B 0 tid=1 spin address=0x401000 symbol=spin inferred_start_time=true\n"
		  "E 200 tid=1 g\n"
		  "C 0 tid=1 snaptrace.sampling period_ns=1 inferred_end_time=1\n");
	drv_fini(&d);

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, chain));
	/* the chain's [off-CPU] opens at the chain (no switch record came), and
	 * the branch ends it */
	check_out(&d, "chain",
		  "T pid=1 tid=1 proc=p [pid=1] thread=p [pid=1] [tid=1]\n"
		  "E 100 tid=1 nap\n"
		  "B 100 tid=1 nap address=0x401200 symbol=nap\n"
		  "B 100 tid=1 [off-CPU] address=0x0 symbol=[off-CPU]\n"
		  "E 200 tid=1 [off-CPU]\n"
		  "B 200 tid=1 g address=0x402000 symbol=g\n"
		  "B 0 tid=1 main address=0x400000 symbol=main inferred_start_time=true\n"
		  "B 0 tid=1 nap address=0x401000 inferred_start_time=true\n"
		  "E 200 tid=1 g\n"
		  "E 200 tid=1 nap\n"
		  "E 200 tid=1 main\n"
		  "C 0 tid=1 snaptrace.sampling period_ns=1 inferred_end_time=1\n");
	drv_fini(&d);
}

/* The pipeline's count of what it fed (cli/pipeline.c count_events): what
 * snap_builder_feed_n's count must give. */
static void count_like_pipeline(struct snap_feed_count *c, const struct snap_event *ev)
{
	if (ev->kind == SNAP_EV_SAMPLE)
		c->samples++;
	else if (ev->kind == SNAP_EV_BRANCH)
		c->branches++;
	else
		return;
	if (!ev->has_time)
		return;
	if (!c->first_time || ev->time < c->first_time)
		c->first_time = ev->time;
	if (ev->time > c->last_time)
		c->last_time = ev->time;
}

/* in fed to a builder one event at a time (snap_builder_feed) and in runs of
 * chunk events (snap_builder_feed_n, 0: all at once) gives the same output,
 * stats and counts: a run of branches on the lean path leaves it at the first
 * event that needs the general path (another thread, a new comm, a
 * transaction, a kernel address, a time before the base or at 0, a sample or
 * a switch), and takes it up again after. */
static void feed_n_case(const char *name, const char *const *in, size_t chunk)
{
	static struct test_ev te[32], tb[32]; /* (tb[i].ev.frames point in tb[i]) */
	struct snap_event ev[32];
	struct snap_feed_count c1 = {0}, c2 = {0};
	struct snap_builder_stats s1, s2;
	struct drv a, b;
	size_t n = 0, at = 0;

	CHECK_INT_EQ(0, drv_init(&a, NULL));
	CHECK_INT_EQ(0, drv_init(&b, NULL));
	for (; in[n]; n++) {
		CHECK(n < 32);
		CHECK_INT_EQ(0, test_ev_parse(&a.st, in[n], &te[n]));
		CHECK_INT_EQ(0, snap_builder_feed(&a.bld, &te[n].ev));
		count_like_pipeline(&c1, &te[n].ev);
		CHECK_INT_EQ(0, test_ev_parse(&b.st, in[n], &tb[n]));
		ev[n] = tb[n].ev;
	}
	for (size_t i = 0; i < n; i += at) {
		size_t m = chunk && n - i > chunk ? chunk : n - i;

		CHECK_INT_EQ(0, snap_builder_feed_n(&b.bld, ev + i, m, &at, &c2));
		CHECK_U64_EQ(m, at);
	}
	CHECK_INT_EQ(0, snap_builder_finish(&a.bld));
	CHECK_INT_EQ(0, snap_builder_finish(&b.bld));
	if (strcmp(a.m.text, b.m.text))
		fprintf(stderr, "case %s, chunk %zu:\n--- one at a time\n%s--- in runs\n%s", name,
			chunk, a.m.text, b.m.text);
	CHECK_STR_EQ(a.m.text, b.m.text);
	snap_builder_stats(&a.bld, &s1);
	snap_builder_stats(&b.bld, &s2);
	CHECK_U64_EQ(s1.events, s2.events);
	CHECK_U64_EQ(n, s2.events);
	CHECK_U64_EQ(s1.time_backwards, s2.time_backwards);
	CHECK_U64_EQ(s1.renames, s2.renames);
	CHECK_U64_EQ(s1.unmatched_returns, s2.unmatched_returns);
	CHECK_U64_EQ(c1.samples, c2.samples);
	CHECK_U64_EQ(c1.branches, c2.branches);
	CHECK_U64_EQ(c1.first_time, c2.first_time);
	CHECK_U64_EQ(c1.last_time, c2.last_time);
	drv_fini(&a);
	drv_fini(&b);
}

static void feed_n_leaves_the_lean_path(void)
{
	static const char *const branches[] = {
		"1000 1/1 comm=a strt 0 - 400000 main",
		"1010 1/1 call 400010 main 401000 f",
		"1010 1/1 call 401010 f 402000 g",
		"1020 1/1 return 402010 g 401014 f",
		"1030 1/1 jmp 401020 f 401030 f",
		"1035 1/1 jmp 401030 f 403000 h",
		"1040 1/1 comm=b call 403010 h 402000 g",
		"1050 1/1 call (x) 402010 g 404000 tx",
		"1060 1/1 return (x) 404010 tx 402014 g",
		"1070 1/1 call 402020 g ffffffff81000000 k",
		"900 1/1 return 402030 g 403014 h",
		"1080 1/2 call 400010 main 401000 f",
		"1090 1/1 return 403020 h 400014 main",
		"1100 1/1 return 400030 main 0 -",
		"1110 1/2 return 401010 f 400014 main",
		"1120 1/2 call 400020 main 402000 g",
		NULL,
	};
	static const char *const backwards[] = {
		"1000 1/1 strt 0 - 400000 main",	"1010 1/1 call 400010 main 401000 f",
		"900 1/1 return 401010 f 400014 main",	"1020 1/1 call 400020 main 402000 g",
		"1030 1/1 call (x) 402010 g 404000 tx", "1035 1/1 tx abrt 404010 tx 402014 g",
		"1040 1/1 return 402020 g 400024 main", NULL,
	};
	static const char *const zero[] = {
		"0 1/1 strt 0 - 400000 main",	     "0 1/1 call 400010 main 401000 f",
		"5 1/1 return 401010 f 400014 main", "0 1/1 call 400020 main 402000 g",
		"7 1/1 return 402010 g 400024 main", NULL,
	};
	static const char *const offcpu[] = {
		"1000 1/1 comm=p sample cpu-clock 400000 main 401000 spin",
		"1100 1/1 switch out",
		"1200 1/1 call 400010 main 402000 g",
		"1210 1/1 return 402010 g 400014 main",
		"1300 1/1 sample cpu-clock 400000 main 401000 spin",
		"1310 1/1 call 400010 main 402000 g",
		NULL,
	};
	static const size_t chunks[] = {0, 1, 2, 3, 5};

	for (size_t k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
		feed_n_case("branches", branches, chunks[k]);
		feed_n_case("backwards", backwards, chunks[k]);
		feed_n_case("zero", zero, chunks[k]);
		feed_n_case("offcpu", offcpu, chunks[k]);
	}
}

/* After snap_builder_finish every event is refused (-EINVAL) and writes
 * nothing, the branches that took the lean path before it too. */
static void feed_after_finish(void)
{
	static const char *const in[] = {
		"100 1/1 strt 0 - 400000 main",
		"110 1/1 call 400010 main 401000 f",
		"120 1/1 call 401010 f 402000 g",
		NULL,
	};
	struct drv d;
	size_t before;

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, in));
	before = d.m.len;
	CHECK_INT_EQ(-EINVAL, drv_feed(&d, "130 1/1 return 402010 g 401014 f"));
	CHECK_INT_EQ(-EINVAL, drv_feed(&d, "140 1/1 call 401020 f 402000 g"));
	CHECK_U64_EQ(before, d.m.len);
	drv_fini(&d);
}

/* A thread the program named may be sampled before the main thread: its comm
 * is not the process's, which is the main thread's. The threads seen before
 * the main thread are named again from it (here: the worker, first named
 * like the process, keeps "myworker"). */
static void named_thread_before_main(void)
{
	static const struct snap_procname names[] = {{5, "./prog --flag", 0}};
	struct snap_builder_opts o = {.names = names, .nnames = 1};
	static const char *const in[] = {
		"100 5/6 comm=myworker sample cpu-clock 500000 worker",
		"105 5/7 comm=prog sample cpu-clock 500000 worker",
		"110 5/5 comm=prog sample cpu-clock 400000 main",
		"120 5/6 comm=myworker sample cpu-clock 500000 worker",
		"130 9/10 comm=late sample cpu-clock 500000 worker",
		NULL,
	};
	struct drv d;
	char out[4096];

	CHECK_INT_EQ(0, drv_init(&d, &o));
	CHECK_INT_EQ(0, drv_run(&d, in));
	mock_lines(&d.m, "T", out, sizeof(out));
	CHECK_STR_EQ("T pid=5 tid=6 proc=./prog --flag [pid=5] thread=./prog --flag [pid=5] "
		     "[tid=6]\n"
		     "T pid=5 tid=7 proc=./prog --flag [pid=5] thread=prog [pid=5] [tid=7]\n"
		     "T pid=5 tid=6 proc=./prog --flag [pid=5] thread=myworker [pid=5] [tid=6]\n"
		     "T pid=5 tid=7 proc=./prog --flag [pid=5] thread=./prog --flag [pid=5] "
		     "[tid=7]\n"
		     "T pid=5 tid=5 proc=./prog --flag [pid=5] thread=./prog --flag [pid=5] "
		     "[tid=5]\n"
		     "T pid=9 tid=10 proc=late [pid=9] thread=late [pid=9] [tid=10]\n",
		     out);
	CHECK_U64_EQ(2, d.s.renames);
	drv_fini(&d);
}

/* Junk at the outer end of a chain is cut; it is not a scope violation.
 * These lines carry no DSOs (as perf prints without -F dso), so only
 * kernel-looking junk outside the kernel part is cut; the rule for addresses
 * without a DSO is in the golden tests (tests/golden/samples/chain_cut_junk). */
static void chain_cut(void)
{
	static const char *const in[] = {
		"100 1/1 sample cpu-clock 400000 main 3133003532353533 - 401000 f 402000 leaf",
		"200 1/1 sample cpu-clock ffffffffffffff00 - 401000 f 402010 leaf",
		"300 1/1 sample cpu-clock 400000 main 401000 f ffffffff81000000 k",
		NULL,
	};
	struct drv d;
	uint64_t cut, nosym;

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, in));
	CHECK_U64_EQ(1, d.s.chains_cut);
	CHECK_U64_EQ(1, d.s.frames_cut);
	CHECK_U64_EQ(1, d.s.violations); /* the real kernel frame of the last sample */
	CHECK(strstr(d.m.text, "0xffffffffffffff00") == NULL);
	CHECK(strstr(d.m.text, "0x3133003532353533") != NULL);
	CHECK_INT_EQ(0, (int)snap_builder_quality(&d.s, &cut, &nosym)); /* too few samples */
	CHECK_U64_EQ(33, cut);
	d.s.samples = 100;
	d.s.chains_cut = 40;
	CHECK_INT_EQ(SNAP_BUILDER_Q_CUT, (int)snap_builder_quality(&d.s, &cut, &nosym));
	CHECK_U64_EQ(40, cut);
	drv_fini(&d);
}

/* perf ends some chains with ffffffffffffffff (its end-of-chain marker):
 * dropped, not counted as a cut, so the quality line does not blame frame
 * pointers for it; a dwarf recording is never advised to use dwarf. */
static void chain_end_marker(void)
{
	static const char *const in[] = {
		"100 1/1 sample cpu-clock ffffffffffffffff - 400000 main 401000 f 402000 leaf",
		"200 1/1 sample cpu-clock ffffffffffffffff - 400000 main 402010 leaf",
		"300 1/1 sample cpu-clock 400000 main 401000 f",
		/* a switch chain's junk is cut, but only sample chains count (the
		 * quality line weighs the cuts against the samples) */
		"400 1/1 switch chain ffffffffffffff00 - 400010 main 7000 nanosleep",
		"500 1/1 switch in",
		"600 1/1 sample cpu-clock 400000 main 401000 f",
		NULL,
	};
	struct drv d;
	uint64_t cut, nosym;

	CHECK_INT_EQ(0, drv_init(&d, NULL));
	CHECK_INT_EQ(0, drv_run(&d, in));
	CHECK_U64_EQ(0, d.s.chains_cut);
	CHECK_U64_EQ(0, d.s.frames_cut);
	CHECK_U64_EQ(0, d.s.violations);
	CHECK_U64_EQ(0, d.s.sample_frames_dropped);
	CHECK(strstr(d.m.text, "0xffffffffffffffff") == NULL);
	CHECK(strstr(d.m.text, "main") != NULL);
	d.s.samples = 100;
	CHECK_INT_EQ(0, (int)snap_builder_quality(&d.s, &cut, &nosym));
	d.s.chains_cut = 40;
	CHECK_INT_EQ(SNAP_BUILDER_Q_CUT, (int)snap_builder_quality(&d.s, &cut, &nosym));
	drv_fini(&d);
}

static const char *const alloc_sampling_in[] = {
	"1000 1/1 comm=prog sample cpu-clock 400000 main 401000 a",
	"1100 1/1 switch preempt",
	"1200 1/1 switch in",
	"1300 1/2 comm=prog sample cpu-clock 400000 main",
	"1400 1/2 comm=worker switch chain 400010 main+0x10 7000 nanosleep",
	"1500 1/1 switch out",
	"1600 1/1 sample cpu-clock 400000 main 401000 a",
	NULL,
};

static void alloc_failures_sampling(void)
{
	struct alloc_case r = {NULL, alloc_sampling_in};

	alloc_sweep(alloc_run, &r, 400);
}

/* A null timeline for the speed check. */
static int null_thread(struct snap_timeline *tl, int32_t pid, int32_t tid, uint32_t p, uint32_t t)
{
	(void)tl, (void)pid, (void)tid, (void)p, (void)t;
	return 0;
}
static int null_begin(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
		      uint32_t name, const struct snap_arg *args, size_t nargs)
{
	(void)tl, (void)pid, (void)tid, (void)ts, (void)name, (void)args, (void)nargs;
	return 0;
}
static int null_end(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts, uint32_t name)
{
	(void)tl, (void)pid, (void)tid, (void)ts, (void)name;
	return 0;
}
static int null_complete(struct snap_timeline *tl, int32_t pid, int32_t tid, uint64_t ts,
			 uint64_t end_ts, uint32_t name, const struct snap_arg *args, size_t nargs)
{
	(void)tl, (void)pid, (void)tid, (void)ts, (void)end_ts, (void)name, (void)args, (void)nargs;
	return 0;
}
static int null_finish(struct snap_timeline *tl)
{
	(void)tl;
	return 0;
}

/* Steady-state decode of call/return/jump events: reports the rate. */
static void throughput(void)
{
	static const struct snap_timeline_ops ops = {
		.thread = null_thread,
		.begin = null_begin,
		.end = null_end,
		.complete = null_complete,
		.counter = null_begin,
		.finish = null_finish,
	};
	struct snap_timeline tl = {&ops};
	struct snap_strtab st;
	struct snap_builder bld;
	struct snap_event ev[4];
	struct timespec a, b;
	const long n = 2000000;
	struct snap_builder_stats s;
	double secs;
	int err = 0;

	snap_strtab_init(&st);
	CHECK_INT_EQ(0, snap_builder_init(&bld, &tl, &st, NULL));
	memset(ev, 0, sizeof(ev));
	for (int i = 0; i < 4; i++) {
		ev[i].kind = SNAP_EV_BRANCH;
		ev[i].pid = ev[i].tid = 1 + (i & 1);
		ev[i].has_time = 1;
		ev[i].src.sym = 1;
		ev[i].dst.sym = 2;
	}
	ev[0].br_kind = ev[1].br_kind = SNAP_BR_CALL;
	ev[2].br_kind = ev[3].br_kind = SNAP_BR_RETURN;
	ev[2].dst.sym = ev[3].dst.sym = 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n && err >= 0; i++) {
		struct snap_event *e = &ev[i & 3];

		e->time = 1000 + (uint64_t)i / 3;
		err = snap_builder_feed(&bld, e);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	/* Timing never fails the test, but every event must have been taken. */
	CHECK_INT_EQ(0, err);
	snap_builder_stats(&bld, &s);
	CHECK_U64_EQ((uint64_t)n, s.events);
	CHECK_U64_EQ(2, s.threads);
	CHECK_INT_EQ(0, snap_builder_finish(&bld));
	secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	fprintf(stderr, "builder: %.1f M branch events/s\n", (double)n / secs / 1e6);
	snap_builder_fini(&bld);
	snap_strtab_fini(&st);
}

/* docs/behaviour.md §6.3 "Slices": each thread's first begin of a function carries
 * magic-trace's args; later ones only what differs: address when it is not the
 * described one (foo re-pushed at 0x401050 by a return into its middle), symbol when
 * the slice is not named by it (MAGIC_TRACE_DEBUG's "main [inferred start time]").
 * Other threads describe foo again. -per-call-args (per_call_args) gives every begin
 * the full args, as before. */
static void args_once_per_thread(void)
{
	static const char *const in[] = {
		"1000 1/1 strt 0 - 400000 main",
		"1010 1/1 call 400010 main 401000 foo",
		"1020 1/1 return 401010 foo 400015 main",
		"1030 1/1 call 400020 main 401000 foo",
		"1040 1/1 return 401010 foo 400025 main",
		"1050 1/1 call 400030 main 401000 foo",
		"1060 1/1 return 401010 foo 401050 foo",
		"1070 1/2 strt 0 - 400000 main",
		"1080 1/2 call 400010 main 401000 foo",
		"1100 1/3 strt 0 - 401000 foo",
		"1110 1/3 return 401010 foo 400015 main",
		"1120 1/3 call 400020 main 400015 main",
		NULL,
	};
	static const char lean[] =
		"T pid=1 tid=1 proc=[pid=1] thread=[pid=1] [tid=1]\n"
		"B 10 tid=1 foo address=0x401000 symbol=foo\n"
		"E 20 tid=1 foo\n"
		"B 30 tid=1 foo\n"
		"E 40 tid=1 foo\n"
		"B 50 tid=1 foo\n"
		"T pid=1 tid=2 proc=[pid=1] thread=[pid=1] [tid=2]\n"
		"B 71 tid=2 main address=0x400000 symbol=main\n"
		"T pid=1 tid=3 proc=[pid=1] thread=[pid=1] [tid=3]\n"
		"B 101 tid=3 foo address=0x401000 symbol=foo\n"
		"E 110 tid=3 foo\n"
		"E 60 tid=1 foo\n"
		"E 60 tid=1 main\n"
		"B 60 tid=1 foo address=0x401050\n"
		"B 0 tid=1 main address=0x400000 symbol=main\n"
		"E 60 tid=1 foo\n"
		"B 80 tid=2 foo address=0x401000 symbol=foo\n"
		"E 80 tid=2 foo\n"
		"E 80 tid=2 main\n"
		"B 120 tid=3 main address=0x400015 symbol=main\n"
		"B 100 tid=3 main [inferred start time] symbol=main inferred_start_time=true\n"
		"E 120 tid=3 main\n"
		"E 120 tid=3 main [inferred start time]\n";
	static const char full[] = "T pid=1 tid=1 proc=[pid=1] thread=[pid=1] [tid=1]\n"
				   "B 10 tid=1 foo address=0x401000 symbol=foo\n"
				   "E 20 tid=1 foo\n"
				   "B 30 tid=1 foo address=0x401000 symbol=foo\n"
				   "E 40 tid=1 foo\n"
				   "B 50 tid=1 foo address=0x401000 symbol=foo\n"
				   "T pid=1 tid=2 proc=[pid=1] thread=[pid=1] [tid=2]\n"
				   "B 71 tid=2 main address=0x400000 symbol=main\n"
				   "T pid=1 tid=3 proc=[pid=1] thread=[pid=1] [tid=3]\n"
				   "B 101 tid=3 foo address=0x401000 symbol=foo\n"
				   "E 110 tid=3 foo\n"
				   "E 60 tid=1 foo\n"
				   "E 60 tid=1 main\n"
				   "B 60 tid=1 foo address=0x401050 symbol=foo\n"
				   "B 0 tid=1 main address=0x400000 symbol=main\n"
				   "E 60 tid=1 foo\n"
				   "B 80 tid=2 foo address=0x401000 symbol=foo\n"
				   "E 80 tid=2 foo\n"
				   "E 80 tid=2 main\n"
				   "B 120 tid=3 main address=0x400015 symbol=main\n"
				   "B 100 tid=3 main [inferred start time] address=0x400015 "
				   "symbol=main inferred_start_time=true\n"
				   "E 120 tid=3 main\n"
				   "E 120 tid=3 main [inferred start time]\n";
	struct snap_builder_opts o = {.debug_names = 1};
	struct drv d;

	CHECK_INT_EQ(0, drv_init(&d, &o));
	CHECK_INT_EQ(0, drv_run(&d, in));
	check_out(&d, "args_once_per_thread", lean);
	drv_fini(&d);
	o.per_call_args = 1;
	CHECK_INT_EQ(0, drv_init(&d, &o));
	CHECK_INT_EQ(0, drv_run(&d, in));
	check_out(&d, "args_once_per_thread, per_call_args", full);
	drv_fini(&d);
}

int main(void)
{
	snap_log_level = SNAP_LOG_QUIET; /* decode errors warn */
	RUN(naming_and_two_pids);
	RUN(unknown_ids_and_no_comm);
	RUN(thread_names_per_pid);
	RUN(end_order_is_first_appearance);
	RUN(first_branch_restarts_early_threads);
	RUN(snapshot_boundary_restarts);
	RUN(feed_after_finish);
	RUN(power_and_extra_tracks);
	RUN(hits_and_base_time);
	RUN(base_time_override);
	RUN(hits_only);
	RUN(hits_many_pids);
	RUN(scope_user);
	RUN(scope_user_strict);
	RUN(scope_kernel);
	RUN(scope_both_never_violates);
	RUN(tsx_commit_abort_error);
	RUN(tsx_pending_at_finish);
	RUN(desc_formats);
	RUN(time_before_base);
	RUN(alloc_failures);
	RUN(offcpu_switches);
	RUN(frameless_switch_chains);
	RUN(offcpu_across_snapshot);
	RUN(wakeup_model);
	RUN(idle_gaps);
	RUN(threads_born_and_exiting);
	RUN(born_at_start);
	RUN(switches_ignored_with_branches);
	RUN(comm_changes);
	RUN(common_branch_path);
	RUN(feed_n_leaves_the_lean_path);
	RUN(named_thread_before_main);
	RUN(chain_cut);
	RUN(chain_end_marker);
	RUN(alloc_failures_sampling);
	RUN(args_once_per_thread);
	RUN(throughput);
	return snap_test_done();
}
