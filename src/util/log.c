// SPDX-License-Identifier: GPL-2.0
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>

#include "util/alloc.h"
#include "util/esc.h"

int snap_log_level = SNAP_LOG_WARN;

void snap_log_fmt(int level, const char *fmt, ...)
{
	char line[2048], shown[4096], *text = line, *out = shown;
	va_list ap;
	size_t len, need;
	int n;

	(void)level;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	len = (size_t)n;
	if (len >= sizeof(line)) { /* (longer: formatted again, whole) */
		text = snap_malloc(len + 1);
		if (text) {
			va_start(ap, fmt);
			vsnprintf(text, len + 1, fmt, ap);
			va_end(ap);
		} else {
			text = line;
			len = sizeof(line) - 1;
		}
	}
	/* Names from outside (a traced program's, a file's) are in many messages:
	 * every control character is escaped, so none reaches the terminal
	 * (docs/guarantees.md, "What reaches the terminal"). */
	need = snap_esc_str(NULL, 0, text, len, 0) + 1;
	if (need > sizeof(shown) && !(out = snap_malloc(need))) {
		out = shown;
		need = sizeof(shown);
	}
	snap_esc_str(out, need, text, len, 0);
	/* One line, whole, from any thread (the decode's consumer): one write of the
	 * unbuffered stderr, so that neither another thread's line nor the raw writes
	 * of the progress line and of perf's relayed stderr land inside it. */
	flockfile(stderr);
	fprintf(stderr, "snaptrace: %s\n", out);
	funlockfile(stderr);
	if (out != shown)
		snap_free(out);
	if (text != line)
		snap_free(text);
}
