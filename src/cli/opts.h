/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Command-line flags in magic-trace's style: -name or --name, a value as
 * the next word or after '=' (-o FILE, --output=FILE). "--" ends the flags.
 */
#ifndef SNAP_CLI_OPTS_H
#define SNAP_CLI_OPTS_H

#include <stdio.h>

struct snap_opt {
	const char *name;    /* "trace-include-kernel" */
	const char *alias;   /* "o", or NULL */
	const char *metavar; /* NULL: a switch; else the value's name, e.g. "FILE" */
	const char *help;    /* one line; NULL hides the flag from -help */
};

enum {
	SNAP_OPT_DONE = -1,	  /* no more words */
	SNAP_OPT_POSITIONAL = -2, /* *val is a positional word */
	SNAP_OPT_DASHDASH = -3,	  /* "--": p->i is the index of the word after it */
	SNAP_OPT_HELP = -4,	  /* -help, --help, -h */
	SNAP_OPT_ERROR = -5,	  /* unknown flag or missing value (message printed) */
};

struct snap_optparse {
	int argc;
	char **argv;
	int i;		 /* next word */
	const char *cmd; /* for messages: "decode" */
};

/* Starts parsing argv[0..argc) (argv borrowed) for command cmd (named in messages). */
void snap_optparse_init(struct snap_optparse *p, const char *cmd, int argc, char **argv);
/* Returns the index into opts (terminated by a NULL name) of the next flag,
 * with *val set to its value (NULL for switches), or one of SNAP_OPT_*. */
int snap_opt_next(struct snap_optparse *p, const struct snap_opt *opts, const char **val);
/* Prints "usage: ..." then the description and the flag table. */
void snap_opt_help(FILE *out, const char *usage, const char *desc, const struct snap_opt *opts);

#endif
