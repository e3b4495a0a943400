// SPDX-License-Identifier: GPL-2.0
/* snaptrace decode: perf.data, perf script text or stdin -> FXT timeline. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/opts.h"
#include "cli/pipeline.h"
#include "cli/reportcli.h"
#include "record/workdir.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/vec.h"

enum {
	OPT_INCLUDE_KERNEL,
	OPT_KERNEL_ONLY,
	OPT_STRICT_SCOPE,
	OPT_OUTPUT,
	OPT_WORKDIR,
	OPT_NO_DLFILTER,
	OPT_PERF,
	OPT_VMLINUX,
	OPT_KALLSYMS,
	OPT_VERBOSE,
	OPT_QUIET,
	OPT_DECODER,
	OPT_JOBS,
	OPT_REPORT,
};

static const struct snap_opt decode_opts[] = {
	[OPT_INCLUDE_KERNEL] = {"trace-include-kernel", NULL, NULL,
				"keep user and kernel frames (scope u+k)"},
	[OPT_KERNEL_ONLY] = {"trace-kernel-only", NULL, NULL, "keep kernel frames only (scope k)"},
	[OPT_STRICT_SCOPE] = {"strict-scope", NULL, NULL,
			      "an event outside the scope is an error (nothing written)"},
	[OPT_OUTPUT] = {"output", "o", "FILE", "output file (default trace.fxt.gz; .gz = gzip)"},
	[OPT_WORKDIR] = {"working-directory", NULL, "DIR",
			 "decode the perf.data files of DIR (run/attach -working-directory)"},
	[OPT_NO_DLFILTER] = {"no-dlfilter", NULL, NULL,
			     "parse perf script text instead of using the perf plugin"},
	[OPT_PERF] = {"perf", NULL, "PATH", "perf binary (default $SNAPTRACE_PERF or perf)"},
	[OPT_VMLINUX] = {"vmlinux", NULL, "FILE",
			 "kernel image for kernel symbols (perf --vmlinux)"},
	[OPT_KALLSYMS] = {"kallsyms", NULL, "FILE", "kernel symbol list (perf --kallsyms)"},
	[OPT_VERBOSE] = {"verbose", "v", NULL, "say more (which decode path, statistics)"},
	[OPT_QUIET] = {"quiet", "q", NULL, "errors only"},
	[OPT_DECODER] = {"decoder", NULL, "perf|ipt|auto",
			 "Intel PT decoder: perf (default), ipt (in-process, libipt), auto"},
	[OPT_JOBS] = {"jobs", "j", "N", "threads of the in-process PT decoder (default: cores)"},
	[OPT_REPORT] = {"report", NULL, NULL,
			"then print the trace's latency figures (snaptrace report)"},
	{NULL, NULL, NULL, NULL},
};

static const char decode_desc[] =
	"Turns a recording into a timeline that the Perfetto UI opens. INPUT is a perf.data\n"
	"file (snaptrace runs perf script on it: Intel PT branches or stack samples, detected\n"
	"from the file), a file of `perf script` text, or - for stdin. Default: ./perf.data.\n"
	"Several INPUTs (or -working-directory with several perf.data files) are successive\n"
	"snapshots of one recording, decoded in order into one timeline.\n"
	"The trace scope (user space by default) is enforced: an event outside it is dropped,\n"
	"counted and reported in one warning line. A perf script that prints nothing for\n"
	"$SNAPTRACE_PERF_STALL_SECONDS (default 120; 0 = wait for ever) is stopped (it spins\n"
	"on some damaged recordings). The -o output is replaced only once complete; a link is\n"
	"followed, a device or FIFO written in place (docs/guarantees.md).";

/* Parses the flags into o and inputs[] (room for argc entries). Returns -1 to go on,
 * else the exit status. */
