// SPDX-License-Identifier: GPL-2.0
/*
 * An e2e target too short to sample: static, no libc, it exits with status 3
 * a few microseconds after it starts (a sample period is 250 us at 4 kHz).
 */
#include "../../progs/nolibc.h"

NOLIBC_START;

void cmain(void);
void cmain(void)
{
	sys3(231 /* exit_group */, 3, 0, 0);
}
