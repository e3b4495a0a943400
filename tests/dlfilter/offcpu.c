// SPDX-License-Identifier: GPL-2.0
/* A target for the off-CPU checks of the dlfilter suite: main > outer > spin_a
 * spins, outer > nap sleeps, outer > spin_b spins; then loop calls work five
 * times from one call site, each calling spin once (one call, one slice: the
 * ~10 samples of each spin call are one slice); then a worker thread renames
 * itself "myworker" and spins while main blocks in pthread_join. Times are
 * wall-clock, so a busy machine only stretches them. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

static long ms_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000 + (b.tv_nsec - a->tv_nsec) / 1000000;
}

__attribute__((noinline)) void spin(int ms)
{
	struct timespec a;

	clock_gettime(CLOCK_MONOTONIC, &a);
	/* The clock is read rarely: a sample in the vDSO (no frame pointer) would
	 * show its caller's caller as its caller and split spin's slice. */
	do {
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i;
	} while (ms_since(&a) < ms);
}

__attribute__((noinline)) void spin_a(void)
{
	spin(40);
}

__attribute__((noinline)) void spin_b(void)
{
	spin(40);
}

__attribute__((noinline)) void nap(void)
{
	struct timespec t = {0, 150 * 1000000};

	nanosleep(&t, NULL);
}

__attribute__((noinline)) void outer(void)
{
	spin_a();
	nap();
	spin_b();
}

__attribute__((noinline)) void work(void)
{
	spin(10);
}

__attribute__((noinline)) void loop(void)
{
	for (int i = 0; i < 5; i++)
		work();
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "myworker");
	spin(30);
	return NULL;
}

int main(void)
{
	pthread_t t;

	outer();
	loop();
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	pthread_join(t, NULL);
	return 0;
}
