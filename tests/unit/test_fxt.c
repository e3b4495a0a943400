// SPDX-License-Identifier: GPL-2.0
/* Tests of write/fxt (the FXT writer) and write/fxtread (reader, desc, check). */
#include <errno.h>
#include <stdlib.h>

#include "snap_test.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/strtab.h"
#include "write/fxt.h"
#include "write/fxtcheck.h"
#include "write/fxtdesc.h"
#include "write/fxtread.h"
#include "write/fxttree.h"
#include "write/sink.h"

/* A writer over a memory sink with its own strtab. */
struct tw {
	struct snap_strtab st;
	struct snap_sink sink;
	struct snap_fxt fx;
	struct snap_timeline *tl;
};

static void tw_init(struct tw *t)
{
	snap_strtab_init(&t->st);
	CHECK_INT_EQ(0, snap_sink_init_mem(&t->sink));
	CHECK_INT_EQ(0, snap_fxt_init(&t->fx, &t->sink, &t->st));
	t->tl = &t->fx.base;
}

static void tw_fini(struct tw *t)
{
	snap_fxt_fini(&t->fx);
	snap_sink_fini(&t->sink);
	snap_strtab_fini(&t->st);
}

static uint32_t S(struct tw *t, const char *s)
{
	return (uint32_t)snap_strtab_intern_cstr(&t->st, s);
}

/* Reads the trace back; returns the dump lines (all or default) joined by '\n'
 * (owned, free()), and the check verdict in *check (0 ok). */
static char *tw_dump(struct tw *t, int all, int *check)
{
	struct snap_fxtread r;
	struct snap_fxtread_rec rec;
	struct snap_fxtcheck c;
	size_t len, outlen = 0;
	const unsigned char *data;
	char *out = calloc(1, 1), *line = malloc(256);
	size_t cap = 256;
	int err;

	CHECK_INT_EQ(0, t->tl->ops->finish(t->tl));
	data = snap_sink_mem_data(&t->sink, &len);
	CHECK_INT_EQ(0, snap_fxtread_init(&r, data, len));
	snap_fxtcheck_init(&c);
	*check = 0;
	while ((err = snap_fxtread_next(&r, &rec)) != 0) {
		size_t n;

		if (err < 0) {
			fprintf(stderr, "read error at #%llu: %s\n", (unsigned long long)rec.index,
				snap_fxtread_why(&r));
			*check = err;
			break;
		}
		if (!*check && snap_fxtcheck_feed(&c, &rec) < 0) {
			fprintf(stderr, "check: #%llu: %s\n", (unsigned long long)c.bad_index,
				c.why);
			*check = -1;
		}
		if (!all && !snap_fxtread_is_default(&rec))
			continue;
		n = snap_fxtread_desc(&rec, line, cap);
		if (n >= cap) {
			cap = n + 1;
			line = realloc(line, cap);
			CHECK_INT_EQ(n, snap_fxtread_desc(&rec, line, cap));
		}
		out = realloc(out, outlen + n + 2);
		memcpy(out + outlen, line, n);
		outlen += n;
		out[outlen++] = '\n';
		out[outlen] = '\0';
	}
	if (!*check && snap_fxtcheck_finish(&c) < 0) {
		fprintf(stderr, "check at end: %s\n", c.why);
		*check = -1;
	}
	snap_fxtcheck_fini(&c);
	snap_fxtread_fini(&r);
	free(line);
	return out;
}

/* Reads (data, len) in stream mode, fed chunk bytes at a time: the default
 * dump lines (owned) and the check verdict, as tw_dump. */
static char *stream_dump(const unsigned char *data, size_t len, size_t chunk, int *check)
{
	struct snap_fxtread r;
	struct snap_fxtread_rec rec;
	struct snap_fxtcheck c;
	char *out = calloc(1, 1), line[4096];
	size_t outlen = 0, pos = 0;
	int err = 0, fed_end = 0;

	CHECK_INT_EQ(0, snap_fxtread_init_stream(&r));
	snap_fxtcheck_init(&c);
	*check = 0;
	for (;;) {
		err = snap_fxtread_next(&r, &rec);
		if (err == SNAP_FXTREAD_MORE) {
			size_t n = len - pos < chunk ? len - pos : chunk;

			CHECK(!fed_end);
			if (!n) {
				snap_fxtread_feed_end(&r);
				fed_end = 1;
				continue;
			}
			CHECK_INT_EQ(0, snap_fxtread_feed(&r, data + pos, n));
			pos += n;
			continue;
		}
		if (err <= 0)
			break;
		if (!*check && snap_fxtcheck_feed(&c, &rec) < 0)
			*check = -1;
		if (snap_fxtread_is_default(&rec)) {
			size_t n = snap_fxtread_desc(&rec, line, sizeof(line));

			out = realloc(out, outlen + n + 2);
			memcpy(out + outlen, line, n);
			outlen += n;
			out[outlen++] = '\n';
			out[outlen] = '\0';
		}
	}
	if (err < 0)
		*check = err;
	if (!*check && snap_fxtcheck_finish(&c) < 0)
		*check = -1;
	snap_fxtcheck_fini(&c);
	snap_fxtread_fini(&r);
	return out;
}

