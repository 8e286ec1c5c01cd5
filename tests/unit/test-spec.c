/* SPDX-License-Identifier: MIT */
/*
 * test-spec - the one grammar of event specs (src/common/spec.c): set_event's forms as the
 * mount takes them (USERTP__SPEC_TRACEFS), trace-cmd's -e globs (USERTP__SPEC_GLOB), what each
 * selects, which rule covers another, and the close matches of a typo.  (test-tracefs-text
 * holds the same grammar against this machine's kernel.)
 */
#include <errno.h>
#include <string.h>

#include "spec.h"
#include "../harness.h"

static const struct {
	const char *tok;
	unsigned int flags;
	int ret;
	const char *system, *event; /* as understood; NULL: no colon (either) */
	bool disable;
} parses[] = {
	{ "sched:sched_switch", 0, 0, "sched", "sched_switch", false },
	{ "sched:*", 0, 0, "sched", "", false },
	{ "sched:", 0, 0, "sched", "", false },
	{ "*:sched_switch", 0, 0, "", "sched_switch", false },
	{ ":sched_switch", 0, 0, "", "sched_switch", false },
	{ "*:*", 0, 0, "", "", false },
	{ ":", 0, 0, "", "", false },
	{ "sched", 0, 0, "sched", NULL, false },
	{ "!sched:sched_switch", 0, 0, "sched", "sched_switch", true },
	{ "!jobs", USERTP__SPEC_TRACEFS, 0, "jobs", NULL, true },
	{ "*", 0, -EINVAL, NULL, NULL, false },
	{ "!*", 0, -EINVAL, NULL, NULL, false },
	{ "", 0, -EINVAL, NULL, NULL, false },
	{ "!", 0, -EINVAL, NULL, NULL, false },
	{ "a:b:c", 0, -EINVAL, NULL, NULL, false },
	{ "sched:sched_*", 0, -EINVAL, NULL, NULL, false },
	{ "sched:sched_*", USERTP__SPEC_GLOB, 0, "sched", "sched_*", false },
	{ "s*:x", 0, -EINVAL, NULL, NULL, false },
	{ "s*:x", USERTP__SPEC_GLOB, 0, "s*", "x", false },
	{ "**:x", 0, -EINVAL, NULL, NULL, false },
	{ "a b", USERTP__SPEC_GLOB, -EINVAL, NULL, NULL, false },
	{ "jobs:job_done\n", 0, -EINVAL, NULL, NULL, false },
};

static void parse(void)
{
	char longest[USERTP__SPEC_MAX + 2];
	struct usertp__spec s;

	for (size_t i = 0; i < sizeof(parses) / sizeof(parses[0]); i++) {
		int ret = usertp__spec_parse(parses[i].tok, strlen(parses[i].tok), parses[i].flags, &s);

		CHECK(ret == parses[i].ret, "'%s': %d", parses[i].tok, ret);
		if (ret || parses[i].ret)
			continue;
		CHECK(s.disable == parses[i].disable && s.either == !parses[i].event &&
		      !strcmp(s.system, parses[i].system) &&
		      (!parses[i].event || !strcmp(s.event, parses[i].event)),
		      "'%s': %d %d '%s' '%s'", parses[i].tok, s.disable, s.either, s.system, s.event);
	}
	/* The kernel's limit: 127 bytes. */
	memset(longest, 'a', sizeof(longest));
	CHECK(!usertp__spec_parse(longest, USERTP__SPEC_MAX, 0, &s), "127 bytes refused");
	CHECK(usertp__spec_parse(longest, USERTP__SPEC_MAX + 1, 0, &s) == -EINVAL, "128 bytes taken");
	/* The string forms: a leading '!' is the caller's. */
	CHECK(usertp__spec_check("jobs:*", 0) == 0 && usertp__spec_check("!jobs:*", 0) == -EINVAL &&
	      usertp__spec_check("jobs:job_*", USERTP__SPEC_GLOB) == 0 &&
	      usertp__spec_check("jobs:job_*", 0) == -EINVAL, "usertp__spec_check");
}

static bool selects(const char *tok, unsigned int flags, const char *system, const char *name)
{
	struct usertp__spec s;

	return !usertp__spec_parse(tok, strlen(tok), flags, &s) &&
	       usertp__spec_selects(&s, system, name);
}

