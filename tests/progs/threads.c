// SPDX-License-Identifier: GPL-2.0
/*
 * Two threads without libc: the main thread starts a second one with a raw
 * clone (spawn_thread, below), both run small call trees, and the main
 * thread waits for the other's exit through CLONE_CHILD_CLEARTID and futex.
 */
#include "nolibc.h"

typedef unsigned long u64;

static volatile int child_tid = 1;
static char child_stack[16384] __attribute__((aligned(16)));

/* rdi = flags, rsi = stack top, rdx = &ctid, rcx = function for the child. */
long spawn_thread(unsigned long flags, void *stack, volatile int *ctid, void (*fn)(void));
__asm__(".text\n.globl spawn_thread\nspawn_thread:\n"
	"\tsub $24, %rsi\n\tmov %rcx, (%rsi)\n\tmov %rdx, %r10\n\txor %edx, %edx\n"
	"\txor %r8d, %r8d\n\tmov $56, %eax\n\tsyscall\n\ttest %rax, %rax\n\tjnz 1f\n"
	"\txor %ebp, %ebp\n\tpop %rax\n\tcall *%rax\n\tmov $60, %eax\n\txor %edi, %edi\n"
	"\tsyscall\n\thlt\n1:\n\tret\n");

__attribute__((noinline)) u64 leaf(u64 x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) u64 fib(int n)
{
	return n < 2 ? leaf((u64)n) : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) u64 main_work(void)
{
	return leaf(1) + leaf(2);
}

__attribute__((noinline)) void thread_fn(void)
{
	u64 v = fib(3);

	sys3(1, 1, (long)"t\n", 2 + (long)(v & 0));
}

__attribute__((noinline)) void join(void)
{
	int v;

	while ((v = child_tid) != 0)
		sys6(202, (long)&child_tid, 0 /* FUTEX_WAIT */, v, 0, 0, 0);
}

__attribute__((noinline, used)) void cmain(void)
{
	unsigned long flags =
		0x100 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x40000 | 0x200000 |
		0x1000000; /* VM FS FILES SIGHAND THREAD SYSVSEM CHILD_CLEARTID|SETTID */
	spawn_thread(flags, child_stack + sizeof child_stack, &child_tid, thread_fn);
	main_work();
	join();
	sys3(231, 0, 0, 0);
}

NOLIBC_START;
