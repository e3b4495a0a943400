// SPDX-License-Identifier: GPL-2.0
/* Interactive pickers. See picker.h. */
#include "cli/picker.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record/caps.h"
#include "util/alloc.h"
#include "util/esc.h"
#include "util/proc.h"

int snap_picker_interactive(void)
{
	return isatty(STDIN_FILENO) && isatty(STDERR_FILENO);
}

static int have_fzf(void)
{
	char buf[4096];

	return snap_caps_find_in_path("fzf", buf, sizeof(buf)) == 0;
}

char *snap_pick_fzf(const char *prompt, const char *const *lines, size_t n)
{
	int in[2], out[2], st;
	char buf[4096];
	size_t got = 0;
	struct sigaction ign, old;
	pid_t pid;

	if (pipe(in) < 0)
		return NULL;
	if (pipe(out) < 0) {
		close(in[0]);
		close(in[1]);
		return NULL;
	}
	pid = fork();
	if (pid == 0) {
		const char *const fzf[] = {"fzf", "--prompt", prompt, NULL};

		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		snap_execvp_trusted((char *const *)fzf); /* (never ./fzf: util/proc.h) */
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old);
	for (size_t i = 0; pid > 0 && i < n; i++)
		if (dprintf(in[1], "%s\n", lines[i]) < 0)
			break;
	close(in[1]);
	for (ssize_t r; pid > 0 && got + 1 < sizeof(buf) &&
			(r = read(out[0], buf + got, sizeof(buf) - 1 - got)) > 0;)
		got += (size_t)r;
	close(out[0]);
	if (pid > 0)
		waitpid(pid, &st, 0);
	sigaction(SIGPIPE, &old, NULL);
	buf[got] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return got && buf[0] ? snap_strndup(buf, strlen(buf)) : NULL;
}

/* Line i + 1 of the list, escaped: another user's process or function names
 * are among them (docs/guarantees.md, "What reaches the terminal"). */
static void show_line(size_t i, const char *line)
{
	fprintf(stderr, "%6zu  ", i + 1);
	snap_esc_fputs(stderr, line, 0);
	fputc('\n', stderr);
}

/* At most this many of the lines that match an answer are shown again. */
#define PICK_SHOW_MAX 30

char *snap_pick_numbered(const char *question, const char *const *lines, size_t n, int free_text,
			 const char **why)
{
	FILE *tty = fopen("/dev/tty", "re");
	char line[512], *end;
	unsigned long k;

	if (!tty) {
		*why = "no terminal to ask on";
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		show_line(i, lines[i]);
	for (;;) {
		size_t match = 0, nmatch = 0, shown = 0;
		int picked = 0;

		fputs(question, stderr);
		if (!fgets(line, sizeof(line), tty)) {
			fclose(tty);
			*why = "no answer";
			return NULL;
		}
		line[strcspn(line, "\n")] = '\0';
		if (!line[0]) {
			fclose(tty);
			*why = "cancelled";
			return NULL;
		}
		/* a number, a line itself, or text that one line contains */
		k = strtoul(line, &end, 10);
		if (!*end && k >= 1 && k <= n) {
			match = k - 1;
			picked = 1;
		}
		for (size_t i = 0; !picked && i < n; i++)
			if (!strcmp(lines[i], line)) {
				match = i;
				picked = 1;
			}
		for (size_t i = 0; !picked && i < n; i++)
			if (strstr(lines[i], line) && !nmatch++)
				match = i;
		if (picked || nmatch == 1) {
			fclose(tty);
			return snap_strndup(lines[match], strlen(lines[match]));
		}
		if (!nmatch) {
			if (free_text) {
				fclose(tty);
				return snap_strndup(line, strlen(line)); /* a name not listed */
			}
			fclose(tty);
			*why = "no line matches";
			return NULL;
		}
		/* several: show them, and ask again */
		fprintf(stderr, "%zu lines match \"%s\":\n", nmatch, line);
		for (size_t i = 0; i < n && shown < PICK_SHOW_MAX; i++)
			if (strstr(lines[i], line)) {
				show_line(i, lines[i]);
				shown++;
			}
		if (nmatch > shown)
			fprintf(stderr, "        ... and %zu more\n", nmatch - shown);
	}
}

char *snap_pick(const char *prompt, const char *const *lines, size_t n, const char **why)
{
	char q[256];

	*why = "";
	if (!n) {
		*why = "nothing to choose from";
		return NULL;
	}
	if (!snap_picker_interactive()) {
		*why = "not on a terminal";
		return NULL;
	}
	if (have_fzf())
		return snap_pick_fzf(prompt, lines, n);
	snprintf(q, sizeof(q), "%s(a number, or text of one line; empty to cancel) ", prompt);
	return snap_pick_numbered(q, lines, n, 0, why);
}
