/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Error codes: a negative return is an error. System errors are -errno;
 * snaptrace's own errors are the SNAP_E* values below (all > 4096), also negated.
 */
#ifndef SNAP_UTIL_ERR_H
#define SNAP_UTIL_ERR_H

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
};

/* Returns a static string describing err (negative or positive). Never NULL. */
const char *snap_strerror(int err);

#endif
