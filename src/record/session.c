// SPDX-License-Identifier: GPL-2.0
#include "record/session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parse/perfdata.h"
#include "record/child.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/esc.h"
#include "util/file.h"
#include "util/log.h"
#include "util/proc.h"
#include "util/vec.h"

#define PERF_READY_MS 15000 /* perf's first ack (it may read kallsyms first) */
#define PERF_STOP_MS  15000 /* perf writing its data after "stop" */
#define DUMP_WAIT_MS  5000  /* a --switch-output dump appearing */

static int why(struct snap_session *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int why(struct snap_session *s, int err, const char *fmt, ...)
{
	char text[sizeof(s->why)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* escaped: it may name the program's files (another user's, under attach),
	 * and the caller prints it (docs/guarantees.md, "What reaches the terminal") */
	snap_esc_str(s->why, sizeof(s->why), text, strlen(text), 0);
	return err;
}

/* Reads /proc/PID/cmdline as one space-joined line into buf. Returns the
 * length or -errno. */
static int session_cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];
	int fd, n = 0;

	if (len == 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t r = read(fd, buf + n, len - 1 - (size_t)n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (int)r;
		if ((size_t)n >= len - 1)
			break;
	}
	close(fd);
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (int i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return n;
}

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGALRM, SIGUSR1, SIGUSR2};

/* Blocks the signals we handle and routes them to a signalfd. One snaptrace
 * was started ignoring (nohup: SIGHUP) stays ignored: it neither ends the
 * recording nor is forwarded (the program ignores it too). */
static int signals_open(struct snap_session *s)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		if (!snap_child_inherited_ignored(forwarded[i]))
			sigaddset(&set, forwarded[i]);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, &s->oldmask) < 0)
		return -errno;
	s->masked = 1;
	signal(SIGPIPE, SIG_IGN); /* a dead perf gives EPIPE, not death */
	s->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return s->sigfd < 0 ? -errno : 0;
}

/* run: the program, stopped at its first instruction under ptrace. */
static int child_start(struct snap_session *s)
{
	int exec_err = 0, status = 0;
	int err = snap_child_start(s->cfg.cmd, &s->child, &exec_err, &status);

	if (err < 0 && exec_err)
		return why(s, err, "cannot run %s: %s", s->cfg.cmd[0], strerror(exec_err));
	if (err == -ECHILD)
		return why(s, err, "%s did not start (status 0x%x)", s->cfg.cmd[0], status);
	return err;
}

static int save_names(struct snap_session *s)
{
	s->names = snap_calloc(s->npids, sizeof(*s->names));
	if (!s->names)
		return -ENOMEM;
	for (size_t i = 0; i < s->npids; i++) {
		char buf[512];

		if (session_cmdline(s->pids[i], buf, sizeof(buf)) <= 0)
			continue;
		s->names[i] = snap_strndup(buf, strlen(buf));
		if (!s->names[i])
			return -ENOMEM;
	}
	return 0;
}

/* run: lets the program run to its entry point (see snap_child_run_to_entry). */
static int run_to_entry(struct snap_session *s)
{
	int status = 0, ended = 0;
	int err = snap_child_run_to_entry(s->child, &status, &ended);

	if (ended) {
		s->child_status = status;
		s->child_reaped = 1;
	}
	if (err == 0)
		snap_info("ran %s to its entry point to see its shared libraries", s->cfg.cmd[0]);
	return err;
}

/* Resolves cfg.trigger ("." tries both stop indicators) in the first pid. */
static int resolve_trigger(struct snap_session *s, const char **name)
{
	pid_t pid = s->pids[0];
	int err;

	*name = s->cfg.trigger;
	if (!strcmp(*name, ".")) {
		*name = SNAP_STOP_INDICATOR;
		err = snap_trigger_resolve_disp(pid, *name, &s->trigger_addr, s->trigger_where,
						sizeof(s->trigger_where), s->trigger_disp,
						sizeof(s->trigger_disp));
		if (err != -ENOENT && err != -SNAP_EFORMAT)
			return err;
		*name = SNAP_MT_STOP_INDICATOR;
	}
	return snap_trigger_resolve_disp(pid, *name, &s->trigger_addr, s->trigger_where,
					 sizeof(s->trigger_where), s->trigger_disp,
					 sizeof(s->trigger_disp));
}

