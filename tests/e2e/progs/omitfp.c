// SPDX-License-Identifier: GPL-2.0
/*
 * An e2e target built -O2 -fomit-frame-pointer, like distribution binaries:
 * main > outer > inner > leaf, where frame-pointer call graphs lose the
 * callers and dwarf (the default pick for it) keeps them.
 * usage: omitfp ITERS [EXIT]   (~0.1 ms per iteration)
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

volatile long sink;

/* The empty asm after each call keeps it a call (no tail call, no inlining). */
#define KEEP() __asm__ volatile("" ::: "memory")

__attribute__((noinline)) void leaf(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
	KEEP();
}

__attribute__((noinline)) void inner(long n)
{
	long pad[8];

	for (int i = 0; i < 8; i++)
		pad[i] = sink + i;
	leaf(n + pad[0] - pad[0]);
	KEEP();
	sink += pad[7];
}

__attribute__((noinline)) void outer(long n)
{
	inner(n);
	KEEP();
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 1000;

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (long i = 0; i < iters; i++)
		outer(100000);
	return argc > 2 ? atoi(argv[2]) : 0;
}
