// SPDX-License-Identifier: GPL-2.0
/*
 * An e2e target that names its threads: the main thread calls itself
 * "mymain" (prctl), starts a thread named "myworker" (pthread_setname_np),
 * and both spin ~MS ms in main > mspin and worker > wspin.
 * usage: tnames [MS]   Prints "ready PID" first. -O0, frame pointers.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;
static long ms = 400;

__attribute__((noinline)) static void spin(void)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

__attribute__((noinline)) void wspin(void)
{
	spin();
}

__attribute__((noinline)) void mspin(void)
{
	spin();
}

static void *worker(void *arg)
{
	(void)arg;
	wspin();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1)
		ms = atol(argv[1]);
	prctl(PR_SET_NAME, "mymain");
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 99;
	pthread_setname_np(t, "myworker");
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	mspin();
	pthread_join(t, NULL);
	return 0;
}
