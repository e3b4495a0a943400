// SPDX-License-Identifier: GPL-2.0
#include "record/perfrun.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/perfargs.h"
#include "util/err.h"

/* In a freshly forked child: default signal dispositions and an empty mask,
 * so perf and the traced program do not inherit our blocked signals or our
 * ignored SIGPIPE. */
static void child_reset_signals(void)
{
	sigset_t none;

	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Moves fd to exactly `to` (used before exec); returns 0 or -1. */
static int move_fd(int fd, int to)
{
	if (fd == to)
		return fcntl(fd, F_SETFD, 0);
	return dup2(fd, to) < 0 ? -1 : 0;
}

static void perf_child(char *const argv[], int log_fd, int ctl_r, int ack_w, pid_t parent)
{
	int devnull;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	setpgid(0, 0); /* a terminal Ctrl-C reaches snaptrace only */
	child_reset_signals();
	/* Park the control fds high so the dup2s below cannot clobber them. */
	if (ctl_r >= 0) {
		ctl_r = fcntl(ctl_r, F_DUPFD, 100);
		ack_w = fcntl(ack_w, F_DUPFD, 100);
		if (ctl_r < 0 || ack_w < 0)
			_exit(127);
	}
	devnull = open("/dev/null", O_RDWR);
	if (devnull < 0)
		_exit(127);
	dup2(devnull, 0);
	if (log_fd < 0)
		log_fd = devnull;
	dup2(log_fd, 1);
	dup2(log_fd, 2);
	if (ctl_r >= 0 &&
	    (move_fd(ctl_r, SNAP_PERF_CTL_FD) < 0 || move_fd(ack_w, SNAP_PERF_ACK_FD) < 0))
		_exit(127);
	setenv("PAGER", "cat", 1);
	execvp(argv[0], argv);
	_exit(127);
}

int snap_perf_start(struct snap_perf *p, char *const argv[], int log_fd, int use_ctl)
{
	int ctl[2] = {-1, -1}, ack[2] = {-1, -1}, err = 0;
	pid_t parent = getpid(), pid;

	memset(p, 0, sizeof(*p));
	p->ctl_fd = p->ack_fd = -1;
	if (use_ctl && (pipe2(ctl, O_CLOEXEC) < 0 || pipe2(ack, O_CLOEXEC) < 0)) {
		err = -errno;
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto fail;
	}
	if (pid == 0)
		perf_child(argv, log_fd, ctl[0], ack[1], parent);
	setpgid(pid, pid);
	p->pid = pid;
	if (use_ctl) {
		close(ctl[0]);
		close(ack[1]);
		p->ctl_fd = ctl[1];
		p->ack_fd = ack[0];
	}
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (ctl[i] >= 0)
			close(ctl[i]);
		if (ack[i] >= 0)
			close(ack[i]);
	}
	return err;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int snap_perf_ctl(struct snap_perf *p, const char *cmd, int timeout_ms)
{
	char msg[64], ack[5];
	size_t len = strlen(cmd), got = 0;
	long deadline = now_ms() + timeout_ms;
	ssize_t n;

	if (p->ctl_fd < 0 || p->ack_fd < 0)
		return -ENOTCONN;
	if (len + 2 > sizeof(msg))
		return -EINVAL;
	memcpy(msg, cmd, len);
	msg[len++] = '\n';
	n = write(p->ctl_fd, msg, len);
	if (n < 0 && errno == EPIPE)
		return 1;
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -SNAP_EPERF;
	while (got < sizeof(ack)) {
		struct pollfd pfd = {p->ack_fd, POLLIN, 0};
		long left = deadline - now_ms();
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		n = read(p->ack_fd, ack + got, sizeof(ack) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 1; /* perf exited */
		got += (size_t)n;
	}
	return memcmp(ack, "ack\n", 5) ? -SNAP_EPERF : 0;
}

int snap_perf_signal(struct snap_perf *p, int sig)
{
	if (!p->pid || p->reaped)
		return 0;
	return kill(p->pid, sig) < 0 ? -errno : 0;
}

int snap_perf_wait(struct snap_perf *p, int timeout_ms)
{
	long deadline = now_ms() + timeout_ms;

	if (!p->pid)
		return -ECHILD;
	while (!p->reaped) {
		pid_t r = waitpid(p->pid, &p->status, timeout_ms < 0 ? 0 : WNOHANG);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == p->pid) {
			p->reaped = 1;
			break;
		}
		if (now_ms() >= deadline)
			return 0;
		usleep(2000);
	}
	return 1;
}

void snap_perf_close(struct snap_perf *p)
{
	if (p->pid && !p->reaped) {
		kill(p->pid, SIGKILL);
		snap_perf_wait(p, -1);
	}
	if (p->ctl_fd >= 0)
		close(p->ctl_fd);
	if (p->ack_fd >= 0)
		close(p->ack_fd);
	p->ctl_fd = p->ack_fd = -1;
}

int snap_run_capture(char *const argv[], char *buf, size_t len)
{
	int pfd[2], status, devnull;
	size_t got = 0;
	pid_t pid;

	if (len == 0)
		return -EINVAL;
	buf[0] = '\0';
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(pfd[0]);
		close(pfd[1]);
		return err;
	}
	if (pid == 0) {
		child_reset_signals();
		devnull = open("/dev/null", O_RDWR);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(devnull, 2);
		}
		dup2(pfd[1], 1);
		setenv("PAGER", "cat", 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		char tmp[256];
		ssize_t n = read(pfd[0], tmp, sizeof(tmp));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n && got + 1 < len; i++)
			buf[got++] = tmp[i];
	}
	buf[got] = '\0';
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 127;
}

long snap_read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	if (len == 0)
		return -EINVAL;
	buf[0] = '\0';
	if (fd < 0)
		return -errno;
	while (got + 1 < len) {
		ssize_t n = read(fd, buf + got, len - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			close(fd);
			return err;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	close(fd);
	return (long)got;
}
