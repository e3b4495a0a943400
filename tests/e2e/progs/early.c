// SPDX-License-Identifier: GPL-2.0
/*
 * An e2e target that hits its trigger at once: static, no libc, its first
 * call is hit_me(), before any sample can be taken; then it spins ~200 ms
 * and exits with status 4.
 */
#include "../../progs/nolibc.h"

NOLIBC_START;

volatile unsigned long sink;

__attribute__((noinline)) void hit_me(void)
{
	sink++;
}

static long now_ms(void)
{
	long ts[2];

	sys3(228 /* clock_gettime */, 1 /* CLOCK_MONOTONIC */, (long)ts, 0);
	return ts[0] * 1000 + ts[1] / 1000000;
}

__attribute__((noinline)) void after(void)
{
	long t0 = now_ms();

	while (now_ms() - t0 < 200)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
}

void cmain(void);
void cmain(void)
{
	hit_me();
	after();
	sys3(231 /* exit_group */, 4, 0, 0);
}
