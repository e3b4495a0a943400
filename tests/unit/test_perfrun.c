// SPDX-License-Identifier: GPL-2.0
/* The perf control protocol (perfrun.c) against small shell scripts standing in for perf. */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record/perfrun.h"
#include "snap_test.h"
#include "util/err.h"
#include "util/file.h"
#include "util/proc.h"

static int start_sh(struct snap_perf *p, const char *script)
{
	char *argv[] = {(char *)"sh", (char *)"-c", (char *)script, NULL};

	return snap_perf_start(p, argv, -1, 1);
}

static void b8_15_acked(void)
{
	struct snap_perf p;

	/* reads one command on fd 3, acks on fd 4 (with the NUL perf sends), exits */
	CHECK_INT_EQ(0, start_sh(&p, "read l <&3; [ \"$l\" = enable ] && printf 'ack\\n\\0' >&4; "
				     "read l <&3; exit 3"));
	CHECK_INT_EQ(0, snap_perf_ctl(&p, "enable", 5000));
	CHECK_INT_EQ(1, snap_perf_ctl(&p, "stop", 5000)); /* exits without an ack: gone */
	CHECK_INT_EQ(1, snap_perf_wait(&p, 5000));
	CHECK(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 3);
	snap_perf_close(&p);
	CHECK_INT_EQ(-1, p.ctl_fd);
}

static void b2_4_timeout_and_kill(void)
{
	struct snap_perf p;

	CHECK_INT_EQ(0, start_sh(&p, "exec sleep 30"));
	CHECK_INT_EQ(-ETIMEDOUT, snap_perf_ctl(&p, "enable", 100));
	CHECK_INT_EQ(0, snap_perf_wait(&p, 50)); /* still running */
	snap_perf_close(&p);			 /* SIGKILL + reap */
	CHECK_INT_EQ(1, p.reaped);
	CHECK(WIFSIGNALED(p.status) && WTERMSIG(p.status) == SIGKILL);
	snap_perf_close(&p); /* twice is harmless */
}

static void b8_15_malformed_ack(void)
{
	struct snap_perf p;

	CHECK_INT_EQ(0, start_sh(&p, "read l <&3; printf 'nak\\n\\0' >&4; sleep 1"));
	CHECK_INT_EQ(-SNAP_EPERF, snap_perf_ctl(&p, "snapshot", 5000));
	snap_perf_close(&p);
}

static void b2_4_no_control(void)
{
	struct snap_perf p;
	char *argv[] = {(char *)"true", NULL};

	CHECK_INT_EQ(0, snap_perf_start(&p, argv, -1, 0));
	CHECK_INT_EQ(-ENOTCONN, snap_perf_ctl(&p, "stop", 100));
	CHECK_INT_EQ(1, snap_perf_wait(&p, -1));
	CHECK_INT_EQ(0, snap_perf_signal(&p, SIGTERM)); /* already reaped: no-op */
	snap_perf_close(&p);
}

static void exec_failure_and_capture(void)
{
	struct snap_perf p;
	char *bad[] = {(char *)"/nonexistent/perf", NULL};
	char *echo[] = {(char *)"sh", (char *)"-c", (char *)"echo perf version 6.1.9; exit 4",
			NULL};
	char buf[8];

	CHECK_INT_EQ(0, snap_perf_start(&p, bad, -1, 1));
	CHECK_INT_EQ(1, snap_perf_wait(&p, 5000));
	CHECK(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 127);
	snap_perf_close(&p);
	CHECK_INT_EQ(4, snap_run_capture(echo, buf, sizeof(buf)));
	CHECK_STR_EQ("perf ve", buf); /* truncated, NUL-terminated */
	CHECK_INT_EQ(127, snap_run_capture(bad, buf, sizeof(buf)));
	CHECK_INT_EQ(-EINVAL, snap_run_capture(bad, buf, 0));
}

static void small_files(void)
{
	char buf[4];

	CHECK_INT_EQ(3, snap_read_small("/proc/self/comm", buf, sizeof(buf)));
	CHECK_INT_EQ(3, (int)strlen(buf));
	CHECK_INT_EQ(-ENOENT, snap_read_small("/nonexistent", buf, sizeof(buf)));
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	RUN(b8_15_acked);
	RUN(b2_4_timeout_and_kill);
	RUN(b8_15_malformed_ack);
	RUN(b2_4_no_control);
	RUN(exec_failure_and_capture);
	RUN(small_files);
	return snap_test_done();
}
