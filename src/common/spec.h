/* SPDX-License-Identifier: MIT */
/*
 * spec.h - event specs (the kernel's set_event forms, and trace-cmd's -e globs): the one
 * grammar and matcher of libusertp, libusertp-consumer, the usertp command and its mount.
 */
#ifndef USERTP_SPEC_H
#define USERTP_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#ifndef USERTP_HIDDEN
#define USERTP_HIDDEN __attribute__((visibility("hidden")))
#endif

#define USERTP__SPEC_MAX 127 /* the kernel's limit for one set_event token */
#define USERTP__SPEC_GLOB 1u   /* trace-cmd's -e forms too: globs on either side */
#define USERTP__SPEC_TRACEFS 2u /* tracefs's set_event: the ftrace system is never selected */

/*
 * A spec understood: what the mount keeps as its set_event rules, and what every matcher
 * compares with.
 */
struct usertp__spec {
	bool disable; /* '!' before it */
	bool either;  /* no colon: a system of that name, or every event of that name */
	bool glob;    /* USERTP__SPEC_GLOB: a side with * ? [ is a shell glob */
	bool tracefs; /* USERTP__SPEC_TRACEFS */
	char system[USERTP__SPEC_MAX + 1]; /* "" (or "*"): every system */
	char event[USERTP__SPEC_MAX + 1];  /* "" (or "*"): every event */
};

/*
 * Understand the @len bytes at @tok ('!' first: disable).  Return: 0, or -EINVAL for what
 * set_event takes nowhere: empty, longer than USERTP__SPEC_MAX, white space, two colons, a
 * bare "*", a star that is not a whole side (without USERTP__SPEC_GLOB).
 */
USERTP_HIDDEN int usertp__spec_parse(const char *tok, size_t len, unsigned int flags,
				     struct usertp__spec *spec);
/* Does @spec select @system:@name? */
USERTP_HIDDEN bool usertp__spec_selects(const struct usertp__spec *spec, const char *system,
					const char *name);
/* Does @later select every event @earlier selects (so that @earlier no longer matters)? */
USERTP_HIDDEN bool usertp__spec_covers(const struct usertp__spec *later,
				       const struct usertp__spec *earlier);

/* Is @spec (no leading '!') well formed (0 or -EINVAL)?  Does it select the event? */
USERTP_HIDDEN int usertp__spec_check(const char *spec, unsigned int flags);
USERTP_HIDDEN bool usertp__spec_match(const char *spec, const char *system, const char *name);
/*
 * A list of specs as set_event, -e and the control protocol's events= take them: separated by
 * commas and white space, each with a leading '!' (take out) or not.  The one splitter and
 * joiner of such lists.
 */
struct usertp__spec_list {
	char **specs; /* as given, '!' kept */
	unsigned int nr;
};
/*
 * Split @text into @out, every spec checked with @flags.  Return: 0, -EINVAL (*@bad, when not
 * NULL, is the index of the first that is not a spec, and @out is empty) or -ENOMEM.
 */
USERTP_HIDDEN int usertp__spec_list_parse(const char *text, unsigned int flags,
					  struct usertp__spec_list *out, unsigned int *bad);
USERTP_HIDDEN void usertp__spec_list_free(struct usertp__spec_list *list);
/* Is @text such a list (0 or -EINVAL)?  Without allocating: for the protocol's decoder. */
USERTP_HIDDEN int usertp__spec_list_check(const char *text, unsigned int flags);
/* @specs joined with ',' (to free()), or NULL (no memory). */
USERTP_HIDDEN char *usertp__spec_list_text(const char *const *specs, unsigned int nr);

/* Does @spec select one of the events @names lists ("sys:event" or "id sys:event" lines)? */
USERTP_HIDDEN bool usertp__spec_matches_any(const char *spec, const char *names);
/*
 * The (up to three) events of @names closest to a @spec that matched nothing, for "close
 * matches:", into @out separated by ", ".  Return: how many.
 */
USERTP_HIDDEN unsigned int usertp__spec_close_matches(const char *spec, const char *names,
						      char *out, size_t size);

#endif