static int arm_trigger(struct snap_session *s)
{
	const char *name;
	pid_t pid = s->pids[0];
	int err = resolve_trigger(s, &name);

	if ((err == -ENOENT || err == -SNAP_EFORMAT) && s->child && run_to_entry(s) == 0)
		err = resolve_trigger(s, &name);
	s->trigger_name = err == 0 && s->trigger_disp[0] ? s->trigger_disp : name;
	if (err == -EEXIST)
		return why(s, err,
			   "-trigger %s: several functions of that name (overloads?); give the "
			   "name with its parameters, as -trigger '?' lists them",
			   name);
	if (err == -SNAP_EFORMAT)
		return why(s, err,
			   "-trigger %s: the executable of pid %d has no symbol table (stripped?); "
			   "rebuild it with symbols",
			   name, (int)pid);
	if (err == -ENOENT && !strcmp(s->cfg.trigger, "."))
		return why(
			s, err,
			"-trigger .: neither " SNAP_STOP_INDICATOR " nor " SNAP_MT_STOP_INDICATOR
			" is a function of %s (-trigger . stops at the first call of one: define "
			"it, e.g. a noinline empty function, and call it where the trace should "
			"end; or give -trigger a function of the program)",
			s->child ? s->cfg.cmd[0] : "the process");
	if (err == -ENOENT && s->child)
		return why(s, err,
			   "-trigger %s: no function of that name in %s or the libraries it links "
			   "(for a library it dlopen()s, use attach), nor such a FILE:LINE[:COL] "
			   "(needs -g) or address in it",
			   name, s->cfg.cmd[0]);
	if (err == -ENOENT)
		return why(s, err,
			   "-trigger %s: no function of that name in pid %d's executable or its "
			   "loaded libraries, nor such a FILE:LINE[:COL] (needs -g) or address in "
			   "its executable",
			   name, (int)pid);
	if (err < 0)
		return why(s, err, "-trigger %s: cannot read pid %d: %s", name, (int)pid,
			   strerror(-err));
	snap_info("trigger %s @ 0x%016llx (%s)", s->trigger_name,
		  (unsigned long long)s->trigger_addr, s->trigger_where);
	s->trigger_addrs = snap_calloc(s->npids, sizeof(*s->trigger_addrs));
	if (!s->trigger_addrs)
		return why(s, -ENOMEM, "out of memory");
	for (size_t i = 0; i < s->npids; i++) {
		uint64_t addr = s->trigger_addr;

		/* Other processes may map the function elsewhere (ASLR, another
		 * executable): resolve it in each. */
		if (i > 0 && snap_trigger_resolve(s->pids[i], name, &addr, NULL, 0) < 0) {
			snap_warn("-trigger %s: not found in pid %d; watching the others", name,
				  (int)s->pids[i]);
			continue;
		}
		s->trigger_addrs[i] = addr;
		err = snap_trigger_arm(&s->trig, s->pids[i], addr, s->child != 0);
		if (err < 0)
			return why(s, err, "-trigger %s: cannot set a breakpoint in pid %d: %s",
				   name, (int)s->pids[i],
				   err == -ENOSPC ? "its 4 debug registers are in use"
						  : strerror(-err));
	}
	return 0;
}

/* Prints perf's log (its stdout and stderr) through the log, skipping the
 * "[ perf record: ...]" progress lines unless verbose or all is set. */
static void show_perf_log(struct snap_session *s, int all)
{
	char buf[8192], *line, *save = NULL;
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/perf-record.log", s->wd.path);
	if (snap_read_small(path, buf, sizeof(buf)) <= 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* (what perf lost is said from perf.data by the decode, in our words) */
		int noise = !strncmp(line, "[ perf record:", 14) ||
			    !strncmp(line, "libperf: Miscounted", 19) ||
			    !strcmp(line, "Events enabled") || !strcmp(line, "Events disabled") ||
			    !*line || !strcmp(line, "Check IO/CPU overload!") ||
			    (!strncmp(line, "Processed ", 10) && strstr(line, " and lost ")) ||
			    (!strcmp(line, "Warning:") && save && !strncmp(save, "Processed ", 10));

		if (all || !noise)
			snap_log(noise ? SNAP_LOG_INFO : SNAP_LOG_WARN, "perf: %s", line);
	}
}

