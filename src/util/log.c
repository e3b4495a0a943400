// SPDX-License-Identifier: GPL-2.0
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>

int snap_log_level = SNAP_LOG_WARN;

void snap_log_fmt(int level, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n;

	(void)level;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One line, whole, from any thread (the decode's consumer): one write of the
	 * unbuffered stderr, so that neither another thread's line nor the raw writes
	 * of the progress line and of perf's relayed stderr land inside it. */
	flockfile(stderr);
	if (n >= 0 && (size_t)n < sizeof(line)) {
		fprintf(stderr, "snaptrace: %s\n", line);
	} else { /* (longer: in pieces) */
		fputs("snaptrace: ", stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	funlockfile(stderr);
}
