/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf's event names as both readers of perf script see them: the text parser
 * (parse/perfscript) and the plugin (plugin/dlfilter.c, which includes only
 * model/ headers and links nothing: hence inline functions).
 */
#ifndef SNAP_MODEL_EVNAME_H
#define SNAP_MODEL_EVNAME_H

#include <stddef.h>
#include <string.h>

#define SNAP_EVNAME_BRANCHES "branches" /* Intel PT branches (--itrace=b) */
#define SNAP_EVNAME_CBR	     "cbr"	/* Intel PT core-to-bus ratio: CPU frequency */

/* The length of the base of event name p (n bytes): without "/config/" and
 * ":mods", i.e. everything before the first '/', else before the last ':'
 * when only modifier letters follow it ("cpu-clock:u" -> "cpu-clock", but
 * "sched:sched_switch" stays). */
static inline size_t snap_evname_base(const char *p, size_t n)
{
	const char *sl = memchr(p, '/', n), *c = NULL;

	if (sl)
		return (size_t)(sl - p);
	for (size_t i = n; i > 0 && !c; i--)
		if (p[i - 1] == ':')
			c = p + i - 1;
	if (!c || c == p)
		return n;
	for (const char *q = c + 1; q < p + n; q++)
		if (!memchr("ukhIGHpPSDWebR", *q, 14))
			return n;
	return (size_t)(c - p);
}

/* 1 if the event base p (n bytes) is one of the Intel PT synthesized events
 * snaptrace skips (psb, pwre, ptwrite, ...: all but branches and cbr). */
static inline int snap_evname_is_synth(const char *p, size_t n)
{
	static const char *const names[] = {"psb",   "pwre", "pwrx",  "exstop",	      "ptwrite",
					    "mwait", "evt",  "iflag", "transactions", NULL};

	for (int i = 0; names[i]; i++)
		if (strlen(names[i]) == n && memcmp(p, names[i], n) == 0)
			return 1;
	return 0;
}

#endif
