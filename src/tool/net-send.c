/* SPDX-License-Identifier: MIT */
/*
 * net-send.c - usertp record -N HOST:PORT: a finished trace.dat (version 6) sent to `trace-cmd
 * listen` in trace-cmd's protocol (version 3, over TCP), so that trace-cmd's own receiver
 * writes the file where it runs, with nothing of usertp there.
 *
 * The protocol, as trace-cmd 3.1.6 to 3.4 speak it (lib/trace-cmd/trace-msg.c,
 * tracecmd/trace-listen.c), from the client's side:
 *	the listener says "tracecmd"; the client "-1V3\0", the listener "V3\0"; the client the
 *	magic "766679\0\0", the listener "OK";
 *	messages: a header of three big-endian u32 (total size, command, size of the command's
 *	fixed part), that part, then data; 8192 bytes at most.  TINIT (CPUs, page size, option
 *	count, then the options as strings: "tcp" for TCP data connections), answered by RINIT
 *	(CPUs, then a port per CPU as decimal strings); SEND_DATA messages with the file's bytes
 *	before its CPU data (written by the listener as they come), FIN_DATA; then each CPU's
 *	pages on a TCP connection to its port; CLOSE.
 *	The listener then adds "flyrecord", the CPU table and the pages (tracecmd_write_cpu_data),
 *	with the text of its own tracefs trace_clock after the table when the options name one.
 *
 * Why only at the end: the listener waits at most 5 s for each message before FIN_DATA, and
 * the metadata (the threads' names, the exact counts in the CPUSTAT options) is complete only
 * when the recording is.  Why wait for each reader to close its connection: the listener stops
 * its readers a second after CLOSE, whatever they have not yet written to disk.  Why the
 * data only once the listener answers a message after FIN_DATA: a reader that ends sends it
 * SIGCHLD, and while it still reads the metadata (a poll() that trace-cmd does not restart
 * after a signal) that signal ends the metadata where it is, the file then without its
 * options (seen with 5 MB of kernel symbols, from a client slower than usual: ThreadSanitizer's
 * build).  Past FIN_DATA it waits for CLOSE and answers anything else with NOT_SUPP: so CONT
 * is sent, and its NOT_SUPP awaited (the listener logs "Message: cmd=11").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io.h"
#include "number.h"
#include "net-send.h"
#include "private/usertp-consumer-private.h"

#define GREETING "tracecmd"
#define V3_CPU "-1V3"			/* sent with its NUL */
#define V3_MAGIC "766679\0"		/* sent with both NULs: 8 bytes */
#define MSG_MAX 8192
#define MSG_HEADER 12
enum { MSG_CLOSE = 0, MSG_TINIT = 1, MSG_RINIT = 2, MSG_SEND_DATA = 3, MSG_FIN_DATA = 4,
       MSG_NOT_SUPP = 5, MSG_CONT = 11 };
/*
 * No step (a connection, a read, a write making no progress) waits longer than this; the
 * probe before the recording starts, less.
 */
#define STEP_TIMEOUT_S 30
#define PROBE_TIMEOUT_S 5
/* The listener opens each CPU's port in a child of its own: connecting may come first. */
#define PORT_RETRY_MS 5000

struct net_error {
	char *buf;
	size_t size;
};

static int __attribute__((format(printf, 2, 3))) failed(struct net_error *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->buf, e->size, fmt, ap);
	va_end(ap);
	return -1;
}

int usertp__listener_parse(const char *text, struct usertp__listener *l, char *err, size_t err_size)
{
	struct net_error e = { err, err_size };
	const char *colon = strrchr(text, ':'), *port = colon ? colon + 1 : text;
	size_t host_len = colon ? (size_t)(colon - text) : 0;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	uint64_t number;
	int ret;

	if (usertp__parse_u64(port, 1, 65535, &number))
		return failed(&e, "-N %s: HOST:PORT, [IPv6]:PORT or PORT, a port from 1 to 65535", text);
	if (colon && host_len >= 2 && text[0] == '[' && text[host_len - 1] == ']') {
		text++;
		host_len -= 2;
	}
	if (!host_len) {
		text = "localhost";
		host_len = strlen(text);
	}
	if (host_len >= sizeof(l->host))
		return failed(&e, "-N: a host name of %zu bytes", host_len);
	memcpy(l->host, text, host_len);
	l->host[host_len] = 0;
	snprintf(l->port, sizeof(l->port), "%u", (unsigned int)number);
	ret = getaddrinfo(l->host, l->port, &hints, &ai);
	if (ret)
		return failed(&e, "-N %s:%s: %s", l->host, l->port, gai_strerror(ret));
	freeaddrinfo(ai);
	return 0;
}

