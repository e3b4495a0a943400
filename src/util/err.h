/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Error codes: a negative return is an error. System errors are -errno;
 * snaptrace's own errors are the SNAP_E* values below (all > 4096), also negated.
 */
#ifndef SNAP_UTIL_ERR_H
#define SNAP_UTIL_ERR_H

#include <signal.h>

enum snap_err {
	SNAP_EPARSE = 4096, /* malformed input */
	SNAP_EFORMAT,	    /* input is not in any format we know */
	SNAP_ENOTSUP,	    /* feature not supported here */
	SNAP_EPERF,	    /* perf exited non-zero or could not run */
	SNAP_ESCOPE,	    /* event outside the trace scope with -strict-scope */
	SNAP_ETRUNC,	    /* input ends in the middle of a record */
	SNAP_ELIMIT,	    /* a configured limit was exceeded */
	SNAP_EPLUGIN,	    /* the perf dlfilter plugin sent a bad stream */
	SNAP_EUSAGE,	    /* bad command line */
	SNAP_ESTALL,	    /* perf made no progress for too long and was stopped */
	SNAP_ENOTREG,	    /* an output that is neither a regular file nor writable in place */
	SNAP_EFOREIGN,	    /* another user's link or file in a sticky world-writable directory */
	SNAP_ENOTTEXT,	    /* no perf script event in the first SNAP_SNIFF_BYTES of a text input */
};

/* Text input with no event in this many bytes is neither perf.data nor perf
 * script text (/dev/zero, random bytes): refused (docs/guarantees.md, Hangs). */
#define SNAP_SNIFF_BYTES (1u << 20)

/*
 * Set (to the signal number) by a command's SIGINT/SIGTERM/SIGHUP handler:
 * every loop that reads input checks it and returns -EINTR, also when its
 * reads never block (a device that always has data).
 */
extern volatile sig_atomic_t snap_interrupted;

/* Returns a static string describing err (negative or positive). Never NULL. */
const char *snap_strerror(int err);

#endif
