// SPDX-License-Identifier: GPL-2.0
/* The program snaptrace run starts, under ptrace. See child.h. */
#include "record/child.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/proc.h"

/* The dispositions snaptrace was started with (snap_child_save_signals). */
static unsigned char inherited_ign[NSIG];
static sigset_t inherited_mask;
static int inherited_saved;

void snap_child_save_signals(void)
{
	for (int s = 1; s < NSIG; s++) {
		struct sigaction sa;

		inherited_ign[s] = sigaction(s, NULL, &sa) == 0 && !(sa.sa_flags & SA_SIGINFO) &&
				   sa.sa_handler == SIG_IGN;
	}
	inherited_saved = sigprocmask(SIG_SETMASK, NULL, &inherited_mask) == 0;
}

int snap_child_inherited_ignored(int sig)
{
	return sig > 0 && sig < NSIG && inherited_ign[sig];
}

/* In the forked program before exec: what it would have had without snaptrace. */
static void restore_signals(void)
{
	sigset_t none;

	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, inherited_ign[s] ? SIG_IGN : SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, inherited_saved ? &inherited_mask : &none, NULL);
}

int snap_child_start(char *const argv[], pid_t *pid_out, int *exec_err, int *status_out)
{
	int p[2], e = 0, status;
	pid_t parent = getpid(), pid;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		e = -errno;
		close(p[0]);
		close(p[1]);
		return e;
	}
	if (pid == 0) {
		close(p[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		restore_signals();
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0) {
			e = errno;
			n = write(p[1], &e, sizeof(e));
			_exit(126);
		}
		execvp(argv[0], argv);
		e = errno;
		n = write(p[1], &e, sizeof(e));
		(void)n;
		_exit(127);
	}
	close(p[1]);
	do
		n = read(p[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(e)) {
		*exec_err = e;
		return -e;
	}
	if (!WIFSTOPPED(status)) {
		*status_out = status;
		return -ECHILD;
	}
	*pid_out = pid;
	return 0;
}

/* Reads AT_ENTRY (the program's entry point) from /proc/PID/auxv. */
static int auxv_entry(pid_t pid, uint64_t *entry)
{
	char path[64];
	uint64_t av[2];
	int fd, err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (read(fd, av, sizeof(av)) == (ssize_t)sizeof(av) && av[0] != 0) {
		if (av[0] == AT_ENTRY) {
			*entry = av[1];
			err = 0;
			break;
		}
	}
	close(fd);
	return err;
}

/*
 * Waits for the breakpoint at the entry point. A signal the program takes before it (a
 * library constructor may raise one) is passed on; a group-stop (PTRACE_GETSIGINFO
 * fails with EINVAL) is resumed. Returns 0 at the breakpoint, -ECHILD when the program
 * ended (*status_out, *ended), or -errno.
 */
static int wait_entry_trap(pid_t pid, int *status_out, int *ended)
{
	siginfo_t si;
	int status, sig;

	for (;;) {
		while (waitpid(pid, &status, 0) < 0)
			if (errno != EINTR)
				return -errno;
		if (!WIFSTOPPED(status)) {
			*status_out = status;
			*ended = 1;
			return -ECHILD;
		}
		sig = WSTOPSIG(status);
		if (sig == SIGTRAP)
			return 0;
		if (ptrace(PTRACE_GETSIGINFO, pid, NULL, &si) < 0)
			sig = 0; /* group-stop: nothing to deliver */
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig) < 0)
			return -errno;
	}
}

int snap_child_run_to_entry(pid_t pid, int *status_out, int *ended)
{
#if defined(__x86_64__)
	struct user_regs_struct regs;
	uint64_t entry = 0;
	long orig;
	int err = auxv_entry(pid, &entry);

	if (err < 0)
		return err;
	errno = 0;
	orig = ptrace(PTRACE_PEEKTEXT, pid, (void *)entry, NULL);
	if (errno)
		return -errno;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)entry, (void *)((orig & ~0xffL) | 0xcc)) < 0)
		return -errno;
	err = ptrace(PTRACE_CONT, pid, NULL, NULL) < 0 ? -errno : 0;
	if (err == 0)
		err = wait_entry_trap(pid, status_out, ended);
	if (*ended)
		return err;
	/* Never leave the breakpoint in a live program, whatever went wrong. */
	if (ptrace(PTRACE_POKETEXT, pid, (void *)entry, (void *)orig) < 0 && err == 0)
		err = -errno;
	if (err == 0 && ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0)
		err = -errno;
	regs.rip = entry;
	if (err == 0 && ptrace(PTRACE_SETREGS, pid, NULL, &regs) < 0)
		err = -errno;
	return err;
#else
	(void)pid;
	(void)status_out;
	(void)ended;
	return -ENOTSUP;
#endif
}

int snap_child_detach(pid_t pid)
{
	/* ESRCH: it was killed meanwhile; SIGCHLD tells the session. */
	if (ptrace(PTRACE_DETACH, pid, NULL, NULL) < 0 && errno != ESRCH)
		return -errno;
	return 0;
}
