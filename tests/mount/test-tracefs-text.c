/* SPDX-License-Identifier: MIT */
/*
 * test-tracefs-text - the rules of tracefs's files (src/mount/tracefs-text.c) against this
 * machine's kernel, in a private instance (root; the comparisons are skipped, exit 77, where
 * tracefs cannot be written):
 *
 *   1. numbers (§0): each write to tracing_on taken or refused as the rule says, with the
 *      same errno, and the value it reads back;
 *   2. set_event (§2): each single write() from a known state gives the same return value
 *      (bytes taken or errno) and the same set_event contents, in the same order, as the
 *      rule applied to the kernel's available_events;
 *   3. current_tracer (§15): each write taken or refused alike;
 *   4. buffer_size_kb (§9): the size read back after each write.
 *
 * Without tracefs the rules are still checked against the values docs/tracefs.md gives.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracefs-text.h"

#include "../harness.h"

#define TRACEFS "/sys/kernel/tracing"

static char inst[256];

static const struct {
	const char *write;
	int err;	/* 0, or the negative errno */
	uint64_t value;
} numbers[] = {
	{ "1", 0, 1 },	   { "+1", 0, 1 },    { "01", 0, 1 },	     { "2", 0, 2 },
	{ "1\n", 0, 1 },   { "0", 0, 0 },     { "1\n\n", -EINVAL, 0 }, { " 1", -EINVAL, 0 },
	{ "1 ", -EINVAL, 0 }, { "0x1", -EINVAL, 0 }, { "-1", -EINVAL, 0 }, { "", -EINVAL, 0 },
	{ "+", -EINVAL, 0 }, { "\n", -EINVAL, 0 }, { "1a", -EINVAL, 0 },
	{ "18446744073709551615", 0, UINT64_MAX }, { "18446744073709551616", -ERANGE, 0 },
	{ "99999999999999999999", -ERANGE, 0 },
};

/* set_event writes, each from nothing enabled, then each from the sched system enabled. */
static const char *const from_nothing[] = {
	"sched:sched_switch", "sched:", "sched:*", "*:sched_switch", ":sched_switch", "*:*", ":",
	"*:", ":*", "sched", "sched_switch", "*", "sched:sched_*", "*sched*", "Sched:sched_switch",
	"nosuch", "sched:sched_switch:extra", "ftrace:function", "ftrace:*", "ftrace",
	" \t sched:sched_switch", "sched:sched_switch irq:irq_handler_entry", "sched :sched_switch",
	" \t\n ", "irq\n", "!sched:sched_switch",
};
static const char *const from_sched[] = {
	"!sched:sched_switch", "!sched", "!", "!!sched", " !sched:sched_wakeup", "!:", "!nosuch",
	"sched:sched_switch",
};
#define NR_FROM_NOTHING (sizeof(from_nothing) / sizeof(from_nothing[0]))
#define NR_SET_EVENTS (NR_FROM_NOTHING + sizeof(from_sched) / sizeof(from_sched[0]))

static int write_once(const char *path, const char *buf, size_t len, int flags, ssize_t *n)
{
	int fd = open(path, O_WRONLY | flags);

	if (fd < 0)
		return errno;
	*n = write(fd, buf, len);
	close(fd);
	return *n < 0 ? errno : 0;
}

static char *read_all(const char *path)
{
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (!buf || fd < 0) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len - 1)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = 0;
	return buf;
}

