// SPDX-License-Identifier: GPL-2.0
/*
 * bench_ptdec: the in-process PT decoder alone (no stacks, no FXT), for
 * tests/bench/ptdec.sh: opens a perf.data with ptdec and pulls every event.
 *   bench_ptdec PERF.DATA JOBS
 * Prints "N events, B branches, E errors, I instructions, P pieces (W by the fast walk),
 * J threads".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptdec/ptdec.h"
#include "util/err.h"
#include "util/strtab.h"

int main(int argc, char **argv)
{
	struct snap_ptdec_opts o;
	struct snap_ptdec_stats st;
	struct snap_strtab names;
	struct snap_ptdec *d;
	struct snap_event ev;
	char why[256] = "";
	unsigned long long n = 0;
	int r;

	if (argc != 3) {
		fprintf(stderr, "usage: bench_ptdec PERF.DATA JOBS\n");
		return 2;
	}
	memset(&o, 0, sizeof(o));
	o.jobs = atoi(argv[2]);
	snap_strtab_init(&names);
	r = snap_ptdec_open(&d, argv[1], &o, &names, why, sizeof(why));
	if (r < 0) {
		fprintf(stderr, "bench_ptdec: %s: %s\n", argv[1], why[0] ? why : snap_strerror(r));
		return 1;
	}
	while ((r = snap_ptdec_next(d, &ev)) > 0)
		n++;
	snap_ptdec_stats(d, &st);
	printf("%llu events, %llu branches, %llu errors, %llu instructions, %llu pieces (%llu by "
	       "the fast walk), %d threads\n",
	       n, (unsigned long long)st.branches, (unsigned long long)st.errors,
	       (unsigned long long)st.insns, (unsigned long long)st.pieces,
	       (unsigned long long)st.walked, st.jobs);
	snap_ptdec_close(d);
	snap_strtab_fini(&names);
	return r < 0;
}