/* Stream mode reads what buffer mode reads, in any chunking, with string
 * indexes redefined along the way (owned copies); a non-FXT stream fails on
 * its first 8 bytes; a cut stream is truncated. */
static void test_stream_reader(void)
{
	struct tw t;
	char name[32], *whole, *part;
	const unsigned char *data;
	size_t len;
	int chk, chk2;
	static const size_t chunks[] = {1, 7, 64, 4096, 1 << 20};

	tw_init(&t);
	CHECK_INT_EQ(0, snap_fxt_set_limits(&t.fx, 64, 2));
	for (int th = 1; th <= 3; th++)
		CHECK_INT_EQ(0, t.tl->ops->thread(t.tl, 10, 10 + th, S(&t, "p"), S(&t, "t")));
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "fn%d", i % 150);
		CHECK_INT_EQ(0, t.tl->ops->begin(t.tl, 10, 11 + i % 3, (uint64_t)i * 10,
						 S(&t, name), NULL, 0));
		CHECK_INT_EQ(
			0, t.tl->ops->end(t.tl, 10, 11 + i % 3, (uint64_t)i * 10 + 5, S(&t, name)));
	}
	whole = tw_dump(&t, 0, &chk);
	CHECK_INT_EQ(0, chk);
	data = snap_sink_mem_data(&t.sink, &len);
	for (size_t k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
		part = stream_dump(data, len, chunks[k], &chk2);
		CHECK_INT_EQ(0, chk2);
		CHECK_STR_EQ(whole, part);
		free(part);
	}
	part = stream_dump(data, len - 3, 100, &chk2); /* cut inside a record */
	CHECK_INT_EQ(-SNAP_ETRUNC, chk2);
	free(part);
	free(whole);
	tw_fini(&t);
	{
		static const unsigned char zeros[16];
		struct snap_fxtread r;
		struct snap_fxtread_rec rec;

		CHECK_INT_EQ(0, snap_fxtread_init_stream(&r));
		CHECK_INT_EQ(SNAP_FXTREAD_MORE, snap_fxtread_next(&r, &rec));
		CHECK_INT_EQ(0, snap_fxtread_feed(&r, zeros, 8));
		CHECK_INT_EQ(-SNAP_EFORMAT, snap_fxtread_next(&r, &rec));
		snap_fxtread_fini(&r);
	}
}

/* Checks (data, len) with run_max events kept in memory (spilled runs are
 * merged at finish). Returns the verdict; *bad gets the bad record index. */
static int check_with_runs(const unsigned char *data, size_t len, size_t run_max, uint64_t *bad)
{
	struct snap_fxtread r;
	struct snap_fxtread_rec rec;
	struct snap_fxtcheck c;
	int err = 0;

	CHECK_INT_EQ(0, snap_fxtread_init(&r, data, len));
	snap_fxtcheck_init(&c);
	c.run_max = run_max;
	while (!err && snap_fxtread_next(&r, &rec) > 0)
		err = snap_fxtcheck_feed(&c, &rec);
	if (!err)
		err = snap_fxtcheck_finish(&c);
	*bad = c.bad_index;
	if (run_max < 100)
		CHECK(c.nruns > 1); /* it did spill */
	snap_fxtcheck_fini(&c);
	snap_fxtread_fini(&r);
	return err;
}

/* -check's memory is bounded: beyond run_max events it sorts and spills runs
 * and merges them at finish, with the verdict of the in-memory check, for
 * good traces and bad ones (same record blamed). */
static void test_check_spills(void)
{
	for (int broken = 0; broken < 3; broken++) {
		struct tw t;
		const unsigned char *data;
		size_t len;
		uint64_t bad1 = 0, bad2 = 0;
		int v1, v2;

		tw_init(&t);
		for (int th = 1; th <= 3; th++)
			CHECK_INT_EQ(0,
				     t.tl->ops->thread(t.tl, 10, 10 + th, S(&t, "p"), S(&t, "t")));
		for (int i = 0; i < 200; i++) {
			int32_t tid = 11 + i % 3;
			uint64_t ts = 100 + (uint64_t)i * 10;

			CHECK_INT_EQ(0,
				     t.tl->ops->begin(t.tl, 10, tid, ts, S(&t, "outer"), NULL, 0));
			CHECK_INT_EQ(0, t.tl->ops->begin(t.tl, 10, tid, ts + 1, S(&t, "inner"),
							 NULL, 0));
			CHECK_INT_EQ(0, t.tl->ops->end(t.tl, 10, tid, ts + 2,
						       S(&t, broken == 1 && i == 150 ? "outer"
										     : "inner")));
			CHECK_INT_EQ(0, t.tl->ops->end(t.tl, 10, tid, ts + 3, S(&t, "outer")));
		}
		/* deferred begins written last, enclosing everything (as cstack does) */
		for (int th = 1; th <= 3; th++)
			CHECK_INT_EQ(
				0, t.tl->ops->begin(t.tl, 10, 10 + th, 0, S(&t, "main"), NULL, 0));
		for (int th = 1; th <= 3; th++)
			if (!(broken == 2 && th == 2))
				CHECK_INT_EQ(0, t.tl->ops->end(t.tl, 10, 10 + th, 100000,
							       S(&t, "main")));
		CHECK_INT_EQ(0, t.tl->ops->finish(t.tl));
		data = snap_sink_mem_data(&t.sink, &len);
		v1 = check_with_runs(data, len, SNAP_FXTCHECK_RUN, &bad1);
		v2 = check_with_runs(data, len, 7, &bad2);
		CHECK_INT_EQ(broken ? -SNAP_EPARSE : 0, v1);
		CHECK_INT_EQ(v1, v2);
		CHECK_U64_EQ(bad1, bad2);
		tw_fini(&t);
	}
}

