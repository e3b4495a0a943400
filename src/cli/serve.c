// SPDX-License-Identifier: GPL-2.0
/* Serving a trace to the Perfetto UI over HTTP on 127.0.0.1. See serve.h. */
#include "cli/serve.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"
#include "util/esc.h"
#include "util/file.h"

/* Connections held at once by one client address, and the seconds an idle
 * one is kept: 1100 half-sent requests must not deny the server to the UI. */
#define SERVE_PER_IP   16
#define SERVE_IDLE_SEC 15

struct served {
	int fd;		/* the trace, opened once: a later rename cannot swap it */
	uint64_t size;	/* its size when serving started */
	char path[600]; /* "/TOKEN/NAME" as requested (decoded) */
	unsigned long requests, refused, foreign;
	uid_t users[4]; /* whose connections are served (peer_allowed) */
	size_t nusers;
	_Atomic unsigned port; /* ours (0 until known: set after the server thread starts) */
};

/* libmicrohttpd is opened only when serving (snap_serve_load): linked, it and
 * gnutls, nettle, p11-kit... cost every command ~1.5 ms of start-up
 * (docs/design.md, "Start-up"). Its header checks the prototypes (the table's
 * types are its functions'); SNAP_MHD_SONAME is the library the build found
 * (Makefile). */
#ifndef SNAP_MHD_SONAME
#define SNAP_MHD_SONAME "libmicrohttpd.so.12"
#endif
#define MHD_FUNCS(X)                                                                               \
	X(MHD_start_daemon)                                                                        \
	X(MHD_stop_daemon)                                                                         \
	X(MHD_get_daemon_info)                                                                     \
	X(MHD_lookup_connection_value)                                                             \
	X(MHD_create_response_from_buffer)                                                         \
	X(MHD_create_response_from_fd_at_offset64)                                                 \
	X(MHD_add_response_header)                                                                 \
	X(MHD_queue_response)                                                                      \
	X(MHD_destroy_response)
#define MHD_MEMBER(f) __typeof__(f) *f;
static struct {
	MHD_FUNCS(MHD_MEMBER)
} mhd;
#undef MHD_MEMBER

/* The library's name: SNAPTRACE_TEST_MHD_LIB replaces it, for the tests of a
 * missing or wrong library only (tests/serve). */
static const char *mhd_name(void)
{
	const char *env = getenv("SNAPTRACE_TEST_MHD_LIB");

	return env && *env ? env : SNAP_MHD_SONAME;
}

int snap_serve_probe(char *detail, size_t dlen, char *fix, size_t flen)
{
	static int loaded;
	const char *name = mhd_name();
	const char *so = strstr(SNAP_MHD_SONAME, ".so.");
	void *h;

	/* the Debian package: libmicrohttpd.so.12 is in libmicrohttpd12 */
	snprintf(fix, flen, "sudo apt-get install %.*s%s", so ? (int)(so - SNAP_MHD_SONAME) : 0,
		 SNAP_MHD_SONAME, so ? so + 4 : SNAP_MHD_SONAME);
	snprintf(detail, dlen, "%s", name);
	if (loaded)
		return 0;
	h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(detail, dlen, "%s", dlerror());
		return -1;
	}
#define MHD_LOOKUP(f)                                                                              \
	if (!(mhd.f = (__typeof__(mhd.f))dlsym(h, #f))) {                                          \
		snprintf(detail, dlen, "%s has no %s: not libmicrohttpd, or too old", name, #f);   \
		dlclose(h);                                                                        \
		return -1;                                                                         \
	}
	MHD_FUNCS(MHD_LOOKUP)
#undef MHD_LOOKUP
	loaded = 1; /* kept open until exit */
	return 0;
}

int snap_serve_load(const char *cmd)
{
	char detail[512], fix[128];

	if (snap_serve_probe(detail, sizeof(detail), fix, sizeof(fix)) == 0)
		return 0;
	fprintf(stderr, "snaptrace %s: serving needs libmicrohttpd (%s); install it: %s\n", cmd,
		detail, fix);
	return -1;
}

int snap_serve_port_parse(const char *s)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > 65535)
		return -1;
	return (int)v;
}

