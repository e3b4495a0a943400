/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What this machine and its perf can do (docs/behaviour.md §2.1), read from
 * /sys, /proc and `perf --version`. snap_caps_detect() does the I/O; the
 * parsers under it are pure so they can be unit-tested.
 */
#ifndef SNAP_RECORD_CAPS_H
#define SNAP_RECORD_CAPS_H

#include <limits.h>
#include <stddef.h>

#include "record/perfargs.h"

struct snap_machine {
	struct snap_perfcaps caps;
	int perf_found;	       /* `perf --version` ran and exited 0 */
	char perf_version[64]; /* "6.1.187", "" if unknown */
	int euid;
	int cap_perfmon;    /* CAP_PERFMON or CAP_SYS_ADMIN in the effective set */
	int kptr_restrict;  /* -1 = unreadable */
	int has_uprobe_pmu; /* /sys/bus/event_source/devices/uprobe */
	int has_bp_pmu;	    /* /sys/bus/event_source/devices/breakpoint */
	int ptrace_scope;   /* Yama: -1 = no Yama */
	int plugin_found;   /* snaptrace-dlfilter.so found */
	char plugin_path[PATH_MAX];
	int has_fzf;
};

/* Parses "perf version 6.1.187" (also "6.1", "5.10.g1234"). Returns 0 and
 * sets major/minor (and copies the version word into ver), or -SNAP_EPARSE. */
int snap_caps_parse_perf_version(const char *s, int *major, int *minor, char *ver, size_t len);

/* Returns 1 when every "flags" line of a /proc/cpuinfo text has the word
 * pdcm (LBR support), 0 otherwise; no flags lines: 1 (magic-trace's rule). */
int snap_caps_cpuinfo_has_pdcm(const char *cpuinfo, size_t len);

/* Returns 1 when the CapEff line of a /proc/PID/status text has
 * CAP_PERFMON (38) or CAP_SYS_ADMIN (21). */
int snap_caps_status_perfmon(const char *status, size_t len);
/* Returns 1 when the CapEff line of a /proc/PID/status text has capability bit. */
int snap_caps_status_cap(const char *status, size_t len, int bit);

/* Fills *m for perf binary `perf` (NULL = "perf"). exe_dir is the directory
 * of the snaptrace binary (for the plugin), may be NULL. Never fails: unknown
 * facts are left at their "missing" values. */
void snap_caps_detect(struct snap_machine *m, const char *perf, const char *exe_dir);

/* Fills buf (len bytes) with the directory of the running snaptrace binary
 * (from /proc/self/exe). Returns buf, or NULL when it cannot be read. */
const char *snap_caps_self_dir(char *buf, size_t len);

/* Returns the perf binary to run: $SNAPTRACE_PERF, $MAGIC_TRACE_PERF_PATH or "perf". */
const char *snap_caps_perf_path(void);

#endif