static int perf_failed(struct snap_session *s, const char *what)
{
	int st = s->perf.status;

	show_perf_log(s, 1);
	if (s->perf.reaped && WIFEXITED(st))
		return why(s, -SNAP_EPERF,
			   "perf record %s (exit status %d; its messages are above)", what,
			   WEXITSTATUS(st));
	if (s->perf.reaped && WIFSIGNALED(st))
		return why(s, -SNAP_EPERF, "perf record %s: it was killed by signal %d (%s)%s",
			   what, WTERMSIG(st), strsignal(WTERMSIG(st)),
			   WTERMSIG(st) == SIGXFSZ ? " (the file size limit, ulimit -f)" : "");
	return why(s, -SNAP_EPERF, "perf record %s (its messages are above)", what);
}

static int perf_begin(struct snap_session *s)
{
	struct snap_recopts *o = &s->cfg.rec;
	char path[PATH_MAX + 32];
	int err;

	o->pids = s->pids;
	o->npids = s->npids;
	o->trigger = s->cfg.trigger != NULL;
	/* perf record copies (or hard-links) the files of the code it sampled into
	 * ~/.debug: another user's files, sized or swapped at will, into root's home
	 * (docs/guarantees.md). Not for them. */
	o->no_buildid_cache = 0;
	for (size_t i = 0; i < s->npids; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "/proc/%d", s->pids[i]);
		if (stat(path, &st) == 0 && st.st_uid != 0 && st.st_uid != geteuid())
			o->no_buildid_cache = 1;
	}
	snprintf(path, sizeof(path), "%s/perf.data", s->wd.path);
	o->data = path;
	err = snap_perfargs_build(o, s->cfg.caps, &s->pa);
	o->data = NULL;
	if (err < 0)
		return why(s, err, "%s", s->pa.err[0] ? s->pa.err : snap_strerror(err));
	s->plan = snap_perfargs_ctlplan(&s->pa, o, s->cfg.caps);
	if (snap_log_level >= SNAP_LOG_INFO) {
		char *j = snap_perfargs_join(&s->pa);

		snap_info("running: %s", j ? j : "perf record");
		snap_free(j);
	}
	snprintf(path, sizeof(path), "%s/perf-record.log", s->wd.path);
	/* A kept -working-directory holds the log of the run before. */
	if (unlink(path) < 0 && errno != ENOENT)
		return why(s, -errno, "cannot remove %s: %s", path, strerror(errno));
	s->log_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->log_fd < 0)
		return why(s, -errno, "cannot create %s: %s", path, strerror(errno));
	err = snap_perf_start(&s->perf, s->pa.argv, s->log_fd, s->pa.ctl);
	if (err < 0)
		return why(s, err, "cannot start perf: %s", strerror(-err));
	/* perf starts disabled (-D -1): "enable" is acked once its events are
	 * open and counting. Older perf: give it magic-trace's 500 ms. */
	if (s->pa.ctl) {
		err = snap_perf_ctl(&s->perf, "enable", PERF_READY_MS);
		if (err == 1) { /* perf exited (EOF or EPIPE on the control fd) */
			snap_perf_wait(&s->perf, 2000);
			return perf_failed(s, "failed to start");
		}
		if (err < 0)
			return why(s, err, "perf did not acknowledge 'enable': %s",
				   snap_strerror(err));
	} else {
		usleep(500 * 1000);
		if (snap_perf_wait(&s->perf, 0) == 1 &&
		    (!WIFEXITED(s->perf.status) || WEXITSTATUS(s->perf.status)))
			return perf_failed(s, "failed to start");
	}
	s->recording = 1;
	/* attach: hits before perf recorded are meaningless; drop them. */
	snap_trigger_read(&s->trig, NULL, 0);
	/* Single-shot sampling trigger: the kernel signals perf at the hit. */
	if (s->trig.nbps && !o->multi_snapshot && s->plan.snapshot == SNAP_CTL_SIGUSR2 &&
	    snap_trigger_signal_to(&s->trig, s->perf.pid, SIGUSR2) == 0)
		s->kernel_signals = 1;
	return 0;
}

