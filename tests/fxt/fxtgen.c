// SPDX-License-Identifier: GPL-2.0
/*
 * fxtgen: writes FXT test traces through the real writer and file sink, for
 * tests/fxt/run.sh. Usage: fxtgen SCENARIO OUT [N|SEED]
 *   basic    names, nested begin/end with every arg type, complete, counter
 *   symbols  N distinct symbol names (default 100000): string index re-use
 *   threads  N threads (default 1000) on 100 processes: thread index re-use
 *   random   a random nested trace (SEED) over tiny tables (64 strings, 3
 *            threads) so index re-use happens all the time
 *   long     a 40,000-byte name (truncated) and odd bytes in names
 *   bench    N events (default 10 M) of a call tree over 5,000 names with
 *            address/symbol args on 4 threads; prints the writer's speed
 *   perfscript  OUT FILE: `perf script` text FILE through the real parser and
 *            stack decoder (what `snaptrace decode` does); prints events/s
 * OUT ending in .gz is gzip-compressed (at level LEVEL if given as a 4th
 * argument). Exit 0 on success.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parse/perfscript.h"
#include "stack/builder.h"
#include "util/err.h"
#include "util/strtab.h"
#include "write/fxt.h"
#include "write/sink.h"

struct gen {
	struct snap_strtab st;
	struct snap_timeline *tl;
	struct snap_fxt fx;
	uint64_t rng;
};

static uint32_t S(struct gen *g, const char *s)
{
	int64_t id = snap_strtab_intern_cstr(&g->st, s);

	return id < 0 ? 0 : (uint32_t)id;
}

static uint32_t rnd(struct gen *g, uint32_t n)
{
	g->rng = g->rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)((g->rng >> 33) % n);
}

static void gen_basic(struct gen *g)
{
	const struct snap_timeline_ops *o = g->tl->ops;
	struct snap_arg a[3] = {
		{S(g, "address"), SNAP_ARG_PTR, {.u = 0x401000}},
		{S(g, "symbol"), SNAP_ARG_STR, {.str = S(g, "main")}},
		{S(g, "depth"), SNAP_ARG_INT, {.i = 1}},
	};
	struct snap_arg big = {S(g, "offset"), SNAP_ARG_INT, {.i = -9000000000ll}};
	struct snap_arg freq = {S(g, "freq (MHz)"), SNAP_ARG_INT, {.i = 4600}};

	o->thread(g->tl, 42, 42, S(g, "prog [pid=42]"), S(g, "prog"));
	o->thread(g->tl, 42, 43, S(g, "prog [pid=42]"), S(g, "worker"));
	o->begin(g->tl, 42, 42, 1000, S(g, "main"), a, 3);
	o->begin(g->tl, 42, 42, 1000, S(g, "init"), &big, 1);
	o->end(g->tl, 42, 42, 1500, S(g, "init"));
	o->complete(g->tl, 42, 42, 1600, 1600, S(g, "[decode error: Overflow packet]"), NULL, 0);
	o->counter(g->tl, 42, 42, 1700, S(g, "CPU"), &freq, 1);
	o->begin(g->tl, 42, 43, 1100, S(g, "work"), NULL, 0);
	o->complete(g->tl, 42, 43, 1200, 1300, S(g, "leaf"), a, 2);
	o->end(g->tl, 42, 43, 1900, 0);
	o->end(g->tl, 42, 42, 2000, S(g, "main"));
}

static void gen_symbols(struct gen *g, uint32_t n)
{
	const struct snap_timeline_ops *o = g->tl->ops;
	uint32_t mainname = S(g, "main"), sym = S(g, "symbol");

	o->thread(g->tl, 7, 7, S(g, "many"), S(g, "many"));
	o->begin(g->tl, 7, 7, 0, mainname, NULL, 0);
	for (uint32_t i = 0; i < n; i++) {
		char name[48];
		struct snap_arg a;

		snprintf(name, sizeof(name), "function_number_%u", i);
		a.name = sym;
		a.type = SNAP_ARG_STR;
		a.v.str = S(g, name);
		o->begin(g->tl, 7, 7, 10 * (uint64_t)i + 1, a.v.str, &a, 1);
		o->end(g->tl, 7, 7, 10 * (uint64_t)i + 5, a.v.str);
	}
	o->end(g->tl, 7, 7, 10 * (uint64_t)n, mainname);
}

static void gen_threads(struct gen *g, uint32_t n)
{
	const struct snap_timeline_ops *o = g->tl->ops;

	for (uint32_t i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "thread-%u", i);
		o->thread(g->tl, 1000 + (int32_t)(i % 100), 20000 + (int32_t)i, S(g, "procs"),
			  S(g, name));
	}
	for (uint32_t round = 0; round < 3; round++)
		for (uint32_t i = 0; i < n; i++) {
			int32_t pid = 1000 + (int32_t)(i % 100), tid = 20000 + (int32_t)i;
			uint64_t t = round * 100;

			o->begin(g->tl, pid, tid, t + 1, S(g, "outer"), NULL, 0);
			o->complete(g->tl, pid, tid, t + 2, t + 3, S(g, "inner"), NULL, 0);
			o->end(g->tl, pid, tid, t + 4, S(g, "outer"));
		}
}

/* Random nested slices on 5 threads, names from a pool of 500. */
static void gen_random(struct gen *g)
{
	const struct snap_timeline_ops *o = g->tl->ops;
	uint32_t stack[5][64], depth[5] = {0};
	uint64_t ts[5] = {0};

	snap_fxt_set_limits(&g->fx, 64, 3);
	for (int t = 0; t < 5; t++)
		o->thread(g->tl, 500, 600 + t, S(g, "rnd"), S(g, "t"));
	for (int i = 0; i < 20000; i++) {
		int t = (int)rnd(g, 5);
		uint32_t op = rnd(g, 10);
		char name[16];

		ts[t] += rnd(g, 3);
		snprintf(name, sizeof(name), "f%u", rnd(g, 500));
		if (op < 4 && depth[t] < 64) {
			struct snap_arg a = {S(g, "arg"), SNAP_ARG_STR, {.str = S(g, name)}};

			stack[t][depth[t]++] = S(g, name);
			o->begin(g->tl, 500, 600 + t, ts[t], stack[t][depth[t] - 1], &a, 1);
		} else if (op < 8 && depth[t]) {
			o->end(g->tl, 500, 600 + t, ts[t], stack[t][--depth[t]]);
		} else if (op == 8) {
			struct snap_arg a = {S(g, "n"), SNAP_ARG_INT, {.i = (int64_t)ts[t]}};

			o->counter(g->tl, 500, 600 + t, ts[t], S(g, "ctr"), &a, 1);
		} else {
			o->complete(g->tl, 500, 600 + t, ts[t], ts[t], S(g, name), NULL, 0);
		}
	}
	for (int t = 0; t < 5; t++)
		while (depth[t])
			o->end(g->tl, 500, 600 + t, ts[t] + 1, stack[t][--depth[t]]);
}

