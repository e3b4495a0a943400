// SPDX-License-Identifier: GPL-2.0
/* snaptrace decode: perf.data, perf script text or stdin -> FXT timeline. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/opts.h"
#include "cli/pipeline.h"
#include "cli/reportcli.h"
#include "cli/serve.h"
#include "parse/hitsfile.h"
#include "record/perfargs.h"
#include "record/trigger.h"
#include "record/workdir.h"
#include "stack/filter.h"
#include "util/alloc.h"
#include "util/file.h"
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
	OPT_EXECUTABLE,
	OPT_FILTER,
	OPT_SERVE,
	OPT_SERVE_PORT,
	OPT_SHARE,
	OPT_SAMPLING,
	OPT_EVENTS,
	OPT_PERF_MAP_FILE,
	OPT_Z_PRINT_PERF_COMMANDS,
	OPT_DECODER,
	OPT_JOBS,
	OPT_REPORT,
	OPT_PER_CALL_ARGS,
};

static const struct snap_opt decode_opts[] = {
	[OPT_INCLUDE_KERNEL] = {"trace-include-kernel", NULL, NULL,
				"keep user and kernel frames (scope u+k)"},
	[OPT_KERNEL_ONLY] = {"trace-kernel-only", NULL, NULL, "keep kernel frames only (scope k)"},
	[OPT_STRICT_SCOPE] = {"strict-scope", NULL, NULL,
			      "an event outside the scope is an error (nothing written)"},
	[OPT_OUTPUT] = {"output", "o", "FILE",
			"output file (default trace.fxt.gz; .gz = gzip; - = stdout)"},
	[OPT_WORKDIR] = {"working-directory", NULL, "DIR",
			 "decode the perf.data files of DIR (run/attach -working-directory)"},
	[OPT_NO_DLFILTER] = {"no-dlfilter", NULL, NULL,
			     "parse perf script text instead of using the perf plugin"},
	[OPT_PERF] = {"perf", NULL, "PATH", "perf binary (default $SNAPTRACE_PERF or perf)"},
	[OPT_VMLINUX] = {"vmlinux", NULL, "FILE",
			 "kernel image: the kernel's code and symbols (perf --vmlinux)"},
	[OPT_KALLSYMS] = {"kallsyms", NULL, "FILE",
			  "kernel symbol list, with the code of kcore beside it (perf --kallsyms)"},
	[OPT_VERBOSE] = {"verbose", "v", NULL, "say more (which decode path, statistics)"},
	[OPT_QUIET] = {"quiet", "q", NULL, "errors only"},
	[OPT_EXECUTABLE] = {"executable", NULL, "FILE",
			    "the traced program (for its OCaml exception notes)"},
	[OPT_FILTER] = {"filter", NULL, "(START STOP)",
			"write only from a call to START to the next call to STOP"},
	[OPT_SERVE] = {"serve", NULL, NULL,
		       "then serve the trace to the Perfetto UI on 127.0.0.1 until Ctrl-C"},
	[OPT_SERVE_PORT] = {"serve-port", NULL, "PORT", "port for -serve (default 9001)"},
	[OPT_SHARE] = {"share", NULL, NULL, "not supported (snaptrace never uploads)"},
	[OPT_SAMPLING] = {"sampling", NULL, NULL,
			  "accepted for magic-trace (the mode is read from the perf.data)"},
	[OPT_EVENTS] = {"events", NULL, "LIST",
			"accepted for magic-trace (extra events are recognised by themselves)"},
	[OPT_PERF_MAP_FILE] = {"perf-map-file", NULL, "FILE[,FILE...]",
			       "JIT symbols from perf-PID.map files (names for [unknown] code)"},
	[OPT_Z_PRINT_PERF_COMMANDS] = {"z-print-perf-commands", NULL, NULL,
				       "say each perf script command run (stderr)"},
	[OPT_DECODER] = {"decoder", NULL, "perf|ipt|auto",
			 "Intel PT decoder: auto (default: in-process where it can), ipt, perf"},
	[OPT_JOBS] = {"jobs", "j", "N",
		      "threads of the in-process PT decoder and of gzip; above 1, stacks and "
		      "the trace are built on a thread of their own (default: cores)"},
	[OPT_REPORT] = {"report", NULL, NULL,
			"then print the trace's latency figures (snaptrace report)"},
	[OPT_PER_CALL_ARGS] =
		{"per-call-args", NULL, NULL,
		 "address, symbol and source position on every slice, as magic-trace writes "
		 "(default: once per function and thread)"},
	{NULL, NULL, NULL, NULL},
};

static const char decode_desc[] =
	"Turns a recording into a timeline that the Perfetto UI opens. INPUT is a perf.data\n"
	"file (snaptrace runs perf script on it: Intel PT branches or stack samples, detected\n"
	"from the file) or the perf.data directory perf record --kcore writes, a file of\n"
	"`perf script` text, or - for stdin. Default: ./perf.data.\n"
	"Several INPUTs (or -working-directory with several perf.data files) are successive\n"
	"snapshots of one recording, decoded in order into one timeline.\n"
	"The trace scope (user space by default) is enforced: an event outside it is dropped,\n"
	"counted and reported in one warning line. A perf script that prints nothing for\n"
	"$SNAPTRACE_PERF_STALL_SECONDS (default 120; 0 = wait for ever) is stopped (it spins\n"
	"on some damaged recordings). The -o output is replaced only once complete; a link is\n"
	"followed, a device or FIFO written in place (docs/guarantees.md).";

/* What decode_parse fills besides the pipeline options. */
struct decode_cli {
	const char *workdir;
	char *filter_start, *filter_stop; /* owned */
	int serve, serve_port;
};

