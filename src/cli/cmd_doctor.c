// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>

#include "cli/commands.h"

int snap_cmd_doctor(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("snaptrace doctor: not implemented yet\n", stderr);
	return 2;
}
