/* SPDX-License-Identifier: MIT */
/* follower.c - the install test's user of libusertp-consumer: a session, its tep handle. */
#include <stdio.h>
#include <string.h>

#include <traceevent/event-parse.h>
#include <usertp/consumer.h>

int main(void)
{
	struct usertp_session *s;
	int ret = usertp_session_new(&s, NULL);

	if (ret) {
		fprintf(stderr, "usertp_session_new: %s\n", strerror(-ret));
		return 1;
	}
	ret = usertp_session_enable(s, "jobs:*");
	if (ret || !usertp_session_tep(s) || tep_get_events_count(usertp_session_tep(s))) {
		fprintf(stderr, "enable: %d (%s)\n", ret, usertp_session_error(s));
		return 1;
	}
	usertp_session_free(s);
	printf("follower: ok\n");
	return 0;
}
