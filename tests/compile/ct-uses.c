/* SPDX-License-Identifier: MIT */
/*
 * ct-uses.c - the runtime half of a compile-* test.  Includes the same three trace headers
 * as ct-defs.c but without CREATE_TRACE_POINTS (trace-all.h first, so that it has to be
 * self-contained), and checks that what ct-defs.c created exists under the right
 * system:name, records through a listener, prints as expected, and that the raw tracepoints
 * call their probes.  Built in the same languages and standards as ct-defs.c, and crossed
 * with it (C definitions used from C++ and the reverse).
 */
#ifdef CT_EXTERN_C
extern "C" {
#endif
#include "trace-all.h"
#include <trace/events/ctest_sched.h>
#include "outside/outside-events.h"
#include <usertp/usertp.h>
#ifdef CT_EXTERN_C
}
#endif

#include <stdio.h>
#include <string.h>

#include "ct-common.h"
#include "../harness.h"

#define CT_MAX_LINES 32
#define CT_LINE_LEN 256

/* Every record the listener got, as "system:name printed-text". */
struct ct_log {
	int n;
	int bad;
	char lines[CT_MAX_LINES][CT_LINE_LEN];
};

static struct ct_log ct_log;

static void ct_on_record(const struct usertp_event *ev, const void *record, unsigned int size,
			 void *arg)
{
	struct ct_log *log = (struct ct_log *)arg;
	char text[CT_LINE_LEN];

	if (log->n >= CT_MAX_LINES || usertp_event_print(ev, record, size, text, sizeof(text)) < 0) {
		log->bad++;
		return;
	}
	if (snprintf(log->lines[log->n++], CT_LINE_LEN, "%s:%s %s", usertp_event_system(ev),
		     usertp_event_name(ev), text) >= CT_LINE_LEN)
		log->bad++;
}

/* The event exists, and its handle reports the same system and name. */
static void ct_check_event(const char *sys, const char *name)
{
	const struct usertp_event *ev = usertp_event_find(sys, name);

	if (!ev)
		fprintf(stderr, "no event %s:%s\n", sys, name);
	CHECK(ev != NULL);
	if (ev) {
		CHECK_STR(usertp_event_system(ev), sys);
		CHECK_STR(usertp_event_name(ev), name);
		CHECK(usertp_event_id(ev) > 0);
	}
}

struct ct_system_count {
	const char *system;
	int n;
};

static int ct_count_system(const struct usertp_event *ev, void *arg)
{
	struct ct_system_count *c = (struct ct_system_count *)arg;

	if (!strcmp(usertp_event_system(ev), c->system))
		c->n++;
	return 0;
}

static int ct_events_of(const char *sys)
{
	struct ct_system_count c;

	c.system = sys;
	c.n = 0;
	usertp_event_foreach(ct_count_system, &c);
	return c.n;
}

/* The event's format text contains @needle (or, with @want 0, does not). */
static void ct_check_format(const char *sys, const char *name, const char *needle, int want)
{
	const struct usertp_event *ev = usertp_event_find(sys, name);
	char text[4096];
	int len;

	CHECK(ev != NULL);
	if (!ev)
		return;
	len = usertp_event_format(ev, text, sizeof(text));
	CHECK(len > 0 && len < (int)sizeof(text));
	if ((strstr(text, needle) != NULL) != (want != 0)) {
		fprintf(stderr, "format of %s:%s %s \"%s\":\n%s\n", sys, name,
			want ? "lacks" : "has", needle, text);
		CHECK(0);
	} else {
		CHECK(1);
	}
}

