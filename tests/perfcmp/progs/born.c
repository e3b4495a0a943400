/* SPDX-License-Identifier: GPL-2.0 */
/* tests/perfcmp case born: linked static (run.sh), so its start-up before main is far
 * shorter than a sample period and the recording's first sample is already in main.
 * main calls work() (5 ms of CPU) N times: recorded whole by `snaptrace run
 * -full-execution`, main is one counted call (the program is born at the data's start,
 * docs/sampling.md "Threads born and exiting"), not a frame that ran before the data.
 * Usage: born [N] */
#include "burn.h"

__attribute__((noinline)) static void work(void)
{
	BURN_US(5000);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100, i;

	per_us = calibrate();
	for (i = 0; i < n; i++)
		work();
	printf("main 1 work %d\n", i);
	return 0;
}