int snap_session_start(struct snap_session *s, const struct snap_session_cfg *cfg)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	s->sigfd = s->log_fd = -1;
	s->wd.guard_fd = -1;
	s->perf.ctl_fd = s->perf.ack_fd = -1;
	snap_trigger_init(&s->trig);
	err = snap_workdir_open(&s->wd, cfg->workdir);
	if (err < 0)
		return why(s, err, "working directory %s: %s",
			   cfg->workdir ? cfg->workdir : "$TMPDIR", snap_workdir_strerror(err));
	snap_info("working directory %s", s->wd.path);
	err = signals_open(s);
	if (err < 0)
		return why(s, err, "signals: %s", strerror(-err));
	if (cfg->cmd) {
		err = child_start(s);
		if (err < 0)
			return err;
		s->pids = snap_malloc(sizeof(*s->pids));
		if (!s->pids)
			return why(s, -ENOMEM, "out of memory");
		s->pids[0] = s->child;
		s->npids = 1;
	} else {
		s->pids = snap_calloc(cfg->npids, sizeof(*s->pids));
		if (!s->pids)
			return why(s, -ENOMEM, "out of memory");
		memcpy(s->pids, cfg->pids, cfg->npids * sizeof(*s->pids));
		s->npids = cfg->npids;
	}
	err = save_names(s);
	if (err < 0)
		return why(s, err, "out of memory");
	if (cfg->trigger) {
		err = arm_trigger(s);
		if (err < 0)
			return err;
	}
	err = perf_begin(s);
	if (err < 0)
		return err;
	err = s->child ? snap_child_detach(s->child) : 0;
	if (err < 0)
		return why(s, err, "cannot let %s run: %s", s->cfg.cmd[0], strerror(-err));
	s->start_ms = snap_now_ms();
	return 0;
}

/* Waits until a new perf.data.* name sorting after s->last_snap appears
 * (perf renames the dump into place once written). Returns 0 or -ETIMEDOUT. */
static int wait_dump(struct snap_session *s, int timeout_ms)
{
	long deadline = snap_now_ms() + timeout_ms;

	while (snap_now_ms() < deadline) {
		char **names;
		int n = snap_workdir_list_data(&s->wd, &names);

		for (int i = n - 1; i >= 0; i--) {
			/* a name perf wrote (not one we claimed): the new dump */
			if (strcmp(names[i], "perf.data") && !snap_workdir_is_claimed(names[i]) &&
			    strcmp(names[i], s->last_snap)) {
				if (snap_workdir_claim(&s->wd, names[i], s->last_snap,
						       sizeof(s->last_snap)) < 0)
					snprintf(s->last_snap, sizeof(s->last_snap), "%s",
						 names[i]);
				snap_workdir_free_list(names, n);
				return 0;
			}
		}
		if (n >= 0)
			snap_workdir_free_list(names, n);
		if (snap_perf_wait(&s->perf, 0) == 1)
			break;
		usleep(3000);
	}
	return -ETIMEDOUT;
}

static int do_action(struct snap_session *s, enum snap_ctl_action a)
{
	switch (a) {
	case SNAP_CTL_CMD_SNAPSHOT:
		return snap_perf_ctl(&s->perf, "snapshot", 8000) < 0 ? -SNAP_EPERF : 0;
	case SNAP_CTL_CMD_STOP:
		return snap_perf_ctl(&s->perf, "stop", 8000) < 0 ? -SNAP_EPERF : 0;
	case SNAP_CTL_SIGUSR2:
		return snap_perf_signal(&s->perf, SIGUSR2);
	case SNAP_CTL_SIGINT:
		return snap_perf_signal(&s->perf, SIGINT);
	case SNAP_CTL_SIGTERM:
		return snap_perf_signal(&s->perf, SIGTERM);
	case SNAP_CTL_NONE:
	default:
		return 0;
	}
}

/* 0 when nothing is ever cut from the recording: -full-execution records the
 * whole run (with a trigger, only then is there no way to snapshot). */
static int takes_snapshots(const struct snap_session *s)
{
	return s->plan.snapshot != SNAP_CTL_NONE;
}

static int take_snapshot(struct snap_session *s, int by_hit)
{
	int err = by_hit && s->kernel_signals ? 0 : do_action(s, s->plan.snapshot);

	if (err < 0)
		return err;
	if (s->plan.snapshot == SNAP_CTL_SIGUSR2 && s->pa.switch_output) {
		/* A hit just before the kernel was told to signal perf: ask ourselves. */
		err = wait_dump(s, by_hit && s->kernel_signals ? 300 : DUMP_WAIT_MS);
		if (err < 0 && by_hit && s->kernel_signals) {
			do_action(s, s->plan.snapshot);
			err = wait_dump(s, DUMP_WAIT_MS);
		}
		if (err < 0)
			snap_warn("perf did not write the snapshot in time");
	}
	if (!takes_snapshots(s))
		return 0; /* nothing to cut */
	s->snapshots++;
	/* (the dump's name only with -v: it is renamed or removed later) */
	snap_warn("snapshot taken");
	if (s->last_snap[0])
		snap_info("snapshot written to %s", s->last_snap);
	return 0;
}

