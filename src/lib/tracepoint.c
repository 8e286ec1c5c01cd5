/* SPDX-License-Identifier: MIT */
/*
 * tracepoint.c - attaching probes to tracepoints, with the kernel's semantics.
 *
 * A tracepoint's probes are an array ending with func == NULL, published with a release
 * store (rcu_assign_pointer()) and read with an acquire load inside an RCU read-side section by the iterator that
 * DEFINE_TRACE() generates.  A change builds a new array, publishes it, and retires the old
 * one; retired arrays are freed after a grace period, by tracepoint_synchronize_unregister()
 * or once enough of them have piled up.  Registration never waits for readers, so it may be
 * called from any thread except from inside a probe (as in the kernel, where it may sleep).
 *
 * RCU is liburcu's bulletproof flavour: threads register themselves on their first read-side
 * section and are forgotten when they exit, so the program does nothing for it.
 */
#define _GNU_SOURCE
#define _LGPL_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <urcu-bp.h>

#include "internal.h"

/*
 * ThreadSanitizer cannot see liburcu's grace periods (liburcu is not instrumented), so under
 * TSan every read-side section end "releases" one token that a completed grace period
 * "acquires": exactly the ordering synchronize_rcu() guarantees.
 */
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
static char grace_token;
#define tsan_reader_done() __tsan_release(&grace_token)
#define tsan_grace_done() __tsan_acquire(&grace_token)
#else
#define tsan_reader_done() do { } while (0)
#define tsan_grace_done() do { } while (0)
#endif

bool usertp__exiting;

/* Memory unpublished but perhaps still read (probe arrays, event files); freed after the
 * next grace period. */
struct retired {
	struct retired *next;
	void *ptr;
};
static struct retired *retired_list;
static unsigned int retired_count;
#define RETIRED_MAX 64

static void fork_prepare(void)
{
	pthread_mutex_lock(&usertp__lock);
	urcu_bp_before_fork();
}

static void fork_parent(void)
{
	urcu_bp_after_fork_parent();
	pthread_mutex_unlock(&usertp__lock);
}

static void fork_child(void)
{
	urcu_bp_after_fork_child();
	pthread_mutex_unlock(&usertp__lock);
}

static void mark_exiting(void)
{
	__atomic_store_n(&usertp__exiting, true, __ATOMIC_RELAXED);
}

static void init_once(void)
{
	/*
	 * The fork handlers keep the registry lock and liburcu consistent in a child forked
	 * while another thread was changing them.  atexit() runs before the destructors of
	 * shared objects, so by then objects know not to tear down what other threads may
	 * still be using.
	 */
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(mark_exiting);
}

void usertp__init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, init_once);
}

static void grace_period(void)
{
	urcu_bp_synchronize_rcu();
	tsan_grace_done();
}

/*
 * liburcu-bp's read-side lock and unlock, with the thread's reader record cached in our own
 * initial-exec TLS: liburcu's per-thread pointer lives in another shared object, and each
 * access to it from here would cost a __tls_get_addr() call (four per event).  The record,
 * its counter protocol and the grace periods are liburcu's; only the lookup is cached.  The
 * record of a thread stays the same for its life (and in a forked child), and is checked to be
 * still this thread's.
 *
 * Until a thread's first section the cache points to no_reader, whose tid is no thread's: one
 * test then catches both a new thread and a stale record.
 */
static struct urcu_bp_reader no_reader;
static __thread struct urcu_bp_reader *reader_cache __attribute__((tls_model("initial-exec"))) =
	&no_reader;

/* pthread_self() without a call: on glibc/x86-64 a thread's pthread_t is its thread pointer. */
static inline pthread_t self_thread(void)
{
#if defined(__GLIBC__) && defined(__x86_64__)
	return (pthread_t)__builtin_thread_pointer();
#else
	return pthread_self();
#endif
}

static inline bool reader_is_mine(const struct urcu_bp_reader *r)
{
	/* The tid check also catches a thread that traces after liburcu forgot it, in a late
	 * thread-exit destructor: liburcu then registers it again. */
	return pthread_equal(r->tid, self_thread());
}

/* _urcu_bp_read_lock() on @r, then the probes: the acquire pairs with publish()'s release. */
static inline struct usertp_probe *read_lock_probes(struct urcu_bp_reader *r,
						   struct usertp_tracepoint *tp)
{
	unsigned long tmp;

