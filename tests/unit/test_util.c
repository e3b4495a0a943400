// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "model/event.h"
#include "snap_test.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/esc.h"
#include "util/proc.h"
#include "util/strtab.h"
#include "util/u64map.h"
#include "util/vec.h"

static void strtab_interns_and_dedups(void)
{
	struct snap_strtab st;

	snap_strtab_init(&st);
	CHECK_INT_EQ(1, snap_strtab_intern_cstr(&st, "main"));
	CHECK_INT_EQ(2, snap_strtab_intern_cstr(&st, "foo"));
	CHECK_INT_EQ(1, snap_strtab_intern(&st, "main", 4));
	CHECK_INT_EQ(3, snap_strtab_intern(&st, "", 0));
	CHECK_STR_EQ("foo", snap_strtab_get(&st, 2));
	CHECK_STR_EQ("", snap_strtab_get(&st, 0));
	CHECK_STR_EQ("", snap_strtab_get(&st, 99));
	CHECK_INT_EQ(3, snap_strtab_len(&st, 2));
	CHECK_INT_EQ(0, snap_strtab_find(&st, "bar", 3));
	{
		uint32_t id = 99;

		CHECK_INT_EQ(0, snap_strtab_intern_id(&st, "foo", &id));
		CHECK_INT_EQ(2, id);
		CHECK_INT_EQ(0, snap_strtab_intern_id(&st, "bar", &id));
		CHECK_INT_EQ(4, id);
	}
	snap_strtab_fini(&st);
	snap_strtab_fini(&st); /* double fini is harmless */
}

static void strtab_many_strings(void)
{
	struct snap_strtab st;
	char buf[32];
	int ok = 1;

	snap_strtab_init(&st);
	for (int i = 0; i < 100000; i++) {
		int n = snprintf(buf, sizeof(buf), "sym_%d", i);

		if (snap_strtab_intern(&st, buf, (size_t)n) != i + 1)
			ok = 0;
	}
	CHECK(ok);
	CHECK_STR_EQ("sym_77777", snap_strtab_get(&st, 77778));
	snap_strtab_fini(&st);
}

static void strtab_alloc_failures(void)
{
	for (long n = 0; n < 8; n++) {
		struct snap_strtab st;
		int64_t r;

		snap_strtab_init(&st);
		snap_alloc_fail_after(n);
		r = snap_strtab_intern_cstr(&st, "x");
		snap_alloc_fail_after(-1);
		{
			uint32_t id = 7;

			snap_alloc_fail_after(n);
			if (snap_strtab_intern_id(&st, "yy", &id) < 0)
				CHECK_INT_EQ(0, id);
			snap_alloc_fail_after(-1);
		}
		CHECK(r == 1 || r == -ENOMEM);
		if (r == -ENOMEM)
			CHECK_INT_EQ(0, snap_strtab_find(&st, "x", 1));
		snap_strtab_fini(&st);
	}
}

static void u64map_put_get(void)
{
	struct snap_u64map m;
	uint64_t v = 0;
	int ok = 1;

	snap_u64map_init(&m);
	CHECK_INT_EQ(0, snap_u64map_get(&m, 5, &v));
	for (uint64_t k = 0; k < 10000; k++)
		CHECK_INT_EQ(0, snap_u64map_put(&m, k * 0x1000 + (1ULL << 63), k));
	for (uint64_t k = 0; k < 10000; k++)
		if (!snap_u64map_get(&m, k * 0x1000 + (1ULL << 63), &v) || v != k)
			ok = 0;
	CHECK(ok);
	CHECK_INT_EQ(0, snap_u64map_put(&m, 1ULL << 63, 42));
	CHECK_INT_EQ(1, snap_u64map_get(&m, 1ULL << 63, &v));
	CHECK_U64_EQ(42, v);
	CHECK_INT_EQ(10000, m.count);
	snap_u64map_fini(&m);
}

static void vec_reserve_grows_and_checks_overflow(void)
{
	int *a = NULL;
	size_t cap = 0;

	CHECK_INT_EQ(0, snap_vec_reserve(&a, &cap, 100, sizeof(*a)));
	CHECK(cap >= 100);
	a[99] = 1;
	CHECK_INT_EQ(-ENOMEM, snap_vec_reserve(&a, &cap, SIZE_MAX / 2 + 2, sizeof(*a)));
	snap_free(a);
}

static void strerror_covers_both_ranges(void)
{
	CHECK_STR_EQ("malformed input", snap_strerror(-SNAP_EPARSE));
	CHECK_STR_EQ("No such file or directory", snap_strerror(-ENOENT));
}

