// SPDX-License-Identifier: GPL-2.0
/*
 * An e2e target that names its threads: the main thread calls itself
 * "mymain" (prctl), starts a thread named "myworker" (pthread_setname_np),
 * and both spin ~MS ms in main > mspin and worker > wspin. The worker waits
 * until it is named, so every sample of its spin has the name, and each
 * spin lasts until it also had 5 ms of CPU (>= 20 cpu-clock samples at
 * 4 kHz however loaded the machine is).
 * usage: tnames [MS]   Prints "ready PID" first. -O0, frame pointers.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;
static long ms = 400;
static sem_t named;

__attribute__((noinline)) static void spin(void)
{
	struct timespec a, b, c;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &b);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms ||
		 (c.tv_sec == 0 && c.tv_nsec < 5000000));
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
	while (sem_wait(&named) != 0)
		;
	wspin();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1)
		ms = atol(argv[1]);
	prctl(PR_SET_NAME, "mymain");
	if (sem_init(&named, 0, 0) != 0 || pthread_create(&t, NULL, worker, NULL) != 0)
		return 99;
	if (pthread_setname_np(t, "myworker") != 0)
		return 98;
	sem_post(&named);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	mspin();
	pthread_join(t, NULL);
	return 0;
}
