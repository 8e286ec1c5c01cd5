/* SPDX-License-Identifier: MIT */
/*
 * test-ctl-proto - the control protocol's codec (src/common/ctl-proto.c) on its own: every
 * message type encoded with every key and decoded back (round trip), keys out of range,
 * missing and unknown, and garbage decoded without a crash or a read past the message.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl-proto.h"
#include "../harness.h"

/* A value of key @k that its table takes (texts without spaces, numbers in range). */
static void set_key(struct usertp__ctl_msg *m, enum usertp__ctl_key k)
{
	switch (k) {
	case USERTP_CTL_KEY_CLOCK:
		usertp__ctl_set_text(m, k, "x86-tsc");
		break;
	case USERTP_CTL_KEY_COMM:
		usertp__ctl_set_text(m, k, "worker-pool");
		break;
	case USERTP_CTL_KEY_RECORDER:
		usertp__ctl_set_text(m, k, "/run/user/0/usertp/rec.sock");
		break;
	case USERTP_CTL_KEY_NAME:
		usertp__ctl_set_text(m, k, "jobs:job_done");
		break;
	case USERTP_CTL_KEY_EVENTS:
		usertp__ctl_set_text(m, k, "jobs:*,!jobs:job_done");
		break;
	case USERTP_CTL_KEY_PIDS:
	case USERTP_CTL_KEY_NOTRACE_PIDS:
		usertp__ctl_set_text(m, k, "1,42,1073741823");
		break;
	case USERTP_CTL_KEY_OVERWRITE:
	case USERTP_CTL_KEY_TRACING:
	case USERTP_CTL_KEY_EVENT_FORK:
	case USERTP_CTL_KEY_AT_START:
	case USERTP_CTL_KEY_AGAIN:
		usertp__ctl_set_num(m, k, 1);
		break;
	default:
		usertp__ctl_set_num(m, k, 7 + k);
		break;
	}
}

static void round_trip(void)
{
	for (unsigned int t = 0; t < USERTP_CTL_NR_TYPES; t++) {
		struct usertp__ctl_msg m = { .type = (enum usertp__ctl_type)t }, back;
		const char *why;
		char *text = NULL;
		long len;

		for (unsigned int k = 0; k < USERTP_CTL_NR_KEYS; k++)
			set_key(&m, (enum usertp__ctl_key)k);
		m.body = "line one\nline two\n";
		if (t != USERTP_CTL_MSG_ERROR)
			m.arg = "sys:event";
		else
			m.arg = "EINVAL what went wrong";
		len = usertp__ctl_encode(&m, &text);
		CHECK(len > 0 && text && strlen(text) == (size_t)len, "%s: encode %ld",
		      usertp__ctl_word(m.type), len);
		if (len <= 0)
			continue;
		CHECK(!strncmp(text, usertp__ctl_word(m.type), strlen(usertp__ctl_word(m.type))),
		      "%s: its word: %s", usertp__ctl_word(m.type), text);
		CHECK(!usertp__ctl_decode(text, &back, &why), "%s: decode: %s", usertp__ctl_word(m.type),
		      why ? why : "");
		CHECK(back.type == m.type, "%s: type %d", usertp__ctl_word(m.type), back.type);
		CHECK(!strcmp(back.body, m.body), "%s: body '%s'", usertp__ctl_word(m.type), back.body);
		CHECK(back.arg && !strncmp(back.arg, m.arg, strlen(back.arg)), "%s: arg '%s'",
		      usertp__ctl_word(m.type), back.arg ? back.arg : "(none)");
		/* Each key the type carries comes back as it was; the others are not sent. */
		for (unsigned int k = 0; k < USERTP_CTL_NR_KEYS && t != USERTP_CTL_MSG_ERROR; k++) {
			if (!usertp__ctl_has(&back, (enum usertp__ctl_key)k))
				continue;
			if (back.text[k])
				CHECK(!strcmp(back.text[k], m.text[k]), "%s: key %u '%s'",
				      usertp__ctl_word(m.type), k, back.text[k]);
			else
				CHECK(back.num[k] == m.num[k], "%s: key %u %llu", usertp__ctl_word(m.type),
				      k, (unsigned long long)back.num[k]);
		}
		free(text);
	}
}

/* decode(@text) must fail, with a reason that holds @why. */
static void refused(const char *text, const char *why_part)
{
	struct usertp__ctl_msg m;
	char *copy = strdup(text);
	const char *why = NULL;
	int ret = copy ? usertp__ctl_decode(copy, &m, &why) : 0;

	CHECK(ret == -EINVAL && why && strstr(why, why_part), "'%s': %d, '%s'", text, ret,
	      why ? why : "(no reason)");
	free(copy);
}

