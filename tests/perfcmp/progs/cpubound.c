/* SPDX-License-Identifier: GPL-2.0 */
/* tests/perfcmp case 4, CPU-bound under preemption: pins itself to CPU 0 and runs
 * N rounds of work_a (2 ms of CPU) and work_b (1 ms); a second copy started with
 * N = 0 spins on CPU 0 until killed, so the traced copy's switches are
 * preemptions. The work is a count of iterations (BURN, calibrated), not BURN_US: its
 * clock reads are system calls, and a preemption at their return would make this a
 * case of wake-ups (tests/perfcmp pipewake) too. Usage: cpubound [N] */
#define _GNU_SOURCE
#include <sched.h>

#include "burn.h"

__attribute__((noinline)) static void work_a(void)
{
	BURN(2000 * per_us);
}

__attribute__((noinline)) static void work_b(void)
{
	BURN(1000 * per_us);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 400;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0)
		perror("sched_setaffinity");
	per_us = calibrate();
	if (n == 0) {
		printf("spinning\n");
		fflush(stdout);
		for (;;)
			work_b();
	}
	for (int i = 0; i < n; i++) {
		work_a();
		work_b();
	}
	printf("rounds %d\n", n);
	return 0;
}