static int decode_parse(int argc, char **argv, struct snap_decode_opts *o, const char **inputs,
			size_t *ninputs, const char **workdir)
{
	struct snap_optparse p;
	const char *val;
	int k, kernel_only = 0, include_kernel = 0;

	snap_optparse_init(&p, "decode", argc, argv);
	p.i = 1;
	while ((k = snap_opt_next(&p, decode_opts, &val)) != SNAP_OPT_DONE) {
		switch (k) {
		case OPT_INCLUDE_KERNEL:
			include_kernel = 1;
			break;
		case OPT_KERNEL_ONLY:
			kernel_only = 1;
			break;
		case OPT_STRICT_SCOPE:
			o->strict_scope = 1;
			break;
		case OPT_OUTPUT:
			o->output = val;
			break;
		case OPT_WORKDIR:
			*workdir = val;
			break;
		case OPT_NO_DLFILTER:
			o->no_dlfilter = 1;
			break;
		case OPT_PERF:
			o->perf = val;
			break;
		case OPT_VMLINUX:
			o->vmlinux = val;
			break;
		case OPT_KALLSYMS:
			o->kallsyms = val;
			break;
		case OPT_VERBOSE:
			snap_log_level++;
			break;
		case OPT_QUIET:
			snap_log_level = SNAP_LOG_QUIET;
			break;
		case OPT_DECODER:
			if (snap_decoder_kind_parse(val, &o->decoder) < 0) {
				fprintf(stderr,
					"snaptrace decode: -decoder %s: use perf, ipt or auto\n",
					val);
				return 2;
			}
			break;
		case OPT_JOBS: {
			char *end;
			long j = strtol(val, &end, 10);

			if (*end || j < 1 || j > 256) {
				fprintf(stderr, "snaptrace decode: -jobs %s: give 1 to 256\n", val);
				return 2;
			}
			o->jobs = (int)j;
			break;
		}
		case OPT_REPORT:
			o->tap = snap_report_tap(o->output ? o->output : "trace.fxt.gz");
			break;
		case SNAP_OPT_POSITIONAL:
			inputs[(*ninputs)++] = val;
			break;
		case SNAP_OPT_DASHDASH:
			break;
		case SNAP_OPT_HELP:
			snap_opt_help(stdout, "snaptrace decode [flags] [INPUT...]", decode_desc,
				      decode_opts);
			return 0;
		default:
			return 2;
		}
	}
	if (kernel_only && include_kernel) {
		fputs("snaptrace decode: -trace-include-kernel and -trace-kernel-only exclude each "
		      "other; pick one\n",
		      stderr);
		return 2;
	}
	o->scope = kernel_only	    ? SNAP_SCOPE_KERNEL
		   : include_kernel ? SNAP_SCOPE_BOTH
				    : SNAP_SCOPE_USER;
	return -1;
}

int snap_cmd_decode(int argc, char **argv)
{
	struct snap_decode_opts o;
	const char **inputs = snap_calloc((size_t)argc + 1, sizeof(*inputs));
	const char *workdir = NULL;
	char **found = NULL;
	size_t ninputs = 0;
	int rc, nfound = 0;

	if (!inputs) {
		fputs("snaptrace decode: out of memory\n", stderr);
		return 1;
	}
	memset(&o, 0, sizeof(o));
	rc = decode_parse(argc, argv, &o, inputs, &ninputs, &workdir);
	if (rc >= 0)
		goto out;
	if (!ninputs && workdir) {
		nfound = snap_workdir_list_dir(workdir, &found);
		if (nfound < 0)
			fprintf(stderr, "snaptrace decode: cannot read %s: %s\n", workdir,
				strerror(-nfound));
		else if (!nfound)
			fprintf(stderr, "snaptrace decode: no perf.data file in %s\n", workdir);
		if (nfound <= 0) {
			nfound = 0;
			rc = 1;
			goto out;
		}
		/* inputs has room for argc entries only: one slot per snapshot found. */
		snap_free(inputs);
		inputs = snap_calloc((size_t)nfound, sizeof(*inputs));
		if (!inputs) {
			fputs("snaptrace decode: out of memory\n", stderr);
			rc = 1;
			goto out;
		}
		for (int i = 0; i < nfound; i++) {
			size_t len = strlen(workdir) + strlen(found[i]) + 2;
			char *p = snap_malloc(len);

			if (!p) {
				fputs("snaptrace decode: out of memory\n", stderr);
				rc = 1;
				goto out;
			}
			snprintf(p, len, "%s/%s", workdir, found[i]);
			snap_free(found[i]);
			found[i] = p;
			inputs[ninputs++] = p;
		}
	}
	o.inputs = inputs;
	o.ninputs = ninputs;
	if (o.tap) /* -report before -o: name the output in the header */
		o.tap = snap_report_tap(o.output ? o.output : "trace.fxt.gz");
	rc = snap_decode_run(&o) < 0 ? 1 : 0;
	if (!rc && o.tap)
		rc = snap_report_tap_status();
out:
	snap_workdir_free_list(found, nfound);
	snap_free(inputs);
	return rc;
}