static int add_cors(struct MHD_Response *r)
{
	return mhd.MHD_add_response_header(r, "Access-Control-Allow-Origin", SNAP_SERVE_ORIGIN) ==
				       MHD_YES &&
			       mhd.MHD_add_response_header(r, "Vary", "Origin") == MHD_YES &&
			       mhd.MHD_add_response_header(r, "Cache-Control", "no-cache") ==
				       MHD_YES
		       ? 0
		       : -1;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned int status, const char *text)
{
	struct MHD_Response *r = mhd.MHD_create_response_from_buffer(strlen(text), (void *)text,
								     MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	add_cors(r);
	mhd.MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	ret = mhd.MHD_queue_response(c, status, r);
	mhd.MHD_destroy_response(r);
	return ret;
}

/* 1 if the Host header names this machine's loopback: 127.0.0.1, localhost or
 * [::1], with any port (ssh -L may forward another one). Anything else is a
 * browser led here by DNS rebinding (docs/guarantees.md). */
static int host_ok(const char *host)
{
	static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};

	if (!host)
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);
		const char *p = host + n;

		if (strncasecmp(host, names[i], n))
			continue;
		if (!*p)
			return 1;
		if (*p++ != ':' || !*p)
			return 0;
		while (*p >= '0' && *p <= '9')
			p++;
		return !*p;
	}
	return 0;
}

/* The owner of the local TCP socket that connected from peer to our port
 * (0: any), from /proc/net/tcp (its addresses as the kernel prints them: the
 * raw 32 bits, the port in host order). 0 with *uid, or -ENOENT. */
static int peer_uid(const struct sockaddr_in *peer, uint16_t port, uid_t *uid)
{
	FILE *f = fopen("/proc/net/tcp", "re");
	char line[512];
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		unsigned la, lp, ra, rp, st, u;

		if (sscanf(line, " %*u: %8X:%4X %8X:%4X %2X %*s %*s %*s %u", &la, &lp, &ra, &rp,
			   &st, &u) == 6 &&
		    la == peer->sin_addr.s_addr && lp == ntohs(peer->sin_port) &&
		    (!port || rp == port)) {
			*uid = (uid_t)u;
			err = 0;
		}
	}
	fclose(f);
	return err;
}

/* Accepts a connection only from the users the trace is for: root, us, and
 * the user who logged in (sudo's SUDO_UID, the audit login uid: a browser or
 * an ssh -L tunnel of theirs). Another local user's connection is closed at
 * once: it can neither hold the server's connections (every client is on
 * 127.0.0.1, and one address holds 16) nor try tokens. A socket not found
 * (gone already, no /proc) is let through to the token check. */
static enum MHD_Result peer_allowed(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct served *sv = cls;
	uid_t uid;

	if (addr->sa_family != AF_INET || len < (socklen_t)sizeof(struct sockaddr_in) ||
	    peer_uid((const struct sockaddr_in *)addr, (uint16_t)atomic_load(&sv->port), &uid) < 0)
		return MHD_YES;
	for (size_t i = 0; i < sv->nusers; i++)
		if (sv->users[i] == uid)
			return MHD_YES;
	sv->foreign++;
	return MHD_NO;
}

/* Fills sv->users (see peer_allowed). */
static void allowed_users(struct served *sv)
{
	const char *sudo = getenv("SUDO_UID");
	char buf[32], *end;
	unsigned long v;

	sv->users[sv->nusers++] = 0;
	sv->users[sv->nusers++] = geteuid();
	if (sudo && *sudo) {
		v = strtoul(sudo, &end, 10);
		if (!*end && v < (unsigned long)(uid_t)-1)
			sv->users[sv->nusers++] = (uid_t)v;
	}
	if (snap_read_small("/proc/self/loginuid", buf, sizeof(buf)) > 0) {
		v = strtoul(buf, &end, 10);
		if ((!*end || *end == '\n') && v < (unsigned long)(uid_t)-1)
			sv->users[sv->nusers++] = (uid_t)v;
	}
}

/* 1 if the request's path is the link's: compared in constant time, so that
 * the answer's timing says nothing of how much of a guessed token matched. */
