// SPDX-License-Identifier: GPL-2.0
/* Serving a trace to the Perfetto UI over HTTP on 127.0.0.1. See serve.h. */
#include "cli/serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct served {
	int fd;		/* the trace, opened once: a later rename cannot swap it */
	uint64_t size;	/* its size when serving started */
	char path[512]; /* "/NAME" as requested (decoded) */
	unsigned long requests;
};

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
	return MHD_add_response_header(r, "Access-Control-Allow-Origin", SNAP_SERVE_ORIGIN) ==
				       MHD_YES &&
			       MHD_add_response_header(r, "Vary", "Origin") == MHD_YES &&
			       MHD_add_response_header(r, "Cache-Control", "no-cache") == MHD_YES
		       ? 0
		       : -1;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned int status, const char *text)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	add_cors(r);
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
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
	if (!strcmp(method, "OPTIONS")) { /* a CORS preflight */
		r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
		if (!r)
			return MHD_NO;
		add_cors(r);
		MHD_add_response_header(r, "Access-Control-Allow-Methods", "GET, HEAD, OPTIONS");
		MHD_add_response_header(r, "Access-Control-Allow-Headers", "*");
		ret = MHD_queue_response(c, MHD_HTTP_NO_CONTENT, r);
		MHD_destroy_response(r);
		return ret;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	if (strcmp(url, sv->path))
		return reply_text(c, MHD_HTTP_NOT_FOUND, "snaptrace serves one trace only\n");
	/* a response owns (and closes) its fd: each one reads a duplicate */
	fd = fcntl(sv->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of file descriptors\n");
	r = MHD_create_response_from_fd_at_offset64(sv->size, fd, 0);
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	add_cors(r);
	MHD_add_response_header(r, "Content-Type", "application/octet-stream");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
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

int snap_serve(const char *cmd, const char *path, int port)
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
	char enc[768];
	int sig = 0;

	name = name ? name + 1 : path;
	memset(&sv, 0, sizeof(sv));
	sv.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (sv.fd < 0 || fstat(sv.fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "snaptrace %s: cannot serve %s: %s\n", cmd, path,
			sv.fd < 0 || !S_ISREG(st.st_mode) ? strerror(sv.fd < 0 ? errno : EISDIR)
							  : strerror(errno));
		if (sv.fd >= 0)
			close(sv.fd);
		return 1;
	}
	sv.size = (uint64_t)st.st_size;
	url_encode(name, enc, sizeof(enc));
	snprintf(sv.path, sizeof(sv.path), "/%s", name);

	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)port);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* The server thread must not take the signals that stop it: block them
	 * before it starts (it inherits the mask), then wait for them here. */
	sigemptyset(&set);
	for (int i = 0; i < 3; i++)
		sigaddset(&set, stop_sigs[i]);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	/* a handler (not SIG_IGN, as a background job may have) keeps them pending */
	memset(&catch, 0, sizeof(catch));
	catch.sa_handler = on_stop_signal;
	for (int i = 0; i < 3; i++)
		sigaction(stop_sigs[i], &catch, &old_sig[i]);
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old_pipe);
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, (uint16_t)port, NULL,
			     NULL, on_request, &sv, MHD_OPTION_SOCK_ADDR, &addr,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)60, MHD_OPTION_END);
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
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	if (info)
		port = info->port;
	fprintf(stderr,
		"snaptrace: serving %s on http://127.0.0.1:%d/%s (this machine only; nothing "
		"is uploaded)\n"
		"snaptrace: open https://ui.perfetto.dev/#!/?url=http://127.0.0.1:%d/%s\n"
		"snaptrace: if this machine is remote, run on your computer: ssh -L "
		"%d:127.0.0.1:%d HOST (HOST: this machine), then open the link there\n"
		"snaptrace: serving until Ctrl-C\n",
		path, port, enc, port, enc, port, port);
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
	MHD_stop_daemon(d);
	close(sv.fd);
	sigaction(SIGPIPE, &old_pipe, NULL);
	for (int i = 0; i < 3; i++)
		sigaction(stop_sigs[i], &old_sig[i], NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	fprintf(stderr, "snaptrace: stopped serving (%s, %lu request%s)\n", strsignal(sig),
		sv.requests, sv.requests == 1 ? "" : "s");
	return 0;
}
