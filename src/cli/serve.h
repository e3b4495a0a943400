/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Serving a trace to the Perfetto UI (snaptrace serve, -serve): an HTTP
 * server (libmicrohttpd, opened when serving: snap_serve_load) on 127.0.0.1
 * only, that answers GET /TOKEN/NAME
 * (TOKEN: 128 random bits in hex, new each run, printed only in the link)
 * with the file's bytes and the CORS header the public UI at
 * https://ui.perfetto.dev needs, until Ctrl-C. Anything else gets 404; a
 * Host header other than 127.0.0.1, localhost or [::1] (DNS rebinding) gets
 * 403; a connection of another local user than root, us and the user who
 * logged in is closed at once; one client address holds at most 16
 * connections, idle ones are closed after 15 s (docs/guarantees.md, "The
 * trace server"). Nothing is uploaded anywhere: the UI, running in the
 * user's browser, fetches the file from this machine (or through an SSH
 * tunnel to it). Port 9001 by default: the UI's content policy allows
 * http://127.0.0.1:9001, as Perfetto's own open_trace_in_ui script uses.
 */
#ifndef SNAP_CLI_SERVE_H
#define SNAP_CLI_SERVE_H

#include <stddef.h>

#define SNAP_SERVE_PORT	       9001
#define SNAP_SERVE_ORIGIN      "https://ui.perfetto.dev"
#define SNAP_SERVE_TOKEN_BYTES 16

/* Parses a -serve-port value: 0 (any free port) to 65535. Returns the port
 * or -1. */
int snap_serve_port_parse(const char *s);

/* Opens libmicrohttpd (SNAP_MHD_SONAME, from the build) and looks up the
 * functions serving uses: -serve checks it before anything is recorded or
 * decoded. Returns 0, or -1 after one line naming the package to install.
 * Linked instead, it cost every command ~1.5 ms (docs/design.md, "Start-up"). */
int snap_serve_load(const char *cmd);

/* The same, quiet (snaptrace doctor): 0 and the library's name in detail, or
 * -1 and why in detail; fix: the package to install. */
int snap_serve_probe(char *detail, size_t dlen, char *fix, size_t flen);

/* Serves path until SIGINT, SIGTERM or SIGHUP; prints the link and how to
 * stop. cmd names the command in messages. A path that is not a regular
 * file (a directory, a FIFO, a device) is refused; it is opened
 * non-blocking. Returns an exit status. */
int snap_serve(const char *cmd, const char *path, int port);

/* The same for the trace fd (owned: closed at the end; -1 or not a regular
 * file is refused), named path in the link: -serve serves the descriptor the
 * decode just wrote, never what the name leads to afterwards. */
int snap_serve_fd(const char *cmd, int fd, const char *path, int port);

/* The -share message: snaptrace has no upload (-share is refused). */
#define SNAP_SHARE_REFUSED                                                                         \
	"-share is not supported: snaptrace never uploads a trace; use -serve to open it in "      \
	"the Perfetto UI from this machine"

#endif
