/* SPDX-License-Identifier: MIT */
/*
 * comm.c - the names of the threads that wrote events, for the "comm-pid" column.
 *
 * A thread's name is noted when it writes its first event (the slow path that also caches its
 * id), before that event is committed, in a ring of the latest COMM_MAX threads, written
 * without locks: a process whose threads come and go (a pool that makes a thread per job)
 * keeps the names of the recent ones, as the kernel's saved_cmdlines does, and a recorder that
 * asks often enough (usertp__comm_lines() from where it stopped: the "comms" request with
 * since=) hears of every one.  At output time a thread still alive is named from /proc (its
 * name now, as the kernel looks names up when the trace is read), one that has gone from the
 * ring, and one never seen, is "<...>", as in the kernel.  Everything here is
 * async-signal-safe.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "control-private.h"
#include "internal.h"
#include "proc.h"

#define COMM_LEN 16
#define COMM_MAX 8192
_Static_assert(COMM_MAX >= 2 * USERTP__COMM_TELL_EVERY, "names are told before the ring drops them");

/*
 * A slot of the ring, all of it atomic (a slot is written again while a reader copies it):
 * seq is the note's number + 1 once the slot holds it, 0 while it is written (a seqlock).
 */
static struct {
	uint64_t seq;
	int tid;
	uint64_t comm[COMM_LEN / 8];
} comms[COMM_MAX];
static uint64_t nr_comms; /* notes so far; the ring holds the last COMM_MAX */

/* The thread's name as of its first event: what filters compare COMM with. */
__thread char usertp__thread_comm[COMM_LEN] __attribute__((tls_model("initial-exec")));

void usertp__comm_note(int tid)
{
	uint64_t i = __atomic_fetch_add(&nr_comms, 1, __ATOMIC_RELAXED), words[COMM_LEN / 8];
	char name[COMM_LEN] = "";
	unsigned int slot = (unsigned int)(i % COMM_MAX);

	prctl(PR_GET_NAME, name, 0, 0, 0);
	name[COMM_LEN - 1] = '\0';
	memcpy(usertp__thread_comm, name, COMM_LEN);
	memcpy(words, name, COMM_LEN);
	/* (Release stores, acquire loads: a reader that sees a new word sees seq's 0 before it.) */
	__atomic_store_n(&comms[slot].seq, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&comms[slot].tid, tid, __ATOMIC_RELEASE);
	for (unsigned int w = 0; w < COMM_LEN / 8; w++)
		__atomic_store_n(&comms[slot].comm[w], words[w], __ATOMIC_RELEASE);
	__atomic_store_n(&comms[slot].seq, i + 1, __ATOMIC_RELEASE);
	/* (A write to a pipe: async-signal-safe, and once in USERTP__COMM_TELL_EVERY threads.) */
	if (!((i + 1) % USERTP__COMM_TELL_EVERY))
		usertp__control_wake();
}

uint64_t usertp__comm_noted(void)
{
	return __atomic_load_n(&nr_comms, __ATOMIC_ACQUIRE);
}

/* What a look at note @i found. */
enum note_state {
	NOTE_READ,	/* it, whole */
	NOTE_WRITING,	/* not yet: a thread is writing it (about to record its first event) */
	NOTE_GONE,	/* written over by a newer note */
};

/* Note @i: its thread into *tid, its name into @name, if the ring holds it whole. */
static enum note_state comm_note_read(uint64_t i, int *tid, char name[COMM_LEN])
{
	unsigned int slot = (unsigned int)(i % COMM_MAX);
	uint64_t words[COMM_LEN / 8], seq = __atomic_load_n(&comms[slot].seq, __ATOMIC_ACQUIRE);

