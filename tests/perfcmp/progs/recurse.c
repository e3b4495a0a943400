/* SPDX-License-Identifier: GPL-2.0 */
/* tests/perfcmp case 5, recursion: N rounds of a recursive fib(29) (depth 29) and
 * a walk of a complete binary tree of depth 12 whose every node is visited by
 * visit() (~1 us of CPU each). Usage: recurse [N] */
#include "burn.h"

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long fib(int n)
{
	return n < 2 ? (unsigned long)n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) static void visit(int depth)
{
	BURN(per_us);
	sink += (unsigned long)depth;
}

__attribute__((noinline)) static void walk(int depth)
{
	visit(depth);
	if (depth < 12) {
		walk(depth + 1);
		walk(depth + 1);
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 60;
	per_us = calibrate();
	for (int i = 0; i < n; i++) {
		sink += fib(29);
		walk(1);
	}
	printf("rounds %d\n", n);
	return 0;
}