/* Appends hits to s->hits. Returns 0 or -ENOMEM. */
static int add_hits(struct snap_session *s, const struct snap_trigger_hit *h, size_t n)
{
	if (snap_vec_reserve(&s->hits, &s->hcap, s->nhits + n, sizeof(*s->hits)) < 0)
		return -ENOMEM;
	memcpy(s->hits + s->nhits, h, n * sizeof(*h));
	s->nhits += n;
	return 0;
}

/* -multi-snapshot: keeps every pending hit (marked in the trace, no
 * snapshot of their own). Returns 0 or -ENOMEM. */
static int keep_pending(struct snap_session *s)
{
	struct snap_trigger_hit h[64];
	size_t n;

	while ((n = snap_trigger_read(&s->trig, h, 64)) > 0) {
		if (add_hits(s, h, n) < 0)
			return -ENOMEM;
		s->hits_unsnapped += n;
		s->hits_after_snap += n;
		if (n < 64)
			break;
	}
	return 0;
}

static int on_hits(struct snap_session *s)
{
	struct snap_trigger_hit h[64];
	size_t n = snap_trigger_read(&s->trig, h, 64);

	if (!n || !s->recording)
		return 0;
	/* One snapshot per wake-up: the first hit takes it. With
	 * -multi-snapshot the rest of the batch and the hits during the dump
	 * are kept too: every hit is marked (docs/behaviour.md §2.5). */
	if (add_hits(s, h, s->cfg.rec.multi_snapshot ? n : 1) < 0)
		return why(s, -ENOMEM, "out of memory");
	if (s->cfg.rec.multi_snapshot)
		s->hits_unsnapped += n - 1;
	snap_warn("trigger %s hit by tid %d at %llu.%09llu", s->trigger_name, (int)h[0].hit.tid,
		  (unsigned long long)(h[0].hit.time / 1000000000u),
		  (unsigned long long)(h[0].hit.time % 1000000000u));
	if (take_snapshot(s, 1) < 0)
		return why(s, -SNAP_EPERF, "perf did not take the snapshot");
	s->hits_after_snap = 0;
	if (!s->cfg.rec.multi_snapshot) {
		snap_trigger_fini(&s->trig);
		s->end = SNAP_END_TRIGGER;
	} else if (keep_pending(s) < 0) {
		return why(s, -ENOMEM, "out of memory");
	}
	return 0;
}

static int cmp_hit_time(const void *a, const void *b)
{
	const struct snap_trigger_hit *x = a, *y = b;

	return x->hit.time < y->hit.time ? -1 : x->hit.time > y->hit.time;
}

/* -multi-snapshot: how many hits were marked, and those that were not. */
static void say_hits(const struct snap_session *s)
{
	if (!s->cfg.rec.multi_snapshot || !s->cfg.trigger)
		return;
	if (s->nhits && !takes_snapshots(s))
		snap_warn("trigger %s: %zu hit%s marked in the trace of the whole run "
			  "(-full-execution takes no snapshots)",
			  s->trigger_name, s->nhits, s->nhits == 1 ? "" : "s");
	else if (s->nhits)
		snap_warn("trigger %s: %zu hit%s marked in the trace, %d snapshot%s (a hit "
			  "during a snapshot is marked without one of its own)",
			  s->trigger_name, s->nhits, s->nhits == 1 ? "" : "s", s->snapshots,
			  s->snapshots == 1 ? "" : "s");
	if (s->hits_lost)
		snap_warn("trigger %s: %llu more hit%s not marked: the breakpoint's buffer "
			  "overflowed (the function was called faster than snaptrace read the "
			  "hits)",
			  s->trigger_name, (unsigned long long)s->hits_lost,
			  s->hits_lost == 1 ? " was" : "s were");
}

/* Reaps what exited. Returns 1 when the recording should end. */
static int on_sigchld(struct snap_session *s)
{
	if (s->child && !s->child_reaped &&
	    waitpid(s->child, &s->child_status, WNOHANG) == s->child) {
		s->child_reaped = 1;
		s->end = SNAP_END_EXIT;
		return 1;
	}
	if (s->perf.pid && snap_perf_wait(&s->perf, 0) == 1) {
		s->recording = 0;
		if (!s->end)
			s->end = SNAP_END_PERF;
		return 1;
	}
	return 0;
}