static void test_header_records(void)
{
	struct tw t;
	int check;
	char *d;

	tw_init(&t);
	d = tw_dump(&t, 1, &check);
	CHECK_INT_EQ(0, check);
	CHECK_STR_EQ("magic\nprovider id=0 name=\"snaptrace\"\nprovider_section id=0\n"
		     "init ticks_per_second=1000000000\nstring index=1 \"process\"\n",
		     d);
	free(d);
	tw_fini(&t);
}

static void test_events_and_args(void)
{
	struct tw t;
	int check;
	char *d;

	tw_init(&t);
	struct snap_arg a[4] = {
		{S(&t, "address"), SNAP_ARG_PTR, {.u = 0x401000}},
		{S(&t, "symbol"), SNAP_ARG_STR, {.str = S(&t, "main")}},
		{S(&t, "small"), SNAP_ARG_INT, {.i = -5}},
		{S(&t, "big"), SNAP_ARG_INT, {.i = -5000000000ll}},
	};
	struct snap_arg freq = {S(&t, "freq (MHz)"), SNAP_ARG_INT, {.i = 4600}};

	CHECK_INT_EQ(0, t.tl->ops->thread(t.tl, 42, 43, S(&t, "prog [pid=42]"), S(&t, "worker")));
	CHECK_INT_EQ(0, t.tl->ops->begin(t.tl, 42, 43, 1000, S(&t, "main"), a, 4));
	CHECK_INT_EQ(0, t.tl->ops->complete(t.tl, 42, 43, 1500, 1500,
					    S(&t, "[decode error: Overflow packet]"), NULL, 0));
	CHECK_INT_EQ(0, t.tl->ops->counter(t.tl, 42, 43, 1600, S(&t, "CPU"), &freq, 1));
	CHECK_INT_EQ(0, t.tl->ops->end(t.tl, 42, 43, 2000, S(&t, "main")));
	/* a complete event that ends before it starts is clamped, not written broken */
	CHECK_INT_EQ(0, t.tl->ops->complete(t.tl, 42, 43, 3000, 2500, S(&t, "x"), NULL, 0));
	d = tw_dump(&t, 0, &check);
	CHECK_INT_EQ(0, check);
	CHECK_STR_EQ("process koid=42 name=\"prog [pid=42]\"\n"
		     "thread koid=43 process=42 name=\"worker\"\n"
		     "begin ts=1000 pid=42 tid=43 name=\"main\" args={address=0x401000, "
		     "symbol=\"main\", small=-5, big=-5000000000}\n"
		     "complete ts=1500 end=1500 pid=42 tid=43 name=\"[decode error: Overflow "
		     "packet]\"\n"
		     "counter ts=1600 pid=42 tid=43 name=\"CPU\" id=1 args={freq (MHz)=4600}\n"
		     "end ts=2000 pid=42 tid=43 name=\"main\"\n"
		     "complete ts=3000 end=3000 pid=42 tid=43 name=\"x\"\n",
		     d);
	free(d);
	tw_fini(&t);
}

/* Begins and ends without args, the records fxt_event_plain writes in place
 * when it can: every case it leaves to fxt_event (another track, a name not
 * defined yet or none, a time beyond INT64_MAX, a full sink buffer) gives
 * the same records, and each plain record is 16 bytes. */
