// SPDX-License-Identifier: GPL-2.0
/*
 * Calls magic-trace's stop indicator the way its OCaml library does: with
 * tagged integers (value << 1 | 1), the first a TSC read when the interesting
 * part began, the second a payload (42). -trigger . fires on it; the hit
 * carries arg=42 and the start time. Usage: stopind [ITERS]
 */
#include <stdint.h>
#include <stdlib.h>
#include <x86intrin.h>

volatile long sink;

__attribute__((noinline)) void magic_trace_stop_indicator(uint64_t start_tsc, int64_t arg)
{
	sink += (long)(start_tsc + (uint64_t)arg);
}

__attribute__((noinline)) void work(void)
{
	for (int i = 0; i < 200000; i++)
		sink += i;
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 200;
	uint64_t start;

	for (long i = 0; i < iters; i++)
		work();
	start = __rdtsc();
	for (long i = 0; i < iters; i++)
		work();
	magic_trace_stop_indicator(start << 1 | 1, 42 << 1 | 1);
	for (long i = 0; i < iters; i++)
		work();
	return 0;
}
