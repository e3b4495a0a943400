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

static int wait_stop(pid_t pid, int *status)
{
	while (waitpid(pid, status, __WALL) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* Ends a child that must not run on (stopped, or failed to start) and reaps it. */
static void kill_reap(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR)
		;
}

int snap_child_start(char *const argv[], pid_t *pid_out, int *exec_err, int *status_out)
{
	int p[2], e = 0, status, err;
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
		/* Until the parent has set PTRACE_O_EXITKILL (the SIGSTOP below):
		 * snaptrace dying now must not leave the program to run untraced. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		restore_signals();
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0) {
			e = errno;
			n = write(p[1], &e, sizeof(e));
			_exit(126);
		}
		raise(SIGSTOP);
		/* EXITKILL covers us from here to the detach, and ends with it: the
		 * death signal would kill the program whenever snaptrace died,
		 * also long after it was let go (the death signal survives exec). */
		prctl(PR_SET_PDEATHSIG, 0);
		execvp(argv[0], argv);
		e = errno;
		n = write(p[1], &e, sizeof(e));
		(void)n;
		_exit(127);
	}
	close(p[1]);
	err = wait_stop(pid, &status);
	if (err == 0 && WIFSTOPPED(status)) {
		if (ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)PTRACE_O_EXITKILL) < 0 ||
		    ptrace(PTRACE_CONT, pid, NULL, NULL) < 0) {
			err = -errno;
			kill(pid, SIGKILL);
		}
	}
	do
		n = read(p[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	if (err == 0 && WIFSTOPPED(status))
		err = wait_stop(pid, &status);
	if (err < 0) {
		kill_reap(pid);
		return err;
	}
	if (n == (ssize_t)sizeof(e)) {
		if (WIFSTOPPED(status))
			kill_reap(pid);
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

#if defined(__x86_64__)
/* A process the program forked before its entry point (a library constructor):
 * it stops at its first instruction, auto-attached (PTRACE_O_TRACEFORK), with a
 * copy of the breakpoint: take it out of its memory and let it go. */
static void release_fork(pid_t parent, uint64_t entry, long orig)
{
	unsigned long msg = 0;
	pid_t kid;
	int status;

	if (ptrace(PTRACE_GETEVENTMSG, parent, NULL, &msg) < 0 || !msg)
		return;
	kid = (pid_t)msg;
	/* its first stop (SIGSTOP) may come before or after the parent's event */
	while (waitpid(kid, &status, __WALL) < 0)
		if (errno != EINTR)
			return;
	if (!WIFSTOPPED(status))
		return;
	ptrace(PTRACE_POKETEXT, kid, (void *)entry, (void *)orig);
	ptrace(PTRACE_DETACH, kid, NULL, NULL);
}

/*
 * Waits for the breakpoint at the entry point: a SIGTRAP from the kernel
 * (SI_KERNEL: an int3) with rip just past entry. Any other signal, also a
 * SIGTRAP the program raised itself (a library constructor checking for a
 * debugger: SI_USER/SI_TKILL) or an int3 of its own, is passed on; a
 * group-stop (PTRACE_GETSIGINFO fails with EINVAL) is resumed; a fork is
 * released without the breakpoint. Returns 0 at the breakpoint, -ECHILD when
 * the program ended (*status_out, *ended), or -errno.
 */
static int wait_entry_trap(pid_t pid, uint64_t entry, long orig, int *status_out, int *ended)
{
	struct user_regs_struct regs;
	siginfo_t si;
	int status, sig;

	for (;;) {
		while (waitpid(pid, &status, __WALL) < 0)
			if (errno != EINTR)
				return -errno;
		if (!WIFSTOPPED(status)) {
			*status_out = status;
			*ended = 1;
			return -ECHILD;
		}
		sig = WSTOPSIG(status);
		if (sig == SIGTRAP && (status >> 16) != 0) { /* a ptrace event stop */
			if ((status >> 16) == PTRACE_EVENT_FORK)
				release_fork(pid, entry, orig);
			sig = 0;
		} else if (ptrace(PTRACE_GETSIGINFO, pid, NULL, &si) < 0) {
			sig = 0; /* group-stop: nothing to deliver */
		} else if (sig == SIGTRAP && si.si_code == SI_KERNEL &&
			   ptrace(PTRACE_GETREGS, pid, NULL, &regs) == 0 && regs.rip == entry + 1) {
			return 0;
		}
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig) < 0)
			return -errno;
	}
}
#endif

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
	/* A fork before the entry point copies the breakpoint: trace forks to
	 * take it out of the copy (vfork and threads share the memory). */
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   (void *)(long)(PTRACE_O_EXITKILL | PTRACE_O_TRACEFORK)) < 0)
		return -errno;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)entry, (void *)((orig & ~0xffL) | 0xcc)) < 0)
		return -errno;
	err = ptrace(PTRACE_CONT, pid, NULL, NULL) < 0 ? -errno : 0;
	if (err == 0)
		err = wait_entry_trap(pid, entry, orig, status_out, ended);
	if (*ended)
		return err;
	/* Never leave the breakpoint in a live program, whatever went wrong. */
	if (ptrace(PTRACE_POKETEXT, pid, (void *)entry, (void *)orig) < 0 && err == 0)
		err = -errno;
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)PTRACE_O_EXITKILL) < 0 && err == 0)
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