/* A signal from the terminal already reached the program (same process
 * group); one sent by a process (kill) is forwarded to it. */
static void on_signal(struct snap_session *s, const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo;

	if (s->child && !s->child_reaped && (int)si->ssi_code <= 0 &&
	    (pid_t)si->ssi_pid != s->child)
		kill(s->child, sig);
	if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
		if (!s->child)
			snap_warn("got signal, detaching");
		s->end = SNAP_END_SIGNAL;
	}
}

/* Signals that arrived after the record loop (while perf wrote its data)
 * are handled as in it: one only forwarded (SIGUSR1...) no longer kills
 * snaptrace with its default action when the mask is restored; one that
 * ends the recording still ends snaptrace, raised again once unblocked. */
static void signals_close(struct snap_session *s)
{
	struct signalfd_siginfo si;
	int again = 0;

	while (s->sigfd >= 0 && read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		int sig = (int)si.ssi_signo;

		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
			again = sig;
		else if (sig != SIGCHLD)
			on_signal(s, &si);
	}
	if (s->sigfd >= 0)
		close(s->sigfd);
	s->sigfd = -1;
	if (s->masked)
		sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
	s->masked = 0;
	if (again)
		raise(again);
}

/* Without -multi-thread only the main thread of each pid is recorded: note
 * the other threads and the child processes that exist, so the user can be
 * told they ran untraced. Best effort: /proc is read at every wake-up. */
static void watch_untraced(struct snap_session *s)
{
	if (s->cfg.rec.multi_thread)
		return;
	for (size_t i = 0; i < s->npids; i++) {
		char path[64], buf[64];
		struct dirent *d;
		DIR *dir;
		int n = 0;

		snprintf(path, sizeof(path), "/proc/%d/task", s->pids[i]);
		dir = opendir(path);
		if (!dir)
			continue;
		while ((d = readdir(dir)))
			if (d->d_name[0] != '.')
				n++;
		closedir(dir);
		if (n - 1 > s->other_threads)
			s->other_threads = n - 1;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", s->pids[i], s->pids[i]);
		if (snap_read_small(path, buf, sizeof(buf)) > 1)
			s->children = 1;
	}
}

int snap_session_loop(struct snap_session *s)
{
	while (!s->end) {
		struct pollfd pfd[1025];
		size_t n = 1;
		int r;

		pfd[0] = (struct pollfd){s->sigfd, POLLIN, 0};
		n += snap_trigger_pollfds(&s->trig, pfd + 1, 1024);
		/* attach with a trigger: arm threads created since (every 50 ms) */
		r = poll(pfd, n,
			 !s->child && s->trig.nbps  ? 50
			 : !s->cfg.rec.multi_thread ? 100
						    : 1000);
		watch_untraced(s);
		if (r < 0 && errno != EINTR)
			return why(s, -errno, "poll: %s", strerror(errno));
		if (!s->child && s->trig.nbps && s->recording) {
			for (size_t i = 0; i < s->npids; i++) {
				int a = s->trigger_addrs[i]
						? snap_trigger_rescan(&s->trig, s->pids[i],
								      s->trigger_addrs[i])
						: 0;

				if (a > 0 && s->kernel_signals)
					snap_trigger_signal_to(&s->trig, s->perf.pid, SIGUSR2);
			}
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGCHLD)
					on_sigchld(s);
				else
					on_signal(s, &si);
			}
		}
		for (size_t i = 1; i < n && !s->end; i++) {
			if (pfd[i].revents & (POLLIN | POLLHUP)) {
				int err = on_hits(s);

				if (err < 0)
					return err;
				break;
			}
		}
		if (r == 0)
			on_sigchld(s); /* belt and braces: a coalesced SIGCHLD */
	}
	return 0;
}

/* A perf killed by a signal other than the one snaptrace stops it with
 * (SIGKILL, the OOM killer, SIGXFSZ under ulimit -f, a SIGTERM from elsewhere
 * while recording). Returns the signal, or 0. */
static int perf_foreign_signal(const struct snap_session *s)
{
	int sig;

	if (!s->perf.reaped || !WIFSIGNALED(s->perf.status))
		return 0;
	sig = WTERMSIG(s->perf.status);
	/* perf re-raises SIGINT/SIGTERM once it has written its data */
	if (s->end != SNAP_END_PERF && (sig == SIGINT || sig == SIGTERM))
		return 0;
	return sig;
}

