/* SPDX-License-Identifier: GPL-2.0 */
/* tests/perfcmp case sleeploop: main calls work() (10 ms of CPU) then usleep(2000),
 * N times. The sleeps' sched_switch chains and the samples in clock_gettime (cpu_us)
 * have a leaf without a frame of its own (libc's clock_nanosleep, the vDSO): a
 * frame-pointer walk skips the leaf's caller there (docs/sampling.md "Call counts
 * where a frame-pointer chain loses a frame"). The calibration runs in a constructor,
 * before main: its few ms of CPU (~15 samples) come first (the case born has its first
 * sample already in main: docs/sampling.md "Threads born and exiting").
 * Usage: sleeploop [N] */
#include "burn.h"

__attribute__((constructor)) static void warm(void)
{
	per_us = calibrate();
}

__attribute__((noinline)) static void work(void)
{
	BURN_US(10000);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100, i;
	for (i = 0; i < n; i++) {
		work();
		usleep(2000);
	}
	printf("main 1 work %d sleeps %d\n", i, i);
	return 0;
}
