// SPDX-License-Identifier: GPL-2.0
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>

int snap_log_level = SNAP_LOG_WARN;

void snap_log_fmt(int level, const char *fmt, ...)
{
	va_list ap;

	(void)level;
	flockfile(stderr); /* one line, whole, from any thread (the decode's consumer) */
	fputs("snaptrace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}