static void gen_long(struct gen *g)
{
	const struct snap_timeline_ops *o = g->tl->ops;
	size_t n = 40000;
	char *s = malloc(n + 1);

	if (!s)
		return;
	for (size_t i = 0; i < n; i++)
		s[i] = (char)('a' + i % 26);
	s[n] = 0;
	o->thread(g->tl, 1, 1, S(g, "p"), S(g, "t"));
	o->complete(g->tl, 1, 1, 5, 9, S(g, s), NULL, 0);
	o->complete(g->tl, 1, 1, 10, 11, S(g, "quote\" back\\slash tab\t, comma={x}"), NULL, 0);
	o->complete(g->tl, 1, 1, 12, 13, S(g, "caf\xc3\xa9 \xe2\x86\x92 ok"), NULL, 0);
	free(s);
}

/* Nested calls 8 deep over a pool of names, like a decoded PT trace. */
static void gen_bench(struct gen *g, uint64_t n)
{
	const struct snap_timeline_ops *o = g->tl->ops;
	uint32_t names[5000], sym = S(g, "symbol"), addr = S(g, "address");
	uint32_t stack[4][8];
	size_t depth[4] = {0};
	uint64_t ts = 0, events = 0;
	struct timespec t0, t1;

	for (int i = 0; i < 5000; i++) {
		char name[48];

		snprintf(name, sizeof(name), "Module.function_%d_with_a_realistic_length", i);
		names[i] = S(g, name);
	}
	for (int t = 0; t < 4; t++)
		o->thread(g->tl, 10, 10 + t, S(g, "bench"), S(g, "worker"));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (events < n) {
		int t = (int)rnd(g, 4);

		ts += 3;
		if (depth[t] < 8 && (depth[t] == 0 || rnd(g, 2))) {
			uint32_t nm = names[rnd(g, 5000)];
			struct snap_arg a[2] = {{addr, SNAP_ARG_PTR, {.u = 0x400000 + nm * 16}},
						{sym, SNAP_ARG_STR, {.str = nm}}};

			stack[t][depth[t]++] = nm;
			o->begin(g->tl, 10, 10 + t, ts, nm, a, 2);
		} else {
			o->end(g->tl, 10, 10 + t, ts, stack[t][--depth[t]]);
		}
		events++;
	}
	for (int t = 0; t < 4; t++)
		while (depth[t])
			o->end(g->tl, 10, 10 + t, ts, stack[t][--depth[t]]);
	o->finish(g->tl);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	{
		double s =
			(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

		fprintf(stderr, "fxt-writer: %llu events in %.3f s: %.1f M events/s\n",
			(unsigned long long)events, s, (double)events / s / 1e6);
	}
}

/* perf script text -> parser -> decoder -> the writer. Returns 0 or an error. */
static int gen_perfscript(struct gen *g, const char *path)
{
	struct snap_perfscript ps;
	struct snap_builder bld;
	struct snap_event ev;
	struct timespec t0, t1;
	FILE *f = fopen(path, "rb");
	char *buf = malloc(1 << 16);
	uint64_t events = 0;
	size_t n;
	int err, r;

	if (!f || !buf) {
		free(buf);
		if (f)
			fclose(f);
		return -ENOENT;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = snap_perfscript_init(&ps, &g->st);
	if (!err)
		err = snap_builder_init(&bld, g->tl, &g->st, NULL);
	while (!err) {
		n = fread(buf, 1, 1 << 16, f);
		if (n)
			err = snap_perfscript_feed(&ps, buf, n);
		else
			snap_perfscript_finish(&ps);
		while (!err && (r = snap_perfscript_next(&ps, &ev)) > 0) {
			err = snap_builder_feed(&bld, &ev);
			events++;
		}
		if (!err && r < 0)
			err = r;
		if (!n)
			break;
	}
	if (!err)
		err = snap_builder_finish(&bld);
	if (!err)
		err = g->tl->ops->finish(g->tl);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	{
		double s =
			(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

		fprintf(stderr, "perfscript->fxt: %llu events in %.3f s: %.2f M events/s\n",
			(unsigned long long)events, s, (double)events / s / 1e6);
	}
	snap_builder_fini(&bld);
	snap_perfscript_fini(&ps);
	fclose(f);
	free(buf);
	return err;
}

int main(int argc, char **argv)
{
	struct gen g;
	struct snap_sink sink;
	const char *sc;
	unsigned long n;
	int err;

	if (argc < 3) {
		fputs("usage: fxtgen basic|symbols|threads|random|long OUT [N|SEED]\n", stderr);
		return 2;
	}
	sc = argv[1];
	n = argc > 3 && strcmp(sc, "perfscript") ? strtoul(argv[3], NULL, 10) : 0;
	memset(&g, 0, sizeof(g));
	snap_strtab_init(&g.st);
	err = snap_sink_open(&sink, argv[2]);
	if (err < 0) {
		fprintf(stderr, "fxtgen: %s: %s\n", argv[2], snap_strerror(err));
		return 1;
	}
	if (argc > 4 && strcmp(sc, "perfscript"))
		err = snap_sink_set_gz_level(&sink, atoi(argv[4]));
	if (!err)
		err = snap_fxt_init(&g.fx, &sink, &g.st);
	g.tl = &g.fx.base;
	g.rng = n + 1;
	if (!strcmp(sc, "basic"))
		gen_basic(&g);
	else if (!strcmp(sc, "symbols"))
		gen_symbols(&g, n ? (uint32_t)n : 100000);
	else if (!strcmp(sc, "threads"))
		gen_threads(&g, n ? (uint32_t)n : 1000);
	else if (!strcmp(sc, "random"))
		gen_random(&g);
	else if (!strcmp(sc, "long"))
		gen_long(&g);
	else if (!strcmp(sc, "perfscript"))
		err = argc > 3 ? gen_perfscript(&g, argv[3]) : -SNAP_EUSAGE;
	else if (!strcmp(sc, "bench"))
		gen_bench(&g, n ? n : 10000000);
	else
		err = snap_sink_fail(&sink, -SNAP_EUSAGE);
	if (!err)
		err = g.tl->ops->finish(g.tl);
	if (!err)
		err = snap_sink_close(&sink);
	snap_fxt_fini(&g.fx);
	snap_sink_fini(&sink);
	snap_strtab_fini(&g.st);
	if (err < 0) {
		fprintf(stderr, "fxtgen %s: %s\n", sc, snap_strerror(err));
		return 1;
	}
	return 0;
}
