/* SPDX-License-Identifier: MIT */
/*
 * tep-check.c - a record's fields against its bounds, before libtraceevent prints it; a
 * format parsed first where a fault costs nothing.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "private/usertp-consumer-private.h"
#include "proc.h"

/* A format's trial parse takes well under a millisecond; it is given 2 s. */
#define TICK_US 200
#define TRIAL_TICKS (2000000 / TICK_US)

static unsigned long long word_at(const unsigned char *p, int size)
{
	if (size == 2) {
		unsigned short v;

		memcpy(&v, p, 2);
		return v;
	}
	unsigned int v;

	memcpy(&v, p, 4);
	return v;
}

bool usertp__tep_record_ok(const struct tep_event *ev, const void *data, int size,
			   const char **bad)
{
	const unsigned char *rec = data;

	for (const struct tep_format_field *f = ev ? ev->format.fields : NULL; f; f = f->next) {
		unsigned long long word;
		unsigned int off, len;

		if (f->offset < 0 || f->size < 0 || f->offset + f->size > size)
			goto out;
		if (!(f->flags & TEP_FIELD_IS_DYNAMIC))
			continue;
		if (f->size != 2 && f->size != 4)
			goto out;
		word = word_at(rec + f->offset, f->size);
		off = (unsigned int)(word & 0xffff);
		len = f->size == 2 ? 0 : (unsigned int)(word >> 16);
		if (f->flags & TEP_FIELD_IS_RELATIVE)
			off += (unsigned int)(f->offset + f->size);
		if (off > (unsigned int)size || len > (unsigned int)size - off)
			goto out;
		continue;
out:
		if (bad)
			*bad = f->name;
		return false;
	}
	return true;
}

bool usertp__tep_format_ok(const char *text, size_t len, const char *system, int long_size)
{
	int status = 0;
	pid_t pid, waited = -1;

	pid = fork();
	if (pid == 0) {
		struct tep_handle *trial;
		struct tep_event *ev = NULL;
		bool ok;

		signal(SIGSEGV, SIG_DFL); /* (die quietly: no sanitizer report for the parser) */
		signal(SIGBUS, SIG_DFL);
		signal(SIGABRT, SIG_DFL);
		trial = tep_alloc();
		if (!trial)
			usertp__child_exit(1);
		tep_set_loglevel(TEP_LOG_NONE);
		tep_set_long_size(trial, long_size);
		ok = !tep_parse_format(trial, &ev, text, len, system) && ev &&
		     !(ev->flags & TEP_EVENT_FL_FAILED);
		usertp__child_exit(ok ? 0 : 1);
	}
	/* Bounded: a child stuck (a lock another thread held at the fork) is killed, refused. */
	for (int tick = 0; pid > 0; tick++) {
		if (tick == TRIAL_TICKS)
			kill(pid, SIGKILL);
		waited = waitpid(pid, &status, tick < TRIAL_TICKS ? WNOHANG : 0);
		if (waited == pid || (waited < 0 && errno != EINTR))
			break;
		if (!waited)
			usleep(TICK_US);
	}
	return pid > 0 && waited == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