/* Parses the flags into o and inputs[] (room for argc entries). Returns -1 to go on,
 * else the exit status. */
static int decode_parse(int argc, char **argv, struct snap_decode_opts *o, const char **inputs,
			size_t *ninputs, struct decode_cli *c)
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
		case OPT_PER_CALL_ARGS:
			o->per_call_args = 1;
			break;
		case OPT_OUTPUT:
			o->output = val;
			break;
		case OPT_WORKDIR:
			c->workdir = val;
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
			if (snap_pt_decoder_parse(val, &o->decoder) < 0) {
				fprintf(stderr,
					"snaptrace decode: -decoder %s: use perf, ipt or auto\n",
					val);
				return 2;
			}
			break;
		case OPT_EXECUTABLE:
			o->executable = val;
			break;
		case OPT_SAMPLING:
			break;
		case OPT_EVENTS: {
			struct snap_xev xev[SNAP_XEV_MAX];
			size_t nxev;

			if (snap_xev_parse(val, xev, &nxev) < 0) {
				fprintf(stderr,
					"snaptrace decode: bad -events '%s' (branch-misses, "
					"cache-misses)\n",
					val);
				return 2;
			}
			break;
		}
		case OPT_PERF_MAP_FILE:
			o->perf_map_files = val;
			break;
		case OPT_Z_PRINT_PERF_COMMANDS:
			o->print_perf_commands = 1;
			break;
		case OPT_SERVE:
			c->serve = 1;
			break;
		case OPT_SERVE_PORT:
			c->serve_port = snap_serve_port_parse(val);
			if (c->serve_port < 0) {
				fprintf(stderr,
					"snaptrace decode: bad -serve-port '%s' (0-65535)\n", val);
				return 2;
			}
			break;
		case OPT_SHARE:
			fprintf(stderr, "snaptrace decode: %s\n", SNAP_SHARE_REFUSED);
			return 2;
		case OPT_FILTER:
			snap_free(c->filter_start);
			snap_free(c->filter_stop);
			if (snap_filter_parse_arg(val, &c->filter_start, &c->filter_stop) < 0) {
				fprintf(stderr,
					"snaptrace decode: bad -filter '%s' (want \"(START "
					"STOP)\", "
					"two function names)\n",
					val);
				return 2;
			}
			o->filter_start = c->filter_start;
			o->filter_stop = c->filter_stop;
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

