// SPDX-License-Identifier: GPL-2.0
/* tests/report/run.sh (e2e_inlined_vs_perf): a -O2 -g program whose time is in libm's
 * sin, whose Debian build inlines do_sin, do_cos, ... into __sin_fma; perf report puts
 * the self time on __sin_fma, and so must snaptrace report. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static inline double mix(double x)
{
	return x * 1.0001 + 0.5;
}

__attribute__((noinline)) double work(int n, int k)
{
	double s = 0;

	for (int i = 0; i < n; i++)
		s += sin(mix(i * 0.001 + k));
	return s;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	double s = 0;

	for (int k = 0; k < n; k++)
		s += work(200000, k);
	printf("%f\n", s);
	return 0;
}
