/* SPDX-License-Identifier: MIT */
/*
 * ctl-connect.c - a bare control-protocol client for tests: it looks for nothing and checks
 * nothing, so a test can knock on an endpoint as another user would, or as a hostile peer.
 *
 *	ctl-connect SOCKET REQUEST		one framed request; the reply on stdout
 *	ctl-connect SOCKET --raw HEX [SECONDS]	these bytes as they are (no framing), then wait
 *						SECONDS (default 0) before reading a reply
 *	ctl-connect SOCKET --hold N SECONDS	N connections held open, SECONDS long; the first
 *						reply of each (or "none") on stdout
 *
 * Exit: 0 when a reply came, 3 when the endpoint closed the connection without one, 1 for
 * other failures.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl-proto.h"

static char reply[1 << 16];

/* Print the reply on @sock (or why there is none). */
static int show_reply(int sock, int send_error)
{
	long n = usertp_ctl_recv(sock, reply, sizeof(reply), NULL, 5000);

	if (n > 0) {
		printf("%s\n", reply);
		return 0;
	}
	if (n == 0 || n == -EPIPE || n == -ECONNRESET) {
		printf("closed\n");
		return 3;
	}
	fprintf(stderr, "no reply: %s\n", strerror((int)-(n ? n : send_error)));
	return 1;
}

static int send_raw(int sock, const char *hex)
{
	size_t len = strlen(hex) / 2;
	unsigned char *bytes = malloc(len + 1);

	for (size_t i = 0; i < len; i++) {
		unsigned int v;

		sscanf(hex + 2 * i, "%2x", &v);
		bytes[i] = (unsigned char)v;
	}
	len = (size_t)write(sock, bytes, len);
	free(bytes);
	return 0;
}

int main(int argc, char **argv)
{
	int sock, ret;

	if (argc < 3) {
		fprintf(stderr, "usage: ctl-connect SOCKET REQUEST | --raw HEX [S] | --hold N S\n");
		return 2;
	}
	if (!strcmp(argv[2], "--hold") && argc == 5) {
		int n = atoi(argv[3]), socks[64];

		for (int i = 0; i < n && i < 64; i++) {
			socks[i] = usertp_ctl_connect(argv[1]);
			if (socks[i] >= 0)
				usertp_ctl_send(socks[i], "hello", 5, -1);
		}
		for (int i = 0; i < n && i < 64; i++) {
			long r = socks[i] >= 0 ? usertp_ctl_recv(socks[i], reply, sizeof(reply), NULL, 5000) : -1;

			printf("%s\n", r > 0 ? reply : "none");
		}
		sleep((unsigned int)atoi(argv[4]));
		return 0;
	}
	sock = usertp_ctl_connect(argv[1]);
	if (sock < 0) {
		fprintf(stderr, "connect %s: %s\n", argv[1], strerror(-sock));
		return 1;
	}
	if (!strcmp(argv[2], "--raw") && argc >= 4) {
		send_raw(sock, argv[3]);
		if (argc > 4)
			sleep((unsigned int)atoi(argv[4]));
		return show_reply(sock, 0);
	}
	/* A refusal may come before the request is even sent: read the reply whatever. */
	ret = usertp_ctl_send(sock, argv[2], strlen(argv[2]), -1);
	return show_reply(sock, ret);
}