static int same_path(const char *url, const char *path)
{
	size_t n = strlen(path);
	unsigned char d = 0;

	if (strlen(url) != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(url[i] ^ path[i]);
	return d == 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **state)
{
	struct served *sv = cls;
	struct MHD_Response *r;
	enum MHD_Result ret;
	int fd;

	(void)version;
	(void)upload;
	(void)upload_size;
	(void)state;
	if (!host_ok(mhd.MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST))) {
		sv->refused++;
		return reply_text(c, MHD_HTTP_FORBIDDEN,
				  "snaptrace serves 127.0.0.1, localhost and [::1] only\n");
	}
	if (!same_path(url, sv->path)) { /* without the token: nothing */
		sv->refused++;
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
	}
	if (!strcmp(method, "OPTIONS")) { /* a CORS preflight */
		r = mhd.MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
		if (!r)
			return MHD_NO;
		add_cors(r);
		mhd.MHD_add_response_header(r, "Access-Control-Allow-Methods",
					    "GET, HEAD, OPTIONS");
		mhd.MHD_add_response_header(r, "Access-Control-Allow-Headers", "*");
		ret = mhd.MHD_queue_response(c, MHD_HTTP_NO_CONTENT, r);
		mhd.MHD_destroy_response(r);
		return ret;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	/* a response owns (and closes) its fd: each one reads a duplicate */
	fd = fcntl(sv->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of file descriptors\n");
	r = mhd.MHD_create_response_from_fd_at_offset64(sv->size, fd, 0);
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	add_cors(r);
	mhd.MHD_add_response_header(r, "Content-Type", "application/octet-stream");
	ret = mhd.MHD_queue_response(c, MHD_HTTP_OK, r);
	mhd.MHD_destroy_response(r);
	sv->requests++;
	return ret;
}

/* Percent-encodes name for a URL path segment. */
static void url_encode(const char *name, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)name; *p && n + 4 < size; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p)) {
			out[n++] = (char)*p;
		} else {
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	out[n] = '\0';
}

static void on_stop_signal(int sig)
{
	(void)sig; /* never runs: the signals are blocked and taken by sigwait */
}

/* A random token of SNAP_SERVE_TOKEN_BYTES bytes as hex into out (2 * bytes
 * + 1). Returns 0 or -errno (no randomness: nothing is served). */
static int make_token(char *out)
{
	unsigned char r[SNAP_SERVE_TOKEN_BYTES];
	size_t got = 0;

	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
	return 0;
}

int snap_serve(const char *cmd, const char *path, int port)
{
	struct stat st;
	char shown[512];
	int fd;

	if (snap_serve_load(cmd) < 0)
		return 1;
	/* typed before it is opened: a device under the name (another user's link
	 * in /tmp) is never opened */
	fd = snap_open_regular(path);
	snap_esc_str(shown, sizeof(shown), path, strlen(path), 0);
	if (fd == -SNAP_ENOTREG && stat(path, &st) == 0) {
		fprintf(stderr, "snaptrace %s: cannot serve %s: %s\n", cmd, shown,
			S_ISDIR(st.st_mode) ? "is a directory"
			: S_ISFIFO(st.st_mode)
				? "is a FIFO (serve a trace file)"
				: "not a regular file (a device, a socket: serve a trace file)");
		return 1;
	}
	if (fd < 0) {
		fprintf(stderr, "snaptrace %s: cannot serve %s: %s\n", cmd, shown,
			snap_strerror(fd));
		return 1;
	}
	return snap_serve_fd(cmd, fd, path, port);
}

