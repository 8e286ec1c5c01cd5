/* SPDX-License-Identifier: MIT */
/*
 * spec.h - event specs (the kernel's set_event forms, and trace-cmd's -e globs): the one
 * matcher of libusertp, libusertp-consumer and the usertp command.
 */
#ifndef USERTP_SPEC_H
#define USERTP_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#ifndef USERTP_HIDDEN
#define USERTP_HIDDEN __attribute__((visibility("hidden")))
#endif

/* Is @spec (no leading '!') well formed (0 or -EINVAL)?  Does it select the event? */
#define USERTP__SPEC_GLOB 1u /* trace-cmd's -e forms too: globs on either side */
USERTP_HIDDEN int usertp__spec_check(const char *spec, unsigned int flags);
USERTP_HIDDEN bool usertp__spec_match(const char *spec, const char *system, const char *name);
/* Does @spec select one of the events @names lists ("sys:event" or "id sys:event" lines)? */
USERTP_HIDDEN bool usertp__spec_matches_any(const char *spec, const char *names);
/*
 * The (up to three) events of @names closest to a @spec that matched nothing, for "close
 * matches:", into @out separated by ", ".  Return: how many.
 */
USERTP_HIDDEN unsigned int usertp__spec_close_matches(const char *spec, const char *names,
						      char *out, size_t size);

#endif