static void b3_2_branch_flags_map_like_perf_script(void)
{
	static const struct {
		uint32_t flags;
		uint8_t kind, state, in_tx;
	} cases[] = {
		{0x003, SNAP_BR_CALL, SNAP_BR_NOSTATE, 0},
		{0x005, SNAP_BR_RETURN, SNAP_BR_NOSTATE, 0},
		{0x009, SNAP_BR_JUMP, SNAP_BR_NOSTATE, 0},
		{0x001, SNAP_BR_JUMP, SNAP_BR_NOSTATE, 0},
		{0x043, SNAP_BR_INT, SNAP_BR_NOSTATE, 0},
		{0x045, SNAP_BR_IRET, SNAP_BR_NOSTATE, 0},
		{0x013, SNAP_BR_SYSCALL, SNAP_BR_NOSTATE, 0},
		{0x015, SNAP_BR_SYSRET, SNAP_BR_NOSTATE, 0},
		{0x063, SNAP_BR_HWINT, SNAP_BR_NOSTATE, 0},
		{0x221, SNAP_BR_ASYNC, SNAP_BR_END, 0},
		{0x101, SNAP_BR_NONE, SNAP_BR_START, 0},
		{0x213, SNAP_BR_SYSCALL, SNAP_BR_END, 0},
		{0x201, SNAP_BR_NONE, SNAP_BR_END, 0},
		{0x200, SNAP_BR_NONE, SNAP_BR_END, 0},
		{0x203, SNAP_BR_CALL, SNAP_BR_END, 0},
		{0x081, SNAP_BR_TXABORT, SNAP_BR_NOSTATE, 0},
		{0x403, SNAP_BR_CALL, SNAP_BR_NOSTATE, 1},
		{0x301, SNAP_BR_NONE, SNAP_BR_NOSTATE, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct snap_event ev;

		memset(&ev, 0xff, sizeof(ev));
		snap_event_set_branch_flags(&ev, cases[i].flags);
		CHECK_INT_EQ(cases[i].kind, ev.br_kind);
		CHECK_INT_EQ(cases[i].state, ev.br_state);
		CHECK_INT_EQ(cases[i].in_tx, ev.in_tx);
	}
}

/* The terminal-safe escaper: controls, C1 (raw or as UTF-8) and bad UTF-8 are
 * escaped, valid UTF-8 passes, and a cut never splits an escape or a character. */
static void esc_escapes_what_a_terminal_obeys(void)
{
	static const struct {
		const char *in, *out, *qmark;
		unsigned flags;
	} cases[] = {
		{"plain", "plain", "plain", 0},
		{"\033]0;PWNED\a", "\\x1b]0;PWNED\\x07", "?]0;PWNED?", 0},
		{"tab\there\n", "tab\\x09here\\x0a", "tab?here?", 0},
		{"del\177", "del\\x7f", "del?", 0},
		{"c1 \302\233[2J", "c1 \\u009b[2J", "c1 ?[2J", 0}, /* U+009B (CSI) */
		{"raw \233[2J", "raw \\x9b[2J", "raw ?[2J", 0},	   /* 8-bit CSI */
		{"caf\303\251 \342\202\254", "caf\303\251 \342\202\254", "caf\303\251 \342\202\254",
		 0},
		{"nbsp\302\240", "nbsp\302\240", "nbsp\302\240", 0},	/* U+00A0 is printable */
		{"bad\300\257", "bad\\xc0\\xaf", "bad??", 0},		/* overlong '/' */
		{"sur\355\240\200", "sur\\xed\\xa0\\x80", "sur???", 0}, /* a surrogate */
		{"cut\342\202", "cut\\xe2\\x82", "cut??", 0},
		{"q\"b\\", "q\\\"b\\\\", "q?b?", SNAP_ESC_QUOTE},
		{"q\"b\\", "q\"b\\", "q\"b\\", 0},
	};
	char out[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i].in);

		CHECK_INT_EQ(strlen(cases[i].out),
			     snap_esc_str(out, sizeof(out), cases[i].in, n, cases[i].flags));
		CHECK_STR_EQ(cases[i].out, out);
		snap_esc_str(out, sizeof(out), cases[i].in, n, cases[i].flags | SNAP_ESC_QMARK);
		CHECK_STR_EQ(cases[i].qmark, out);
	}
	/* cut: never inside an escape nor a UTF-8 character */
	CHECK_INT_EQ(10, snap_esc_str(out, 5, "ab\033cdef", 7, 0));
	CHECK_STR_EQ("ab", out);
	CHECK_INT_EQ(6, snap_esc_str(out, 5, "ab\303\251cd", 6, 0));
	CHECK_STR_EQ("ab\303\251", out);
	CHECK_INT_EQ(6, snap_esc_str(out, 4, "ab\303\251cd", 6, 0));
	CHECK_STR_EQ("ab", out);
	CHECK_INT_EQ(3, snap_esc_str(NULL, 0, "abc", 3, 0));
}

