/* SPDX-License-Identifier: MIT */
/*
 * tracefs-text.h - what the kernel's tracefs files take and give as text, as rules free of
 * any file system (tracefs-text.c): the one home of each, for `usertp mount` to serve and for
 * the tests to compare with the kernel's own files (docs/tracefs.md, the section in each comment).
 */
#ifndef USERTP_TRACEFS_TEXT_H
#define USERTP_TRACEFS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spec.h"

/*
 * §0: a numeric single-value file's write (enable, tracing_on, buffer_size_kb, options/NAME):
 * all of @buf as an unsigned decimal number, a '+' before it, leading zeros, at most one
 * '\n' after it.  Return: 0, -EINVAL (not such a number, or nothing), -ERANGE (above
 * UINT64_MAX).
 */
int usertp__tfs_number(const char *buf, size_t len, uint64_t *out);

/* §2: the longest set_event token taken. */
#define USERTP__TFS_TOKEN_MAX USERTP__SPEC_MAX

/*
 * §2: the one token a write() to set_event takes: white space skipped, the token up to the
 * next white space, and that one delimiter.  *tok and *tok_len get it (*tok_len 0: only white
 * space).  Return: the bytes taken (what the write() returns), or -EINVAL (a token longer than
 * USERTP__TFS_TOKEN_MAX).
 */
ssize_t usertp__tfs_set_event_token(const char *buf, size_t len, const char **tok, size_t *tok_len);

/*
 * §2: a set_event token is understood by src/common/spec.c (usertp__spec_parse() with
 * USERTP__SPEC_TRACEFS), the grammar of every spec usertp takes.
 */

/* An event as tracefs lists it. */
struct usertp__tfs_event {
	const char *system, *name;
};

/*
 * §2: one write() of @buf to set_event, on @events (@nr, in available_events order) whose
 * enabled flags are @enabled: the one token it takes enables (or with '!' disables) every
 * event it selects.  Return: the bytes taken, or -EINVAL (a token too long, or one that
 * selects no event: nothing changes).  Only white space: taken, nothing changes.
 */
ssize_t usertp__tfs_set_event_write(const char *buf, size_t len, const struct usertp__tfs_event *events,
				    size_t nr, bool *enabled);

/*
 * §15: a write to current_tracer: a tracer's name, white space around it.  usertp has one
 * tracer, "nop" (available_tracers).  Return: 0, or -EINVAL (any other text, or none).
 */
int usertp__tfs_tracer(const char *buf, size_t len);
#define USERTP__TFS_TRACERS "nop"

/*
 * §10: a write to trace_clock: a clock's name, white space around it, into @name (@size
 * bytes).  The clocks are those a live reader converts the programs' counter to
 * (tsc2nsec.h): mono, mono_raw, boot, tai, and x86-tsc where the programs count the TSC.
 * Return: 0, or -EINVAL (none, or too long: the name itself is checked by the session).
 */
int usertp__tfs_clock(const char *buf, size_t len, char *name, size_t size);

/* §5: the triggers usertp runs (the kernel's stacktrace, snapshot and hist are refused). */
enum usertp__tfs_trigger_cmd {
	USERTP__TFS_TRACEON,
	USERTP__TFS_TRACEOFF,
	USERTP__TFS_ENABLE_EVENT,
	USERTP__TFS_DISABLE_EVENT,
};
#define USERTP__TFS_TRIGGER_HELP "# Available triggers:\n# traceon traceoff enable_event disable_event\n"

/* A write to a trigger file, understood. */
struct usertp__tfs_trigger {
	bool remove; /* '!' before it */
	enum usertp__tfs_trigger_cmd cmd;
	char system[USERTP__TFS_TOKEN_MAX + 1], event[USERTP__TFS_TOKEN_MAX + 1]; /* the target */
	long long count;	  /* -1: unlimited */
	const char *filter;	  /* after "if" (NULL: none), filter_len bytes of the write */
	size_t filter_len;
};

/*
 * §5: "[!]CMD[:SYS:EV][:COUNT] [if FILTER]", white space around it.  Return: 0, or -EINVAL
 * (an unknown command, a target missing, a bad count, "if" without a filter, nothing).
 */
int usertp__tfs_trigger(const char *buf, size_t len, struct usertp__tfs_trigger *t);
/* The trigger's line in the trigger file ("traceoff:count=2 if pid > 1"), into @out. */
int usertp__tfs_trigger_line(const struct usertp__tfs_trigger *t, const char *filter, char *out,
			     size_t size);

/* §3.2: an enable file covering @total events of which @on are enabled: '0', '1', 'X', '?'. */
char usertp__tfs_enable_state(size_t on, size_t total);

/*
 * §9: buffer_size_kb as read back after @kb was written: whole pages of 4080 data bytes, at
 * least two.
 */
uint64_t usertp__tfs_buffer_kb(uint64_t kb);

#endif