static void ct_test_events_exist(void)
{
	static const char *const sched[] = { "ctest_sched_waking", "ctest_sched_wakeup",
					     "ctest_sched_switch", "ctest_sched_stat_runtime",
					     "ctest_sched_process_exec" };
	static const char *const outside[] = { "ctest_outside_paint", "ctest_outside_erase",
					       "ctest_outside_count" };
	static const char *const all[] = { "t_scalars",	    "t_strings",     "t_dynamic",
					   "t_helpers",	    "t_rel",	     "t_rel_len",
					   "t_class_plain", "t_class_print", "t_class_cond",
					   "t_class_fn",    "t_cond",	     "t_fn",
					   "t_plain_text", "t_sizes" };
	unsigned int i;

	for (i = 0; i < sizeof(sched) / sizeof(sched[0]); i++)
		ct_check_event("ctest_sched", sched[i]);
	for (i = 0; i < sizeof(outside) / sizeof(outside[0]); i++)
		ct_check_event("ctest-outside", outside[i]);
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		ct_check_event("usertp-test", all[i]);
	CHECK_INT(ct_events_of("ctest_sched"), ==, 5);
	CHECK_INT(ct_events_of("ctest-outside"), ==, 3);
	CHECK_INT(ct_events_of("usertp-test"), ==, 14);

	/* TRACE_SYSTEM_VAR names identifiers, not the system. */
	CHECK(usertp_event_find("ctest_outside", "ctest_outside_paint") == NULL);
	CHECK(usertp_event_find("usertp_test", "t_cond") == NULL);
	CHECK_INT(ct_events_of("ctest_outside"), ==, 0);
	CHECK_INT(ct_events_of("usertp_test"), ==, 0);
	/* Raw tracepoints and event classes are not events. */
	CHECK(usertp_event_find("ctest_sched", "ctest_sched_raw_tp") == NULL);
	CHECK(usertp_event_find("ctest_sched", "ctest_sched_raw_cond_tp") == NULL);
	CHECK(usertp_event_find("ctest_sched", "ctest_sched_wakeup_template") == NULL);
	CHECK(usertp_event_find("ctest-outside", "ctest_outside_class") == NULL);
	/* Each event under its own system only. */
	CHECK(usertp_event_find("usertp-test", "ctest_sched_switch") == NULL);
	CHECK(usertp_event_find("ctest_sched", "t_cond") == NULL);

	/* TRACE_DEFINE_ENUM of each system, replaced in its print fmt. */
	ct_check_format("ctest-outside", "ctest_outside_paint",
			"{ 1, \"red\" }, { 2, \"green\" }, { 40, \"blue\" }", 1);
	ct_check_format("ctest-outside", "ctest_outside_paint", "CTEST_", 0);
	ct_check_format("ctest_sched", "ctest_sched_switch", "{ 1, \"S\" }, { 4, \"T\" }", 1);
	ct_check_format("ctest_sched", "ctest_sched_switch", "CTEST_", 0);
	ct_check_format("usertp-test", "t_helpers", "{ 7, \"high\" }", 1);
	ct_check_format("ctest-outside", "ctest_outside_erase", "print fmt: \"erased %s\"", 1);
}

static void ct_fire(void)
{
	static const __u32 ids[3] = { 1, 2, 3 };
	struct ctest_task a, b;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	strcpy(a.comm, "alpha");
	a.pid = 10;
	a.prio = 120;
	strcpy(b.comm, "beta");
	b.pid = 11;
	b.prio = 100;

	trace_ctest_sched_waking(&a, 1);
	trace_ctest_sched_wakeup(&b, 2);
	trace_ctest_sched_switch(false, &a, &b, CTEST_SLEEPING);
	trace_ctest_sched_switch(false, &b, &a, CTEST_SLEEPING | CTEST_STOPPED);
	trace_ctest_sched_switch(true, &a, &b, CTEST_SLEEPING);
	trace_ctest_sched_stat_runtime(&a, 0); /* TP_CONDITION false */
	trace_ctest_sched_stat_runtime(&b, 12345);
	trace_ctest_sched_process_exec("/bin/true", 10, ids, 3);
	trace_ctest_outside_paint(CTEST_BLUE, "sky");
	trace_ctest_outside_paint(CTEST_GREEN + 1, "odd");
	trace_ctest_outside_erase(CTEST_RED, "wall");
	usertp_trace(ctest_outside_count, 7u);
	trace_t_cond(1); /* TP_CONDITION false */
	trace_t_cond(2);
	trace_t_class_plain(5, "plain");
	trace_t_class_cond(-1, "no"); /* not selected */
	trace_t_fn(3);
	trace_t_plain_text(4); /* not selected */
}

static const char *const ct_expected[] = {
	"ctest_sched:ctest_sched_waking comm=alpha pid=10 prio=120 target_cpu=001",
	"ctest_sched:ctest_sched_wakeup comm=beta pid=11 prio=100 target_cpu=002",
	"ctest_sched:ctest_sched_switch prev_comm=alpha prev_pid=10 prev_prio=120 prev_state=S ==> "
	"next_comm=beta next_pid=11 next_prio=100",
	"ctest_sched:ctest_sched_switch prev_comm=beta prev_pid=11 prev_prio=100 prev_state=S|T ==> "
	"next_comm=alpha next_pid=10 next_prio=120",
	"ctest_sched:ctest_sched_switch prev_comm=alpha prev_pid=10 prev_prio=120 prev_state=R ==> "
	"next_comm=beta next_pid=11 next_prio=100",
	"ctest_sched:ctest_sched_stat_runtime comm=beta pid=11 runtime=12345 [ns]",
	"ctest_sched:ctest_sched_process_exec filename=/bin/true pid=10 ids=1 2 3",
	"ctest-outside:ctest_outside_paint color=blue what=sky",
	"ctest-outside:ctest_outside_paint color=0x3 what=odd",
	"ctest-outside:ctest_outside_erase erased wall",
	"ctest-outside:ctest_outside_count n=7",
	"usertp-test:t_cond x=2",
	"usertp-test:t_class_plain a=5 who=plain",
	"usertp-test:t_fn x=3",
};