/* 1 when perf never finished NAME: a header that names no data (perf writes the
 * header last, so a perf that was killed leaves "data size 0"). */
static int perfdata_unfinished(int dfd, const char *name)
{
	struct snap_perfdata_info info;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), r;

	if (fd < 0)
		return 0;
	r = snap_perfdata_probe(snap_fd_pread, &fd, &info);
	close(fd);
	return r < 0 || (!info.pipe_mode && info.data_size == 0);
}

/* Keeps the data files up to the last trigger snapshot (drops the dump perf
 * writes when it stops: the trace ends at a hit), then names the input. */
static int collect_data(struct snap_session *s, int perf_sig)
{
	char **names = NULL;
	int n = snap_workdir_list_data(&s->wd, &names), kept = 0, dfd, unfinished = 0;

	if (n < 0)
		return why(s, n, "cannot list %s: %s", s->wd.path, strerror(-n));
	dfd = open(s->wd.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < n; i++) {
		struct stat st;

		if (dfd >= 0 && s->nhits && !s->keep_final && s->last_snap[0] &&
		    (snap_workdir_is_claimed(s->last_snap)
			     ? strcmp(names[i], "perf.data") && !snap_workdir_is_claimed(names[i])
			     : strcmp(names[i], s->last_snap) > 0)) {
			snap_rmtree_at(dfd, names[i]);
			continue;
		}
		if (dfd >= 0 && fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && st.st_size == 0) {
			snap_rmtree_at(dfd, names[i]);
			continue;
		}
		/* what a killed perf left: perf script cannot read it ("data size
		 * field is 0"); not decoded, not offered for a later decode */
		if (perf_sig && dfd >= 0 && perfdata_unfinished(dfd, names[i])) {
			unfinished++;
			continue;
		}
		if (kept++ == 0)
			snprintf(s->data_path, sizeof(s->data_path), "%s/%s", s->wd.path, names[i]);
	}
	s->ndata = kept;
	if (kept == 1 && strcmp(strrchr(s->data_path, '/') + 1, "perf.data")) {
		if (dfd >= 0 &&
		    renameat(dfd, strrchr(s->data_path, '/') + 1, dfd, "perf.data") == 0)
			snprintf(s->data_path, sizeof(s->data_path), "%.*s/perf.data",
				 (int)(sizeof(s->data_path) - 16), s->wd.path);
	} else if (kept > 1) {
		snprintf(s->data_path, sizeof(s->data_path), "%s", s->wd.path);
	}
	if (dfd >= 0)
		close(dfd);
	snap_workdir_free_list(names, n);
	if (!kept && unfinished)
		return why(s, -SNAP_EPERF,
			   "perf record was killed before it finished its perf.data (it writes "
			   "the header last): nothing it recorded can be decoded");
	if (!kept)
		return why(s, -SNAP_EPERF, "perf wrote no data");
	if (unfinished)
		snap_warn("%d unfinished perf.data file%s left by the killed perf %s not decoded",
			  unfinished, unfinished > 1 ? "s" : "", unfinished > 1 ? "are" : "is");
	if (perf_sig && s->end == SNAP_END_PERF)
		snap_warn("perf wrote its data before it died: the trace ends where perf did, "
			  "%.1f s into the recording",
			  (double)s->recorded_ms / 1000);
	return 0;
}

