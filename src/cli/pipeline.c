// SPDX-License-Identifier: GPL-2.0
#include "cli/pipeline.h"

#include <stdio.h>

#include "util/err.h"

int snap_decode_run(const struct snap_decode_opts *o)
{
	(void)o;
	fputs("snaptrace: decoding is not implemented yet\n", stderr);
	return -SNAP_ENOTSUP;
}
