// SPDX-License-Identifier: GPL-2.0
/*
 * An e2e target that leaves the CPU: main > outer > spin_a spins ~80 ms,
 * outer > nap sleeps 300 ms in nanosleep, outer > spin_b spins ~80 ms.
 * A sampling timeline must end spin_a when the thread is switched out and
 * show the sleep as off-CPU time (with its call chain when perf has it).
 * With a second argument, "last", it naps last (spin_a, spin_b, nap): the
 * program ends asleep.
 * usage: sleeper [EXIT [last]]   Prints "ready PID" first.
 * Build: -O0 -g -fno-omit-frame-pointer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;

static long ms_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000 + (b.tv_nsec - a->tv_nsec) / 1000000;
}

/* Spins for ms of wall time (CPU time, as nothing else runs here). */
__attribute__((noinline)) static void spin(long ms)
{
	struct timespec a;

	clock_gettime(CLOCK_MONOTONIC, &a);
	while (ms_since(&a) < ms)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
}

__attribute__((noinline)) void spin_a(void)
{
	spin(80);
}

__attribute__((noinline)) void spin_b(void)
{
	spin(80);
}

__attribute__((noinline)) void nap(void)
{
	struct timespec t = {0, 300 * 1000 * 1000};

	while (nanosleep(&t, &t) != 0)
		;
}

__attribute__((noinline)) void outer(void)
{
	spin_a();
	nap();
	spin_b();
}

int main(int argc, char **argv)
{
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (argc > 2 && !strcmp(argv[2], "last")) {
		spin_a();
		spin_b();
		nap();
	} else {
		outer();
	}
	return argc > 1 ? atoi(argv[1]) : 0;
}
