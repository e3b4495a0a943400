/* SPDX-License-Identifier: GPL-2.0 */
/* Tiny syscall helpers for the static, no-libc test programs (x86-64 Linux). */
#ifndef PROGS_NOLIBC_H
#define PROGS_NOLIBC_H

static inline long sys3(long n, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return r;
}

static inline long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	long r;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return r;
}

/* _start: clear the frame pointer, align the stack, call cmain (which never returns). */
#define NOLIBC_START                                                                               \
	__asm__(".text\n.globl _start\n_start:\n\txor %rbp,%rbp\n\tand $-16,%rsp\n"                \
		"\tcall cmain\n\thlt\n")

#endif
