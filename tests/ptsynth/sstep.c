// SPDX-License-Identifier: GPL-2.0
/*
 * sstep: the ground truth for synthetic Intel PT. Runs a program under ptrace,
 * single-stepping every thread, and records each executed instruction.
 *
 *   taskset -c 0 sstep -o PREFIX [-q] [-d] -- PROG [ARGS...]
 *
 * Writes PREFIX.steps (struct ptsynth_step per instruction, threads
 * interleaved in the order they ran) and PREFIX.maps (every executable file
 * mapping seen in /proc/PID/maps, snapshotted before each syscall). The
 * program runs without address randomisation, so addresses are the same on
 * every run. New threads are followed through PTRACE_O_TRACECLONE. If
 * anything fails the traced process is killed: a stopped tracee is never left
 * behind. With -d, the [vdso] is also copied to PREFIX.vdso (an ELF image: the
 * vdso is one in memory) and listed in PREFIX.maps under that path, so that
 * insnmap can disassemble it (mkptdata maps it back as [vdso]). Exit status: 0 if the program exited 0, 1 otherwise, 2 on usage.
 */
#include <errno.h>
#include <inttypes.h>
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
	uint64_t last_ip[MAX_THREADS];
	int nseen;
	FILE *out;
	struct ptsynth_maps maps;
	uint64_t nsteps;
	char vdso[4096]; /* -d: where to copy the vdso (absolute), "" = not */
	int vdso_done;
};

/* -d: copies the vdso mapping of "START-END ... [vdso]" to s->vdso once. */
static int sstep_dump_vdso(struct sstep *s, const char *line)
{
	uint64_t start, end;
	char path[64], mapline[4200];

	if (!s->vdso[0] || s->vdso_done || !strstr(line, "[vdso]") ||
	    sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) != 2 || end <= start ||
	    end - start > (1 << 20))
		return 0;
	snprintf(path, sizeof path, "/proc/%d/mem", (int)s->pid);
	FILE *in = fopen(path, "rb"), *out = NULL;
	char *buf = malloc(end - start);
	int err = 0;
	if (!in || !buf || fseek(in, (long)start, SEEK_SET) < 0 ||
	    fread(buf, 1, end - start, in) != end - start)
		err = in && buf ? -EIO : -errno;
	if (!err &&
	    (!(out = fopen(s->vdso, "wb")) || fwrite(buf, 1, end - start, out) != end - start))
		err = -EIO;
	if (out && fclose(out) != 0 && !err)
		err = -EIO;
	if (in)
		fclose(in);
	free(buf);
	if (err)
		return err;
	s->vdso_done = 1;
	snprintf(mapline, sizeof mapline, "%" PRIx64 "-%" PRIx64 " r-xp 00000000 00:00 0 %s\n",
		 start, end, s->vdso);
	err = ptsynth_maps_add_proc_line(&s->maps, mapline);
	return err < 0 ? err : 0;
}

/* Returns the thread's number, or -1 for a thread not seen yet. */
static int sstep_thread(const struct sstep *s, pid_t tid)
{
	for (int i = 0; i < s->nseen; i++)
		if (s->seen[i] == tid)
			return i;
	return -1;
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
		if (err >= 0)
			err = sstep_dump_vdso(s, line);
		if (err < 0)
			break;
		err = 0;
	}
	fclose(f);
	return err;
}

/*
 * Records the instruction thread number t is about to execute, once per
 * instruction: a REP string instruction stops once per iteration.
 */
static int sstep_record(struct sstep *s, int t)
{
	struct user_regs_struct r;
	struct ptsynth_step st;
	pid_t tid = s->seen[t];
	uint8_t code[8];

	if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0)
		return -errno;
	errno = 0;
	long w = ptrace(PTRACE_PEEKTEXT, tid, (void *)(uintptr_t)r.rip, 0);
	if (errno)
		return -errno;
	memcpy(code, &w, sizeof code);
	if (r.rip == s->last_ip[t] && ptsynth_is_rep_string(code, sizeof code))
		return 0; /* the next iteration */
	s->last_ip[t] = r.rip;
	memset(&st, 0, sizeof st);
	st.ip = r.rip;
	st.tid = (uint32_t)tid;
	if (fwrite(&st, sizeof st, 1, s->out) != 1)
		return -EIO;
	s->nsteps++;
	if (code[0] == 0x0f && code[1] == 0x05) /* syscall: the maps may change */
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
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0) {
			/* run.sh skips the suite on "not permitted" */
			fprintf(stderr, "sstep: ptrace(PTRACE_TRACEME): %s\n", strerror(errno));
			_exit(126);
		}
		execv(argv[0], argv);
		fprintf(stderr, "sstep: exec %s: %s\n", argv[0], strerror(errno));
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

		int t = sstep_thread(s, tid);

		if (event == 0 && t < 0 && (WSTOPSIG(st) == SIGSTOP || WSTOPSIG(st) == SIGTRAP)) {
			/* A new thread's first stop. */
			if (s->nseen == MAX_THREADS)
				return -E2BIG;
			s->seen[s->nseen] = tid;
			err = sstep_record(s, s->nseen++);
		} else if (event == 0 && WSTOPSIG(st) == SIGTRAP) {
			err = sstep_record(s, t);
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
	while ((c = getopt(argc, argv, "+o:qd")) != -1) {
		switch (c) {
		case 'o':
			prefix = optarg;
			break;
		case 'd':
			s.vdso[0] = 1; /* set below, from the prefix */
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
	if (s.vdso[0]) {
		char dir[4096];
		const char *slash = strrchr(prefix, '/');
		int n = snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - prefix) : 1,
				 slash ? prefix : ".");
		if (n <= 0 || !realpath(dir, path) ||
		    snprintf(s.vdso, sizeof s.vdso, "%s/%s.vdso", path,
			     slash ? slash + 1 : prefix) >= (int)sizeof s.vdso) {
			fprintf(stderr, "sstep: %s: cannot name the vdso copy\n", prefix);
			return 1;
		}
	}
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
	fprintf(stderr, "usage: sstep -o PREFIX [-q] [-d] -- PROG [ARGS...]\n");
	return 2;
}
