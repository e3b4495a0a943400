// SPDX-License-Identifier: GPL-2.0
/*
 * An e2e target deeper than perf's dwarf stack copy: main calls rec 100 deep,
 * each frame holding a 256-byte buffer (~27 KiB of stack, the copy is 8 KiB),
 * and the innermost spins in leaf, N times (default 20, ~10 ms each). With
 * -callgraph-mode dwarf the chains stop inside rec, short of main and _start.
 * usage: deeprec [N]    Build: -O0 -g -fno-omit-frame-pointer.
 */
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

static long ms_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000 + (b.tv_nsec - a->tv_nsec) / 1000000;
}

__attribute__((noinline)) void leaf(void)
{
	struct timespec a;

	clock_gettime(CLOCK_MONOTONIC, &a);
	while (ms_since(&a) < 10)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
}

__attribute__((noinline)) int rec(int d)
{
	volatile char buf[256];

	buf[d % 256] = (char)d;
	if (d == 0) {
		leaf();
		return buf[0];
	}
	return rec(d - 1) + buf[3];
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;

	for (int i = 0; i < n; i++)
		rec(100);
	return 0;
}