static void test_plain_events(void)
{
	const uint64_t big = (uint64_t)INT64_MAX + 5;
	struct tw t;
	size_t len0, len1;
	uint32_t f;
	int check;
	char *d;

	tw_init(&t);
	f = S(&t, "f");
	CHECK_INT_EQ(0, t.tl->ops->thread(t.tl, 1, 2, S(&t, "p"), S(&t, "a")));
	CHECK_INT_EQ(0, t.tl->ops->thread(t.tl, 1, 3, 0, S(&t, "b")));
	CHECK_INT_EQ(0, t.tl->ops->begin(t.tl, 1, 2, 10, f, NULL, 0)); /* new track, new name */
	CHECK_INT_EQ(0, t.tl->ops->begin(t.tl, 1, 3, 11, f, NULL, 0)); /* another track */
	CHECK_INT_EQ(0, t.tl->ops->begin(t.tl, 1, 3, 12, f, NULL, 0)); /* in place */
	CHECK_INT_EQ(0, t.tl->ops->end(t.tl, 1, 3, 13, 0));	       /* no name */
	CHECK_INT_EQ(0, t.tl->ops->end(t.tl, 1, 3, big, f));	       /* clamped */
	CHECK_INT_EQ(1, t.fx.stats.clamped_times);
	CHECK_INT_EQ(0, t.tl->ops->end(t.tl, 1, 2, 14, f));
	CHECK_INT_EQ(6, t.fx.stats.events);
	d = tw_dump(&t, 0, &check);
	CHECK_INT_EQ(0, check);
	CHECK_STR_EQ("process koid=1 name=\"p\"\n"
		     "thread koid=2 process=1 name=\"a\"\n"
		     "thread koid=3 process=1 name=\"b\"\n"
		     "begin ts=10 pid=1 tid=2 name=\"f\"\n"
		     "begin ts=11 pid=1 tid=3 name=\"f\"\n"
		     "begin ts=12 pid=1 tid=3 name=\"f\"\n"
		     "end ts=13 pid=1 tid=3\n"
		     "end ts=9223372036854775807 pid=1 tid=3 name=\"f\"\n"
		     "end ts=14 pid=1 tid=2 name=\"f\"\n",
		     d);
	free(d);
	/* past the sink's buffer (SNAP_SINK_BUF bytes) many times: 16 bytes each */
	snap_sink_mem_data(&t.sink, &len0);
	for (uint64_t i = 0; i < 3 * SNAP_SINK_BUF / 16 + 7; i++) {
		CHECK_INT_EQ(0, t.tl->ops->begin(t.tl, 1, 2, 20 + 2 * i, f, NULL, 0));
		CHECK_INT_EQ(0, t.tl->ops->end(t.tl, 1, 2, 21 + 2 * i, f));
	}
	snap_sink_mem_data(&t.sink, &len1);
	CHECK_INT_EQ((3 * SNAP_SINK_BUF / 16 + 7) * 32, len1 - len0);
	d = tw_dump(&t, 0, &check);
	CHECK_INT_EQ(0, check);
	CHECK(strstr(d, "end ts=14 pid=1 tid=2 name=\"f\"\n"
			"begin ts=20 pid=1 tid=2 name=\"f\"\nend ts=21 pid=1 tid=2 name=\"f\"\n"));
	CHECK(strstr(d, "begin ts=24608 pid=1 tid=2 name=\"f\"\nend ts=24609 pid=1 tid=2 "
			"name=\"f\"\n"));
	free(d);
	tw_fini(&t);
}

/* Args: more than 15 are dropped and counted; counters keep only ints. */
static void test_arg_limits(void)
{
	struct tw t;
	struct snap_arg a[20];
	int check;
	char *d;

	tw_init(&t);
	for (int i = 0; i < 20; i++) {
		char k[8];

		snprintf(k, sizeof(k), "k%d", i);
		a[i].name = S(&t, k);
		a[i].type = i == 3 ? SNAP_ARG_STR : SNAP_ARG_INT;
		if (i == 3)
			a[i].v.str = S(&t, "s");
		else
			a[i].v.i = i;
	}
	t.tl->ops->begin(t.tl, 1, 1, 10, S(&t, "f"), a, 20);
	t.tl->ops->end(t.tl, 1, 1, 20, 0);
	t.tl->ops->counter(t.tl, 1, 1, 30, S(&t, "c"), a, 5);
	d = tw_dump(&t, 0, &check);
	CHECK_INT_EQ(0, check);
	CHECK(strstr(d, "k14=14}") != NULL);
	CHECK(strstr(d, "k15") == NULL);
	CHECK(strstr(d, "counter ts=30 pid=1 tid=1 name=\"c\" id=1 args={k0=0, k1=1, k2=2, k4=4}"));
	CHECK_U64_EQ(5 + 1, t.fx.stats.dropped_args);
	free(d);
	tw_fini(&t);
}

/* 100,000 distinct names through a 32767-entry table: indexes are re-used and
 * every event still reads back with its own name. */
static void test_b6_5_string_reuse(void)
{
	struct tw t;
	struct snap_fxtread r;
	struct snap_fxtread_rec rec;
	struct snap_fxtcheck c;
	const unsigned char *data;
	size_t len;
	uint32_t n = 100000, seen = 0;
	int err, bad = 0;

	tw_init(&t);
	for (uint32_t i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "sym_%u", i);
		t.tl->ops->begin(t.tl, 7, 7, 2 * (uint64_t)i, S(&t, name), NULL, 0);
		/* re-use a hot name so CLOCK has something to keep */
		t.tl->ops->begin(t.tl, 7, 7, 2 * (uint64_t)i, S(&t, "hot"), NULL, 0);
		t.tl->ops->end(t.tl, 7, 7, 2 * (uint64_t)i + 1, S(&t, "hot"));
		t.tl->ops->end(t.tl, 7, 7, 2 * (uint64_t)i + 1, S(&t, name));
	}
	CHECK_INT_EQ(0, t.tl->ops->finish(t.tl));
	CHECK(t.fx.stats.string_reuses >= n - 32767);
	/* "hot" stayed defined: far fewer string records than 2 per name */
	CHECK(t.fx.stats.string_records < n + 1000);
	data = snap_sink_mem_data(&t.sink, &len);
	CHECK_INT_EQ(0, snap_fxtread_init(&r, data, len));
	snap_fxtcheck_init(&c);
	while ((err = snap_fxtread_next(&r, &rec)) > 0) {
		char name[32];

		if (snap_fxtcheck_feed(&c, &rec) < 0 && !bad) {
			fprintf(stderr, "check #%llu: %s\n", (unsigned long long)c.bad_index,
				c.why);
			bad = 1;
		}
		if (rec.type != SNAP_FXT_EVENT || rec.sub != SNAP_FXT_EV_BEGIN || rec.ts % 2)
			continue;
		if (rec.name.len == 3 && !memcmp(rec.name.s, "hot", 3))
			continue;
		snprintf(name, sizeof(name), "sym_%u", (unsigned)(rec.ts / 2));
		if (rec.name.len != strlen(name) || memcmp(rec.name.s, name, rec.name.len))
			bad = 1;
		seen++;
	}
	CHECK_INT_EQ(0, err);
	CHECK_INT_EQ(0, bad);
	CHECK_INT_EQ(0, snap_fxtcheck_finish(&c));
	CHECK_INT_EQ(n, seen);
	snap_fxtcheck_fini(&c);
	snap_fxtread_fini(&r);
	tw_fini(&t);
}

