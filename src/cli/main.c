// SPDX-License-Identifier: GPL-2.0
/*
 * snaptrace: see what a process did, every function call, on a timeline.
 * Parses the subcommand and dispatches; the only place that exits.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "record/child.h"

#define SNAP_VERSION "0.1.0"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{"run", snap_cmd_run, "run a command under tracing, then write its timeline"},
	{"attach", snap_cmd_attach, "trace running processes until Ctrl-C or a trigger"},
	{"decode", snap_cmd_decode, "turn perf.data or perf script text into a timeline"},
	{"dump", snap_cmd_dump, "print an FXT trace as text, one record a line (-check validates)"},
	{"report", snap_cmd_report,
	 "latency figures of a trace: per-function percentiles, threads"},
	{"doctor", snap_cmd_doctor, "say what tracing this machine can do, and how to fix gaps"},
	{"serve", snap_cmd_serve, "serve a trace to the Perfetto UI on 127.0.0.1 until Ctrl-C"},
};

static void usage(FILE *out)
{
	fputs("usage: snaptrace COMMAND [flags] [args]\n\n"
	      "snaptrace records what a process did (Intel PT through perf, or stack sampling\n"
	      "where PT is missing) and writes a timeline of every call (trace.fxt.gz) that the\n"
	      "Perfetto UI (https://ui.perfetto.dev) opens.\n\ncommands:\n",
	      out);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fputs("  help     show this help, or 'snaptrace help COMMAND'\n"
	      "  version  print the version\n\n"
	      "Every command takes -help. Flags take one or two dashes (-o FILE, --output=FILE).\n"
	      "Examples:\n"
	      "  snaptrace run -- ./myprog arg          trace until myprog exits\n"
	      "  snaptrace run -trigger my_func -- ./myprog   keep the moments before my_func\n"
	      "  snaptrace attach -pid 1234               trace until Ctrl-C\n"
	      "  snaptrace decode perf.data -o trace.fxt.gz\n"
	      "  snaptrace dump trace.fxt.gz\n"
	      "  snaptrace report trace.fxt.gz           top functions by self time\n",
	      out);
}

/* 1 for -help, --help, -h (and help itself, as in 'help help'). */
static int is_help_flag(const char *a)
{
	while (*a == '-')
		a++;
	return !strcmp(a, "help") || !strcmp(a, "h");
}

static void version_help(void)
{
	puts("usage: snaptrace version\n\nPrints snaptrace's version.");
}

static void help_help(FILE *out)
{
	fputs("usage: snaptrace help [COMMAND]\n\n"
	      "Prints the list of commands, or COMMAND's flags and what it does (the same as\n"
	      "'snaptrace COMMAND -help').\n",
	      out);
}

int main(int argc, char **argv)
{
	const char *cmd;

	/* before anything changes them: the program of run gets them back */
	snap_child_save_signals();
	/* a file size limit (ulimit -f) is a write error (EFBIG), reported */
	signal(SIGXFSZ, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	while (*cmd == '-' && strcmp(cmd, "-") != 0)
		cmd++;
	if (!strcmp(cmd, "help") || !strcmp(cmd, "h")) {
		if (argc > 2 && is_help_flag(argv[2])) {
			help_help(stdout);
			return 0;
		}
		if (argc > 2 && !strcmp(argv[2], "version")) {
			version_help();
			return 0;
		}
		if (argc > 2) {
			char help[] = "-help";
			char *sub[] = {argv[2], help, NULL};

			for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
				if (!strcmp(argv[2], commands[i].name))
					return commands[i].fn(2, sub);
			fprintf(stderr, "snaptrace: no command '%s' (try 'snaptrace help')\n",
				argv[2]);
			return 2;
		}
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "version")) {
		if (argc > 2 && is_help_flag(argv[2])) {
			version_help();
			return 0;
		}
		if (argc > 2) { /* (as every command: no stray words) */
			fprintf(stderr,
				"snaptrace version: unexpected argument '%s' (usage: snaptrace "
				"version)\n",
				argv[2]);
			return 2;
		}
		printf("snaptrace %s\n", SNAP_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "snaptrace: unknown command '%s' (try 'snaptrace help')\n", argv[1]);
	return 2;
}
