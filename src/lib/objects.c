/* SPDX-License-Identifier: MIT */
/*
 * objects.c - what the program is made of: its objects (the executable and each shared
 * library), their tracepoints and call sites; the events they define go to the registry
 * (registry.c).
 *
 * Objects arrive through the constructor that usertp/tracepoint.h puts in every translation
 * unit, and leave through the matching destructor at dlclose().  When one leaves, its events
 * are disabled, the probes of its tracepoints are dropped and, before the destructor
 * returns, a grace period makes sure no thread still runs code or reads data of it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "internal.h"

unsigned int usertp__at_start_sessions;
__thread bool usertp__registering_at_start;


/* usertp__object.registered: */
#define OBJ_REGISTERED 1
#define OBJ_PERMANENT 2 /* never unloaded: its destructor only runs at exit */


/* How many objects list a tracepoint (interposition can make several list the same one). */
struct tp_ref {
	struct usertp_tracepoint *tp;
	unsigned int refs;
};
static struct tp_ref *tp_refs;
static unsigned int nr_tp_refs, tp_refs_cap;

static void tp_ref_get(struct usertp_tracepoint *tp)
{
	unsigned int i;

	for (i = 0; i < nr_tp_refs; i++) {
		if (tp_refs[i].tp == tp) {
			tp_refs[i].refs++;
			return;
		}
	}
	if (!usertp__grow((void **)&tp_refs, &tp_refs_cap, nr_tp_refs + 1, sizeof(*tp_refs)))
		return; /* only the clean-up at unload is lost */
	tp_refs[nr_tp_refs++] = (struct tp_ref){ tp, 1 };
}

/* Return true when the last object listing @tp let go of it. */
static bool tp_ref_put(struct usertp_tracepoint *tp)
{
	unsigned int i;

	for (i = 0; i < nr_tp_refs; i++) {
		if (tp_refs[i].tp != tp)
			continue;
		if (--tp_refs[i].refs)
			return false;
		tp_refs[i] = tp_refs[--nr_tp_refs];
		return true;
	}
	return false;
}

/*
 * Is @obj part of an object that cannot be unloaded?  The executable cannot; nor can a
 * library once we made it RTLD_NODELETE, which the recorder asks for so that its records can
 * still be printed at exit.  The destructor of such an object runs only at exit, and must
 * then leave everything in place: glibc runs destructors before some atexit handlers (those
 * registered before main() started), among them the recorder's.
 */
/* Is what dladdr() said of an address in the executable? */
static bool in_executable(const Dl_info *at)
{
	Dl_info main_program;

	/* (Its vaddrs need not start at 0: compare where each is mapped.) */
	return dladdr((void *)getauxval(AT_PHDR), &main_program) &&
	       main_program.dli_fbase == at->dli_fbase;
}

/* Is @obj the program's own (the executable, or everything in a static program)? */
static bool object_is_main(const struct usertp__object *obj)
{
	Dl_info self;

	if (!dladdr(obj, &self) || !self.dli_fname)
		return true; /* static program */
	return in_executable(&self);
}

/* --- objects loaded with the program ---------------------------------------------------- */

/* One loaded object's names and dynamic section, as dl_iterate_phdr() shows it. */
struct loaded {
	uintptr_t base;
	const char *path, *soname, *strtab;
	const ElfW(Dyn) *dyn;
	const ElfW(Sym) *symtab;
	const uint32_t *hash, *gnu_hash; /* DT_HASH, DT_GNU_HASH: its symbols, by name */
	bool linked;
};

struct loaded_list {
	struct loaded list[512];
	unsigned int n;
};

static uintptr_t dyn_ptr(const struct dl_phdr_info *info, uintptr_t p)
{
	/* The loader relocates these in place, but for a read-only dynamic section (vDSO). */
	return p < info->dlpi_addr ? p + info->dlpi_addr : p;
}

static int loaded_add(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct loaded_list *l = arg;
	struct loaded *o;

	(void)size;
	if (l->n == sizeof(l->list) / sizeof(l->list[0]))
		return 1;
	o = &l->list[l->n++];
	*o = (struct loaded){ .base = info->dlpi_addr, .path = info->dlpi_name };
	for (unsigned int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			o->dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	for (const ElfW(Dyn) *d = o->dyn; d && d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB)
			o->strtab = (const char *)dyn_ptr(info, d->d_un.d_ptr);
		else if (d->d_tag == DT_SYMTAB)
			o->symtab = (const ElfW(Sym) *)dyn_ptr(info, d->d_un.d_ptr);
		else if (d->d_tag == DT_HASH)
			o->hash = (const uint32_t *)dyn_ptr(info, d->d_un.d_ptr);
		else if (d->d_tag == DT_GNU_HASH)
			o->gnu_hash = (const uint32_t *)dyn_ptr(info, d->d_un.d_ptr);
	}
	for (const ElfW(Dyn) *d = o->dyn; o->strtab && d && d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_SONAME)
			o->soname = o->strtab + d->d_un.d_val;
	return 0;
}

