// SPDX-License-Identifier: GPL-2.0
/*
 * A static program without libc and with a known call tree: direct calls,
 * indirect calls through a table, recursion, mutual recursion, a real tail
 * call (tail_entry, built at -O2 in tail.c), and the write and exit syscalls.
 * Built -O0 -fno-omit-frame-pointer -nostdlib -static.
 */
#include "nolibc.h"

typedef unsigned long u64;

u64 tail_entry(u64 x);

__attribute__((noinline)) u64 leaf(u64 x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) u64 rec(int d, u64 x)
{
	if (d == 0)
		return leaf(x);
	return rec(d - 1, x + (u64)d) + 1;
}

__attribute__((noinline)) int is_odd(int n);

__attribute__((noinline)) int is_even(int n)
{
	return n == 0 ? 1 : is_odd(n - 1);
}

__attribute__((noinline)) int is_odd(int n)
{
	return n == 0 ? 0 : is_even(n - 1);
}

__attribute__((noinline)) u64 op_add(u64 x)
{
	return x + 7;
}

__attribute__((noinline)) u64 op_mul(u64 x)
{
	return leaf(x) * 5;
}

u64 (*volatile table[2])(u64) = {op_add, op_mul};

__attribute__((noinline)) u64 work(int i)
{
	u64 acc = 0;

	for (int j = 0; j < 2; j++)
		acc += table[(i + j) & 1]((u64)j);
	acc += rec(i % 3, acc);
	return acc;
}

__attribute__((noinline)) void emit(u64 v)
{
	char buf[2] = {(char)('a' + (v % 26)), '\n'};

	sys3(1, 1, (long)buf, 2);
}

__attribute__((noinline, used)) void cmain(void)
{
	u64 t = 0;

	for (int i = 0; i < 3; i++)
		t += work(i);
	t += (u64)is_even(3);
	t += tail_entry(t);
	emit(t);
	sys3(60, 0, 0, 0);
}

NOLIBC_START;
