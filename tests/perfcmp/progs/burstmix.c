/* SPDX-License-Identifier: GPL-2.0 */
/* tests/perfcmp case 7, bursts of two lengths: like pipewake, a child writes one byte
 * into a pipe N times (~1 ms apart) and the traced thread wakes up for each, but
 * every 10th wake-up runs grind() for ~600 us of CPU (2.4 sample periods at 4 kHz)
 * and the others crunch() for ~60 us (a quarter of one): the same CPU time in both
 * (0.06 N ms in all for each). Prints "crunch N1 grind N2". Usage: burstmix [N] */
#include <sys/wait.h>

#include "burn.h"

__attribute__((noinline)) static void crunch(void)
{
	BURN_US(60);
}

__attribute__((noinline)) static void grind(void)
{
	BURN_US(600);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000, rfd, nc = 0, ng = 0;
	char c;
	per_us = calibrate();
	pid_t pid = waker(n, &rfd);
	if (pid < 0)
		return 1;
	while (read(rfd, &c, 1) == 1) {
		if ((nc + ng) % 10 == 9) {
			grind();
			ng++;
		} else {
			crunch();
			nc++;
		}
	}
	waitpid(pid, NULL, 0);
	printf("crunch %d grind %d\n", nc, ng);
	return 0;
}
