// SPDX-License-Identifier: GPL-2.0
/* Traced stripped (tests/e2e/cases/cfi_names.sh): one long call of spin_long
 * (N million loop turns in a single call that calls nothing, so that no
 * sample sits at a function entry, where a frame-pointer chain skips the
 * caller), then short calls of work_a and work_b from one loop. Built without
 * PIE (code addresses differ from file offsets) and stripped by the test; its
 * frames are named from the file's CFI. Usage: stripfn [N] */
/* (stripfn_pad, built with -DSTRIPFN_PAD, is another build of it: see pad) */
#include <stdlib.h>

volatile unsigned long sink;

#ifdef STRIPFN_PAD
/* stripfn_pad: the same program with its code moved (another build id) */
__attribute__((noinline)) void pad(void)
{
	sink += 2;
}
#endif

__attribute__((noinline)) void spin_long(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i * 3;
}

__attribute__((noinline)) void work_a(int n)
{
	for (int i = 0; i < n; i++)
		sink ^= (unsigned long)i * 7;
}

__attribute__((noinline)) void work_b(int n)
{
	for (int i = 0; i < n; i++)
		sink += (unsigned long)i;
	work_a(n / 2);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 150;

	spin_long(n * 1000000);
	for (int k = 0; k < 200; k++)
		work_b(20000);
	return 0;
}
