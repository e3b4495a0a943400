// SPDX-License-Identifier: GPL-2.0
/*
 * The `make demo` program, after magic-trace's demo: a loop that looks up cos()
 * in libm with dlopen/dlsym, calls it and prints, so the timeline shows the
 * dynamic loader, libm and stdio under main. It calls snaptrace_stop_indicator()
 * at the end, so `snaptrace run -trigger . -- demo` keeps the moments before.
 * Build: clang -O1 -fno-omit-frame-pointer (or gcc -O0 -fno-omit-frame-pointer) -ldl -lm
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void snaptrace_stop_indicator(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static double lookup_and_call(int i)
{
	void *lib = dlopen("libm.so.6", RTLD_LAZY);
	double (*cosine)(double);
	double r = 0;

	if (!lib)
		return 0;
	*(void **)&cosine = dlsym(lib, "cos");
	for (int k = 0; cosine && k < 20000; k++)
		r += cosine(i + k * 0.001);
	dlclose(lib);
	return r;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	double sum = 0;

	for (int i = 0; i < n; i++) {
		sum += lookup_and_call(i);
		if (i % 250 == 0)
			printf("iteration %d: %f\n", i, sum);
	}
	snaptrace_stop_indicator();
	printf("done: %f\n", sum);
	return 0;
}