/* The kernel's available_events, as (system, name) pairs pointing into *text. */
static size_t available(char **text, struct usertp__tfs_event **events)
{
	size_t nr = 0, cap = 4096;
	char *save = NULL;

	*text = read_all(TRACEFS "/available_events");
	*events = calloc(cap, sizeof(**events));
	if (!*text || !*events)
		return 0;
	for (char *line = strtok_r(*text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		*colon = 0;
		if (nr == cap)
			*events = realloc(*events, (cap *= 2) * sizeof(**events));
		(*events)[nr++] = (struct usertp__tfs_event){ line, colon + 1 };
	}
	return nr;
}

/* What set_event reads for the flags @on of @events: enabled ones in available order. */
static char *set_event_text(const struct usertp__tfs_event *events, size_t nr, const bool *on)
{
	size_t size = 1, len = 0;
	char *text;

	for (size_t i = 0; i < nr; i++)
		size += on[i] ? strlen(events[i].system) + strlen(events[i].name) + 2 : 0;
	text = malloc(size);
	for (size_t i = 0; i < nr; i++)
		if (on[i])
			len += (size_t)sprintf(text + len, "%s:%s\n", events[i].system, events[i].name);
	text[len] = 0;
	return text;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * @text's lines in sorted order (in place; NULL stays NULL): the kernel's set_event lists
 * its dynamic events (a uprobe of bench/peers/run.sh) last, its available_events first,
 * and which events are on is what the rule decides.
 */
static char *sorted_lines(char *text)
{
	size_t nr = 0, len = text ? strlen(text) : 0;
	char **lines, *copy, *at;

	if (!text || !len)
		return text;
	for (size_t i = 0; i < len; i++)
		nr += text[i] == '\n';
	lines = malloc((nr + 1) * sizeof(*lines));
	copy = strdup(text);
	nr = 0;
	for (at = strtok(copy, "\n"); at; at = strtok(NULL, "\n"))
		lines[nr++] = at;
	qsort(lines, nr, sizeof(*lines), cmp_line);
	at = text;
	for (size_t i = 0; i < nr; i++)
		at += sprintf(at, "%s\n", lines[i]);
	free(lines);
	free(copy);
	return text;
}

static void compare_numbers(void)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/tracing_on", inst);
	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		ssize_t n = 0;
		int err = write_once(path, numbers[i].write, strlen(numbers[i].write), 0, &n);
		char *back = read_all(path);

		CHECK(-err == numbers[i].err, "kernel tracing_on '%s': errno %d, rule %d", numbers[i].write,
		      err, numbers[i].err);
		if (!err)
			CHECK(back && atoi(back) == (numbers[i].value != 0),
			      "kernel tracing_on '%s' reads back %s", numbers[i].write, back ? back : "?");
		free(back);
	}
	write_once(path, "1", 1, 0, &(ssize_t){ 0 });
}

static void compare_set_event(void)
{
	struct usertp__tfs_event *events;
	char *text, path[300], *sched_on_text;
	size_t nr = available(&text, &events);
	bool *on = calloc(nr + 1, 1), *sched_on = calloc(nr + 1, 1);

	CHECK(nr > 10, "available_events: %zu events", nr);
	for (size_t i = 0; i < nr; i++)
		sched_on[i] = !strcmp(events[i].system, "sched");
	sched_on_text = set_event_text(events, nr, sched_on);
	snprintf(path, sizeof(path), "%s/set_event", inst);
	for (size_t i = 0; i < NR_SET_EVENTS; i++) {
		bool sched_first = i >= NR_FROM_NOTHING;
		const char *w = sched_first ? from_sched[i - NR_FROM_NOTHING] : from_nothing[i];
		ssize_t n = 0, want;
		int err;
		char *got, *expect;

		/* The state to start from: nothing (O_TRUNC), or the sched system. */
		write_once(path, "", 0, O_TRUNC, &n);
		if (sched_first)
			write_once(path, "sched", 5, 0, &n);
		got = read_all(path);
		CHECK(got && !strcmp(got, sched_first ? sched_on_text : ""),
		      "the start of '%s' is not what it should be", w);
		free(got);
		err = write_once(path, w, strlen(w), 0, &n);
		got = sorted_lines(read_all(path));

		if (sched_first)
			memcpy(on, sched_on, nr);
		else
			memset(on, 0, nr);
		want = usertp__tfs_set_event_write(w, strlen(w), events, nr, on);
		expect = sorted_lines(set_event_text(events, nr, on));
		CHECK((err ? -err : n) == want, "set_event '%s': kernel %zd (errno %d), rule %zd", w, n,
		      err, want);
		CHECK(got && !strcmp(got, expect), "set_event '%s': kernel and rule differ (%zu and %zu bytes)",
		      w, got ? strlen(got) : 0, strlen(expect));
		free(got);
		free(expect);
	}
	{
		/* A token of 128 bytes: too long, for both. */
		char longtok[129];
		ssize_t n = 0;
		int err;

		memset(longtok, 'a', 128);
		longtok[128] = 0;
		err = write_once(path, longtok, 128, O_TRUNC, &n);
		CHECK(err == EINVAL && usertp__tfs_set_event_write(longtok, 128, events, nr, on) == -EINVAL,
		      "a 128-byte token: kernel errno %d", err);
	}
	write_once(path, "", 0, O_TRUNC, &(ssize_t){ 0 });
	printf("test-tracefs-text: %zu set_event writes compared on %zu kernel events\n",
	       NR_SET_EVENTS + 1, nr);
	free(sched_on_text);
	free(on);
	free(sched_on);
	free(events);
	free(text);
}

