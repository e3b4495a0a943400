// SPDX-License-Identifier: GPL-2.0
/*
 * An e2e target with an ordinary C++ stack: a std::mt19937 (624 uint_fast32_t: 5 KiB of state)
 * in run()'s frame, -O2 without frame pointers (dwarf is picked). A dwarf
 * stack copy under ~6 KiB cannot unwind past run() to main.
 * usage: mtstack ITERS   (~1 ms per iteration)
 */
#include <cstdlib>
#include <random>

volatile unsigned long sink;

__attribute__((noinline)) void work(std::mt19937 &g, long n)
{
	for (long i = 0; i < n; i++)
		sink += g();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void run(long n)
{
	std::mt19937 g(42);

	work(g, n);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 100;

	for (long i = 0; i < iters; i++)
		run(200000);
	return 0;
}