int snap_serve_fd(const char *cmd, int fd, const char *path, int port)
{
	struct served sv;
	struct sockaddr_in addr;
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info;
	struct sigaction ign, old_pipe, catch, old_sig[3];
	static const int stop_sigs[3] = {SIGINT, SIGTERM, SIGHUP};
	struct stat st;
	sigset_t set, old;
	const char *name = strrchr(path, '/');
	char enc[768], token[2 * SNAP_SERVE_TOKEN_BYTES + 1], shown[512];
	int sig = 0, err;

	name = name ? name + 1 : path;
	if (snap_serve_load(cmd) < 0) {
		if (fd >= 0)
			close(fd);
		return 1;
	}
	snap_esc_str(shown, sizeof(shown), path, strlen(path), 0);
	memset(&sv, 0, sizeof(sv));
	sv.fd = fd;
	atomic_init(&sv.port, (unsigned)port);
	allowed_users(&sv);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "snaptrace %s: cannot serve %s: %s\n", cmd, shown,
			"not a regular file (written in place: a device or a FIFO)");
		if (fd >= 0)
			close(fd);
		return 1;
	}
	err = make_token(token);
	if (err < 0) {
		fprintf(stderr, "snaptrace %s: cannot serve %s: no random token: %s\n", cmd, shown,
			strerror(-err));
		close(fd);
		return 1;
	}
	sv.size = (uint64_t)st.st_size;
	url_encode(name, enc, sizeof(enc));
	snprintf(sv.path, sizeof(sv.path), "/%s/%s", token, name);

	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)port);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* The server thread must not take the signals that stop it: block them
	 * before it starts (it inherits the mask), then wait for them here. A
	 * SIGHUP snaptrace was started ignoring (nohup) stays ignored, as in the
	 * decode (docs/guarantees.md, Signals): it does not stop the server. */
	sigemptyset(&set);
	memset(&catch, 0, sizeof(catch));
	catch.sa_handler = on_stop_signal;
	for (int i = 0; i < 3; i++) {
		sigaction(stop_sigs[i], NULL, &old_sig[i]);
		if (stop_sigs[i] == SIGHUP && !(old_sig[i].sa_flags & SA_SIGINFO) &&
		    old_sig[i].sa_handler == SIG_IGN)
			continue;
		sigaddset(&set, stop_sigs[i]);
		/* a handler (not SIG_IGN, as a background job may have for SIGINT)
		 * keeps them pending */
		sigaction(stop_sigs[i], &catch, NULL);
	}
	pthread_sigmask(SIG_BLOCK, &set, &old);
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old_pipe);
	d = mhd.MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, (uint16_t)port,
				 peer_allowed, &sv, on_request, &sv, MHD_OPTION_SOCK_ADDR, &addr,
				 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)SERVE_IDLE_SEC,
				 MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)SERVE_PER_IP,
				 MHD_OPTION_END);
	if (!d) {
		fprintf(stderr,
			"snaptrace %s: cannot serve on 127.0.0.1:%d (is the port in use? pick "
			"another with -serve-port N)\n",
			cmd, port);
		close(sv.fd);
		sigaction(SIGPIPE, &old_pipe, NULL);
		for (int i = 0; i < 3; i++)
			sigaction(stop_sigs[i], &old_sig[i], NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return 1;
	}
	info = mhd.MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	if (info)
		port = info->port;
	atomic_store(&sv.port, (unsigned)port); /* (-serve-port 0: known now) */
	fprintf(stderr,
		"snaptrace: serving %s on http://127.0.0.1:%d/%s/%s (this machine only; nothing "
		"is uploaded; the link's random part is its password)\n"
		"snaptrace: open https://ui.perfetto.dev/#!/?url=http://127.0.0.1:%d/%s/%s\n"
		"snaptrace: if this machine is remote, run on your computer: ssh -L "
		"%d:127.0.0.1:%d HOST (HOST: this machine), then open the link there\n"
		"snaptrace: serving until Ctrl-C\n",
		shown, port, token, enc, port, token, enc, port, port);
	if (port != SNAP_SERVE_PORT) /* docs/compat.md, "Opening the trace" */
		fprintf(stderr,
			"snaptrace: note: the public UI (ui.perfetto.dev) fetches traces only from "
			"port %d (its content security policy), so this link works with a Perfetto "
			"UI of your own; for the public one use -serve-port %d, or forward: ssh -L "
			"%d:127.0.0.1:%d HOST and open the link with port %d\n",
			SNAP_SERVE_PORT, SNAP_SERVE_PORT, SNAP_SERVE_PORT, port, SNAP_SERVE_PORT);
	fflush(stderr);
	while (sigwait(&set, &sig) != 0)
		;
	mhd.MHD_stop_daemon(d);
	close(sv.fd);
	sigaction(SIGPIPE, &old_pipe, NULL);
	for (int i = 0; i < 3; i++)
		sigaction(stop_sigs[i], &old_sig[i], NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	fprintf(stderr, "snaptrace: stopped serving (%s, %lu request%s", strsignal(sig),
		sv.requests, sv.requests == 1 ? "" : "s");
	if (sv.refused)
		fprintf(stderr, "; %lu refused: no token or a foreign Host", sv.refused);
	if (sv.foreign)
		fprintf(stderr, "; %lu connection%s of other users closed", sv.foreign,
			sv.foreign == 1 ? "" : "s");
	fputs(")\n", stderr);
	return 0;
}
