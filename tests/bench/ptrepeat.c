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
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct step {
	uint64_t ip;
	uint32_t tid;
	uint32_t flags;
};

int main(int argc, char **argv)
{
	FILE *in, *out;
	struct step *v = NULL;
	size_t n = 0, cap = 0;
	long copies, threads;

	if (argc != 5 || (copies = strtol(argv[3], NULL, 10)) < 1 ||
	    (threads = strtol(argv[4], NULL, 10)) < 1 || threads > 64) {
		fprintf(stderr, "usage: ptrepeat IN.steps OUT.steps COPIES THREADS(1-64)\n");
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
	if (!(out = fopen(argv[2], "wb"))) {
		fprintf(stderr, "ptrepeat: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
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