/* 1,000 threads through the 255-entry thread table. */
static void test_b6_5_thread_reuse(void)
{
	struct tw t;
	struct snap_fxtread r;
	struct snap_fxtread_rec rec;
	const unsigned char *data;
	size_t len;
	uint64_t seen = 0, kobj = 0;
	int err, bad = 0;

	tw_init(&t);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 1000; i++) {
			uint64_t ts = (uint64_t)round * 10 + 1;

			if (round == 0)
				t.tl->ops->thread(t.tl, 100 + i / 10, 5000 + i, S(&t, "proc"),
						  S(&t, "thr"));
			t.tl->ops->begin(t.tl, 100 + i / 10, 5000 + i, ts, S(&t, "f"), NULL, 0);
			t.tl->ops->end(t.tl, 100 + i / 10, 5000 + i, ts + 1, 0);
		}
	}
	CHECK_INT_EQ(0, t.tl->ops->finish(t.tl));
	CHECK(t.fx.stats.thread_reuses >= 3000 - 255);
	data = snap_sink_mem_data(&t.sink, &len);
	CHECK_INT_EQ(0, snap_fxtread_init(&r, data, len));
	while ((err = snap_fxtread_next(&r, &rec)) > 0) {
		if (rec.flags)
			bad = 1;
		if (rec.type == SNAP_FXT_KOBJ)
			kobj++;
		if (rec.type != SNAP_FXT_EVENT)
			continue;
		/* events come in (pid, tid) order within a round */
		if (rec.tid != 5000 + (seen / 2) % 1000 || rec.pid != 100 + (rec.tid - 5000) / 10)
			bad = 1;
		seen++;
	}
	CHECK_INT_EQ(0, err);
	CHECK_INT_EQ(0, bad);
	CHECK_U64_EQ(6000, seen);
	CHECK_U64_EQ(100 + 1000, kobj); /* one process record per pid */
	snap_fxtread_fini(&r);
	tw_fini(&t);
}

/* Strings over the limit are cut at a UTF-8 boundary; never an error. */
static void test_long_string(void)
{
	struct tw t;
	size_t n = 40000;
	char *s = malloc(n + 1);
	int check;
	char *d;

	memset(s, 'a', n);
	s[n] = 0;
	memcpy(s + SNAP_FXT_MAX_STRING - 1, "\xc3\xa9", 2); /* é straddling the cut */
	tw_init(&t);
	t.tl->ops->complete(t.tl, 1, 2, 5, 6, S(&t, s), NULL, 0);
	CHECK_U64_EQ(1, t.fx.stats.truncated);
	d = tw_dump(&t, 1, &check);
	CHECK_INT_EQ(0, check);
	CHECK(strstr(d, "string index=2 \"aaa") != NULL);
	/* the cut dropped the lone lead byte: 31998 bytes */
	{
		const char *q = strstr(d, "string index=2 \"");
		const char *e = q ? strchr(q + 16, '"') : NULL;

		CHECK(e && e - (q + 16) == SNAP_FXT_MAX_STRING - 1);
	}
	free(d);
	free(s);
	tw_fini(&t);
}

/* The table limit hook shrinks the tables so re-use happens on tiny traces. */
static void test_limits_hook(void)
{
	struct tw t;
	int check;
	char *d;

	tw_init(&t);
	CHECK_INT_EQ(-EINVAL, snap_fxt_set_limits(&t.fx, 10, 1));
	CHECK_INT_EQ(-EINVAL, snap_fxt_set_limits(&t.fx, 64, 0));
	CHECK_INT_EQ(0, snap_fxt_set_limits(&t.fx, 64, 2));
	for (int i = 0; i < 300; i++) {
		char name[16];

		snprintf(name, sizeof(name), "n%d", i);
		t.tl->ops->complete(t.tl, 1, 1 + i % 5, (uint64_t)i, (uint64_t)i, S(&t, name), NULL,
				    0);
	}
	d = tw_dump(&t, 0, &check);
	CHECK_INT_EQ(0, check);
	CHECK(strstr(d, "complete ts=299 end=299 pid=1 tid=5 name=\"n299\"\n") != NULL);
	CHECK(strstr(d, "complete ts=7 end=7 pid=1 tid=3 name=\"n7\"\n") != NULL);
	free(d);
	tw_fini(&t);
}