int snap_session_finish(struct snap_session *s)
{
	int err, perf_sig;

	/* the run as the program saw it: not the time perf takes to stop */
	s->recorded_ms = s->start_ms ? snap_now_ms() - s->start_ms : 0;
	if (s->trig.nbps) {
		/* Hits not handled yet (the program exited right after one): the
		 * dump perf writes when it stops holds them, so keep that dump.
		 * -multi-snapshot keeps all of them, else the first. */
		struct snap_trigger_hit h;

		if (s->cfg.rec.multi_snapshot && s->nhits) {
			if (keep_pending(s) < 0)
				return why(s, -ENOMEM, "out of memory");
		} else if (snap_trigger_read(&s->trig, &h, 1) == 1 &&
			   (s->cfg.rec.multi_snapshot || !s->nhits)) {
			if (add_hits(s, &h, 1) < 0)
				return why(s, -ENOMEM, "out of memory");
			s->hits_after_snap++;
			snap_warn("trigger %s hit by tid %d as the recording ended",
				  s->trigger_name, (int)h.hit.tid);
			if (s->cfg.rec.multi_snapshot && keep_pending(s) < 0)
				return why(s, -ENOMEM, "out of memory");
		}
		/* hits after the last snapshot: their samples are in the dump perf
		 * writes when it stops, so keep that dump */
		if (s->hits_after_snap)
			s->keep_final = 1;
		if (s->cfg.rec.multi_snapshot)
			s->hits_lost = snap_trigger_unread(&s->trig);
	}
	/* Before perf stops: a breakpoint set to signal perf must not reach
	 * its pid once perf is reaped (and the pid free for reuse). */
	snap_trigger_fini(&s->trig);
	if (s->nhits > 1)
		qsort(s->hits, s->nhits, sizeof(*s->hits), cmp_hit_time);
	say_hits(s);
	if (s->cfg.trigger && !s->nhits)
		snap_warn("trigger %s never fired; the trace is %s %s",
			  s->trigger_name ? s->trigger_name : s->cfg.trigger,
			  !takes_snapshots(s) ? "the whole run, to" : "the snapshot taken at",
			  s->end == SNAP_END_SIGNAL ? "Ctrl-C" : "exit");
	if (s->recording && !s->snapshots && !s->cfg.rec.sampling &&
	    s->pa.when != SNAP_SNAP_NEVER) {
		err = take_snapshot(s, 0);
		if (err < 0)
			snap_warn("could not take the final snapshot");
	}
	if (s->perf.pid && !s->perf.reaped) {
		err = do_action(s, s->plan.stop);
		if (err < 0)
			snap_perf_signal(&s->perf, SIGINT);
		if (snap_perf_wait(&s->perf, PERF_STOP_MS) != 1) {
			snap_warn("perf did not stop; killing it");
			snap_perf_close(&s->perf);
		}
	}
	s->recording = 0;
	signals_close(s);
	if (s->perf.reaped && WIFEXITED(s->perf.status) && WEXITSTATUS(s->perf.status) != 0 &&
	    !(s->child && WEXITSTATUS(s->perf.status) == 143))
		return perf_failed(s, "failed");
	show_perf_log(s, 0);
	perf_sig = perf_foreign_signal(s);
	if (perf_sig)
		snap_log(SNAP_LOG_QUIET, "perf record was killed by signal %d (%s) %s%s", perf_sig,
			 strsignal(perf_sig),
			 s->end == SNAP_END_PERF ? "during the recording"
						 : "while it wrote its data",
			 perf_sig == SIGXFSZ
				 ? " (the file size limit, ulimit -f, stopped its writes)"
				 : "");
	else
		snap_warn("finished recording");
	return collect_data(s, perf_sig);
}

int snap_session_wait_child(struct snap_session *s)
{
	signals_close(s);
	if (!s->child)
		return 0;
	if (!s->child_reaped) {
		while (waitpid(s->child, &s->child_status, 0) < 0)
			if (errno != EINTR)
				return why(s, -errno, "waitpid: %s", strerror(errno));
		s->child_reaped = 1;
	}
	if (WIFEXITED(s->child_status))
		return WEXITSTATUS(s->child_status);
	if (WIFSIGNALED(s->child_status))
		return 128 + WTERMSIG(s->child_status);
	return 1;
}

void snap_session_close(struct snap_session *s)
{
	if (s->child && !s->child_reaped && s->end == SNAP_END_NONE) {
		/* An error before the program ran: it is still ptrace-stopped;
		 * SIGKILL ends it there, before any of its code runs. */
		kill(s->child, SIGKILL);
		while (waitpid(s->child, &s->child_status, 0) < 0 && errno == EINTR)
			;
		s->child_reaped = 1;
	}
	snap_perf_close(&s->perf);
	snap_trigger_fini(&s->trig);
	signals_close(s);
	if (s->log_fd >= 0)
		close(s->log_fd);
	s->log_fd = -1;
	snap_perfargs_fini(&s->pa);
	for (size_t i = 0; s->names && i < s->npids; i++)
		snap_free(s->names[i]);
	snap_free(s->names);
	snap_free(s->pids);
	snap_free(s->hits);
	snap_free(s->trigger_addrs);
	s->trigger_addrs = NULL;
	s->names = NULL;
	s->pids = NULL;
	s->hits = NULL;
	snap_workdir_close(&s->wd);
}
