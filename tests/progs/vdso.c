// SPDX-License-Identifier: GPL-2.0
/*
 * A static program without libc that runs vdso code: it finds the vdso from
 * the auxiliary vector (AT_SYSINFO_EHDR), looks __vdso_clock_gettime and
 * __vdso_getcpu up in its .dynsym (the vdso is a whole ELF image in memory)
 * and calls them, then exits. For tests/ptsynth's vdso case (sstep -d dumps
 * the vdso, mkptdata maps it as [vdso] with a build-id cache entry).
 * Built -O0 -fno-omit-frame-pointer -nostdlib -static.
 */
#include "nolibc.h"

typedef unsigned long u64;
typedef unsigned int u32;
typedef unsigned short u16;

#define AT_SYSINFO_EHDR 33
#define SHT_DYNSYM	11

struct ts {
	long sec, nsec;
};

static int streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* The address of symbol name in the vdso's .dynsym, or 0. */
__attribute__((noinline)) static u64 vdso_sym(u64 base, const char *name)
{
	const unsigned char *e = (const unsigned char *)base;
	u64 shoff = *(const u64 *)(e + 40);
	u16 shnum = *(const u16 *)(e + 60);

	for (u16 i = 0; i < shnum; i++) {
		const unsigned char *sh = e + shoff + (u64)i * 64;
		const unsigned char *link;
		u64 off, size;
		const char *str;

		if (*(const u32 *)(sh + 4) != SHT_DYNSYM)
			continue;
		off = *(const u64 *)(sh + 24);
		size = *(const u64 *)(sh + 32);
		link = e + shoff + (u64) * (const u32 *)(sh + 40) * 64;
		str = (const char *)(e + *(const u64 *)(link + 24));
		for (u64 s = 24; s + 24 <= size; s += 24) {
			const unsigned char *sym = e + off + s;

			if (streq(str + *(const u32 *)sym, name))
				return base + *(const u64 *)(sym + 8);
		}
	}
	return 0;
}

__attribute__((noinline)) static long get_time(u64 fn)
{
	struct ts t;

	t.sec = 0; /* no initialiser: clang would call memset, and there is no libc */
	t.nsec = 0;

	((int (*)(int, struct ts *))fn)(1 /* CLOCK_MONOTONIC */, &t);
	return t.nsec;
}

__attribute__((noinline)) static long get_cpu(u64 fn)
{
	unsigned cpu = 0, node = 0;

	((long (*)(unsigned *, unsigned *, void *))fn)(&cpu, &node, 0);
	return (long)cpu;
}

__attribute__((noreturn, used)) void cmain(u64 *sp)
{
	u64 argc = sp[0], base = 0, *p = sp + argc + 2; /* argv, NULL, then envp */
	long r = 0;

	while (*p)
		p++;
	for (p++; p[0]; p += 2) /* auxv pairs */
		if (p[0] == AT_SYSINFO_EHDR)
			base = p[1];
	if (base) {
		u64 f = vdso_sym(base, "__vdso_clock_gettime");
		u64 g = vdso_sym(base, "__vdso_getcpu");

		if (f)
			r += get_time(f) & 1;
		if (g)
			r += get_cpu(g);
	}
	sys3(1, 1, (long)"vdso\n", 5);
	sys3(60, base ? 0 : 1, 0, 0);
	for (;;)
		;
}

__asm__(".text\n.globl _start\n_start:\n\txor %rbp,%rbp\n\tmov %rsp,%rdi\n"
	"\tand $-16,%rsp\n\tcall cmain\n\thlt\n");