/* Connected to @host:@port, every later read and write bounded; -1 (@e) if not. */
static int connect_to(const char *host, const char *port, int timeout_s, bool retry_refused,
		      struct net_error *e)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *p;
	struct timeval tv = { .tv_sec = timeout_s };
	int fd = -1, err = 0, ret;

	ret = getaddrinfo(host, port, &hints, &ai);
	if (ret)
		return failed(e, "%s:%s: %s", host, port, gai_strerror(ret));
	for (int waited = 0; fd < 0; waited += 10) {
		for (p = ai; p && fd < 0; p = p->ai_next) {
			fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol);
			if (fd < 0) {
				err = errno;
				continue;
			}
			/* (SO_SNDTIMEO bounds connect() too.) */
			setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			if (connect(fd, p->ai_addr, p->ai_addrlen)) {
				err = errno;
				close(fd);
				fd = -1;
			}
		}
		if (fd >= 0 || !retry_refused || err != ECONNREFUSED || waited >= PORT_RETRY_MS)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
	freeaddrinfo(ai);
	if (fd < 0)
		return failed(e, "cannot connect to %s:%s: %s", host, port,
			      err == EINPROGRESS || err == EAGAIN ? "timed out" : strerror(err));
	return fd;
}

/* Exactly @len bytes into @buf; -1 (@e) on an error, the end, or the step timeout. */
static int read_exact(int fd, void *buf, size_t len, const char *what, struct net_error *e)
{
	for (size_t got = 0; got < len;) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return failed(e, "reading %s: %s", what,
				      !n ? "the listener closed the connection"
				      : errno == EAGAIN ? "no answer in time" : strerror(errno));
		got += (size_t)n;
	}
	return 0;
}

static int send_bytes(int fd, const void *buf, size_t len, const char *what, struct net_error *e)
{
	int ret = usertp__write_all(fd, buf, len, NULL);

	if (ret)
		return failed(e, "sending %s: %s", what,
			      ret == -EAGAIN ? "the listener took nothing for 30 s" : strerror(-ret));
	return 0;
}

