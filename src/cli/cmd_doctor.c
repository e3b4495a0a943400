// SPDX-License-Identifier: GPL-2.0
/* snaptrace doctor: what this machine can trace, and how to fix what is missing. */
#include <limits.h>
#include <stdio.h>

#include "cli/commands.h"
#include "cli/opts.h"
#include "cli/serve.h"
#include "record/caps.h"
#include "record/doctor.h"

static const struct snap_opt doctor_opts[] = {
	{NULL, NULL, NULL, NULL},
};

int snap_cmd_doctor(int argc, char **argv)
{
	struct snap_optparse p;
	struct snap_machine m;
	struct snap_doc_item items[SNAP_DOC_MAX];
	char self[PATH_MAX];
	const char *val;
	size_t n;
	int k;

	snap_optparse_init(&p, "doctor", argc - 1, argv + 1);
	while ((k = snap_opt_next(&p, doctor_opts, &val)) != SNAP_OPT_DONE) {
		if (k == SNAP_OPT_HELP) {
			snap_opt_help(
				stdout, "snaptrace doctor",
				"Says what this machine can trace (Intel PT, PMU, LBR, kernel, "
				"dlfilter,\nbreakpoints...) and, for each missing piece, the fix.",
				doctor_opts);
			return 0;
		}
		if (k == SNAP_OPT_POSITIONAL)
			fprintf(stderr, "snaptrace doctor: unexpected argument '%s'\n", val);
		return 2;
	}
	snap_caps_detect(&m, snap_caps_perf_path(), snap_caps_self_dir(self, sizeof(self)));
	n = snap_doctor_check(&m, items, SNAP_DOC_MAX);
	for (size_t i = 0; i < n; i++) {
		const char *tag = items[i].status == SNAP_DOC_OK	? "ok"
				  : items[i].status == SNAP_DOC_MISSING ? "NO"
									: "--";

		printf("%-3s %-20s %s\n", tag, items[i].what, items[i].detail);
		if (items[i].fix[0])
			printf("    %-20s fix: %s\n", "", items[i].fix);
	}
	{ /* -serve's library, opened when serving only (cli/serve.c) */
		char detail[512], fix[128];
		int ok = snap_serve_probe(detail, sizeof(detail), fix, sizeof(fix)) == 0;

		printf("%-3s %-20s %s\n", ok ? "ok" : "--", "-serve", detail);
		if (!ok)
			printf("    %-20s fix: %s\n", "", fix);
	}
	printf("\n%s\n", snap_doctor_mode(&m));
	return snap_doctor_can_record(&m) ? 0 : 1;
}
