// SPDX-License-Identifier: GPL-2.0
#include "record/perfrun.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/perfargs.h"
#include "util/err.h"
#include "util/proc.h"

/* After fork, before exec: says why perf could not start in its log (shown
 * as "its messages are above"), then exits 127. */
static void perf_child_fail(int log_fd, const char *what, int err)
{
	if (log_fd >= 0)
		dprintf(log_fd, "snaptrace: cannot start perf: %s: %s\n", what, strerror(err));
	_exit(127);
}

static void perf_child(char *const argv[], int log_fd, int ctl_r, int ack_w, pid_t parent)
{
	int devnull, low = SNAP_PERF_ACK_FD + 1;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	setpgid(0, 0); /* a terminal Ctrl-C reaches snaptrace only */
	snap_child_reset_signals();
	/* Park the fds above perf's 0-4 so the dup2s below cannot clobber them:
	 * the lowest free ones, which fit any `ulimit -n` perf itself can run under. */
	if (log_fd >= 0 && log_fd < low && (log_fd = fcntl(log_fd, F_DUPFD, low)) < 0)
		_exit(127);
	if (ctl_r >= 0) {
		ctl_r = fcntl(ctl_r, F_DUPFD, low);
		ack_w = ctl_r < 0 ? -1 : fcntl(ack_w, F_DUPFD, low);
		if (ctl_r < 0 || ack_w < 0)
			perf_child_fail(log_fd, "its control file descriptors", errno);
	}
	devnull = open("/dev/null", O_RDWR);
	if (devnull < 0)
		perf_child_fail(log_fd, "/dev/null", errno);
	dup2(devnull, 0);
	if (log_fd < 0)
		log_fd = devnull;
	dup2(log_fd, 1);
	dup2(log_fd, 2);
	if (ctl_r >= 0 && (snap_move_fd(ctl_r, SNAP_PERF_CTL_FD) < 0 ||
			   snap_move_fd(ack_w, SNAP_PERF_ACK_FD) < 0))
		perf_child_fail(2, "its control file descriptors", errno);
	setenv("PAGER", "cat", 1);
	snap_execvp_trusted(argv);
	perf_child_fail(2, argv[0], errno);
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

int snap_perf_ctl(struct snap_perf *p, const char *cmd, int timeout_ms)
{
	char msg[64], ack[5];
	size_t len = strlen(cmd), got = 0;
	long deadline = snap_now_ms() + timeout_ms;
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
		long left = deadline - snap_now_ms();
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
	long deadline = snap_now_ms() + timeout_ms;

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
		if (snap_now_ms() >= deadline)
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
