// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>

#include "cli/commands.h"

int snap_cmd_decode(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("snaptrace decode: not implemented yet\n", stderr);
	return 2;
}
