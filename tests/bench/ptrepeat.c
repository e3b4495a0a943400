// SPDX-License-Identifier: GPL-2.0
/*
 * ptrepeat: a big ptsynth instruction trace from a small one, for `make bench`
 * (tests/bench/ptdec.sh). Reads IN.steps (tests/ptsynth/ptsynth.h: one
 * {ip, tid, flags} per executed instruction) and writes OUT.steps with COPIES
 * copies of the run one after the other; copy c runs as thread tid + c % THREADS
 * (THREADS = 1: one thread runs every copy in turn, each starting again after
 * the previous one's exit syscall). mkptdata then encodes it with the
 * program's .maps and .insn.
 *   ptrepeat IN.steps OUT.steps COPIES THREADS
 *
 * Those copies nest: each starts inside the previous one's unreturned frames
 * (the run ends in the exit syscall). With -b IN.insn the calls return: the
 * run's first loop iteration at the outermost call level is found (a CALL
 * executed again at the same depth, every frame in between returned: with
 * tests/progs/static_calls, cmain's call of work()), and each thread runs the
 * run's start, COPIES / THREADS times that iteration, then the rest of the run,
 * as if the loop ran longer; thread k starts after thread k - 1's exit.
 *   ptrepeat -b IN.insn IN.steps OUT.steps COPIES THREADS
 * With -i K as well the threads run at the same time instead: K instructions of
 * each in turn, so that their per-thread streams overlap in time (8 threads on 8
 * CPUs, as a user's thread pool records) and a decode merges their events.
 *   ptrepeat -b IN.insn -i K IN.steps OUT.steps COPIES THREADS
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct step {
	uint64_t ip;
	uint32_t tid;
	uint32_t flags;
};

/* The kinds of IN.insn ("ADDR LEN KIND" lines, docs/pt-testing.md): the
 * addresses of the calls and of the returns, into sorted arrays. */
struct kinds {
	uint64_t *call, *ret;
	size_t ncall, nret;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int load_kinds(const char *path, struct kinds *k)
{
	FILE *f = fopen(path, "r");
	char line[256], kind[32];
	size_t cap = 0;

	memset(k, 0, sizeof(*k));
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		uint64_t addr;
		unsigned len;

		if (sscanf(line, "%" SCNx64 " %u %31s", &addr, &len, kind) != 3)
			continue;
		if (k->ncall + k->nret + 1 > cap) {
			cap = cap ? cap * 2 : 1024;
			k->call = realloc(k->call, cap * sizeof(*k->call));
			k->ret = realloc(k->ret, cap * sizeof(*k->ret));
			if (!k->call || !k->ret)
				return -1;
		}
		if (!strcmp(kind, "CALL") || !strcmp(kind, "CALLI"))
			k->call[k->ncall++] = addr;
		else if (!strcmp(kind, "RET"))
			k->ret[k->nret++] = addr;
	}
	fclose(f);
	qsort(k->call, k->ncall, sizeof(*k->call), cmp_u64);
	qsort(k->ret, k->nret, sizeof(*k->ret), cmp_u64);
	return 0;
}

static int in_set(const uint64_t *v, size_t n, uint64_t x)
{
	return bsearch(&x, v, n, sizeof(*v), cmp_u64) != NULL;
}

/* The loop iteration [*a, *b) of the first thread's steps: v[*a] is a call,
 * v[*b] the same call at the same depth, no frame of depth below in between. */
static int find_loop(const struct step *v, size_t n, const struct kinds *k, size_t *a, size_t *b)
{
	long *depth = malloc((n + 1) * sizeof(*depth));
	long d = 0;

	if (!depth)
		return -1;
	for (size_t i = 0; i < n; i++) {
		depth[i] = d;
		if (v[i].tid != v[0].tid)
			continue;
		if (in_set(k->call, k->ncall, v[i].ip))
			d++;
		else if (in_set(k->ret, k->nret, v[i].ip))
			d--;
	}
	depth[n] = d;
	for (size_t i = 0; i < n; i++) {
		if (v[i].tid != v[0].tid || !in_set(k->call, k->ncall, v[i].ip))
			continue;
		for (size_t j = i + 1; j < n && depth[j] >= depth[i]; j++)
			if (v[j].ip == v[i].ip && depth[j] == depth[i] && v[j].tid == v[0].tid) {
				*a = i;
				*b = j;
				free(depth);
				return 0;
			}
	}
	free(depth);
	return -1;
}

/* Where thread t of -b is in its run: the start v[0..la), reps times the loop
 * iteration v[la..lb), the rest v[la..n) (phases 0, 1, 2), at step i. */
struct cursor {
	int phase;
	long rep, reps;
	size_t i;
};

/* Writes up to k steps of the run cursor c is in (as thread tid) and moves it on.
 * Returns 1 while the run has more steps, 0 at its end, -1 on a write error. */
