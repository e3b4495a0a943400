/* SPDX-License-Identifier: GPL-2.0 */
/* tests/perfcmp case 1, a wake-up loop: a child writes one byte into a pipe N times
 * (sleeping ~1 ms between), the traced main thread blocks in read() and then
 * computes ~150 us of CPU in crunch(): every burst is shorter than the 250 us
 * sample period at 4 kHz. Prints "crunch N". Usage: pipewake [N] */
#include <sys/wait.h>

#include "burn.h"

__attribute__((noinline)) static void crunch(void)
{
	BURN_US(150);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000, rfd, calls = 0;
	char c;
	per_us = calibrate();
	pid_t pid = waker(n, &rfd);
	if (pid < 0)
		return 1;
	while (read(rfd, &c, 1) == 1) {
		crunch();
		calls++;
	}
	waitpid(pid, NULL, 0);
	printf("crunch %d\n", calls);
	return 0;
}
