/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Diagnostics. The level is one of the few allowed globals. Messages go to
 * stderr prefixed with "snaptrace: "; the level is checked before formatting.
 */
#ifndef SNAP_UTIL_LOG_H
#define SNAP_UTIL_LOG_H

enum snap_log_level {
	SNAP_LOG_QUIET = 0, /* errors only */
	SNAP_LOG_WARN,	    /* default: warnings and notices */
	SNAP_LOG_INFO,	    /* -v */
	SNAP_LOG_DEBUG,	    /* -vv */
};

extern int snap_log_level;

/* Prints "snaptrace: " and the message to stderr; call it through snap_log,
 * which checks the level first. */
void snap_log_fmt(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define snap_log(level, ...)                                                                       \
	do {                                                                                       \
		if ((level) <= snap_log_level)                                                     \
			snap_log_fmt((level), __VA_ARGS__);                                        \
	} while (0)

#define snap_warn(...)	snap_log(SNAP_LOG_WARN, __VA_ARGS__)
#define snap_info(...)	snap_log(SNAP_LOG_INFO, __VA_ARGS__)
#define snap_debug(...) snap_log(SNAP_LOG_DEBUG, __VA_ARGS__)

#endif