static int put_some(FILE *out, const struct step *v, size_t n, size_t la, size_t lb,
		    struct cursor *c, uint32_t tid, size_t k)
{
	while (k) {
		size_t from = c->phase == 0 ? 0 : la, to = c->phase == 1 ? lb : c->phase ? n : la;
		size_t i = c->i ? c->i : from, m = to - i < k ? to - i : k;
		struct step s;

		if (c->phase == 1 && c->rep >= c->reps) {
			c->phase = 2;
			c->i = 0;
			continue;
		}
		for (size_t j = 0; j < m; j++) {
			s = v[i + j];
			s.tid = tid;
			if (fwrite(&s, sizeof(s), 1, out) != 1)
				return -1;
		}
		k -= m;
		c->i = i + m;
		if (c->i < to)
			continue;
		c->i = 0;
		if (c->phase == 2)
			return 0;
		if (c->phase == 1)
			c->rep++;
		else
			c->phase = 1;
	}
	return 1;
}

static int put(FILE *out, const struct step *v, size_t from, size_t to, uint32_t tid)
{
	for (size_t i = from; i < to; i++) {
		struct step s = v[i];

		s.tid = tid;
		if (fwrite(&s, sizeof(s), 1, out) != 1)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	FILE *in, *out;
	struct step *v = NULL;
	size_t n = 0, cap = 0, la = 0, lb = 0;
	long copies, threads, slice = 0;
	const char *insn = NULL;

	if (argc >= 7 && !strcmp(argv[1], "-b")) {
		insn = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (insn && argc == 7 && !strcmp(argv[1], "-i")) {
		slice = strtol(argv[2], NULL, 10);
		argv += 2;
		argc -= 2;
	}
	if (argc != 5 || slice < 0 || (copies = strtol(argv[3], NULL, 10)) < 1 ||
	    (threads = strtol(argv[4], NULL, 10)) < 1 || threads > 64) {
		fprintf(stderr, "usage: ptrepeat [-b IN.insn [-i K]] IN.steps OUT.steps COPIES "
				"THREADS(1-64)\n");
		return 2;
	}
	if (!(in = fopen(argv[1], "rb"))) {
		fprintf(stderr, "ptrepeat: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	for (;;) {
		if (n == cap) {
			struct step *nv;

			cap = cap ? cap * 2 : 4096;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				fprintf(stderr, "ptrepeat: out of memory\n");
				return 1;
			}
			v = nv;
		}
		if (fread(&v[n], sizeof(*v), 1, in) != 1)
			break;
		n++;
	}
	fclose(in);
	if (!n) {
		fprintf(stderr, "ptrepeat: %s: no steps\n", argv[1]);
		return 1;
	}
	if (insn) {
		struct kinds k;

		if (load_kinds(insn, &k) < 0 || find_loop(v, n, &k, &la, &lb) < 0) {
			fprintf(stderr, "ptrepeat: %s: no loop iteration at the outer call level\n",
				insn);
			return 1;
		}
		free(k.call);
		free(k.ret);
	}
	if (!(out = fopen(argv[2], "wb"))) {
		fprintf(stderr, "ptrepeat: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	if (slice) { /* -i: the threads' runs K steps of each in turn */
		struct cursor c[64];
		long live = threads;

		for (long t = 0; t < threads; t++)
			c[t] = (struct cursor){0, 0, copies / threads + (t < copies % threads), 0};
		while (live)
			for (long t = 0; t < threads; t++) {
				int r;

				if (c[t].phase < 0)
					continue;
				r = put_some(out, v, n, la, lb, &c[t], v[0].tid + (uint32_t)t,
					     (size_t)slice);
				if (r < 0) {
					fprintf(stderr, "ptrepeat: %s: write error\n", argv[2]);
					return 1;
				}
				if (!r) {
					c[t].phase = -1;
					live--;
				}
			}
		copies = threads = 0; /* written */
	}
	for (long t = 0; insn && t < threads; t++) {
		uint32_t tid = v[0].tid + (uint32_t)t;
		long reps = copies / threads + (t < copies % threads);
		int err = put(out, v, 0, la, tid);

		for (long c = 0; c < reps && !err; c++)
			err = put(out, v, la, lb, tid);
		if (err || put(out, v, la, n, tid)) {
			fprintf(stderr, "ptrepeat: %s: write error\n", argv[2]);
			return 1;
		}
	}
	if (insn)
		copies = 0; /* written above */
	for (long c = 0; c < copies; c++) {
		uint32_t tid = v[0].tid + (uint32_t)(c % threads);

		for (size_t i = 0; i < n; i++) {
			struct step s = v[i];

			s.tid = tid;
			if (fwrite(&s, sizeof(s), 1, out) != 1) {
				fprintf(stderr, "ptrepeat: %s: write error\n", argv[2]);
				return 1;
			}
		}
	}
	if (fclose(out)) {
		fprintf(stderr, "ptrepeat: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	free(v);
	return 0;
}
