/* SPDX-License-Identifier: MIT */
/*
 * both.c - the install test's program of both libraries, linked statically with libusertp.a
 * and libusertp-consumer.a together (both hold src/common's code): it records its own event
 * through a session of its own on itself, and reads the records back.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CREATE_TRACE_POINTS
#include "consumer-trace.h"

#include <usertp/consumer.h>

int main(void)
{
	struct usertp_session *s;
	struct usertp_record rec = USERTP_STRUCT_INIT(usertp_record);
	int ret = usertp_session_new(&s, NULL), got = 0;

	if (ret || (ret = usertp_session_enable(s, "consumer:*")) ||
	    (ret = usertp_session_attach_pid(s, getpid()))) {
		fprintf(stderr, "session: %s (%s)\n", strerror(-ret), ret && s ? usertp_session_error(s) : "");
		return 1;
	}
	for (int i = 0; i < 3; i++)
		trace_consumer_hello(i, "both");
	for (int tries = 0; got < 3 && tries < 100; tries++)
		while (usertp_session_next(s, &rec, 50) == 1)
			got++;
	usertp_session_free(s);
	if (got != 3) {
		fprintf(stderr, "both: %d records of 3\n", got);
		return 1;
	}
	printf("both: ok\n");
	return 0;
}
