// SPDX-License-Identifier: GPL-2.0
/*
 * An e2e target for frame-pointer chains through the vDSO: main calls work()
 * N times (default 30), each ~4 ms of a loop of its own and of time(), which
 * glibc resolves straight to the vDSO's frameless __vdso_time, with a 1 ms
 * nanosleep between calls. A sample in __vdso_time loses work from its chain
 * (%rbp is still work's); the vDSO's unwind table, from perf's build-id
 * cache, marks the frame frameless so work stays one call (docs/sampling.md).
 * usage: vdsotime [N]    Build: -O0 -g -fno-omit-frame-pointer.
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

__attribute__((noinline)) void work(void)
{
	struct timespec a;

	clock_gettime(CLOCK_MONOTONIC, &a);
	while (ms_since(&a) < 4) {
		for (int i = 0; i < 300; i++)
			sink += (unsigned long)i;
		for (int i = 0; i < 20; i++)
			sink += (unsigned long)time(NULL);
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 30;
	struct timespec t = {0, 1000000};

	for (int i = 0; i < n; i++) {
		work();
		nanosleep(&t, NULL);
	}
	return 0;
}
