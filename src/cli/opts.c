// SPDX-License-Identifier: GPL-2.0
#include "cli/opts.h"

#include <string.h>

void snap_optparse_init(struct snap_optparse *p, const char *cmd, int argc, char **argv)
{
	p->argc = argc;
	p->argv = argv;
	p->i = 0;
	p->cmd = cmd;
}

static int opt_matches(const struct snap_opt *o, const char *name, size_t len)
{
	if (strlen(o->name) == len && !strncmp(o->name, name, len))
		return 1;
	return o->alias && strlen(o->alias) == len && !strncmp(o->alias, name, len);
}

int snap_opt_next(struct snap_optparse *p, const struct snap_opt *opts, const char **val)
{
	const char *w, *name, *eq;
	size_t len;

	*val = NULL;
	if (p->i >= p->argc)
		return SNAP_OPT_DONE;
	w = p->argv[p->i++];
	if (!strcmp(w, "--"))
		return SNAP_OPT_DASHDASH;
	if (w[0] != '-' || w[1] == '\0') {
		*val = w;
		return SNAP_OPT_POSITIONAL;
	}
	name = w + (w[1] == '-' ? 2 : 1);
	eq = strchr(name, '=');
	len = eq ? (size_t)(eq - name) : strlen(name);
	if ((len == 4 && !strncmp(name, "help", 4)) || (len == 1 && name[0] == 'h'))
		return SNAP_OPT_HELP;
	for (int k = 0; opts[k].name; k++) {
		if (!opt_matches(&opts[k], name, len))
			continue;
		if (!opts[k].metavar) {
			if (eq) {
				fprintf(stderr, "snaptrace %s: flag -%s takes no value\n", p->cmd,
					opts[k].name);
				return SNAP_OPT_ERROR;
			}
			return k;
		}
		if (eq) {
			*val = eq + 1;
		} else if (p->i < p->argc) {
			*val = p->argv[p->i++];
		} else {
			fprintf(stderr, "snaptrace %s: flag -%s needs a value (%s)\n", p->cmd,
				opts[k].name, opts[k].metavar);
			return SNAP_OPT_ERROR;
		}
		return k;
	}
	fprintf(stderr, "snaptrace %s: unknown flag %s (see 'snaptrace %s -help')\n", p->cmd, w,
		p->cmd);
	return SNAP_OPT_ERROR;
}

void snap_opt_help(FILE *out, const char *usage, const char *desc, const struct snap_opt *opts)
{
	fprintf(out, "usage: %s\n\n%s\n", usage, desc);
	if (opts[0].name)
		fputs("\nflags (one or two dashes):\n", out);
	for (int k = 0; opts[k].name; k++) {
		char left[64];

		if (!opts[k].help)
			continue;
		snprintf(left, sizeof(left), "-%s%s%s%s%s", opts[k].name,
			 opts[k].alias ? ", -" : "", opts[k].alias ? opts[k].alias : "",
			 opts[k].metavar ? " " : "", opts[k].metavar ? opts[k].metavar : "");
		fprintf(out, "  %-30s %s\n", left, opts[k].help);
	}
	fputs("  -help                          show this help\n", out);
}