	/* (The slot's number, seen once: a later look could see the writer done, or a newer one.) */
	if (seq != i + 1)
		return seq < i + 1 ? NOTE_WRITING : NOTE_GONE;
	*tid = __atomic_load_n(&comms[slot].tid, __ATOMIC_ACQUIRE);
	for (unsigned int w = 0; w < COMM_LEN / 8; w++)
		words[w] = __atomic_load_n(&comms[slot].comm[w], __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&comms[slot].seq, __ATOMIC_RELAXED) != i + 1)
		return NOTE_GONE; /* written again meanwhile, by a newer note */
	memcpy(name, words, COMM_LEN);
	name[COMM_LEN - 1] = '\0';
	return NOTE_READ;
}

/* The notes the ring holds: [*first, return). */
static uint64_t comm_notes(uint64_t *first)
{
	uint64_t n = __atomic_load_n(&nr_comms, __ATOMIC_ACQUIRE);

	*first = n > COMM_MAX ? n - COMM_MAX : 0;
	return n;
}

const char *usertp__comm_find(int tid, char *buf, size_t size)
{
	uint64_t first, n = comm_notes(&first);
	char name[COMM_LEN];
	int noted;

	if (size < COMM_LEN)
		return NULL;
	if (!usertp__proc_comm(0, tid, buf, size) && buf[0])
		return buf;
	for (uint64_t i = n; i-- > first;) {
		if (comm_note_read(i, &noted, name) == NOTE_READ && noted == tid) {
			memcpy(buf, name, COMM_LEN);
			return buf;
		}
	}
	return NULL;
}

/*
 * The threads already written by usertp__comm_lines() (a thread id noted again later, once its
 * id was reused, is written once, with the later name): an open-addressing set, taken by one
 * call at a time (a concurrent one, from a signal handler, does without it).
 */
#define SEEN_SLOTS (2 * COMM_MAX)
static int seen[SEEN_SLOTS];
static bool seen_busy;

/* Add @tid to the set; false if it was there. */
static bool seen_add(int tid)
{
	unsigned int i = ((unsigned int)tid * 2654435761u) % SEEN_SLOTS;

	while (seen[i] && seen[i] != tid)
		i = (i + 1) % SEEN_SLOTS;
	if (seen[i])
		return false;
	seen[i] = tid;
	return true;
}

size_t usertp__comm_lines(char *buf, size_t size, uint64_t since, uint64_t *next)
{
	uint64_t first, n = comm_notes(&first), n_told;
	bool dedup = !__atomic_exchange_n(&seen_busy, true, __ATOMIC_ACQUIRE);
	size_t len = 0;

	/* (No thread yet: an empty text, not what the buffer held: a peer is sent it.) */
	if (size)
		buf[0] = 0;
	if (since > first && since <= n)
		first = since;
	n_told = n;
	/* (The newest first: a thread that does not fit is an old one, and said in its note.) */
	for (uint64_t i = n; i-- > first;) {
		char name[32], noted[COMM_LEN];
		enum note_state state;
		const char *comm;
		int tid, k;

		state = comm_note_read(i, &tid, noted);
		/*
		 * Being written (a thread about to record its first event): the next call goes on
		 * from it, so that it is told once written.  (Before, a note seen being written and
		 * then done was taken for one written over, and never told: 4 threads of 5,000
		 * printed as <...> under load.)
		 */
		if (state == NOTE_WRITING)
			n_told = i;
		if (state != NOTE_READ)
			continue;
		if (!tid || (dedup && !seen_add(tid)))
			continue;
		/* (A thread alive is named as it is now, as usertp__comm_find() names it.) */
		comm = !usertp__proc_comm(0, tid, name, sizeof(name)) && name[0] ? name : noted;
		k = snprintf(buf + len, size - len, "%d %s\n", tid, comm);
		if (k < 0 || (size_t)k >= size - len) {
			buf[len] = 0;
			break;
		}
		len += (size_t)k;
	}
	if (dedup) {
		memset(seen, 0, sizeof(seen));
		__atomic_store_n(&seen_busy, false, __ATOMIC_RELEASE);
	}
	if (next)
		*next = n_told;
	return len;
}
