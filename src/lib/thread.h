/* SPDX-License-Identifier: MIT */
/*
 * thread.h - private to libusertp: thread.c's, the threads that record (their ids, cached
 * for the hot path, and their first events) and the pid filters of listeners (set_event_pid);
 * inline what the hot path reads.
 */
#ifndef USERTP_LIB_THREAD_H
#define USERTP_LIB_THREAD_H

#include "internal.h"

/*
 * Pid filters (thread.c): tracefs's set_event_pid (@trace: only these threads, when not
 * empty) and set_event_notrace_pid (@notrace: not these), compiled for the hot path; with
 * @follow (event-fork), the thread that finds itself listed watches its exit.
 */
struct usertp__pid_filter {
	uint64_t serial; /* unique, never 0 */
	bool follow;
	size_t nr_trace, nr_notrace;
	int pids[]; /* trace then notrace, each ascending */
};
/* A new pid filter into *out (NULL when both lists are empty).  Return: 0 or -ENOMEM. */
USERTP_HIDDEN int usertp__pid_filter_new(const struct usertp__pid_list *trace,
					 const struct usertp__pid_list *notrace, bool follow,
					 struct usertp__pid_filter **out);
/* A thread's answers: whether it passes the filter of each serial (thread.c). */
#define USERTP__PID_VERDICTS 4
struct usertp__pid_verdicts {
	uint64_t serial[USERTP__PID_VERDICTS];
	bool pass[USERTP__PID_VERDICTS];
};
extern __thread struct usertp__pid_verdicts usertp__pid_verdicts
	__attribute__((tls_model("initial-exec"))) USERTP_HIDDEN;
USERTP_HIDDEN bool usertp__pid_filter_verdict(const struct usertp__pid_filter *f);
/* Does the calling thread pass @f?  One compare on the hot path. */
static inline bool usertp__pid_filter_passes(const struct usertp__pid_filter *f)
{
	unsigned int i = f->serial & (USERTP__PID_VERDICTS - 1);

	if (usertp_likely(usertp__pid_verdicts.serial[i] == f->serial))
		return usertp__pid_verdicts.pass[i];
	return usertp__pid_filter_verdict(f);
}
/* Set by a thread of libusertp's own (the control thread): pid filters never list it. */
USERTP_HIDDEN extern __thread bool usertp__thread_is_own;
/* A thread's first event (from usertp__gettid_slow()): what its start left to do. */
USERTP_HIDDEN void usertp__thread_first_event(void);
/* In a forked child: its answers were its parent's thread's. */
USERTP_HIDDEN void usertp__pid_verdicts_reset(void);
/* Listeners whose pid filter follows (event-fork); the fork and thread hooks look at it. */
extern unsigned int usertp__pid_following USERTP_HIDDEN;
/*
 * A program that starts with a session that follows: listed (in @trace, @notrace) where its
 * nearest listed ancestor process is.  Return: 0 or -ENOMEM.
 */
USERTP_HIDDEN int usertp__pid_lists_inherit(struct usertp__pid_list *trace,
					    struct usertp__pid_list *notrace);
/*
 * Following (listener.c gives them to thread.c with its first following listener): @child
 * (a thread, or a forked process's pid) is listed where @parent is, by the listeners that
 * follow (return: whether it was listed somewhere); a listed thread @tid that exits is taken
 * off.  Under usertp__lock.
 */
struct usertp__thread_followers {
	bool (*follow_locked)(int parent, int child);
	void (*exit_locked)(int tid);
};
USERTP_HIDDEN void usertp__thread_followers_set_locked(const struct usertp__thread_followers *f);

/*
 * The writer's thread id, cached per thread (reset in a forked child) in initial-exec TLS,
 * read inline: one load on the hot path.
 */
extern __thread int usertp__tid __attribute__((tls_model("initial-exec"))) USERTP_HIDDEN;
USERTP_HIDDEN int usertp__gettid_slow(void);

static inline int usertp__gettid(void)
{
	int tid = usertp__tid;

	return usertp_likely(tid) ? tid : usertp__gettid_slow();
}

/* Does the calling thread pass the pid filter of @file (none: yes)?  For the reserve heads. */
static inline bool usertp__event_file_pid_passes(const struct usertp_event_file *file)
{
	const struct usertp__pid_filter *pids;

	usertp__gettid(); /* (a thread's first event may list it: before its filter is read) */
	pids = __atomic_load_n(&file->pids, __ATOMIC_ACQUIRE);
	return !pids || usertp__pid_filter_passes(pids);
}

/*
 * The common header of a record of @file (type, flags, preempt_count and pid) as the 8 bytes
 * one store writes, and that store.
 */
static inline uint64_t usertp__entry_word(const struct usertp_event_file *file)
{
	struct usertp_trace_entry ent = { (unsigned short)file->id, 0, 0, usertp__gettid() };
	uint64_t word;

	USERTP_STATIC_ASSERT(sizeof(ent) == 8, "the common header is 8 bytes");
	memcpy(&word, &ent, 8);
	return word;
}

static inline void *usertp__entry_fill(const struct usertp_event_file *file, void *entry)
{
	uint64_t word = usertp__entry_word(file);

	memcpy(entry, &word, 8);
	return entry;
}

/* In a forked child: its thread id is found again at its next event. */
USERTP_HIDDEN void usertp__tid_reset(void);

#endif /* USERTP_LIB_THREAD_H */