static void put_be32(unsigned char *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static uint32_t get_be32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

/* A message: @cmd, its fixed part of @fixed_len bytes, then @data_len bytes. */
static int send_msg(int fd, uint32_t cmd, const void *fixed, size_t fixed_len, const void *data,
		    size_t data_len, struct net_error *e)
{
	unsigned char msg[MSG_MAX];

	put_be32(msg, (uint32_t)(MSG_HEADER + fixed_len + data_len));
	put_be32(msg + 4, cmd);
	put_be32(msg + 8, (uint32_t)fixed_len);
	memcpy(msg + MSG_HEADER, fixed, fixed_len);
	memcpy(msg + MSG_HEADER + fixed_len, data, data_len);
	return send_bytes(fd, msg, MSG_HEADER + fixed_len + data_len, "a message", e);
}

/* The listener's first words, "tracecmd".  -1 (@e) when the peer is not that listener. */
static int greeted(int fd, const char *where, struct net_error *e)
{
	char buf[8];

	if (read_exact(fd, buf, 8, "the listener's greeting", e))
		return -1;
	if (memcmp(buf, GREETING, 8))
		return failed(e, "%s is not trace-cmd listen (its first bytes: not \"" GREETING "\")",
			      where);
	return 0;
}

/* The greeting, then the version 3 handshake.  -1 (@e) when the peer is not that listener. */
static int handshake(int fd, const char *where, struct net_error *e)
{
	char buf[8];

	if (greeted(fd, where, e))
		return -1;
	if (send_bytes(fd, V3_CPU, sizeof(V3_CPU), "the protocol version", e) ||
	    read_exact(fd, buf, 3, "the protocol version", e))
		return -1;
	if (memcmp(buf, "V3", 3))
		return failed(e, "%s speaks only version 1 of trace-cmd's protocol (trace-cmd before "
			      "2.9): not supported", where);
	if (send_bytes(fd, V3_MAGIC, sizeof(V3_MAGIC), "the protocol's magic", e) ||
	    read_exact(fd, buf, 2, "the listener's OK", e))
		return -1;
	if (memcmp(buf, "OK", 2))
		return failed(e, "%s refused trace-cmd's protocol version 3", where);
	return 0;
}

int usertp__listener_probe(const struct usertp__listener *l, char *err, size_t err_size)
{
	struct net_error e = { err, err_size };
	int fd = connect_to(l->host, l->port, PROBE_TIMEOUT_S, false, &e), ret;
	char where[300];

	if (fd < 0)
		return -1;
	snprintf(where, sizeof(where), "%s:%s", l->host, l->port);
	ret = greeted(fd, where, &e);
	close(fd);
	return ret;
}

/*
 * A message from the listener into @msg (MSG_MAX + 1 bytes: its data NUL-terminated): its
 * command and the size of its fixed part.  Return: its total size, or -1 (@e).
 */
static int recv_msg(int fd, unsigned char *msg, const char *what, uint32_t *cmd, uint32_t *fixed,
		    struct net_error *e)
{
	uint32_t size;

	if (read_exact(fd, msg, MSG_HEADER, what, e))
		return -1;
	size = get_be32(msg);
	*cmd = get_be32(msg + 4);
	*fixed = get_be32(msg + 8);
	if (size < MSG_HEADER || size > MSG_MAX || *fixed > size - MSG_HEADER)
		return failed(e, "%s: a message of %u bytes", what, size);
	if (read_exact(fd, msg + MSG_HEADER, size - MSG_HEADER, what, e))
		return -1;
	msg[size] = 0;
	return (int)size;
}

/* The listener's NOT_SUPP to CONT: it has read the metadata to its FIN_DATA.  -1 (@e) if not. */
static int past_metadata(int fd, struct net_error *e)
{
	unsigned char msg[MSG_MAX + 1];
	uint32_t cmd, fixed;

	if (recv_msg(fd, msg, "the listener's answer after the metadata", &cmd, &fixed, e) < 0)
		return -1;
	if (cmd != MSG_NOT_SUPP)
		return failed(e, "the listener answered the metadata with message %u", cmd);
	return 0;
}

/* RINIT: a port per CPU, into @ports (@cpus of them).  -1 (@e) otherwise. */
static int read_ports(int fd, unsigned int cpus, unsigned int *ports, struct net_error *e)
{
	unsigned char msg[MSG_MAX + 1];
	uint32_t cmd, fixed;
	const char *p, *end;
	int size = recv_msg(fd, msg, "the listener's ports", &cmd, &fixed, e);

	if (size < 0)
		return -1;
	if (cmd != MSG_RINIT || fixed != 4)
		return failed(e, "the listener answered the start with message %u, not the ports%s",
			      cmd, cmd == MSG_NOT_SUPP ? " (\"not supported\")" : "");
	if (get_be32(msg + MSG_HEADER) != cpus)
		return failed(e, "the listener gave ports for %u CPUs, not %u",
			      get_be32(msg + MSG_HEADER), cpus);
	p = (const char *)msg + MSG_HEADER + 4;
	end = (const char *)msg + size;
	for (unsigned int i = 0; i < cpus; i++) {
		uint64_t v;

		if (p >= end || usertp__parse_u64(p, 1, 65535, &v))
			return failed(e, "the listener's port for CPU %u: not a port", i);
		ports[i] = (unsigned int)v;
		p += strlen(p) + 1;
	}
	return 0;
}

/* The bytes [@off, @off + @len) of @file_fd to @fd (sendfile, bounded by the socket's timeout). */
static int send_file_bytes(int fd, int file_fd, uint64_t off, uint64_t len, const char *what,
			   struct net_error *e)
{
	off_t at = (off_t)off;

	while (len) {
		ssize_t n = sendfile(fd, file_fd, &at, len > (1u << 30) ? (1u << 30) : len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return failed(e, "sending %s: %s", what,
				      !n ? "the file is shorter than its CPU table says"
				      : errno == EAGAIN ? "the listener took nothing for 30 s"
				      : strerror(errno));
		len -= (uint64_t)n;
	}
	return 0;
}

/* One CPU's pages on its own connection; returns once the listener's reader has closed it. */
static int send_cpu(const struct usertp__listener *l, unsigned int port, int file_fd, uint64_t off,
		    uint64_t len, unsigned int cpu, struct net_error *e)
{
	char port_text[8], what[64], byte;
	int fd, ret = 0;
	ssize_t n;

	snprintf(port_text, sizeof(port_text), "%u", port);
	snprintf(what, sizeof(what), "CPU %u's data", cpu);
	fd = connect_to(l->host, port_text, STEP_TIMEOUT_S, true, e);
	if (fd < 0)
		return -1;
	if (send_file_bytes(fd, file_fd, off, len, what, e) || shutdown(fd, SHUT_WR)) {
		close(fd);
		return -1;
	}
	/* The reader closes its end once it has read to the end and written it all. */
	while ((n = read(fd, &byte, 1)) < 0 && errno == EINTR)
		;
	if (n)
		ret = failed(e, "%s: the listener's reader did not finish (%s)", what,
			     n < 0 && errno == EAGAIN ? "30 s" : n < 0 ? strerror(errno) : "it answered");
	close(fd);
	return ret;
}

int usertp__listener_send(const struct usertp__listener *l, const char *path, char *err, size_t err_size)
{
	struct net_error e = { err, err_size };
	struct usertp__dat_input *in;
	unsigned char tinit[12], chunk[MSG_MAX - MSG_HEADER];
	unsigned int page_size, cpus, *ports = NULL;
	uint64_t head_len;
	char where[300];
	int fd = -1, file_fd = -1, ret = -1;

	snprintf(where, sizeof(where), "%s:%s", l->host, l->port);
	in = usertp__dat_read_open(path, err, err_size);
	if (!in)
		return -1;
	if (!usertp__dat_read_v6_layout(in, &head_len, &page_size)) {
		failed(&e, "%s: not a version 6 trace.dat with CPU data", path);
		goto out;
	}
	cpus = (unsigned int)usertp__dat_read_cpus(in);
	ports = calloc(cpus ? cpus : 1, sizeof(*ports));
	file_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!ports || file_fd < 0) {
		failed(&e, "%s: %s", path, strerror(ports ? errno : ENOMEM));
		goto out;
	}
	fd = connect_to(l->host, l->port, STEP_TIMEOUT_S, false, &e);
	if (fd < 0 || handshake(fd, where, &e))
		goto out;
	put_be32(tinit, cpus);
	put_be32(tinit + 4, page_size);
	put_be32(tinit + 8, 1);
	if (send_msg(fd, MSG_TINIT, tinit, sizeof(tinit), "tcp", 4, &e) ||
	    read_ports(fd, cpus, ports, &e))
		goto out;
	/* The metadata and the options, as they are in the file. */
	for (uint64_t at = 0; at < head_len;) {
		size_t n = head_len - at < sizeof(chunk) ? (size_t)(head_len - at) : sizeof(chunk);

		if (pread(file_fd, chunk, n, (off_t)at) != (ssize_t)n) {
			failed(&e, "%s: cannot read it back", path);
			goto out;
		}
		if (send_msg(fd, MSG_SEND_DATA, NULL, 0, chunk, n, &e))
			goto out;
		at += n;
	}
	if (send_msg(fd, MSG_FIN_DATA, NULL, 0, NULL, 0, &e) ||
	    send_msg(fd, MSG_CONT, NULL, 0, NULL, 0, &e) || past_metadata(fd, &e))
		goto out;
	for (unsigned int i = 0; i < cpus; i++) {
		uint64_t off, size;

		usertp__dat_read_cpu_bytes(in, (int)i, &off, &size);
		if (send_cpu(l, ports[i], file_fd, off, size, (unsigned int)usertp__dat_read_cpu_id(in, (int)i),
			     &e))
			goto out;
	}
	if (send_msg(fd, MSG_CLOSE, NULL, 0, NULL, 0, &e))
		goto out;
	/*
	 * The listener answers CLOSE (CLOSE_RESP), puts the file together, then closes: about
	 * 2 s (its own sleeps).  Its answer read and left, up to that end.
	 */
	for (size_t answered = 0; answered < MSG_MAX;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		answered += (size_t)n;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (file_fd >= 0)
		close(file_fd);
	free(ports);
	usertp__dat_read_close(in);
	return ret;
}