/* Ids past several of the table's segments read back their strings. */
static void strtab_segments_keep_every_id(void)
{
	struct snap_strtab st;
	char buf[32];
	int ok = 1;

	snap_strtab_init(&st);
	for (int i = 0; i < 70000; i++) {
		snprintf(buf, sizeof(buf), "s%d", i);
		ok &= snap_strtab_intern_cstr(&st, buf) == i + 1;
	}
	for (int i = 0; i < 70000; i += 7) {
		snprintf(buf, sizeof(buf), "s%d", i);
		ok &= !strcmp(snap_strtab_get(&st, (uint32_t)i + 1), buf);
		ok &= snap_strtab_len(&st, (uint32_t)i + 1) == strlen(buf);
		ok &= snap_strtab_find(&st, buf, strlen(buf)) == (uint32_t)i + 1;
	}
	CHECK(ok);
	CHECK_STR_EQ("", snap_strtab_get(&st, 70001));
	snap_strtab_fini(&st);
}

#define SHARED_N 20000

struct shared_arg {
	struct snap_strtab *st;
	uint32_t ids[SHARED_N];
	int bad; /* a get that did not read back its string */
};

/* Interns "w<i>" for every i, in an order of its own, and reads back every
 * id it got and one interned before. */
static void *strtab_worker(void *p)
{
	struct shared_arg *a = p;
	int step = a->ids[0] ? 7 : 1; /* (ids[0]: which worker) */
	char buf[32];

	for (int k = 0; k < SHARED_N; k++) {
		int i = (int)(((long)k * step) % SHARED_N);
		int64_t id;

		snprintf(buf, sizeof(buf), "w%d", i);
		id = snap_strtab_intern_cstr(a->st, buf);
		a->ids[i] = id > 0 ? (uint32_t)id : 0;
		if (id <= 0 || strcmp(snap_strtab_get(a->st, (uint32_t)id), buf))
			a->bad++;
		if (id > 1 && !snap_strtab_get(a->st, (uint32_t)id - 1)[0])
			a->bad++;
	}
	return NULL;
}

/* A shared table interned from two threads at once (clean under ThreadSanitizer:
 * make SAN=thread B=build/tsan): one id a string, dense ids, every string read back. */
static void strtab_shared_by_two_threads(void)
{
	static struct shared_arg a, b;
	struct snap_strtab st;
	pthread_t t;
	char buf[32];
	int same = 1;

	snap_strtab_init(&st);
	snap_strtab_share(&st, 1);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.st = b.st = &st;
	b.ids[0] = 1;
	CHECK_INT_EQ(0, pthread_create(&t, NULL, strtab_worker, &b));
	strtab_worker(&a);
	pthread_join(t, NULL);
	snap_strtab_share(&st, 0);
	CHECK_INT_EQ(0, a.bad);
	CHECK_INT_EQ(0, b.bad);
	CHECK_INT_EQ(SHARED_N, st.count);
	for (int i = 0; i < SHARED_N; i++) {
		snprintf(buf, sizeof(buf), "w%d", i);
		same &= a.ids[i] == b.ids[i] && a.ids[i] >= 1 && a.ids[i] <= SHARED_N &&
			!strcmp(snap_strtab_get(&st, a.ids[i]), buf);
	}
	CHECK(same);
	snap_strtab_fini(&st);
}

/* -j N is N threads; -j 0 (or less) one per online CPU; the CPUs allowed are the
 * affinity mask's. */
static void jobs_and_cpus(void)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CHECK_INT_EQ(3, snap_jobs(3));
	CHECK_INT_EQ(online > 0 ? (int)online : 1, snap_jobs(0));
	CHECK_INT_EQ(snap_jobs(0), snap_jobs(-2));
	CHECK(sched_getaffinity(0, sizeof(set), &set) == 0);
	CHECK_INT_EQ(CPU_COUNT(&set), snap_cpus_allowed());
}

int main(void)
{
	RUN(strtab_interns_and_dedups);
	RUN(jobs_and_cpus);
	RUN(strtab_many_strings);
	RUN(strtab_alloc_failures);
	RUN(strtab_segments_keep_every_id);
	RUN(strtab_shared_by_two_threads);
	RUN(u64map_put_get);
	RUN(vec_reserve_grows_and_checks_overflow);
	RUN(strerror_covers_both_ranges);
	RUN(esc_escapes_what_a_terminal_obeys);
	RUN(b3_2_branch_flags_map_like_perf_script);
	return snap_test_done();
}
