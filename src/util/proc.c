// SPDX-License-Identifier: GPL-2.0
#include "util/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

long snap_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int snap_jobs(int jobs)
{
	long n = jobs > 0 ? jobs : sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > INT32_MAX ? INT32_MAX : (int)n;
}

int snap_cpus_allowed(void)
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	return n > 0 ? n : snap_jobs(0);
}

double snap_thread_cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

void snap_child_reset_signals(void)
{
	sigset_t none;

	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

int snap_move_fd(int fd, int to)
{
	if (fd == to)
		return fcntl(fd, F_SETFD, 0);
	return dup2(fd, to) < 0 ? -1 : 0;
}

/* 1 if dir can hold a program to run: a directory no other user can change
 * (root's or ours, not world-writable). */
static int trusted_dir(const char *dir)
{
	struct stat st;

	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && !(st.st_mode & S_IWOTH) &&
	       (st.st_uid == 0 || st.st_uid == geteuid());
}

void snap_execvp_trusted(char *const argv[])
{
	const char *path = getenv("PATH"), *p;
	char full[PATH_MAX];
	int err = ENOENT;

	if (strchr(argv[0], '/')) {
		execv(argv[0], argv);
		return;
	}
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p; p += *p == ':') {
		size_t n = strcspn(p, ":");
		char dir[PATH_MAX];

		if (p[0] != '/' || n >= sizeof(dir)) { /* "", ".", "bin": the current directory */
			p += n;
			continue;
		}
		memcpy(dir, p, n);
		dir[n] = '\0';
		p += n;
		if (!trusted_dir(dir) ||
		    (size_t)snprintf(full, sizeof(full), "%s/%s", dir, argv[0]) >= sizeof(full))
			continue;
		execv(full, argv);
		if (errno != ENOENT && errno != ENOTDIR)
			err = errno;
	}
	errno = err;
}

void snap_exec_piped(const char *const *argv, int recw, int rec_to, int outw)
{
	int r = recw >= 0 ? fcntl(recw, F_DUPFD, 10) : -1, o = fcntl(outw, F_DUPFD, 10);

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	setpgid(0, 0);
	if ((recw >= 0 && (r < 0 || dup2(r, rec_to) < 0)) || o < 0 || dup2(o, STDOUT_FILENO) < 0)
		_exit(127);
	if (r >= 0)
		close(r);
	close(o);
	setenv("PAGER", "cat", 1);
	snap_execvp_trusted((char *const *)argv);
	_exit(127);
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
		snap_child_reset_signals();
		devnull = open("/dev/null", O_RDWR);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(devnull, 2);
		}
		dup2(pfd[1], 1);
		setenv("PAGER", "cat", 1);
		snap_execvp_trusted(argv);
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