/* current_tracer: "nop" written in several ways, and names that are not tracers. */
static const char *const tracer_writes[] = { "nop", "nop\n", "  nop  ", "", "bogus", "NOP", "nop nop" };
#define NR_TRACER_WRITES (sizeof(tracer_writes) / sizeof(tracer_writes[0]))

static void compare_tracer(void)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/current_tracer", inst);
	for (size_t i = 0; i < NR_TRACER_WRITES; i++) {
		const char *w = tracer_writes[i];
		ssize_t n = 0;
		int err = write_once(path, w, strlen(w), 0, &n), want = usertp__tfs_tracer(w, strlen(w));

		/* (A zero-length write() returns 0 without asking the file: the rule says EINVAL.) */
		if (!*w)
			continue;
		CHECK(-err == want && (err || n == (ssize_t)strlen(w)),
		      "current_tracer '%s': kernel errno %d, rule %d", w, err, want);
	}
}

static void compare_buffer_kb(void)
{
	static const uint64_t sizes[] = { 100, 1408, 64, 8, 1, 4, 5, 4080, 7 };
	char path[300];

	snprintf(path, sizeof(path), "%s/buffer_size_kb", inst);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char w[32], *back;
		ssize_t n = 0;

		snprintf(w, sizeof(w), "%llu", (unsigned long long)sizes[i]);
		CHECK(!write_once(path, w, strlen(w), 0, &n), "buffer_size_kb %s refused", w);
		back = read_all(path);
		CHECK(back && strtoull(back, NULL, 10) == usertp__tfs_buffer_kb(sizes[i]),
		      "buffer_size_kb %s: kernel %s, rule %llu", w, back ? back : "?",
		      (unsigned long long)usertp__tfs_buffer_kb(sizes[i]));
		free(back);
	}
}

int main(void)
{
	struct stat st;

	/* The rules alone, with docs/tracefs.md's values. */
	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		uint64_t v = 12345;
		int ret = usertp__tfs_number(numbers[i].write, strlen(numbers[i].write), &v);

		CHECK(ret == numbers[i].err && (ret || v == numbers[i].value), "number '%s': %d %llu",
		      numbers[i].write, ret, (unsigned long long)v);
	}
	CHECK(usertp__tfs_buffer_kb(100) == 103 && usertp__tfs_buffer_kb(1408) == 1410 &&
	      usertp__tfs_buffer_kb(64) == 67 && usertp__tfs_buffer_kb(8) == 11, "buffer_size_kb rounding");
	CHECK(!usertp__tfs_tracer("nop", 3) && !usertp__tfs_tracer(" nop\n", 5) &&
	      usertp__tfs_tracer("", 0) == -EINVAL && usertp__tfs_tracer("nop nop", 7) == -EINVAL,
	      "current_tracer");
	CHECK(usertp__tfs_enable_state(0, 3) == '0' && usertp__tfs_enable_state(3, 3) == '1' &&
	      usertp__tfs_enable_state(1, 3) == 'X' && usertp__tfs_enable_state(0, 0) == '?',
	      "enable states");

	if (stat(TRACEFS "/instances", &st) || access(TRACEFS "/instances", W_OK)) {
		printf("test-tracefs-text: tracefs cannot be written here: the kernel comparisons are skipped\n");
		return harness_failed ? 1 : 77;
	}
	snprintf(inst, sizeof(inst), TRACEFS "/instances/usertp-text-%d", (int)getpid());
	if (mkdir(inst, 0755)) {
		printf("test-tracefs-text: cannot make an instance: %s\n", strerror(errno));
		return harness_failed ? 1 : 77;
	}
	compare_numbers();
	compare_set_event();
	compare_tracer();
	compare_buffer_kb();
	rmdir(inst);
	if (harness_failed)
		fprintf(stderr, "test-tracefs-text: %d harness_failed\n", harness_failed);
	return harness_failed != 0;
}