/* Allocation failures give -ENOMEM (sticky), never a crash or a leak. */
static void test_alloc_failures(void)
{
	for (long k = 0; k < 40; k++) {
		struct snap_strtab st;
		struct snap_sink sink;
		struct snap_fxt fx;
		int err = 0;

		snap_strtab_init(&st);
		uint32_t a = (uint32_t)snap_strtab_intern_cstr(&st, "a");
		uint32_t b = (uint32_t)snap_strtab_intern_cstr(&st, "b");
		snap_alloc_fail_after(k);
		if (snap_sink_init_mem(&sink) == 0) {
			err = snap_fxt_init(&fx, &sink, &st);
			if (!err)
				err = fx.base.ops->thread(&fx.base, 1, 2, a, b);
			for (int i = 0; !err && i < 100; i++)
				err = fx.base.ops->complete(&fx.base, i, i, 1, 2, a, NULL, 0);
			if (!err)
				err = fx.base.ops->finish(&fx.base);
			snap_fxt_fini(&fx);
		} else {
			err = -ENOMEM;
		}
		snap_alloc_fail_after(-1);
		CHECK(err == 0 || err == -ENOMEM);
		snap_sink_fini(&sink);
		snap_strtab_fini(&st);
	}
}

/* Builds FXT words by hand for reader tests. */
#define EV(type, nargs, thr, name, words)                                                          \
	(4ull | (uint64_t)(words) << 4 | (uint64_t)(type) << 16 | (uint64_t)(nargs) << 20 |        \
	 (uint64_t)(thr) << 24 | (uint64_t)(name) << 48)

/* The FXT magic record every stream starts with. */
#define MAGIC	0x0016547846040010ull
#define CHK_ANY 1 /* the case does not look at the checker's verdict */

/*
 * One reader or checker case: the input (64-bit words, then `tail` stray bytes),
 * the first error the reader returns (0: none), the checker's verdict (0 valid,
 * -1 refused, CHK_ANY), the message expected in `why` (a substring, or the whole
 * message when exact) and, when >= 0, how many records the reader yields.
 */
struct reader_case {
	const char *purpose;
	uint64_t w[16];
	size_t n;
	unsigned char tail[4];
	size_t ntail;
	int err, check;
	const char *msg;
	int exact, records;
};

#define WORDS(...) .w = {__VA_ARGS__}, .n = sizeof((uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t)

static const struct reader_case reader_cases[] = {
	{"not FXT: no magic record", WORDS(0x1234), .err = -SNAP_EFORMAT, .check = CHK_ANY,
	 .records = -1},
	{"a record of size 0 words", WORDS(MAGIC, 4), .err = -SNAP_EPARSE, .check = CHK_ANY,
	 .msg = "size 0", .records = -1},
	{"a record longer than the input", WORDS(MAGIC, EV(3, 0, 0, 0, 4), 1), .err = -SNAP_ETRUNC,
	 .check = CHK_ANY, .records = -1},
	{"an argument overrunning its record is skipped, reading continues",
	 WORDS(MAGIC, EV(2, 1, 0, 0, 5), 1, 1, 2, 3 | 5u << 4 /* int64 arg of 5 words */,
	       EV(3, 0, 0, 0, 4), 2, 1, 2),
	 .err = -SNAP_EPARSE, .check = CHK_ANY, .msg = "argument #0", .records = -1},
	{"inline thread and name read; a string index never defined is refused",
	 WORDS(MAGIC, EV(2, 0, 0, 0x8000 | 3, 5), 10, 1, 2, 0x6f6f66 /* "foo" */, EV(3, 0, 0, 7, 4),
	       11, 1, 2),
	 .check = -1, .msg = "undefined string index 7", .exact = 1, .records = -1},
	{"a thread index never defined", WORDS(MAGIC, EV(4, 0, 9, 0, 3), 10, 10), .check = CHK_ANY,
	 .msg = "undefined thread index", .exact = 1, .records = -1},
	{"an end with nothing open", WORDS(MAGIC, EV(3, 0, 0, 0, 4), 10, 1, 2), .check = CHK_ANY,
	 .msg = "no open begin", .records = -1},
	{"a begin never ended", WORDS(MAGIC, EV(2, 0, 0, 0, 4), 10, 1, 2), .check = CHK_ANY,
	 .msg = "never ended", .records = -1},
	{"Perfetto sorts by time: a begin written after a later complete is fine",
	 WORDS(MAGIC, EV(4, 0, 0, 0, 5), 6, 1, 2, 7, EV(2, 0, 0, 0, 4), 5, 1, 2, EV(3, 0, 0, 0, 4),
	       8, 1, 2),
	 .check = 0, .records = -1},
	{"a begin written after its end but stamped earlier (a deferred outer frame)",
	 WORDS(MAGIC, EV(3, 0, 0, 0, 4), 10, 1, 2, EV(2, 0, 0, 0, 4), 0, 1, 2), .check = 0,
	 .records = -1},
	{"but an end earlier than its begin closes nothing",
	 WORDS(MAGIC, EV(2, 0, 0, 0, 4), 10, 1, 2, EV(3, 0, 0, 0, 4), 5, 1, 2), .check = CHK_ANY,
	 .msg = "end at 5 on pid 1 tid 2 with no open begin", .records = -1},
	{"complete events partially overlapping",
	 WORDS(MAGIC, EV(4, 0, 0, 0, 5), 10, 1, 2, 20, EV(4, 0, 0, 0, 5), 15, 1, 2, 25),
	 .check = CHK_ANY, .msg = "partially overlaps", .records = -1},
	{"an end inside a nested complete event",
	 WORDS(MAGIC, EV(2, 0, 0, 0, 4), 10, 1, 2, EV(4, 0, 0, 0, 5), 11, 1, 2, 30,
	       EV(3, 0, 0, 0, 4), 20, 1, 2),
	 .check = CHK_ANY, .msg = "outlasts its parent", .records = -1},
	{"a begin inside a complete event that ends after it",
	 WORDS(MAGIC, EV(4, 0, 0, 0, 5), 3, 1, 2, 7, EV(2, 0, 0, 0, 4), 5, 1, 2, EV(3, 0, 0, 0, 4),
	       12, 1, 2),
	 .check = CHK_ANY, .msg = "which began inside complete event", .records = -1},
	{"a complete event ending before it starts", WORDS(MAGIC, EV(4, 0, 0, 0, 5), 10, 1, 2, 9),
	 .check = CHK_ANY, .msg = "before it starts", .records = -1},
	{"a trailing partial word after a whole record", WORDS(MAGIC), .tail = {1, 2, 3, 4},
	 .ntail = 4, .err = -SNAP_ETRUNC, .check = CHK_ANY, .records = 1},
};

