/* SPDX-License-Identifier: GPL-2.0 */
/* tests/perfcmp case 3, compute then park: N rounds of crunch_a (40 ms of CPU),
 * crunch_b (20 ms), then park() sleeping 250 ms; recorded by a plain
 * `perf record -g` (no switch records). Usage: workpark [N] */
#include "burn.h"

__attribute__((noinline)) static void crunch_a(void)
{
	BURN_US(40000);
}

__attribute__((noinline)) static void crunch_b(void)
{
	BURN_US(20000);
}

__attribute__((noinline)) static void park(void)
{
	nap_us(250000);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	per_us = calibrate();
	for (int i = 0; i < n; i++) {
		crunch_a();
		crunch_b();
		park();
	}
	printf("rounds %d\n", n);
	return 0;
}
