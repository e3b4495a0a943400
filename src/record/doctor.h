/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `snaptrace doctor`'s decisions, pure: machine facts (record/caps.h) in,
 * a list of findings out, each with what to do about it. cli/cmd_doctor.c
 * prints them.
 */
#ifndef SNAP_RECORD_DOCTOR_H
#define SNAP_RECORD_DOCTOR_H

#include <stddef.h>

#include "record/caps.h"

enum snap_doc_status {
	SNAP_DOC_INFO = -1, /* a fact, nothing to fix */
	SNAP_DOC_MISSING = 0,
	SNAP_DOC_OK = 1,
};

struct snap_doc_item {
	const char *what; /* "perf", "Intel PT", ... (static) */
	enum snap_doc_status status;
	char detail[200]; /* what was found */
	char fix[240];	  /* what to do, "" when nothing */
};

#define SNAP_DOC_MAX 16

/* Fills up to max items and returns how many. */
size_t snap_doctor_check(const struct snap_machine *m, struct snap_doc_item *items, size_t max);

/* Returns a static one-line summary of how snaptrace will record here. */
const char *snap_doctor_mode(const struct snap_machine *m);

/* Returns 1 when snaptrace can record at all here (perf found, and perf
 * may sample the user's own processes). */
int snap_doctor_can_record(const struct snap_machine *m);

#endif