static void selecting(void)
{
	CHECK(selects("jobs:job_done", 0, "jobs", "job_done"), "exact");
	CHECK(!selects("jobs:job_done", 0, "jobs", "job_queued"), "another event");
	CHECK(selects("jobs", 0, "jobs", "job_done") && selects("job_done", 0, "jobs", "job_done"),
	      "a bare name: the system, or the event");
	CHECK(!selects("job", 0, "jobs", "job_done"), "a bare name is whole");
	CHECK(selects(":", 0, "x", "y") && selects("*:*", 0, "x", "y"), "every event");
	CHECK(selects("jobs:job_*", USERTP__SPEC_GLOB, "jobs", "job_done") &&
	      !selects("jobs:job_*", USERTP__SPEC_GLOB, "jobs", "started"), "a glob");
	CHECK(selects("j?bs:job_[dq]*", USERTP__SPEC_GLOB, "jobs", "job_queued"), "glob classes");
	CHECK(!selects(":print", USERTP__SPEC_TRACEFS, "ftrace", "print") &&
	      !selects("ftrace", USERTP__SPEC_TRACEFS, "ftrace", "print") &&
	      selects(":print", 0, "ftrace", "print"),
	      "set_event never selects the ftrace system (the mount's markers)");
	CHECK(usertp__spec_match("jobs:job_*", "jobs", "job_done") &&
	      !usertp__spec_match("nonsense:a:b", "nonsense", "a:b"), "usertp__spec_match");
}

static void covering(void)
{
	struct usertp__spec all, sys, ev, bare, other;

	usertp__spec_parse("*:*", 3, 0, &all);
	usertp__spec_parse("jobs:*", 6, 0, &sys);
	usertp__spec_parse("jobs:job_done", 13, 0, &ev);
	usertp__spec_parse("jobs", 4, 0, &bare);
	usertp__spec_parse("sched:*", 7, 0, &other);
	CHECK(usertp__spec_covers(&all, &sys) && usertp__spec_covers(&all, &ev) &&
	      usertp__spec_covers(&all, &bare), "*:* covers everything");
	CHECK(usertp__spec_covers(&sys, &ev) && !usertp__spec_covers(&ev, &sys), "a system, an event");
	CHECK(!usertp__spec_covers(&other, &ev) && !usertp__spec_covers(&sys, &bare) &&
	      usertp__spec_covers(&bare, &bare), "what does not cover");
}

static void close_matches(void)
{
	const char *names = "4 jobs:job_done\n5 jobs:job_queued\n6 jobs:job_started\n7 sched:x\n";
	char out[256];

	CHECK(usertp__spec_matches_any("jobs:job_done", names) &&
	      !usertp__spec_matches_any("jobs:job_donne", names), "matches any");
	CHECK(usertp__spec_close_matches("jobs:job_donne", names, out, sizeof(out)) >= 1 &&
	      !strncmp(out, "jobs:job_done", 13), "close matches: '%s'", out);
	CHECK(usertp__spec_close_matches("job_don", names, out, sizeof(out)) >= 1 &&
	      strstr(out, "jobs:job_done"), "close matches of a bare name: '%s'", out);
	CHECK(usertp__spec_close_matches("zzzzzzzzzzzz", names, out, sizeof(out)) == 0 && !out[0],
	      "no close match: '%s'", out);
}

/* The one splitter and joiner of spec lists, and the protocol's check of one. */
static void lists(void)
{
	struct usertp__spec_list l;
	unsigned int bad = 99;
	char *text;

	CHECK(!usertp__spec_list_parse(" jobs:*, !jobs:job_done\tsched  ,, ", USERTP__SPEC_GLOB, &l,
				       NULL) && l.nr == 3,
	      "three specs: %u", l.nr);
	text = usertp__spec_list_text((const char *const *)l.specs, l.nr);
	CHECK_STR(text, "jobs:*,!jobs:job_done,sched");
	CHECK(!usertp__spec_list_check(text, USERTP__SPEC_GLOB), "its text checks");
	free(text);
	usertp__spec_list_free(&l);
	CHECK(l.nr == 0 && !l.specs, "freed");
	CHECK(usertp__spec_list_parse("a:b,c:d:e,f", USERTP__SPEC_GLOB, &l, &bad) == -EINVAL &&
		      bad == 1 && !l.nr,
	      "the second refused: %u", bad);
	CHECK(!usertp__spec_list_parse("", 0, &l, NULL) && l.nr == 0, "an empty list");
	CHECK(usertp__spec_list_check("a:b,c:d:e", USERTP__SPEC_GLOB) == -EINVAL, "check refuses");
	{
		char big[700];

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = 0;
		CHECK(usertp__spec_list_check(big, USERTP__SPEC_GLOB) == -EINVAL, "a 699-byte spec");
	}
	text = usertp__spec_list_text(NULL, 0);
	CHECK_STR(text, "");
	free(text);
}

int main(void)
{
	lists();
	parse();
	selecting();
	covering();
	close_matches();
	return harness_done();
}
