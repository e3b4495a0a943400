// SPDX-License-Identifier: GPL-2.0
#include "util/err.h"

#include <errno.h>
#include <string.h>

volatile sig_atomic_t snap_interrupted;

const char *snap_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case SNAP_EPARSE:
		return "malformed input";
	case SNAP_EFORMAT:
		return "unrecognised input format";
	case SNAP_ENOTSUP:
		return "not supported";
	case SNAP_EPERF:
		return "perf failed";
	case SNAP_ESCOPE:
		return "event outside the trace scope";
	case SNAP_ETRUNC:
		return "truncated input";
	case SNAP_ELIMIT:
		return "limit exceeded";
	case SNAP_EPLUGIN:
		return "bad record stream from the dlfilter plugin";
	case SNAP_EUSAGE:
		return "bad usage";
	case SNAP_ESTALL:
		return "perf script printed nothing for SNAPTRACE_PERF_STALL_SECONDS (default "
		       "120): "
		       "stopped it (it spins forever on some damaged recordings; set the variable "
		       "to wait longer, 0 for ever)";
	case SNAP_ENOTREG:
		return "not a regular file (a block device or socket: refused)";
	case SNAP_EFOREIGN:
		return "another user's symbolic link or file in a sticky world-writable directory "
		       "(refused, as the kernel's fs.protected_symlinks does)";
	case EFBIG: /* SIGXFSZ is ignored (cli/main.c): the write fails instead */
		return "file too large (ulimit -f)";
	case SNAP_ENOTTEXT:
		return "neither a perf.data file nor perf script text (no event in its first MiB)";
	default:
		return strerror(err);
	}
}