/* The trigger hits run/attach kept in dir: marked as they were then. Returns 0
 * (none kept is fine) or an exit status after a one-line error. */
static int load_hits(const char *dir, struct snap_hitsfile *hf, struct snap_decode_opts *o)
{
	char path[PATH_MAX];
	const void *buf;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, SNAP_HITS_FILE);
	err = snap_file_map(path, &buf, &len);
	if (err == -ENOENT || err == -EINVAL) /* none kept, or an empty file */
		return 0;
	if (err < 0) {
		fprintf(stderr, "snaptrace decode: cannot read %s: %s\n", path, strerror(-err));
		return 1;
	}
	err = snap_hitsfile_parse(hf, buf, len);
	snap_file_unmap(buf, len);
	if (err < 0) {
		fprintf(stderr, "snaptrace decode: %s: %s\n", path,
			err == -ENOMEM ? "out of memory" : "not a snaptrace hits file");
		return 1;
	}
	if (hf->bad_lines)
		fprintf(stderr, "snaptrace: %s: skipped %llu malformed line%s\n", path,
			(unsigned long long)hf->bad_lines, hf->bad_lines == 1 ? "" : "s");
	o->hits = hf->h; /* the symbols stay hf's */
	o->nhits = hf->n;
	return 0;
}

int snap_cmd_decode(int argc, char **argv)
{
	struct snap_decode_opts o;
	const char **inputs = snap_calloc((size_t)argc + 1, sizeof(*inputs));
	const char *workdir = NULL;
	int out_fd = -1;
	char **found = NULL;
	struct decode_cli c = {.serve_port = SNAP_SERVE_PORT};
	struct snap_hitsfile hf = {0};
	size_t ninputs = 0;
	int rc, nfound = 0;

	if (!inputs) {
		fputs("snaptrace decode: out of memory\n", stderr);
		return 1;
	}
	memset(&o, 0, sizeof(o));
	rc = decode_parse(argc, argv, &o, inputs, &ninputs, &c);
	if (rc >= 0)
		goto out;
	if (c.serve && snap_serve_load("decode") < 0) { /* before decoding */
		rc = 1;
		goto out;
	}
	workdir = c.workdir;
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
	/* -o - is stdout (as report -folded -), written in place; never a terminal */
	if (o.output && !strcmp(o.output, "-")) {
		if (isatty(STDOUT_FILENO) || c.serve || o.tap) {
			fprintf(stderr, "snaptrace decode: -o -: %s\n",
				c.serve ? "-serve serves a file, not stdout; name a file"
				: o.tap ? "-report prints to stdout too; name a file"
					: "stdout is a terminal, and the trace is binary; redirect "
					  "stdout (> trace.fxt) or name a file");
			rc = 2;
			goto out;
		}
		o.output = "/dev/stdout";
	}
	if (o.tap) /* -report before -o: name the output in the header */
		o.tap = snap_report_tap(o.output ? o.output : "trace.fxt.gz");
	if (workdir && (rc = load_hits(workdir, &hf, &o)) != 0)
		goto out;
	if (c.serve)
		o.output_fd = &out_fd; /* serve what was written, not what the name is later */
	rc = snap_decode_run(&o) < 0 ? 1 : 0;
	if (!rc && o.tap)
		rc = snap_report_tap_status();
	if (!rc && c.serve) {
		rc = snap_serve_fd("decode", out_fd, o.output ? o.output : "trace.fxt.gz",
				   c.serve_port);
		out_fd = -1;
	}
	if (out_fd >= 0)
		close(out_fd);
out:
	snap_workdir_free_list(found, nfound);
	snap_free(inputs);
	snap_free(c.filter_start);
	snap_free(c.filter_stop);
	snap_hitsfile_fini(&hf);
	return rc;
}
