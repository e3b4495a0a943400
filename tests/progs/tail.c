// SPDX-License-Identifier: GPL-2.0
/*
 * Built at -O2 so that tail_entry ends in a real tail call ("jmp tail_target"):
 * tail_entry's frame is replaced by tail_target's, which returns straight to
 * tail_entry's caller.
 */
typedef unsigned long u64;

__attribute__((noinline)) u64 tail_target(u64 x)
{
	__asm__ volatile("" : "+r"(x));
	return x ^ 0x55;
}

__attribute__((noinline)) u64 tail_entry(u64 x)
{
	__asm__ volatile("" : "+r"(x));
	return tail_target(x + 1);
}