static void ct_test_listener(void)
{
	struct usertp_listener *l = NULL;
	int i, n = (int)(sizeof(ct_expected) / sizeof(ct_expected[0]));

	memset(&ct_log, 0, sizeof(ct_log));
	CHECK(!trace_ctest_sched_switch_enabled());
	CHECK_INT(usertp_listener_create("ctest_sched:*, ctest-outside:*\tusertp-test:t_cond,"
					 "usertp-test:t_class_plain t_fn",
					 ct_on_record, &ct_log, &l),
		  ==, 0);
	CHECK(l != NULL);
	CHECK(trace_ctest_sched_switch_enabled());
	CHECK(trace_ctest_outside_count_enabled());
	CHECK(trace_t_fn_enabled());
	CHECK(!trace_t_plain_text_enabled());
	CHECK_INT(ct_stat_regs, ==, 1);
	CHECK_INT(ct_fn_regs, ==, 1);

	ct_fire();

	usertp_listener_destroy(l);
	CHECK(!trace_ctest_sched_switch_enabled());
	CHECK_INT(ct_stat_unregs, ==, 1);
	CHECK_INT(ct_fn_unregs, ==, 1);
	CHECK_INT(ct_log.bad, ==, 0);
	CHECK_INT(ct_log.n, ==, n);
	for (i = 0; i < n && i < ct_log.n; i++)
		CHECK_STR(ct_log.lines[i], ct_expected[i]);

	/* Off again: nothing is recorded. */
	ct_fire();
	CHECK_INT(ct_log.n, ==, n);
}

/* Raw tracepoints: probes in priority order, the condition, unregistration. */
static char ct_calls[64];

static void ct_probe_hi(void *data, int cpu, unsigned long util)
{
	size_t len = strlen(ct_calls);

	snprintf(ct_calls + len, sizeof(ct_calls) - len, "%s(%d,%lu)", (const char *)data, cpu,
		 util);
}

static void ct_probe_lo(void *data, int cpu, unsigned long util)
{
	ct_probe_hi(data, cpu, util);
}

static void ct_probe_cond(void *data, int cpu)
{
	(*(int *)data) += cpu;
}

static void ct_test_raw_tracepoints(void)
{
	static char hi[] = "hi", lo[] = "lo";
	int sum = 0;

	check_trace_callback_type_ctest_sched_raw_tp(ct_probe_hi);
	CHECK(!trace_ctest_sched_raw_tp_enabled());
	CHECK_INT(register_trace_ctest_sched_raw_tp(ct_probe_lo, lo), ==, 0);
	CHECK_INT(register_trace_prio_ctest_sched_raw_tp(ct_probe_hi, hi, TRACEPOINT_DEFAULT_PRIO + 10),
		  ==, 0);
	CHECK(trace_ctest_sched_raw_tp_enabled());
	trace_ctest_sched_raw_tp(2, 100);
	CHECK_STR(ct_calls, "hi(2,100)lo(2,100)");
	CHECK_INT(unregister_trace_ctest_sched_raw_tp(ct_probe_hi, hi), ==, 0);
	CHECK_INT(unregister_trace_ctest_sched_raw_tp(ct_probe_lo, lo), ==, 0);
	tracepoint_synchronize_unregister();
	CHECK(!trace_ctest_sched_raw_tp_enabled());
	ct_calls[0] = '\0';
	trace_ctest_sched_raw_tp(3, 1);
	CHECK_STR(ct_calls, "");

	CHECK_INT(register_trace_ctest_sched_raw_cond_tp(ct_probe_cond, &sum), ==, 0);
	trace_ctest_sched_raw_cond_tp(-5); /* TP_CONDITION false */
	trace_ctest_sched_raw_cond_tp(4);
	usertp_trace(ctest_sched_raw_cond_tp, 30);
	CHECK_INT(unregister_trace_ctest_sched_raw_cond_tp(ct_probe_cond, &sum), ==, 0);
	tracepoint_synchronize_unregister();
	trace_ctest_sched_raw_cond_tp(100);
	CHECK_INT(sum, ==, 34);

	/* The kernel's generic names work on these tracepoints too. */
	CHECK_INT(tracepoint_probe_register(&__tracepoint_ctest_sched_raw_cond_tp,
					    (void *)ct_probe_cond, &sum),
		  ==, 0);
	trace_ctest_sched_raw_cond_tp(1);
	CHECK_INT(tracepoint_probe_unregister(&__tracepoint_ctest_sched_raw_cond_tp,
					      (void *)ct_probe_cond, &sum),
		  ==, 0);
	tracepoint_synchronize_unregister();
	CHECK_INT(sum, ==, 35);
}

int ct_run(void)
{
	printf("tracepoints defined by %s, used from %s %ld %s%s\n", ct_defs_flavour(), CT_LANG,
	       (long)CT_STD, CT_STRICT, CT_WRAP);
	ct_test_events_exist();
	ct_test_listener();
	ct_test_raw_tracepoints();
	return harness_done();
}
