/* SPDX-License-Identifier: MIT */
/* tracefs-text.c - what tracefs files take and give as text (tracefs-text.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel-page.h"
#include "number.h"
#include "tracefs-text.h"

int usertp__tfs_number(const char *buf, size_t len, uint64_t *out)
{
	return usertp__kstrtoull(buf, len, 10, out);
}

ssize_t usertp__tfs_set_event_token(const char *buf, size_t len, const char **tok, size_t *tok_len)
{
	size_t i = 0, start;

	while (i < len && isspace((unsigned char)buf[i]))
		i++;
	start = i;
	while (i < len && !isspace((unsigned char)buf[i]))
		i++;
	*tok = buf + start;
	*tok_len = i - start;
	if (*tok_len > USERTP__TFS_TOKEN_MAX)
		return -EINVAL;
	if (i < len)
		i++; /* the delimiter */
	return (ssize_t)i;
}

ssize_t usertp__tfs_set_event_write(const char *buf, size_t len, const struct usertp__tfs_event *events,
				    size_t nr, bool *enabled)
{
	struct usertp__spec spec;
	const char *tok;
	size_t tok_len, matched = 0;
	ssize_t taken = usertp__tfs_set_event_token(buf, len, &tok, &tok_len);

	if (taken < 0 || !tok_len)
		return taken;
	if (usertp__spec_parse(tok, tok_len, USERTP__SPEC_TRACEFS, &spec))
		return -EINVAL;
	for (size_t i = 0; i < nr; i++)
		if (usertp__spec_selects(&spec, events[i].system, events[i].name))
			matched++;
	if (!matched)
		return -EINVAL;
	for (size_t i = 0; i < nr; i++)
		if (usertp__spec_selects(&spec, events[i].system, events[i].name))
			enabled[i] = !spec.disable;
	return taken;
}

/* @buf, @len without the white space around it. */
static void trim(const char **buf, size_t *len)
{
	while (*len && isspace((unsigned char)(*buf)[*len - 1]))
		(*len)--;
	while (*len && isspace((unsigned char)**buf)) {
		(*buf)++;
		(*len)--;
	}
}

/* Is @buf, white space around it, the word @word? */
static bool is_word(const char *buf, size_t len, const char *word)
{
	trim(&buf, &len);
	return len == strlen(word) && !memcmp(buf, word, len);
}

int usertp__tfs_tracer(const char *buf, size_t len)
{
	return is_word(buf, len, USERTP__TFS_TRACERS) ? 0 : -EINVAL;
}

int usertp__tfs_clock(const char *buf, size_t len, char *name, size_t size)
{
	trim(&buf, &len);
	if (!len || len >= size || memchr(buf, 0, len))
		return -EINVAL;
	memcpy(name, buf, len);
	name[len] = 0;
	return 0;
}

char usertp__tfs_enable_state(size_t on, size_t total)
{
	if (!total)
		return '?';
	return !on ? '0' : on == total ? '1' : 'X';
}

uint64_t usertp__tfs_buffer_kb(uint64_t kb)
{
	uint64_t pages = (kb * 1024 + USERTP__KPAGE_DATA - 1) / USERTP__KPAGE_DATA;

	/* At least two pages: one being written, one to read (seen on the kernel: 1 -> 7). */
	return (pages < 2 ? 2 : pages) * USERTP__KPAGE_DATA / 1024;
}

static const char *const trigger_names[] = {
	[USERTP__TFS_TRACEON] = "traceon",
	[USERTP__TFS_TRACEOFF] = "traceoff",
	[USERTP__TFS_ENABLE_EVENT] = "enable_event",
	[USERTP__TFS_DISABLE_EVENT] = "disable_event",
};

/* The next ':'-separated part of [*at, end) into @to (@size bytes); false if too long. */
static bool trigger_part(const char **at, const char *end, char *to, size_t size)
{
	const char *colon = memchr(*at, ':', (size_t)(end - *at));
	size_t n = (size_t)((colon ? colon : end) - *at);

	if (n >= size)
		return false;
	memcpy(to, *at, n);
	to[n] = 0;
	*at = colon ? colon + 1 : end;
	return true;
}

int usertp__tfs_trigger(const char *buf, size_t len, struct usertp__tfs_trigger *t)
{
	const char *end = buf + len, *cmd_end, *at;
	char word[USERTP__TFS_TOKEN_MAX + 1];
	size_t i;

	memset(t, 0, sizeof(*t));
	t->count = -1;
	while (buf < end && isspace((unsigned char)*buf))
		buf++;
	while (end > buf && isspace((unsigned char)end[-1]))
		end--;
	if (buf < end && *buf == '!') {
		t->remove = true;
		buf++;
	}
	for (cmd_end = buf; cmd_end < end && !isspace((unsigned char)*cmd_end); cmd_end++)
		;
	if (cmd_end == buf)
		return -EINVAL;
	/* " if FILTER" after the command (the filter is not read when removing). */
	at = cmd_end;
	while (at < end && isspace((unsigned char)*at))
		at++;
	if (at < end) {
		if (end - at < 3 || strncmp(at, "if", 2) || !isspace((unsigned char)at[2]))
			return -EINVAL;
		at += 3;
		while (at < end && isspace((unsigned char)*at))
			at++;
		if (at == end)
			return -EINVAL;
		t->filter = at;
		t->filter_len = (size_t)(end - at);
	}
	at = buf;
	if (!trigger_part(&at, cmd_end, word, sizeof(word)))
		return -EINVAL;
	for (i = 0; i < sizeof(trigger_names) / sizeof(trigger_names[0]); i++)
		if (!strcmp(word, trigger_names[i]))
			break;
	if (i == sizeof(trigger_names) / sizeof(trigger_names[0]))
		return -EINVAL;
	t->cmd = (enum usertp__tfs_trigger_cmd)i;
	if (t->cmd == USERTP__TFS_ENABLE_EVENT || t->cmd == USERTP__TFS_DISABLE_EVENT) {
		if (at >= cmd_end || !trigger_part(&at, cmd_end, t->system, sizeof(t->system)) ||
		    at >= cmd_end || !trigger_part(&at, cmd_end, t->event, sizeof(t->event)) ||
		    !t->system[0] || !t->event[0])
			return -EINVAL;
	}
	if (at < cmd_end && !t->remove) {
		uint64_t n;
		char *stop;

		/* A count, as the kernel reads it (kstrtoul, base 0); empty: none. */
		if (!trigger_part(&at, cmd_end, word, sizeof(word)) || at < cmd_end)
			return -EINVAL;
		if (word[0]) {
			errno = 0;
			n = strtoull(word, &stop, 0);
			if (*stop || errno || word[0] == '-' || n > INT64_MAX)
				return -EINVAL;
			t->count = n ? (long long)n : -1;
		}
	}
	return 0;
}

int usertp__tfs_trigger_line(const struct usertp__tfs_trigger *t, const char *filter, char *out,
			     size_t size)
{
	char count[32];

	if (t->count < 0)
		snprintf(count, sizeof(count), "unlimited");
	else
		snprintf(count, sizeof(count), "count=%lld", t->count);
	if (t->cmd == USERTP__TFS_ENABLE_EVENT || t->cmd == USERTP__TFS_DISABLE_EVENT)
		return snprintf(out, size, "%s:%s:%s:%s%s%s\n", trigger_names[t->cmd], t->system,
				t->event, count, filter ? " if " : "", filter ? filter : "");
	return snprintf(out, size, "%s:%s%s%s\n", trigger_names[t->cmd], count, filter ? " if " : "",
			filter ? filter : "");
}