	cmm_barrier();
	tmp = r->ctr;
	if (usertp_likely(!(tmp & URCU_BP_GP_CTR_NEST_MASK))) {
		_CMM_STORE_SHARED(r->ctr, _CMM_LOAD_SHARED(urcu_bp_gp.ctr));
		urcu_bp_smp_mb_slave();
	} else {
		_CMM_STORE_SHARED(r->ctr, tmp + URCU_BP_GP_COUNT);
	}
	return __atomic_load_n(&tp->probes, __ATOMIC_ACQUIRE);
}

/*
 * A thread's first read-side section (or one after liburcu forgot it), out of line and
 * reached by a tail call: the fast path then needs no frame and saves no register.
 */
static __attribute__((noinline)) struct usertp_probe *probes_begin_slow(struct usertp_tracepoint *tp)
{
	if (!URCU_TLS(urcu_bp_reader))
		urcu_bp_register();
	reader_cache = URCU_TLS(urcu_bp_reader);
	return read_lock_probes(reader_cache, tp);
}

struct usertp_probe *usertp__probes_begin(struct usertp_tracepoint *tp)
{
	struct urcu_bp_reader *r = reader_cache;

	if (usertp_unlikely(!reader_is_mine(r)))
		return probes_begin_slow(tp);
	return read_lock_probes(r, tp);
}

void usertp__probes_end(void)
{
	struct urcu_bp_reader *r = reader_cache;

	tsan_reader_done();
	/*
	 * _urcu_bp_read_unlock(), with the counter decremented in place (one instruction)
	 * rather than loaded before the barrier and stored after it: only this thread writes
	 * its counter, grace periods only read it, and the access stays one aligned word between
	 * the same two compiler barriers.
	 */
	urcu_bp_smp_mb_slave();
	r->ctr -= URCU_BP_GP_COUNT;
	cmm_barrier();
}

static unsigned int probes_count(const struct usertp_probe *probes)
{
	unsigned int n = 0;

	if (probes)
		while (probes[n].func)
			n++;
	return n;
}

void usertp__defer_free_locked(void *ptr)
{
	struct retired *r;

	if (!ptr)
		return;
	r = malloc(sizeof(*r));
	if (!r) {
		/* Cannot queue it: wait for readers here instead (we hold the lock, not RCU). */
		grace_period();
		free(ptr);
		return;
	}
	r->ptr = ptr;
	r->next = retired_list;
	retired_list = r;
	retired_count++;
}

/* Free retired arrays after a grace period.  Called with the lock held. */
static void reclaim_locked(void)
{
	struct retired *list = retired_list, *next;

	retired_list = NULL;
	retired_count = 0;
	if (!list)
		return;
	grace_period();
	for (; list; list = next) {
		next = list->next;
		free(list->ptr);
		free(list);
	}
}

/*
 * Publish @probes (NULL when empty) and move the key and call sites along.  Turning a
 * tracepoint on can fail when its call sites cannot be rewritten (code pages that may not be
 * made writable): everything is then put back as it was and the error returned, rather than
 * leaving a tracepoint that claims to be on while its sites never reach the probes.
 */
static int publish(struct usertp_tracepoint *tp, struct usertp_probe *probes)
{
	struct usertp_probe *old = tp->probes;
	bool was_on = old != NULL, on = probes != NULL;
	int ret;

	if (on && !was_on) {
		/* Probes first, then the sites that reach them. */
		__atomic_store_n(&tp->probes, probes, __ATOMIC_RELEASE);
		__atomic_store_n(&tp->enabled, 1, __ATOMIC_RELEASE);
		ret = usertp__jump_sync_tracepoint_locked(tp);
		if (ret) {
			__atomic_store_n(&tp->enabled, 0, __ATOMIC_RELEASE);
			usertp__jump_sync_tracepoint_locked(tp);
			__atomic_store_n(&tp->probes, NULL, __ATOMIC_RELEASE);
			usertp__defer_free_locked(probes);
			return ret;
		}
	} else if (!on && was_on) {
		__atomic_store_n(&tp->enabled, 0, __ATOMIC_RELEASE);
		usertp__jump_sync_tracepoint_locked(tp);
		__atomic_store_n(&tp->probes, NULL, __ATOMIC_RELEASE);
		if (tp->unregfunc)
			tp->unregfunc();
	} else {
		__atomic_store_n(&tp->probes, probes, __ATOMIC_RELEASE);
	}
	usertp__defer_free_locked(old);
	if (retired_count > RETIRED_MAX)
		reclaim_locked();
	return 0;
}