/* Does object @o define symbol @name itself (in its dynamic symbol table)? */
static bool loaded_defines(const struct loaded *o, const char *name)
{
	const ElfW(Sym) *sym;

	if (!o->symtab || !o->strtab)
		return false;
	if (o->gnu_hash) {
		/* (The GNU hash table: buckets of runs of symbols, a run ends with bit 0 set.) */
		const uint32_t *h = o->gnu_hash, nbuckets = h[0], first = h[1];
		const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)&h[4] + h[2]);
		uint32_t hash = 5381, i;

		for (const char *c = name; *c; c++)
			hash = hash * 33 + (unsigned char)*c;
		if (!nbuckets || (i = buckets[hash % nbuckets]) < first)
			return false;
		for (;; i++) {
			uint32_t chained = buckets[nbuckets + i - first];

			sym = &o->symtab[i];
			if ((chained | 1) == (hash | 1) && !strcmp(o->strtab + sym->st_name, name))
				return sym->st_shndx != SHN_UNDEF;
			if (chained & 1)
				return false;
		}
	}
	for (uint32_t i = 0; o->hash && i < o->hash[1]; i++) { /* (DT_HASH: nchain symbols) */
		sym = &o->symtab[i];
		if (sym->st_shndx != SHN_UNDEF && !strcmp(o->strtab + sym->st_name, name))
			return true;
	}
	return false;
}

/* Is @name (a DT_NEEDED entry) object @o? */
static bool loaded_is(const struct loaded *o, const char *name)
{
	const char *base = o->path ? strrchr(o->path, '/') : NULL;

	return (o->soname && !strcmp(o->soname, name)) ||
	       (o->path && !strcmp(base ? base + 1 : o->path, name));
}

/*
 * Was @obj loaded with the program: is it the executable, or a library the executable
 * links (directly or through other libraries), rather than one loaded later by dlopen()?
 * Its constructors then run before main().  Takes the loader's lock: never under ours.
 */
static bool object_at_start(const struct usertp__object *obj, bool is_main)
{
	static struct loaded_list l; /* (big: not on a constructor's stack) */
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	Dl_info self;
	bool changed = true, at_start = false;

	if (is_main || !dladdr(obj, &self) || !self.dli_fname)
		return true; /* (or a static program) */
	pthread_mutex_lock(&lock);
	l.n = 0;
	dl_iterate_phdr(loaded_add, &l);
	if (l.n)
		l.list[0].linked = true; /* the executable comes first */
	while (changed) {
		changed = false;
		for (unsigned int i = 0; i < l.n; i++) {
			const struct loaded *o = &l.list[i];

			for (const ElfW(Dyn) *d = o->dyn; o->linked && o->strtab && d && d->d_tag != DT_NULL;
			     d++) {
				if (d->d_tag != DT_NEEDED)
					continue;
				for (unsigned int j = 0; j < l.n; j++)
					if (!l.list[j].linked && loaded_is(&l.list[j], o->strtab + d->d_un.d_val))
						changed = l.list[j].linked = true;
			}
		}
	}
	for (unsigned int i = 0; i < l.n; i++)
		if (i && l.list[i].base == (uintptr_t)self.dli_fbase) /* (a library's vaddrs start at 0) */
			at_start = l.list[i].linked;
	pthread_mutex_unlock(&lock);
	return at_start;
}

/* Make the loaded object @path RTLD_NODELETE.  Return: whether it is. */
static bool make_nodelete(const char *path)
{
	void *handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);

	if (!handle)
		return false;
	dlclose(handle); /* drops the reference we just took; NODELETE stays */
	return true;
}

static bool object_permanent(const struct usertp__object *obj, bool is_main)
{
	Dl_info self, own;

	if (is_main)
		return true;
	if (!dladdr(obj, &self) || !self.dli_fname)
		return true;
	/* libusertp's own (track.c's, printk.c's events): never unloaded (keep_self()). */
	if (dladdr((void *)usertp__objects_register, &own) && own.dli_fbase == self.dli_fbase)
		return true;
	if (!__atomic_load_n(&usertp__keep_objects, __ATOMIC_RELAXED))
		return false;
	return make_nodelete(self.dli_fname);
}

/* --- one libusertp per process ----------------------------------------------------------- */

/*
 * Every copy of libusertp's code defines this, exported (libusertp.so's version script; a
 * program linked with the static library exports it by cmake/usertp-export.list; a shared
 * object that holds the static library exports it by default), so that a copy finds another.
 */
__attribute__((visibility("default"))) const char usertp__runtime[] = "usertp";

static bool runtime_later;

/* Is @p in object @i of @l (0: the executable)? */
static bool loaded_holds(const struct loaded_list *l, unsigned int i, const void *p)
{
	Dl_info at;

	if (!dladdr(p, &at))
		return false;
	if (!i)
		return in_executable(&at);
	return l->list[i].base == (uintptr_t)at.dli_fbase; /* (a library's vaddrs start at 0) */
}

