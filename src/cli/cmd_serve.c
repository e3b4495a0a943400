// SPDX-License-Identifier: GPL-2.0
/* snaptrace serve: serve a trace file to the Perfetto UI until Ctrl-C. */
#include <stdio.h>

#include "cli/commands.h"
#include "cli/opts.h"
#include "cli/serve.h"

enum { OPT_PORT, OPT_SHARE };

static const struct snap_opt serve_opts[] = {
	[OPT_PORT] = {"serve-port", NULL, "PORT",
		      "port on 127.0.0.1 (default 9001, which the Perfetto UI allows; 0 = any)"},
	[OPT_SHARE] = {"share", NULL, NULL, "not supported (snaptrace never uploads)"},
	{NULL, NULL, NULL, NULL},
};

static const char serve_desc[] =
	"Serves FILE (a trace written by snaptrace) on http://127.0.0.1:PORT/TOKEN/NAME for\n"
	"the Perfetto UI and prints the link that opens it there. TOKEN is random, new each\n"
	"run: only who sees the link can fetch the file. Only this machine can connect;\n"
	"nothing is uploaded: the UI in your browser fetches the file. On a remote machine,\n"
	"forward the port first (ssh -L 9001:127.0.0.1:9001 HOST). Serves until Ctrl-C.";

int snap_cmd_serve(int argc, char **argv)
{
	struct snap_optparse p;
	const char *val, *file = NULL;
	int k, port = SNAP_SERVE_PORT;

	snap_optparse_init(&p, "serve", argc, argv);
	p.i = 1;
	while ((k = snap_opt_next(&p, serve_opts, &val)) != SNAP_OPT_DONE) {
		switch (k) {
		case OPT_PORT:
			port = snap_serve_port_parse(val);
			if (port < 0) {
				fprintf(stderr, "snaptrace serve: bad -serve-port '%s' (0-65535)\n",
					val);
				return 2;
			}
			break;
		case OPT_SHARE:
			fprintf(stderr, "snaptrace serve: %s\n", SNAP_SHARE_REFUSED);
			return 2;
		case SNAP_OPT_POSITIONAL:
			if (file) {
				fprintf(stderr, "snaptrace serve: one FILE only\n");
				return 2;
			}
			file = val;
			break;
		case SNAP_OPT_DASHDASH:
			break;
		case SNAP_OPT_HELP:
			snap_opt_help(stdout, "snaptrace serve [-serve-port PORT] FILE", serve_desc,
				      serve_opts);
			return 0;
		default:
			return 2;
		}
	}
	if (!file) {
		fprintf(stderr,
			"snaptrace serve: which trace? (usage: snaptrace serve [-serve-port "
			"PORT] FILE)\n");
		return 2;
	}
	return snap_serve("serve", file, port);
}
