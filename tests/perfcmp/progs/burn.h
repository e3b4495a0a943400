/* SPDX-License-Identifier: GPL-2.0 */
/* CPU work of a known length for the tests/perfcmp programs. BURN_US(us) spins in
 * the function that uses it (so a sampler sees that function as the leaf, never a
 * helper) until this thread has used US more microseconds of CPU
 * (CLOCK_THREAD_CPUTIME_ID: a loaded machine stretches the wall time of a burst,
 * never its CPU time, and a burst right after a wake-up, on cold caches, is as long
 * as a hot one). It checks the clock every 1/16 of the burst (at least ~5 us of
 * iterations, BURN, sized by calibrate()), so the clock's own cost stays a few %. */
#ifndef PERFCMP_BURN_H
#define PERFCMP_BURN_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define BURN(n)                                                                                    \
	do {                                                                                       \
		unsigned long burn_n = (n);                                                        \
		for (volatile unsigned long burn_i = 0; burn_i < burn_n; burn_i++) {               \
		}                                                                                  \
	} while (0)

static unsigned long per_us = 1; /* BURN iterations per us of CPU, from calibrate() */

#define BURN_US(us)                                                                                \
	do {                                                                                       \
		double burn_us = (us), burn_end = cpu_us() + burn_us;                              \
		unsigned long burn_chunk = (unsigned long)(burn_us / 16 * per_us);                 \
		if (burn_chunk < 5 * per_us)                                                       \
			burn_chunk = 5 * per_us;                                                   \
		do                                                                                 \
			BURN(burn_chunk);                                                          \
		while (cpu_us() < burn_end);                                                       \
	} while (0)

static double cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Iterations of BURN per microsecond of CPU: the median of 5 runs of 2 M iterations
 * (a few ms in all; a run the machine disturbed is slower, a lucky one faster). */
static unsigned long calibrate(void)
{
	unsigned long n = 2000000, r[5];
	for (int k = 0; k < 5; k++) {
		double t0 = cpu_us();
		BURN(n);
		double dt = cpu_us() - t0;
		r[k] = dt > 0 ? (unsigned long)(n / dt) : n;
		for (int j = k; j > 0 && r[j] < r[j - 1]; j--) {
			unsigned long x = r[j];
			r[j] = r[j - 1];
			r[j - 1] = x;
		}
	}
	return r[2] ? r[2] : 1;
}

__attribute__((unused)) static void nap_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	while (nanosleep(&ts, &ts) != 0) {
	}
}

/* Forks a child that writes one byte into a pipe N times, ~1 ms apart, then exits;
 * returns the child's pid (-1 on failure) and the pipe's read end in *rfd. */
__attribute__((unused)) static pid_t waker(int n, int *rfd)
{
	int fd[2];
	if (pipe(fd) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fd[0]);
		for (int i = 0; i < n; i++) {
			nap_us(1000);
			if (write(fd[1], "x", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(fd[1]);
	*rfd = fd[0];
	return pid;
}
#endif
