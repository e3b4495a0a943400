// SPDX-License-Identifier: GPL-2.0
/*
 * An e2e target with a known call tree: main > outer > inner > leaf.
 * usage: nest ITERS [TRIGGER_AT [THREADS [EXIT [SYSCALLS]]]]
 *   ITERS       iterations of outer() (0 = until killed), ~0.1 ms each
 *   TRIGGER_AT  call trigger_here() at that iteration (0 = never, -N = every N)
 *   THREADS     1: a second thread runs worker > wouter > wleaf
 *   EXIT        the exit status
 *   SYSCALLS    1: leaf also makes getppid() system calls (kernel frames)
 * Prints "ready PID" once running. Build: -O0 -g -fno-omit-frame-pointer.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

volatile long sink;
static int syscalls;

__attribute__((noinline)) void leaf(void)
{
	for (int i = 0; i < 100000; i++)
		sink += i;
	for (int i = 0; syscalls && i < 200; i++)
		sink += syscall(SYS_getppid);
}

__attribute__((noinline)) void inner(void)
{
	leaf();
}

__attribute__((noinline)) void outer(void)
{
	inner();
}

__attribute__((noinline)) void trigger_here(int i)
{
	sink += i;
}

__attribute__((noinline)) void wleaf(void)
{
	for (int i = 0; i < 100000; i++)
		sink -= i;
}

__attribute__((noinline)) void wouter(void)
{
	wleaf();
}

static void *worker(void *arg)
{
	long n = (long)arg;

	for (long i = 0; n == 0 || i < n; i++)
		wouter();
	return NULL;
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 1000;
	long trig = argc > 2 ? atol(argv[2]) : 0;
	int threads = argc > 3 ? atoi(argv[3]) : 0;
	int code = argc > 4 ? atoi(argv[4]) : 0;
	pthread_t t;

	syscalls = argc > 5 ? atoi(argv[5]) : 0;

	if (threads && pthread_create(&t, NULL, worker, (void *)iters) != 0)
		return 99;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (long i = 1; iters == 0 || i <= iters; i++) {
		outer();
		if (i == trig || (trig < 0 && i % -trig == 0))
			trigger_here((int)i);
	}
	if (threads)
		pthread_join(t, NULL);
	return code;
}
