// SPDX-License-Identifier: GPL-2.0
/*
 * sstep: the ground truth for synthetic Intel PT. Runs a program under ptrace,
 * single-stepping every thread, and records each executed instruction.
 *
 *   taskset -c 0 sstep -o PREFIX [-q] -- PROG [ARGS...]
 *
 * Writes PREFIX.steps (struct ptsynth_step per instruction, threads
 * interleaved in the order they ran) and PREFIX.maps (every executable file
 * mapping seen in /proc/PID/maps, snapshotted before each syscall). The
 * program runs without address randomisation, so addresses are the same on
 * every run. New threads are followed through PTRACE_O_TRACECLONE. If
 * anything fails the traced process is killed: a stopped tracee is never left
 * behind. Exit status: 0 if the program exited 0, 1 otherwise, 2 on usage.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptsynth.h"

#define MAX_THREADS 64

struct sstep {
	pid_t pid;
	pid_t seen[MAX_THREADS];
	int nseen;
	FILE *out;
	struct ptsynth_maps maps;
	uint64_t nsteps;
};

static int sstep_seen(struct sstep *s, pid_t tid)
{
	for (int i = 0; i < s->nseen; i++)
		if (s->seen[i] == tid)
			return 1;
	return 0;
}

static int sstep_snapshot_maps(struct sstep *s)
{
	char path[64], line[4200];
	int err = 0;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)s->pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof line, f)) {
		err = ptsynth_maps_add_proc_line(&s->maps, line);
		if (err < 0)
			break;
		err = 0;
	}
	fclose(f);
	return err;
}

/* Records the instruction thread tid is about to execute. */
static int sstep_record(struct sstep *s, pid_t tid)
{
	struct user_regs_struct r;
	struct ptsynth_step st;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0)
		return -errno;
	memset(&st, 0, sizeof st);
	st.ip = r.rip;
	st.tid = (uint32_t)tid;
	if (fwrite(&st, sizeof st, 1, s->out) != 1)
		return -EIO;
	s->nsteps++;
	errno = 0;
	long w = ptrace(PTRACE_PEEKTEXT, tid, (void *)(uintptr_t)r.rip, 0);
	if (errno == 0 && (w & 0xffff) == 0x050f) /* syscall: the maps may change */
		return sstep_snapshot_maps(s);
	return 0;
}

static int sstep_run(struct sstep *s, char **argv)
{
	int st, err = 0, exit_code = -1;

	s->pid = fork();
	if (s->pid < 0)
		return -errno;
	if (s->pid == 0) {
		personality(ADDR_NO_RANDOMIZE);
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(s->pid, &st, 0) < 0)
		return -errno;
	if (!WIFSTOPPED(st))
		return -ECHILD; /* exec failed (exit 127) or TRACEME failed */
	if (ptrace(PTRACE_SETOPTIONS, s->pid, 0, PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL) < 0)
		return -errno;
	s->seen[s->nseen++] = s->pid;
	err = sstep_snapshot_maps(s);
	if (err < 0)
		return err;
	pid_t tid = s->pid;
	for (;;) {
		int sig = 0;
		unsigned event = (unsigned)st >> 16;

		if (event == 0 && WSTOPSIG(st) == SIGTRAP) {
			err = sstep_record(s, tid);
		} else if (event == 0 && WSTOPSIG(st) == SIGSTOP && !sstep_seen(s, tid)) {
			/* A new thread's first stop. */
			if (s->nseen == MAX_THREADS)
				return -E2BIG;
			s->seen[s->nseen++] = tid;
			err = sstep_record(s, tid);
		} else if (event == 0) {
			sig = WSTOPSIG(st); /* deliver other signals */
		}
		if (err < 0)
			return err;
		if (ptrace(PTRACE_SINGLESTEP, tid, 0, (void *)(uintptr_t)sig) < 0 && errno != ESRCH)
			return -errno;
		for (;;) {
			tid = waitpid(-1, &st, __WALL);
			if (tid < 0)
				return errno == ECHILD ? exit_code : -errno;
			if (WIFSTOPPED(st))
				break;
			if (tid == s->pid)
				exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
	}
}

int main(int argc, char **argv)
{
	struct sstep s;
	const char *prefix = NULL;
	char path[4096];
	int c, quiet = 0, rc;

	memset(&s, 0, sizeof s);
	while ((c = getopt(argc, argv, "+o:q")) != -1) {
		switch (c) {
		case 'o':
			prefix = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			goto usage;
		}
	}
	if (!prefix || optind >= argc)
		goto usage;
	snprintf(path, sizeof path, "%s.steps", prefix);
	s.out = fopen(path, "wb");
	if (!s.out) {
		fprintf(stderr, "sstep: %s: %s\n", path, strerror(errno));
		return 1;
	}
	rc = sstep_run(&s, argv + optind);
	if (rc < 0 && s.pid > 0) {
		kill(s.pid, SIGKILL);
		while (waitpid(-1, NULL, __WALL) > 0)
			;
	}
	if (fclose(s.out) != 0 && rc >= 0)
		rc = -EIO;
	if (rc >= 0) {
		snprintf(path, sizeof path, "%s.maps", prefix);
		int err = ptsynth_maps_save(&s.maps, path);
		if (err < 0)
			rc = err;
	}
	ptsynth_maps_fini(&s.maps);
	if (rc < 0) {
		fprintf(stderr, "sstep: %s: %s\n", argv[optind], strerror(-rc));
		return 1;
	}
	if (!quiet)
		fprintf(stderr, "sstep: %llu instructions, %d threads, exit status %d\n",
			(unsigned long long)s.nsteps, s.nseen, rc);
	return rc == 0 ? 0 : 1;
usage:
	fprintf(stderr, "usage: sstep -o PREFIX [-q] -- PROG [ARGS...]\n");
	return 2;
}