/* Reads c's input; returns the first error (or 0), the check verdict in *check and
 * the number of records read in *records. */
static int case_read(const struct reader_case *c, int *check, int *records, char *why,
		     size_t whylen)
{
	unsigned char buf[sizeof(c->w) + sizeof(c->tail)];
	struct snap_fxtread r;
	struct snap_fxtread_rec rec;
	struct snap_fxtcheck k;
	size_t len = c->n * 8;
	int err, ret = 0;

	memcpy(buf, c->w, len);
	memcpy(buf + len, c->tail, c->ntail);
	len += c->ntail;
	snap_fxtread_init(&r, buf, len);
	snap_fxtcheck_init(&k);
	*check = 0;
	*records = 0;
	why[0] = 0;
	while ((err = snap_fxtread_next(&r, &rec)) != 0) {
		if (err < 0) {
			if (!ret)
				snprintf(why, whylen, "%s", snap_fxtread_why(&r));
			ret = ret ? ret : err;
			continue;
		}
		++*records;
		if (!*check && snap_fxtcheck_feed(&k, &rec) < 0) {
			*check = -1;
			if (!ret)
				snprintf(why, whylen, "%s", k.why);
		}
	}
	if (!*check && snap_fxtcheck_finish(&k) < 0) {
		*check = -1;
		if (!ret)
			snprintf(why, whylen, "%s", k.why);
	}
	snap_fxtcheck_fini(&k);
	snap_fxtread_fini(&r);
	return ret;
}

static void test_reader_errors(void)
{
	for (size_t i = 0; i < sizeof(reader_cases) / sizeof(reader_cases[0]); i++) {
		const struct reader_case *c = &reader_cases[i];
		char why[256];
		int check, records, err = case_read(c, &check, &records, why, sizeof(why));
		int bad = err != c->err || (c->check != CHK_ANY && check != c->check) ||
			  (c->records >= 0 && records != c->records) ||
			  (c->msg && (c->exact ? strcmp(why, c->msg) : !strstr(why, c->msg)));

		if (bad) {
			fprintf(stderr,
				"reader case %zu (%s): error %d (want %d), check %d (want %d), "
				"%d records (want %d), why \"%s\" (want \"%s\")\n",
				i, c->purpose, err, c->err, check, c->check, records, c->records,
				why, c->msg ? c->msg : "");
			snap_test_cur_failed = 1;
		}
	}
}

/* Nesting deeper than Perfetto keeps is a warning, not a problem. */
static void test_b1_6_check_deep(void)
{
	struct tw t;
	struct snap_fxtread r;
	struct snap_fxtread_rec rec;
	struct snap_fxtcheck c;
	const unsigned char *data;
	size_t len;
	int err;

	tw_init(&t);
	for (int i = 0; i < 600; i++)
		t.tl->ops->begin(t.tl, 1, 1, (uint64_t)i, S(&t, "f"), NULL, 0);
	for (int i = 0; i < 600; i++)
		t.tl->ops->end(t.tl, 1, 1, 1000 + (uint64_t)i, S(&t, "f"));
	CHECK_INT_EQ(0, t.tl->ops->finish(t.tl));
	data = snap_sink_mem_data(&t.sink, &len);
	CHECK_INT_EQ(0, snap_fxtread_init(&r, data, len));
	snap_fxtcheck_init(&c);
	while ((err = snap_fxtread_next(&r, &rec)) > 0)
		CHECK_INT_EQ(0, snap_fxtcheck_feed(&c, &rec));
	CHECK_INT_EQ(0, err);
	CHECK_INT_EQ(0, snap_fxtcheck_finish(&c));
	CHECK_U64_EQ(600 - 512, c.deep);
	CHECK(strstr(c.warning, "at depth 512") != NULL);
	snap_fxtcheck_fini(&c);
	snap_fxtread_fini(&r);
	tw_fini(&t);
}