static const char *loaded_label(const struct loaded_list *l, unsigned int i)
{
	return i && l->list[i].path && l->list[i].path[0] ? l->list[i].path : "the executable";
}

static void runtime_look(void)
{
	static struct loaded_list l; /* (big: not on a constructor's stack) */
	unsigned int first, own;
	const void *entry;

	/*
	 * (Read from the objects' dynamic sections, not with dlopen() and dlsym(): called from
	 * our constructors, where a dlopen() would run other objects' constructors early.)
	 */
	dl_iterate_phdr(loaded_add, &l);
	for (first = 0; first < l.n && !loaded_defines(&l.list[first], "usertp__runtime"); first++)
		;
	for (own = 0; own < l.n && !loaded_holds(&l, own, (void *)runtime_look); own++)
		;
	if (first >= l.n || own >= l.n || first == own)
		return; /* (or a static program: no objects) */
	runtime_later = true;
	/*
	 * Do objects register with the first copy?  Those that find libusertp's entry points in
	 * the loader's global scope do (ours among them, unless linked to their own copy); then
	 * nothing is lost here, and nothing said.
	 */
	entry = dlsym(RTLD_DEFAULT, "usertp__object_register");
	if (entry && loaded_holds(&l, first, entry))
		return;
	fprintf(stderr, "usertp: libusertp is twice in this process: in %s, and in %s, loaded "
		"later, whose events are not traced (link libusertp shared in both)\n",
		loaded_label(&l, first), loaded_label(&l, own));
}

bool usertp__runtime_later(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, runtime_look);
	return runtime_later;
}

/*
 * libusertp's code must outlive its threads, key destructors, signal and exit handlers: the
 * object that holds it is never unloaded.  The shared libusertp is linked -z nodelete;
 * linked statically into a shared object (a plugin that a host dlopen()s and dlclose()s),
 * that object is made RTLD_NODELETE here, when it loads, before any of those exist.
 */
static void __attribute__((constructor)) keep_self(void)
{
	Dl_info own;

	if (!dladdr((void *)keep_self, &own) || !own.dli_fname || in_executable(&own))
		return; /* a static program, or the executable: never unloaded */
	/* (The shared libusertp is linked -z nodelete already; this says it again.) */
	make_nodelete(own.dli_fname);
}

bool usertp__objects_register(struct usertp__object *obj)
{
	bool is_main;
	int state;

	struct usertp_tracepoint **tp;
	struct usertp_event **ev;
	bool news = false;

	usertp__init();
	/* (Objects built before printk sites existed end before them.) */
	if (obj->registered ||
	    obj->struct_size < offsetof(struct usertp__object, printk_sites))
		return false;
	/* Outside our lock: it may take the loader's lock. */
	is_main = object_is_main(obj);
	state = object_permanent(obj, is_main) ? OBJ_PERMANENT : OBJ_REGISTERED;
	usertp__registering_at_start = __atomic_load_n(&usertp__at_start_sessions, __ATOMIC_RELAXED) &&
				       object_at_start(obj, is_main);
	pthread_mutex_lock(&usertp__lock);
	if (obj->registered || !usertp__objects_add_locked(obj))
		goto out;
	obj->registered = state;
	if (obj->tracepoints)
		for (tp = obj->tracepoints; tp < obj->tracepoints_end; tp++)
			if (*tp)
				tp_ref_get(*tp);
	/* Sites of this object follow their tracepoints, which may be on already. */
	usertp__jump_sync_object_locked(obj);
	if (obj->events)
		for (ev = obj->events; ev < obj->events_end; ev++)
			usertp__event_add_locked(*ev);
	news = obj->events && obj->events != obj->events_end;
	if (obj->struct_size >= sizeof(struct usertp__object) && obj->printk_sites)
		for (struct usertp_printk_site **site = obj->printk_sites;
		     site < obj->printk_sites_end; site++)
			news |= usertp__printk_site_add_locked(*site);
out:
	pthread_mutex_unlock(&usertp__lock);
	return news;
}

void usertp__objects_unregister(struct usertp__object *obj)
{
	struct usertp_tracepoint **tp;
	struct usertp_event **ev;

	if (__atomic_load_n(&usertp__exiting, __ATOMIC_RELAXED) || obj->registered == OBJ_PERMANENT)
		return;
	pthread_mutex_lock(&usertp__lock);
	if (!obj->registered) {
		pthread_mutex_unlock(&usertp__lock);
		return;
	}
	if (obj->events)
		for (ev = obj->events; ev < obj->events_end; ev++)
			if (*ev)
				usertp__event_remove_locked(*ev);
	usertp__objects_remove_locked(obj);
	if (obj->tracepoints)
		for (tp = obj->tracepoints; tp < obj->tracepoints_end; tp++)
			if (*tp && tp_ref_put(*tp))
				usertp__probes_clear_locked(*tp);
	obj->registered = 0;
	pthread_mutex_unlock(&usertp__lock);
	/* Nothing of the object may be in use once its destructor returns. */
	usertp__synchronize();
}