static void errors(void)
{
	struct usertp__ctl_msg m;
	char newer[] = "hello future=1 pid=5";
	const char *why;
	char *text;

	refused("nonsense", "unknown request 'nonsense'");
	refused("", "unknown request");
	refused("start kb=1", "events= is missing");
	refused("start events=a kb=0", "kb= is not a number from 1 to");
	refused("start events=jobs:*,sys:ev:x kb=8", "events= is not a list of event specs");
	refused("start events=!! kb=8", "events= is not a list of event specs");
	refused("start events=a kb=99999999999999", "kb= is not a number");
	refused("start events=a kb=12abc", "kb= is not a number");
	refused("start events=a overwrite=2", "overwrite= is not 0 or 1");
	refused("start events=a pids=1,x", "pids= is not a list of pids");
	refused("start events=a pids=1,1073741824", "pids= is not a list of pids");
	refused("start events=a clock=", "clock= is not 1 to 15 characters");
	refused("format id=0 name=a:b", "id= is not a number from 1 to 65535");
	refused("join comm=x", "pid= is missing");
	/* A key of a newer peer, or of another message, is ignored. */
	CHECK(!usertp__ctl_decode(newer, &m, &why) && m.type == USERTP_CTL_MSG_HELLO &&
	      !usertp__ctl_has(&m, USERTP_CTL_KEY_PID), "keys hello does not take: %s",
	      why ? why : "");
	/* Texts with spaces or line breaks are not encoded (but the comm's spaces). */
	m = (struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_SET };
	usertp__ctl_set_text(&m, USERTP_CTL_KEY_EVENTS, "a b");
	CHECK(usertp__ctl_encode(&m, &text) == -EINVAL, "a space in events= encoded");
	m = (struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_JOIN };
	usertp__ctl_set_num(&m, USERTP_CTL_KEY_PID, 3);
	usertp__ctl_set_text(&m, USERTP_CTL_KEY_COMM, "my prog");
	CHECK(usertp__ctl_encode(&m, &text) > 0 && strstr(text, "comm=my_prog"), "a comm's space");
	free(text);
	/* An error reply: its errno's name and the first line of the reason; the rest its body. */
	CHECK(usertp__ctl_encode_error(-ENOENT, "no event a:b\nline two\n", &text) > 0 &&
	      !strcmp(text, "error ENOENT no event a:b\nline two\n"), "an error: '%s'", text);
	CHECK(!usertp__ctl_decode(text, &m, &why) && m.type == USERTP_CTL_MSG_ERROR &&
	      !strcmp(m.arg, "ENOENT no event a:b") && !strcmp(m.body, "line two\n"),
	      "an error decoded");
	free(text);
	CHECK(usertp__ctl_encode_error(-EBUSY, NULL, &text) > 0 &&
	      !strcmp(text, "error EBUSY Device or resource busy\n"), "strerror: '%s'", text);
	free(text);
	CHECK(!strcmp(usertp__ctl_errno_name(-EBUSY), "EBUSY") &&
	      usertp__ctl_errno_of("EBUSY", 5) == -EBUSY && usertp__ctl_errno_of("EXYZ", 4) == 0,
	      "errno names");
}

/* Garbage, and every byte of valid messages changed: decoded or refused, nothing else. */
static void garbage(void)
{
	static const char *const valid[] = {
		"start events=jobs:* kb=64 overwrite=0 clock=mono tracing=1 recorder=/x pids=1,2 "
		"event_fork=1 at_start=1\nspec filter\n",
		"format id=3 name=jobs:job_done\nname: job_done\n",
		"ok pid=1 ppid=0 uid=0 cpus=2 version=3 comm=a size=4096\n",
		"error EINVAL bad\nmore\n",
	};
	static const char alphabet[] = " =\n0129-,:akx";
	uint32_t seed = 99;
	char buf[512];

	for (size_t v = 0; v < sizeof(valid) / sizeof(valid[0]); v++)
		for (size_t at = 0; at < strlen(valid[v]); at++)
			for (size_t a = 0; a < sizeof(alphabet) - 1; a++) {
				struct usertp__ctl_msg m;
				const char *why;

				snprintf(buf, sizeof(buf), "%s", valid[v]);
				buf[at] = alphabet[a];
				if (usertp__ctl_decode(buf, &m, &why))
					CHECK(why != NULL, "refused without a reason");
			}
	for (unsigned int round = 0; round < 20000; round++) {
		struct usertp__ctl_msg m;
		const char *why;
		size_t len;

		seed = seed * 1103515245u + 12345u;
		len = (seed >> 8) % (sizeof(buf) - 1);
		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			buf[i] = (seed >> 16) % 3 ? alphabet[(seed >> 20) % (sizeof(alphabet) - 1)]
						  : (char)(1 + (seed >> 12) % 255);
		}
		buf[len] = 0;
		if (usertp__ctl_decode(buf, &m, &why))
			CHECK(why != NULL, "refused without a reason");
	}
}

int main(void)
{
	round_trip();
	errors();
	garbage();
	return harness_done();
}