int usertp__probe_register_locked(struct usertp_tracepoint *tp, usertp_probe_func probe,
				  void *data, int prio)
{
	const struct usertp_probe *old = tp->probes;
	unsigned int n = probes_count(old), i, pos = n;
	struct usertp_probe *probes;
	int ret;

	if (!probe)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (old[i].func == probe && old[i].data == data)
			return -EEXIST;
		/* Higher priority first; equal priorities keep registration order. */
		if (pos == n && old[i].prio < prio)
			pos = i;
	}
	probes = malloc((n + 2) * sizeof(*probes));
	if (!probes)
		return -ENOMEM;
	if (!old && tp->regfunc) {
		ret = tp->regfunc();
		if (ret) {
			free(probes);
			return ret < 0 ? ret : -EINVAL;
		}
	}
	if (pos)
		memcpy(probes, old, pos * sizeof(*probes));
	probes[pos] = (struct usertp_probe){ probe, data, prio };
	if (n > pos)
		memcpy(probes + pos + 1, old + pos, (n - pos) * sizeof(*probes));
	probes[n + 1] = (struct usertp_probe){ NULL, NULL, 0 };
	ret = publish(tp, probes);
	if (ret && !old && tp->unregfunc)
		tp->unregfunc(); /* undo the regfunc above */
	return ret;
}

int usertp__probe_unregister_locked(struct usertp_tracepoint *tp, usertp_probe_func probe,
				    void *data)
{
	const struct usertp_probe *old = tp->probes;
	unsigned int n = probes_count(old), i, j;
	struct usertp_probe *probes = NULL;

	for (i = 0; i < n; i++)
		if (old[i].func == probe && old[i].data == data)
			break;
	if (i == n)
		return -ENOENT;
	if (n > 1) {
		probes = malloc(n * sizeof(*probes));
		if (!probes)
			return -ENOMEM;
		for (i = 0, j = 0; i < n; i++)
			if (!(old[i].func == probe && old[i].data == data))
				probes[j++] = old[i];
		probes[j] = (struct usertp_probe){ NULL, NULL, 0 };
	}
	publish(tp, probes);
	return 0;
}

void usertp__probes_clear_locked(struct usertp_tracepoint *tp)
{
	if (tp->probes)
		publish(tp, NULL);
}

int usertp_tracepoint_probe_register_prio(struct usertp_tracepoint *tp, usertp_probe_func probe,
					  void *data, int prio)
{
	int ret;

	if (!tp)
		return -EINVAL;
	usertp__init();
	pthread_mutex_lock(&usertp__lock);
	ret = usertp__probe_register_locked(tp, probe, data, prio);
	pthread_mutex_unlock(&usertp__lock);
	return ret;
}

int usertp_tracepoint_probe_register(struct usertp_tracepoint *tp, usertp_probe_func probe,
				     void *data)
{
	return usertp_tracepoint_probe_register_prio(tp, probe, data, TRACEPOINT_DEFAULT_PRIO);
}

int usertp_tracepoint_probe_unregister(struct usertp_tracepoint *tp, usertp_probe_func probe,
				       void *data)
{
	int ret;

	if (!tp)
		return -EINVAL;
	usertp__init();
	pthread_mutex_lock(&usertp__lock);
	ret = usertp__probe_unregister_locked(tp, probe, data);
	pthread_mutex_unlock(&usertp__lock);
	return ret;
}

void usertp__synchronize(void)
{
	struct retired *list, *next;

	pthread_mutex_lock(&usertp__lock);
	list = retired_list;
	retired_list = NULL;
	retired_count = 0;
	pthread_mutex_unlock(&usertp__lock);

	/* Even with nothing to free: the caller wants every probe it removed to be done. */
	grace_period();
	for (; list; list = next) {
		next = list->next;
		free(list->ptr);
		free(list);
	}
}

void usertp_tracepoint_synchronize_unregister(void)
{
	usertp__init();
	usertp__synchronize();
}