/* Every argument type prints; strings are escaped; desc truncates like snprintf. */
static void test_desc(void)
{
	struct snap_fxtread_rec rec;
	char buf[512], small[8];
	size_t n;

	memset(&rec, 0, sizeof(rec));
	rec.type = SNAP_FXT_EVENT;
	rec.sub = SNAP_FXT_EV_INSTANT;
	rec.ts = 5;
	rec.pid = 1;
	rec.tid = 2;
	rec.cat = (struct snap_fxt_str){"c", 1, 1};
	rec.name = (struct snap_fxt_str){"a\"b\\c\n", 6, 2};
	rec.nargs = 10;
	for (int i = 0; i < 10; i++) {
		rec.args[i].type = (uint32_t)i;
		rec.args[i].name = (struct snap_fxt_str){"k", 1, 3};
	}
	rec.args[1].v.i = -1;
	rec.args[2].v.u = 4000000000u;
	rec.args[3].v.i = -5000000000ll;
	rec.args[4].v.u = 18446744073709551615ull;
	rec.args[5].v.d = 1.5;
	rec.args[6].v.str = (struct snap_fxt_str){NULL, 0, 77};
	rec.args[7].v.u = 0xabc;
	rec.args[8].v.u = 99;
	rec.args[9].v.u = 1;
	n = snap_fxtread_desc(&rec, buf, sizeof(buf));
	CHECK_STR_EQ("instant ts=5 pid=1 tid=2 cat=\"c\" name=\"a\\\"b\\\\c\\x0a\" args={k=null, "
		     "k=-1, k=4000000000, k=-5000000000, k=18446744073709551615, k=1.5, "
		     "k=<undefined 77>, k=0xabc, k=99, k=true}",
		     buf);
	CHECK_INT_EQ(strlen(buf), n);
	CHECK_INT_EQ(n, snap_fxtread_desc(&rec, small, sizeof(small)));
	CHECK_STR_EQ("instant", small);
}

/* dump -tree: slices per thread by (time, file order), indented by depth;
 * a complete event nests like a begin/end pair, an unended slice shows +?,
 * an end with nothing open is counted, threads come in order of first event. */
static void tree_rec(struct snap_fxttree *t, uint64_t index, uint32_t sub, uint64_t tid,
		     uint64_t ts, uint64_t end, const char *name)
{
	struct snap_fxtread_rec rec;

	memset(&rec, 0, sizeof(rec));
	rec.index = index;
	rec.type = SNAP_FXT_EVENT;
	rec.sub = sub;
	rec.pid = 7;
	rec.tid = tid;
	rec.ts = ts;
	rec.end = end;
	rec.name.s = name;
	rec.name.len = (uint32_t)strlen(name);
	CHECK_INT_EQ(0, snap_fxttree_feed(t, &rec));
}

static void test_b1_6_tree(void)
{
	struct snap_fxttree t;
	struct snap_fxtread_rec th;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	snap_fxttree_init(&t);
	memset(&th, 0, sizeof(th));
	th.type = SNAP_FXT_KOBJ;
	th.sub = 2;
	th.tid = 9;
	th.name.s = "worker";
	th.name.len = 6;
	th.nargs = 1;
	th.args[0].type = SNAP_FXT_ARG_KOID;
	th.args[0].v.u = 7;
	CHECK_INT_EQ(0, snap_fxttree_feed(&t, &th));
	tree_rec(&t, 1, SNAP_FXT_EV_BEGIN, 8, 10, 0, "inner");
	tree_rec(&t, 2, SNAP_FXT_EV_END, 8, 20, 0, "inner");
	tree_rec(&t, 3, SNAP_FXT_EV_BEGIN, 8, 5, 0, "outer"); /* written later, starts first */
	tree_rec(&t, 4, SNAP_FXT_EV_END, 8, 30, 0, "outer");
	tree_rec(&t, 5, SNAP_FXT_EV_COMPLETE, 8, 12, 12, "[decode error: x]");
	tree_rec(&t, 6, SNAP_FXT_EV_BEGIN, 9, 3, 0, "open");
	tree_rec(&t, 7, SNAP_FXT_EV_END, 9, 1, 0, "stray");
	tree_rec(&t, 8, SNAP_FXT_EV_INSTANT, 9, 4, 0, "ignored");
	CHECK(out != NULL);
	if (out) {
		CHECK_INT_EQ(0, snap_fxttree_print(&t, out));
		fclose(out);
		CHECK_STR_EQ("thread pid=7 tid=9 \"worker\"\n"
			     "  3 +? open\n"
			     "  (1 end(s) without an open slice)\n"
			     "thread pid=7 tid=8 \"\"\n"
			     "  5 +25 outer\n"
			     "    10 +10 inner\n"
			     "      12 +0 [decode error: x]\n",
			     text);
	}
	free(text);
	snap_fxttree_fini(&t);
}

int main(void)
{
	RUN(test_header_records);
	RUN(test_events_and_args);
	RUN(test_plain_events);
	RUN(test_arg_limits);
	RUN(test_b6_5_string_reuse);
	RUN(test_b6_5_thread_reuse);
	RUN(test_long_string);
	RUN(test_limits_hook);
	RUN(test_alloc_failures);
	RUN(test_reader_errors);
	RUN(test_b1_6_check_deep);
	RUN(test_desc);
	RUN(test_stream_reader);
	RUN(test_check_spills);
	RUN(test_b1_6_tree);
	return snap_test_done();
}
