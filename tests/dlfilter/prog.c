// SPDX-License-Identifier: GPL-2.0
/* A target for the dlfilter suite: a known call tree (main -> top -> mid -> leaf)
 * and a deep recursion (deeper than perf's default 127-frame call chains). */
#include <stdlib.h>

volatile unsigned long sink;

__attribute__((noinline)) void leaf(int n)
{
	for (int i = 0; i < n; i++)
		sink += (unsigned long)i;
}

__attribute__((noinline)) void mid(int n)
{
	leaf(n);
	sink++;
}

__attribute__((noinline)) void top(int n)
{
	for (int i = 0; i < 50; i++)
		mid(n);
}

__attribute__((noinline)) void deep(int depth, int n)
{
	if (depth > 0)
		deep(depth - 1, n);
	else
		leaf(n * 20);
	sink++;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;

	for (int k = 0; k < 10; k++) {
		top(n);
		deep(200, n);
	}
	return 0;
}
