// SPDX-License-Identifier: GPL-2.0
/*
 * A dynamic program through ld.so and libc: lazily bound PLT calls (strlen
 * twice: the first goes through the resolver), a qsort callback, malloc and
 * free, and setjmp/longjmp out of two frames. Built -O0 with -z lazy.
 */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static jmp_buf env;

__attribute__((noinline)) int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

__attribute__((noinline)) void deep_jump(int n)
{
	if (n == 0)
		longjmp(env, 1);
	deep_jump(n - 1);
}

__attribute__((noinline)) int try_jump(void)
{
	if (setjmp(env) == 0) {
		deep_jump(1);
		return 0;
	}
	return 1;
}

__attribute__((noinline)) int sort_some(void)
{
	int *v = malloc(4 * sizeof *v);

	if (!v)
		return -1;
	v[0] = 3;
	v[1] = 1;
	v[2] = 2;
	v[3] = 0;
	qsort(v, 4, sizeof *v, cmp_int);
	int r = v[0];
	free(v);
	return r;
}

int main(void)
{
	const char *msg = "dyn\n";
	size_t n = strlen(msg);

	n += strlen(msg) * 0;
	sort_some();
	try_jump();
	write(1, msg, n);
	return 0;
}
