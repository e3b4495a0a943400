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
	int plugin_found;   /* snap_caps_find_plugin() chose a plugin file */
	int plugin_off;	    /* SNAPTRACE_NO_DLFILTER asks for the text path */
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

/* Runs `PERF --version` and parses it. Returns 0 and sets major and minor,
 * or a negative error (both 0 then). */
int snap_caps_perf_version(const char *perf, int *major, int *minor);

/* What perf's version allows (each the first perf release that has it). */
int snap_caps_has_no_bpf_event(const struct snap_perfcaps *c);	   /* 5.1: --no-bpf-event */
int snap_caps_can_snapshot_at_exit(const struct snap_perfcaps *c); /* 5.4: --snapshot=e */
int snap_caps_has_kcore(const struct snap_perfcaps *c);		   /* 5.5: --kcore */
int snap_caps_has_ctl_fd(const struct snap_perfcaps *c);	   /* 5.10: --control=fd */
int snap_caps_has_dlfilter(const struct snap_perfcaps *c);	   /* 5.14: --dlfilter */
int snap_caps_has_no_inline(const struct snap_perfcaps *c);	   /* 4.14: script --no-inline */

#define SNAP_PLUGIN_FILE "snaptrace-dlfilter.so"

/* Where to look for the plugin and whether to use it. */
struct snap_plugin_env {
	const char *exe_dir;  /* directory of the snaptrace binary, or NULL */
	const char *override; /* $SNAPTRACE_DLFILTER: this plugin file, or NULL */
	int perf_major;	      /* perf's version; 0 = unknown */
	int perf_minor;
	int no_dlfilter;		 /* -no-dlfilter */
	const char *env_no;		 /* $SNAPTRACE_NO_DLFILTER (or $MAGIC_TRACE_NO_DLFILTER) */
	int (*exists)(const char *path); /* file test (for unit tests); NULL = access(R_OK) */
};

/* Fills env from the environment ($SNAPTRACE_DLFILTER, $SNAPTRACE_NO_DLFILTER,
 * $MAGIC_TRACE_NO_DLFILTER) and exe_dir; the perf version is left unknown. */
void snap_caps_plugin_env(struct snap_plugin_env *env, const char *exe_dir);

/* Returns 1 when env asks for the text path (-no-dlfilter or SNAPTRACE_NO_DLFILTER). */
int snap_caps_plugin_off(const struct snap_plugin_env *env);

/*
 * The one plugin search, for doctor, -print-perf-commands and decode alike.
 * Returns 1 and copies the plugin path into path (len bytes) when the plugin
 * should be used, else 0; either way why (whylen bytes) says why, for an info
 * message. The plugin is used when perf >= 5.14 (or the version is unknown),
 * neither -no-dlfilter nor SNAPTRACE_NO_DLFILTER=1 ask for the text path, and
 * the plugin is found: the override, else next to the executable, else
 * exe_dir/../lib/snaptrace, else /usr/local/lib/snaptrace and /usr/lib/snaptrace.
 */
int snap_caps_find_plugin(const struct snap_plugin_env *env, char *path, size_t len, char *why,
			  size_t whylen);

/* The plugin a recording on *m decodes with (NULL: the text path);
 * no_dlfilter is the -no-dlfilter flag. */
const char *snap_caps_plugin(const struct snap_machine *m, int no_dlfilter);

/* Finds prog in $PATH (or as given when it has a '/'; the default PATH when
 * $PATH is unset or empty), the one PATH search. Returns 0 with the file in
 * out (len bytes), or -ENOENT. */
int snap_caps_find_in_path(const char *prog, char *out, size_t len);

/* Returns the perf binary to run: $SNAPTRACE_PERF, $MAGIC_TRACE_PERF_PATH or "perf". */
const char *snap_caps_perf_path(void);

#endif
