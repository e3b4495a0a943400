// SPDX-License-Identifier: GPL-2.0
/*
 * An e2e target for the sampling model (docs/sampling.md): a pipe wake-up loop
 * and thread-per-request work.
 *  - loop: main > wake_loop blocks in read() on a pipe that a writer thread
 *    fills every 2 ms, then computes ~150 us in crunch() (less than the 250 us
 *    sample period), 200 times: crunch must get the on-CPU time, not read;
 *  - requests: main > serve starts 24 threads one after the other, each
 *    request > handle spinning ~3 ms, and joins each before the next.
 * usage: wakeups    Build: -O0 -g -fno-omit-frame-pointer -pthread.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;
static int fds[2];

static long us_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000000 + (b.tv_nsec - a->tv_nsec) / 1000;
}

/* Spins for us of wall time. */
__attribute__((noinline)) static void spin_us(long us)
{
	struct timespec a;

	clock_gettime(CLOCK_MONOTONIC, &a);
	while (us_since(&a) < us)
		sink++;
}

__attribute__((noinline)) static void crunch(void)
{
	spin_us(150);
}

static void *writer(void *arg)
{
	char c = 'x';

	(void)arg;
	for (int i = 0; i < 200; i++) {
		usleep(2000);
		if (write(fds[1], &c, 1) != 1)
			break;
	}
	close(fds[1]);
	return NULL;
}

__attribute__((noinline)) static void wake_loop(void)
{
	char c;

	while (read(fds[0], &c, 1) == 1)
		crunch();
}

__attribute__((noinline)) static void handle(void)
{
	spin_us(3000);
}

static void *request(void *arg)
{
	(void)arg;
	handle();
	return NULL;
}

__attribute__((noinline)) static void serve(void)
{
	for (int i = 0; i < 24; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, request, NULL))
			return;
		pthread_join(t, NULL);
	}
}

int main(void)
{
	pthread_t w;

	if (pipe(fds) || pthread_create(&w, NULL, writer, NULL))
		return 1;
	wake_loop();
	pthread_join(w, NULL);
	serve();
	return 0;
}
